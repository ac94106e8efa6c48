--
-- ddl_inherit: CREATE TABLE (LIKE ...), table inheritance with a mix of
-- heap and minidb parents and children, and COPY ... FREEZE, on heap and
-- minidb side by side.
-- cmp(a, b): rows in one table but not the other (EXCEPT ALL both ways),
-- always 0 rows.  The expected output is heap's behaviour (run with
-- "\set am heap" it is the same apart from that line).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
\set am minidb
CREATE SCHEMA ddl_inherit;
SET search_path = ddl_inherit, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file
CREATE FUNCTION am_of(rel regclass) RETURNS name LANGUAGE sql AS
$$ SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel $$;
-- live rows whose visible version is frozen, for either table AM
CREATE FUNCTION frozen_rows(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  IF am_of(rel) = 'heap' THEN
    SELECT count(*) INTO n
      FROM generate_series(0, (pg_relation_size(rel) / 8192)::int - 1) b,
           heap_page_items(get_raw_page(rel::text, b)) i
     WHERE (i.t_infomask & 768) = 768                     -- HEAP_XMIN_FROZEN
       AND (i.t_infomask & 2048) <> 0;                    -- HEAP_XMAX_INVALID: live
  ELSE
    EXECUTE format('SELECT count(*) FROM %s x, minidb_chain(%L, x.ctid) c
                    WHERE c.visible AND c.flags LIKE ''%%frozen%%''', rel, rel) INTO n;
  END IF;
  RETURN n;
END $$;

CREATE TABLE h (id int PRIMARY KEY, k int NOT NULL DEFAULT 5 CHECK (k >= 0),
                v text COLLATE "C", g int GENERATED ALWAYS AS (k + 1) STORED) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int NOT NULL DEFAULT 5 CHECK (k >= 0),
                v text COLLATE "C", g int GENERATED ALWAYS AS (k + 1) STORED) USING :am;
CREATE INDEX m_k ON m (k);
CREATE INDEX h_k ON h (k);
COMMENT ON COLUMN m.v IS 'a comment';
COMMENT ON COLUMN h.v IS 'a comment';
INSERT INTO h (id, k, v) SELECT i, i % 10, 'v' || i FROM generate_series(1, 300) i;
INSERT INTO m (id, k, v) SELECT i, i % 10, 'v' || i FROM generate_series(1, 300) i;

-- 1. CREATE TABLE (LIKE ...): LIKE copies no access method; the new table
--    gets USING or default_table_access_method, like any table
CREATE TABLE l_default (LIKE m INCLUDING ALL);
CREATE TABLE l_using (LIKE h INCLUDING ALL) USING minidb;
SET default_table_access_method = minidb;
CREATE TABLE l_guc (LIKE h INCLUDING ALL);
RESET default_table_access_method;
SELECT am_of('l_default') AS l_default, am_of('l_using') AS l_using, am_of('l_guc') AS l_guc;
SELECT count(*) AS indexes FROM pg_index WHERE indrelid = 'l_using'::regclass;
SELECT count(*) AS checks FROM pg_constraint WHERE conrelid = 'l_using'::regclass AND contype = 'c';
SELECT col_description('l_using'::regclass, 3) AS comment;
INSERT INTO l_using (id, v) SELECT id, v FROM h;
INSERT INTO l_default (id, v) SELECT id, v FROM m;
SELECT * FROM cmp('l_default', 'l_using');
INSERT INTO l_using (id, k, v) VALUES (1000, -1, 'check');
SELECT id, k, v, g FROM l_using WHERE id = 1;

-- 2. inheritance: a minidb parent with heap and minidb children, and the
--    other way round; the same through an all-heap hierarchy
CREATE TABLE hpar (id int, v text) USING heap;
CREATE TABLE hch1 (extra int) INHERITS (hpar) USING heap;
CREATE TABLE hch2 () INHERITS (hpar) USING heap;
CREATE TABLE mpar (id int, v text) USING :am;
CREATE TABLE mch1 (extra int) INHERITS (mpar) USING heap;
CREATE TABLE mch2 () INHERITS (mpar) USING :am;
CREATE TABLE xpar (id int, v text) USING heap;
CREATE TABLE xch1 (extra int) INHERITS (xpar) USING :am;
CREATE TABLE xch2 () INHERITS (xpar) USING :am;
INSERT INTO hpar SELECT i, 'p' || i FROM generate_series(1, 100) i;
INSERT INTO hch1 SELECT i, 'c' || i, i FROM generate_series(101, 200) i;
INSERT INTO hch2 SELECT i, 'd' || i FROM generate_series(201, 300) i;
INSERT INTO mpar SELECT i, 'p' || i FROM generate_series(1, 100) i;
INSERT INTO mch1 SELECT i, 'c' || i, i FROM generate_series(101, 200) i;
INSERT INTO mch2 SELECT i, 'd' || i FROM generate_series(201, 300) i;
INSERT INTO xpar SELECT i, 'p' || i FROM generate_series(1, 100) i;
INSERT INTO xch1 SELECT i, 'c' || i, i FROM generate_series(101, 200) i;
INSERT INTO xch2 SELECT i, 'd' || i FROM generate_series(201, 300) i;
SELECT * FROM cmp('hpar', 'mpar');
SELECT * FROM cmp('hpar', 'xpar');
SELECT (SELECT count(*) FROM ONLY mpar) AS only_m, (SELECT count(*) FROM ONLY xpar) AS only_x;
-- UPDATE and DELETE through the parent reach every child
UPDATE hpar SET v = v || '+' WHERE id % 4 = 0;
UPDATE mpar SET v = v || '+' WHERE id % 4 = 0;
UPDATE xpar SET v = v || '+' WHERE id % 4 = 0;
UPDATE hpar SET id = id + 1000 WHERE id % 9 = 0;
UPDATE mpar SET id = id + 1000 WHERE id % 9 = 0;
UPDATE xpar SET id = id + 1000 WHERE id % 9 = 0;
DELETE FROM hpar WHERE id % 10 = 0;
DELETE FROM mpar WHERE id % 10 = 0;
DELETE FROM xpar WHERE id % 10 = 0;
SELECT * FROM cmp('hpar', 'mpar');
SELECT * FROM cmp('hpar', 'xpar');
SELECT * FROM cmp('hch1', 'mch1');
SELECT * FROM cmp('hch2', 'xch2');
SELECT tableoid::regclass::text ~ 'ch1' AS ch1, count(*), sum(id) FROM mpar GROUP BY 1 ORDER BY 1;
-- ALTER TABLE on the parent reaches the children (rewrite included)
ALTER TABLE hpar ADD COLUMN r int DEFAULT 0, ALTER COLUMN id TYPE bigint;
ALTER TABLE mpar ADD COLUMN r int DEFAULT 0, ALTER COLUMN id TYPE bigint;
ALTER TABLE xpar ADD COLUMN r int DEFAULT 0, ALTER COLUMN id TYPE bigint;
SELECT * FROM cmp('hpar', 'mpar');
SELECT * FROM cmp('hch1', 'xch1');
-- TRUNCATE of the parent truncates the children; ONLY does not
TRUNCATE ONLY mpar;
TRUNCATE ONLY hpar;
SELECT * FROM cmp('hpar', 'mpar');
TRUNCATE xpar;
SELECT count(*) FROM xpar;
-- NO INHERIT, then INHERIT again
ALTER TABLE mch2 NO INHERIT mpar;
ALTER TABLE hch2 NO INHERIT hpar;
SELECT * FROM cmp('hpar', 'mpar');
ALTER TABLE mch2 INHERIT mpar;
ALTER TABLE hch2 INHERIT hpar;
SELECT * FROM cmp('hpar', 'mpar');

-- 3. COPY ... FREEZE
-- refused unless the table was created or truncated in this transaction
COPY h (id, k, v) FROM stdin WITH (FREEZE);
5000	1	x
\.
COPY m (id, k, v) FROM stdin WITH (FREEZE);
5000	1	x
\.
BEGIN;
CREATE TABLE hf (id int, v text) USING heap;
CREATE TABLE mf (id int, v text) USING :am;
COPY hf FROM stdin WITH (FREEZE);
1	one
2	two
3	\N
\.
COPY mf FROM stdin WITH (FREEZE);
1	one
2	two
3	\N
\.
SELECT * FROM mf ORDER BY id;
COMMIT;
-- the rows were written frozen
SELECT frozen_rows('hf') AS hf_frozen, frozen_rows('mf') AS mf_frozen;
SELECT * FROM cmp('hf', 'mf');
-- TRUNCATE, then COPY FREEZE in the same transaction
BEGIN;
TRUNCATE hf;
TRUNCATE mf;
COPY hf FROM stdin WITH (FREEZE);
10	ten
11	eleven
\.
COPY mf FROM stdin WITH (FREEZE);
10	ten
11	eleven
\.
COMMIT;
SELECT frozen_rows('hf') AS hf_frozen, frozen_rows('mf') AS mf_frozen;
SELECT * FROM cmp('hf', 'mf');
-- frozen rows take updates and deletes as usual
UPDATE hf SET v = v || '!' WHERE id = 10;
UPDATE mf SET v = v || '!' WHERE id = 10;
DELETE FROM hf WHERE id = 11;
DELETE FROM mf WHERE id = 11;
SELECT * FROM mf ORDER BY id;
SELECT * FROM cmp('hf', 'mf');

SET client_min_messages = warning;
DROP SCHEMA ddl_inherit CASCADE;
RESET client_min_messages;
