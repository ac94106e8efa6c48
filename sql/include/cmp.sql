\set cmp_saved_echo :ECHO
\set ECHO none
--
-- sql/include/cmp.sql: cmp(a, b [, q] [, cols => ...]), heap as the
-- oracle.  Not a test of its own (pg_regress runs sql/*.sql only); a test
-- that has set its search_path to its own schema includes it with
--
--   \getenv abs_srcdir PG_ABS_SRCDIR
--   \set cmp_file :abs_srcdir '/sql/include/cmp.sql'
--   \i :cmp_file
--
-- (pg_regress exports PG_ABS_SRCDIR, its --inputdir).  Its lines are not
-- echoed (pg_regress runs psql with -a), so the expected output shows the
-- three lines above only.
--
-- cmp(a, b, q, cols) lists, as (table, row), the values of cols (the row
-- x as a whole by default, else an expression of x) of the rows of a and
-- of b that satisfy q, that one table holds and the other does not, as
-- multisets (EXCEPT ALL both ways): no rows when the tables agree.  The
-- tests run the same statements on a heap table and a minidb table and
-- call it after each step; SELECT count(*) FROM cmp(...) when only the
-- number matters.
CREATE FUNCTION cmp(a regclass, b regclass, q text DEFAULT 'true',
                    cols text DEFAULT 'x')
RETURNS TABLE(side text, r text) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    '(SELECT %1$L::text, (%4$s)::text FROM %1$s x WHERE %3$s
      EXCEPT ALL SELECT %1$L::text, (%4$s)::text FROM %2$s x WHERE %3$s)
     UNION ALL
     (SELECT %2$L::text, (%4$s)::text FROM %2$s x WHERE %3$s
      EXCEPT ALL SELECT %2$L::text, (%4$s)::text FROM %1$s x WHERE %3$s)',
    a, b, q, cols);
END $$;
\set ECHO :cmp_saved_echo \unset cmp_saved_echo
