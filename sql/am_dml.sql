--
-- am_dml: INSERT / COPY / UPDATE / DELETE / RETURNING / triggers / generated
-- columns / savepoints / aborted transactions / unlogged and temp tables /
-- default_table_access_method, on a heap table and a minidb table side by
-- side.  cmp(a, b) lists the rows (as whole-row text) that are in one table
-- but not the other, as a multiset: it must always return 0 rows.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_dml;
SET search_path = am_dml, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

CREATE TABLE h (id int PRIMARY KEY, k int, v text, n numeric, f bool,
                g int GENERATED ALWAYS AS (k * 2) STORED) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int, v text, n numeric, f bool,
                g int GENERATED ALWAYS AS (k * 2) STORED) USING minidb;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('h', 'm') AND c.relnamespace = 'am_dml'::regnamespace
 ORDER BY 1;

-- single-row and multi-row INSERT, with RETURNING
INSERT INTO h (id, k, v, n, f) VALUES (1, 10, 'one', 1.5, true) RETURNING *;
INSERT INTO m (id, k, v, n, f) VALUES (1, 10, 'one', 1.5, true) RETURNING *;
INSERT INTO h (id, k, v, n, f) VALUES (2, 20, 'two', NULL, false), (3, NULL, NULL, 3, NULL),
  (4, 40, '', 0, true) RETURNING id, g, v IS NULL AS vnull;
INSERT INTO m (id, k, v, n, f) VALUES (2, 20, 'two', NULL, false), (3, NULL, NULL, 3, NULL),
  (4, 40, '', 0, true) RETURNING id, g, v IS NULL AS vnull;
-- INSERT ... SELECT
INSERT INTO h (id, k, v, n, f)
  SELECT i, i % 17, 'row ' || i, i / 7.0, i % 3 = 0 FROM generate_series(5, 400) i;
INSERT INTO m (id, k, v, n, f)
  SELECT i, i % 17, 'row ' || i, i / 7.0, i % 3 = 0 FROM generate_series(5, 400) i;
SELECT * FROM cmp('h', 'm');
SELECT count(*), sum(k), sum(g), sum(n), count(v), count(f) FROM m;

-- COPY FROM stdin goes through multi_insert
COPY h (id, k, v, n, f) FROM stdin;
1001	1	copy one	1.25	t
1002	\N	copy two	\N	f
1003	3	\N	3.5	\N
1004	4	tab\there	4	t
1005	5	back\\slash	5	f
\.
COPY m (id, k, v, n, f) FROM stdin;
1001	1	copy one	1.25	t
1002	\N	copy two	\N	f
1003	3	\N	3.5	\N
1004	4	tab\there	4	t
1005	5	back\\slash	5	f
\.
-- a bigger COPY, so that several multi_insert batches are flushed
\copy h (id, k) FROM PROGRAM 'seq 2001 4500 | sed "s/.*/&,&/"' WITH (FORMAT csv)
\copy m (id, k) FROM PROGRAM 'seq 2001 4500 | sed "s/.*/&,&/"' WITH (FORMAT csv)
SELECT * FROM cmp('h', 'm');
SELECT id, k, v, n, f, g FROM m WHERE id BETWEEN 1001 AND 1005 ORDER BY id;
SELECT count(*), sum(id), sum(k) FROM m WHERE id > 2000;
-- a COPY that fails on a unique violation after a batch was inserted
-- leaves nothing visible
\set VERBOSITY terse
\copy h (id, k) FROM PROGRAM 'seq 4501 6000 | sed "s/^5999$/2001/; s/.*/&,1/"' WITH (FORMAT csv)
\copy m (id, k) FROM PROGRAM 'seq 4501 6000 | sed "s/^5999$/2001/; s/.*/&,1/"' WITH (FORMAT csv)
\set VERBOSITY default
SELECT count(*) FROM m WHERE id > 4500;
SELECT * FROM cmp('h', 'm');

-- UPDATE: non-key columns, the key, many rows.  RETURNING of several rows
-- comes in physical order, which differs between AMs: sort it in a CTE.
UPDATE h SET v = v || '!', n = n * 2 WHERE id = 1 RETURNING id, v, n, g;
UPDATE m SET v = v || '!', n = n * 2 WHERE id = 1 RETURNING id, v, n, g;
WITH u AS (UPDATE h SET v = v || '!', n = n * 2 WHERE id BETWEEN 2 AND 4 RETURNING id, v, n)
  SELECT * FROM u ORDER BY id;
WITH u AS (UPDATE m SET v = v || '!', n = n * 2 WHERE id BETWEEN 2 AND 4 RETURNING id, v, n)
  SELECT * FROM u ORDER BY id;
WITH u AS (UPDATE h SET id = id + 10000 WHERE id BETWEEN 100 AND 110 RETURNING id, k, g)
  SELECT * FROM u ORDER BY id;
WITH u AS (UPDATE m SET id = id + 10000 WHERE id BETWEEN 100 AND 110 RETURNING id, k, g)
  SELECT * FROM u ORDER BY id;
UPDATE h SET k = k + 1 WHERE k % 5 = 0;
UPDATE m SET k = k + 1 WHERE k % 5 = 0;
UPDATE h SET f = NOT f, v = NULL WHERE id % 11 = 0;
UPDATE m SET f = NOT f, v = NULL WHERE id % 11 = 0;
-- the same rows again and again (deep chains on minidb)
UPDATE h SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 200 AND 210;
UPDATE m SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 200 AND 210;
UPDATE h SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 200 AND 210;
UPDATE m SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 200 AND 210;
UPDATE h SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 200 AND 210;
UPDATE m SET n = coalesce(n, 0) + 1 WHERE id BETWEEN 200 AND 210;
-- UPDATE ... FROM and a value growing a lot (the record must move or grow)
UPDATE h SET v = repeat(h.v, 50) FROM (SELECT generate_series(300, 305) AS id) s WHERE h.id = s.id;
UPDATE m SET v = repeat(m.v, 50) FROM (SELECT generate_series(300, 305) AS id) s WHERE m.id = s.id;
SELECT * FROM cmp('h', 'm');
SELECT id, k, g, n, length(v) FROM m WHERE id IN (1, 2, 3, 4, 200, 300, 10100) ORDER BY id;

-- DELETE, with RETURNING and USING
DELETE FROM h WHERE id = 49 RETURNING *;
DELETE FROM m WHERE id = 49 RETURNING *;
WITH d AS (DELETE FROM h WHERE id BETWEEN 50 AND 59 RETURNING id, k) SELECT * FROM d ORDER BY id;
WITH d AS (DELETE FROM m WHERE id BETWEEN 50 AND 59 RETURNING id, k) SELECT * FROM d ORDER BY id;
DELETE FROM h USING (VALUES (60), (61), (62)) d(x) WHERE h.id = d.x;
DELETE FROM m USING (VALUES (60), (61), (62)) d(x) WHERE m.id = d.x;
DELETE FROM h WHERE id > 4000;
DELETE FROM m WHERE id > 4000;
-- deleted rows' keys can be used again
INSERT INTO h (id, k, v) VALUES (50, -50, 'again');
INSERT INTO m (id, k, v) VALUES (50, -50, 'again');
SELECT * FROM cmp('h', 'm');
SELECT count(*), sum(id), sum(k) FROM m;

-- generated columns follow UPDATEs of their inputs
UPDATE h SET k = 1000 WHERE id = 5;
UPDATE m SET k = 1000 WHERE id = 5;
SELECT id, k, g FROM m WHERE id = 5;
\set VERBOSITY terse
UPDATE m SET g = 1 WHERE id = 5;
\set VERBOSITY default

-- row triggers: BEFORE changes NEW and may skip; AFTER logs OLD and NEW
CREATE TABLE trig_log (seq serial, tbl text, op text, old_row text, new_row text);
CREATE FUNCTION trg_before() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    IF upper(OLD.v) = 'KEEP ME' THEN RETURN NULL; END IF;   -- skip the delete
    RETURN OLD;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.k IS NOT NULL THEN
    NEW.n := coalesce(NEW.n, 0) + OLD.k;             -- read OLD, change NEW
  END IF;
  NEW.v := upper(NEW.v);
  RETURN NEW;
END $$;
CREATE FUNCTION trg_after() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trig_log (tbl, op, old_row, new_row)
    VALUES (TG_TABLE_NAME, TG_OP,
            CASE WHEN TG_OP <> 'INSERT' THEN ROW(OLD.id, OLD.k, OLD.v, OLD.n, OLD.g)::text END,
            CASE WHEN TG_OP <> 'DELETE' THEN ROW(NEW.id, NEW.k, NEW.v, NEW.n, NEW.g)::text END);
  RETURN NULL;
END $$;
CREATE TABLE th (id int PRIMARY KEY, k int, v text, n int,
                 g int GENERATED ALWAYS AS (k + 1) STORED) USING heap;
CREATE TABLE tm (id int PRIMARY KEY, k int, v text, n int,
                 g int GENERATED ALWAYS AS (k + 1) STORED) USING minidb;
CREATE TRIGGER b BEFORE INSERT OR UPDATE OR DELETE ON th FOR EACH ROW EXECUTE FUNCTION trg_before();
CREATE TRIGGER a AFTER INSERT OR UPDATE OR DELETE ON th FOR EACH ROW EXECUTE FUNCTION trg_after();
CREATE TRIGGER b BEFORE INSERT OR UPDATE OR DELETE ON tm FOR EACH ROW EXECUTE FUNCTION trg_before();
CREATE TRIGGER a AFTER INSERT OR UPDATE OR DELETE ON tm FOR EACH ROW EXECUTE FUNCTION trg_after();
INSERT INTO th (id, k, v) VALUES (1, 1, 'a'), (2, 2, 'keep me'), (3, NULL, 'c'), (4, 4, 'd');
INSERT INTO tm (id, k, v) VALUES (1, 1, 'a'), (2, 2, 'keep me'), (3, NULL, 'c'), (4, 4, 'd');
UPDATE th SET v = v || 'x', n = 10 WHERE id IN (1, 3);
UPDATE tm SET v = v || 'x', n = 10 WHERE id IN (1, 3);
UPDATE th SET k = k * 10, id = id + 100 WHERE id = 4;   -- moves the row on minidb
UPDATE tm SET k = k * 10, id = id + 100 WHERE id = 4;
UPDATE th SET v = 'keep me' WHERE id = 2;
UPDATE tm SET v = 'keep me' WHERE id = 2;
DELETE FROM th;
DELETE FROM tm;
SELECT * FROM cmp('th', 'tm');
SELECT * FROM tm ORDER BY id;
-- the two logs must be identical apart from the table name (rows of one
-- statement fire in physical order, which differs between AMs: sort them)
SELECT op, old_row, new_row FROM trig_log WHERE tbl = 'tm' ORDER BY op, old_row, new_row;
SELECT (SELECT array_agg(ROW(op, old_row, new_row)::text ORDER BY op, old_row, new_row)
          FROM trig_log WHERE tbl = 'th')
     = (SELECT array_agg(ROW(op, old_row, new_row)::text ORDER BY op, old_row, new_row)
          FROM trig_log WHERE tbl = 'tm')
  AS same_trigger_log;
-- a statement-level AFTER trigger with transition tables
CREATE FUNCTION trg_trans() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO trig_log (tbl, op, old_row, new_row)
    VALUES (TG_TABLE_NAME, 'T' || TG_OP,
            (SELECT string_agg(ot::text, ';' ORDER BY ot.id) FROM old_t ot),
            (SELECT string_agg(nt::text, ';' ORDER BY nt.id) FROM new_t nt));
  RETURN NULL;
END $$;
CREATE TRIGGER t AFTER UPDATE ON th REFERENCING OLD TABLE AS old_t NEW TABLE AS new_t
  FOR EACH STATEMENT EXECUTE FUNCTION trg_trans();
CREATE TRIGGER t AFTER UPDATE ON tm REFERENCING OLD TABLE AS old_t NEW TABLE AS new_t
  FOR EACH STATEMENT EXECUTE FUNCTION trg_trans();
UPDATE th SET k = 7 WHERE id = 2;
UPDATE tm SET k = 7 WHERE id = 2;
SELECT op, old_row, new_row FROM trig_log WHERE tbl = 'tm' AND op LIKE 'T%' ORDER BY seq;
SELECT * FROM cmp('th', 'tm');

-- SAVEPOINT / ROLLBACK TO / RELEASE
BEGIN;
INSERT INTO h (id, k, v) VALUES (20001, 1, 'sp');
INSERT INTO m (id, k, v) VALUES (20001, 1, 'sp');
SAVEPOINT s1;
UPDATE h SET v = 'sp-updated' WHERE id = 20001;
UPDATE m SET v = 'sp-updated' WHERE id = 20001;
DELETE FROM h WHERE id = 1;
DELETE FROM m WHERE id = 1;
SAVEPOINT s2;
UPDATE h SET k = k + 1 WHERE id <= 10;
UPDATE m SET k = k + 1 WHERE id <= 10;
SELECT id, k, v FROM m WHERE id <= 10 OR id = 20001 ORDER BY id;
ROLLBACK TO s2;
SELECT id, k, v FROM m WHERE id <= 10 OR id = 20001 ORDER BY id;
ROLLBACK TO s1;
SELECT id, k, v FROM m WHERE id <= 10 OR id = 20001 ORDER BY id;
SAVEPOINT s3;
UPDATE h SET v = 'released' WHERE id = 20001;
UPDATE m SET v = 'released' WHERE id = 20001;
RELEASE s3;
SELECT * FROM cmp('h', 'm');
COMMIT;
SELECT id, k, v FROM m WHERE id <= 3 OR id = 20001 ORDER BY id;
SELECT * FROM cmp('h', 'm');

-- an aborted transaction leaves nothing visible
BEGIN;
INSERT INTO h (id, k, v) VALUES (30001, 1, 'aborted');
INSERT INTO m (id, k, v) VALUES (30001, 1, 'aborted');
UPDATE h SET v = 'aborted' WHERE id BETWEEN 10 AND 20;
UPDATE m SET v = 'aborted' WHERE id BETWEEN 10 AND 20;
UPDATE h SET id = -id WHERE id BETWEEN 21 AND 25;
UPDATE m SET id = -id WHERE id BETWEEN 21 AND 25;
DELETE FROM h WHERE id BETWEEN 26 AND 30;
DELETE FROM m WHERE id BETWEEN 26 AND 30;
ROLLBACK;
-- a transaction aborted by an error
BEGIN;
UPDATE m SET v = 'error' WHERE id = 31;
SELECT 1 / 0;
COMMIT;
SELECT count(*) FROM m WHERE v IN ('aborted', 'error') OR id = 30001 OR id < 0;
SELECT id, v FROM m WHERE id BETWEEN 20 AND 31 ORDER BY id;
SELECT * FROM cmp('h', 'm');
-- and later writes to those rows work
UPDATE h SET v = 'after abort' WHERE id BETWEEN 10 AND 30;
UPDATE m SET v = 'after abort' WHERE id BETWEEN 10 AND 30;
SELECT * FROM cmp('h', 'm');

-- unlogged and temporary tables
CREATE UNLOGGED TABLE uh (a int, b text) USING heap;
CREATE UNLOGGED TABLE um (a int, b text) USING minidb;
CREATE TEMP TABLE tmp_h (a int, b text) USING heap;
CREATE TEMP TABLE tmp_m (a int, b text) USING minidb;
INSERT INTO uh SELECT i, 'u' || i FROM generate_series(1, 500) i;
INSERT INTO um SELECT i, 'u' || i FROM generate_series(1, 500) i;
INSERT INTO tmp_h SELECT i, 't' || i FROM generate_series(1, 500) i;
INSERT INTO tmp_m SELECT i, 't' || i FROM generate_series(1, 500) i;
UPDATE uh SET b = b || '+' WHERE a % 4 = 0;
UPDATE um SET b = b || '+' WHERE a % 4 = 0;
UPDATE tmp_h SET b = b || '+' WHERE a % 4 = 0;
UPDATE tmp_m SET b = b || '+' WHERE a % 4 = 0;
DELETE FROM uh WHERE a % 10 = 0;
DELETE FROM um WHERE a % 10 = 0;
DELETE FROM tmp_h WHERE a % 10 = 0;
DELETE FROM tmp_m WHERE a % 10 = 0;
SELECT * FROM cmp('uh', 'um');
SELECT * FROM cmp('tmp_h', 'tmp_m');
SELECT relname, relpersistence, amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE relname IN ('um', 'tmp_m') ORDER BY relname;
SELECT count(*), sum(a), count(*) FILTER (WHERE b LIKE '%+') FROM um;
SELECT count(*), sum(a), count(*) FILTER (WHERE b LIKE '%+') FROM tmp_m;

-- default_table_access_method, CREATE TABLE AS, \d+
SET default_table_access_method = minidb;
CREATE TABLE d (a int UNIQUE, b text);	-- no NOT NULL: \d+ lists those from 18 on
CREATE TABLE d_ctas AS SELECT i AS a, 'x' || i AS b FROM generate_series(1, 50) i;
RESET default_table_access_method;
CREATE TABLE d_heap AS SELECT i AS a, 'x' || i AS b FROM generate_series(1, 50) i;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('d', 'd_ctas', 'd_heap') AND c.relnamespace = 'am_dml'::regnamespace
 ORDER BY 1;
SELECT * FROM cmp('d_heap', 'd_ctas');
\set HIDE_TABLEAM off
\d+ d
\set HIDE_TABLEAM on
-- ALTER TABLE ... SET ACCESS METHOD rewrites the table in both directions
ALTER TABLE d_heap SET ACCESS METHOD minidb;
ALTER TABLE d_ctas SET ACCESS METHOD heap;
SELECT c.relname, a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
 WHERE c.relname IN ('d_ctas', 'd_heap') AND c.relnamespace = 'am_dml'::regnamespace
 ORDER BY 1;
SELECT * FROM cmp('d_heap', 'd_ctas');

-- TRUNCATE (also rolled back), VACUUM, VACUUM FULL, CLUSTER
BEGIN;
TRUNCATE m;
SELECT count(*) FROM m;
ROLLBACK;
SELECT * FROM cmp('h', 'm');
VACUUM h;
VACUUM m;
SELECT * FROM cmp('h', 'm');
VACUUM FULL h;
VACUUM FULL m;
SELECT * FROM cmp('h', 'm');
CLUSTER h USING h_pkey;
CLUSTER m USING m_pkey;
SELECT * FROM cmp('h', 'm');
UPDATE h SET v = 'after cluster' WHERE id % 13 = 0;
UPDATE m SET v = 'after cluster' WHERE id % 13 = 0;
SELECT * FROM cmp('h', 'm');
TRUNCATE h, m;
SELECT count(*) FROM m;
INSERT INTO h (id, k) VALUES (1, 1);
INSERT INTO m (id, k) VALUES (1, 1);
SELECT * FROM cmp('h', 'm');

SET client_min_messages = warning;
DROP SCHEMA am_dml CASCADE;
