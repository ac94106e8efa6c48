-- bench/format_ab.sql: one record format against another on the production
-- read path (view_lazy), as in README "Record format V2" (v1 against v2)
-- and "Record format V3" (v2 against v3).
--   psql -X -d DB -v a=v2 -v b=v3 -f bench/format_ab.sql
--   (DB has dblink and minidb_am; a and b default to v1 and v2)
-- 1. paired ABBA runs, 20 pairs x 100000 fetches, B against A;
-- 2. depth 60 / depth 1 per format: 10 runs of minidb_bench_chain_depth,
--    alternating a b b a ..., ratio of the two cells of each run.
\set ON_ERROR_STOP 1
\if :{?a}
\else
\set a v1
\endif
\if :{?b}
\else
\set b v2
\endif
SELECT set_config('fab.a', :'a', false), set_config('fab.b', :'b', false) \gset
CREATE EXTENSION IF NOT EXISTS dblink;
\timing off
CREATE TEMP TABLE ab (depth int, reader text, pair int, a_ns float8, b_ns float8, ratio float8, q1 float8, q3 float8, verdict text);
INSERT INTO ab SELECT 1, 'newest', * FROM minidb_bench_ab('view_lazy','view_lazy',1,'newest',20,100000,:'a',:'b');
INSERT INTO ab SELECT 60, 'newest', * FROM minidb_bench_ab('view_lazy','view_lazy',60,'newest',20,100000,:'a',:'b');
INSERT INTO ab SELECT 1, 'oldest', * FROM minidb_bench_ab('view_lazy','view_lazy',1,'oldest',20,100000,:'a',:'b');
INSERT INTO ab SELECT 60, 'oldest', * FROM minidb_bench_ab('view_lazy','view_lazy',60,'oldest',20,100000,:'a',:'b');
SELECT depth, reader, round(a_ns::numeric,1) AS a_ns, round(b_ns::numeric,1) AS b_ns, round(ratio::numeric,3) AS b_over_a, round(q1::numeric,3) AS q1, round(q3::numeric,3) AS q3, verdict FROM ab WHERE pair IS NULL ORDER BY reader, depth;
-- depth curve per format: alternate a b b a ..., 10 runs
CREATE TEMP TABLE cd (run int, fmt text, table_am text, depth int, reader text, path text, iterations int, ns float8, b float8, a float8);
DO $$
DECLARE
  fa text := current_setting('fab.a');
  fb text := current_setting('fab.b');
BEGIN
  -- COMMIT after each call: a transaction that has written (here, into cd)
  -- has an xid, which a reader's snapshot then has as its xmin, older than
  -- every version of the chains: such a reader takes neither the hint-only
  -- shortcut nor the search on commit order, as no reader of a real system
  -- whose own transaction started before the chains would
  FOR r IN 1..10 LOOP
    IF r % 2 = 1 THEN
      INSERT INTO cd SELECT r, fa, * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, fa);
      COMMIT;
      INSERT INTO cd SELECT r, fb, * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, fb);
      COMMIT;
    ELSE
      INSERT INTO cd SELECT r, fb, * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, fb);
      COMMIT;
      INSERT INTO cd SELECT r, fa, * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, fa);
      COMMIT;
    END IF;
  END LOOP;
END $$;
SELECT fmt, reader, depth, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ns)::numeric,1) AS median_ns, max(b) AS bytes_op, max(a) AS allocs_op
FROM cd GROUP BY fmt, reader, depth ORDER BY reader, depth, fmt;
SELECT x.fmt, x.reader, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x.ns / y.ns)::numeric,2) AS d60_over_d1,
       round(percentile_cont(0.25) WITHIN GROUP (ORDER BY x.ns / y.ns)::numeric,2) AS q1,
       round(percentile_cont(0.75) WITHIN GROUP (ORDER BY x.ns / y.ns)::numeric,2) AS q3
FROM cd x JOIN cd y ON x.run = y.run AND x.fmt = y.fmt AND x.reader = y.reader AND x.depth = 60 AND y.depth = 1
GROUP BY x.fmt, x.reader ORDER BY x.reader, x.fmt;
