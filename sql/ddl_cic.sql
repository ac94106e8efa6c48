--
-- ddl_cic: CREATE INDEX CONCURRENTLY, REINDEX CONCURRENTLY, DROP INDEX
-- CONCURRENTLY and plain REINDEX on a heap table and a minidb table side
-- by side, over rows inserted, updated in place, moved and deleted
-- beforehand; a concurrent build that fails (UNIQUE over duplicates)
-- leaves an invalid index, as on heap, which REINDEX CONCURRENTLY then
-- repairs.  Every index is checked with amcheck (heapallindexed) and read
-- through forced index scans.  The race with concurrent writers is
-- specs/ddl_cic_race.spec.
-- cmp(a, b, cols): rows in one table but not the other (EXCEPT ALL both
-- ways), always 0 rows.  The expected output is heap's behaviour (run with
-- "\set am heap" it is the same apart from that line).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
\set am minidb
CREATE SCHEMA ddl_cic;
SET search_path = ddl_cic, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file
-- rows read through a forced plain index scan on the given index
CREATE FUNCTION via_index(rel regclass, idx regclass, cond text)
RETURNS TABLE(r text) LANGUAGE plpgsql AS $$
DECLARE plan text;
BEGIN
  SET LOCAL enable_seqscan = off;
  SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexonlyscan = off;
  EXECUTE format('EXPLAIN (COSTS OFF) SELECT * FROM %s x WHERE %s', rel, cond) INTO plan;
  IF plan NOT LIKE '%' || (SELECT relname FROM pg_class WHERE oid = idx) || '%' THEN
    RAISE EXCEPTION 'plan does not use %: %', idx, plan;
  END IF;
  RETURN QUERY EXECUTE format('SELECT x::text FROM %s x WHERE %s', rel, cond);
END $$;
CREATE FUNCTION index_state(idx regclass) RETURNS TABLE(valid bool, ready bool, live bool)
LANGUAGE sql AS $$ SELECT indisvalid, indisready, indislive FROM pg_index WHERE indexrelid = idx $$;

CREATE TABLE h (id int PRIMARY KEY, k int, v text, w int) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int, v text, w int) USING :am;
INSERT INTO h SELECT i, i % 100, 'v' || i, i FROM generate_series(1, 2000) i;
INSERT INTO m SELECT i, i % 100, 'v' || i, i FROM generate_series(1, 2000) i;
UPDATE h SET v = v || '+', w = w + 1 WHERE id % 3 = 0;    -- in place on minidb
UPDATE m SET v = v || '+', w = w + 1 WHERE id % 3 = 0;
UPDATE h SET w = w + 1 WHERE id % 3 = 0;
UPDATE m SET w = w + 1 WHERE id % 3 = 0;
UPDATE h SET id = id + 10000 WHERE id % 17 = 0;          -- the row moves on minidb
UPDATE m SET id = id + 10000 WHERE id % 17 = 0;
DELETE FROM h WHERE id % 19 = 0;
DELETE FROM m WHERE id % 19 = 0;
SELECT * FROM cmp('h', 'm');

-- 1. CREATE INDEX CONCURRENTLY on columns changed in place before
CREATE INDEX CONCURRENTLY h_v ON h (v);
CREATE INDEX CONCURRENTLY m_v ON m (v);
CREATE INDEX CONCURRENTLY h_kw ON h (k, w) WHERE w % 2 = 0;
CREATE INDEX CONCURRENTLY m_kw ON m (k, w) WHERE w % 2 = 0;
CREATE INDEX CONCURRENTLY h_expr ON h ((lower(v) || w::text));
CREATE INDEX CONCURRENTLY m_expr ON m ((lower(v) || w::text));
SELECT * FROM index_state('m_v');
SELECT * FROM index_state('m_kw');
SELECT * FROM index_state('m_expr');
SELECT bt_index_check('h_v', true), bt_index_check('h_kw', true), bt_index_check('h_expr', true);
SELECT bt_index_check('m_v', true), bt_index_check('m_kw', true), bt_index_check('m_expr', true);
-- each row exactly once through each index
SELECT count(*) FROM via_index('m', 'm_v', 'v >= '''' ');
SELECT count(*) FROM via_index('h', 'h_v', 'v >= '''' ');
(SELECT * FROM via_index('h', 'h_v', 'v >= ''v1'' AND v < ''v2''') EXCEPT ALL
 SELECT * FROM via_index('m', 'm_v', 'v >= ''v1'' AND v < ''v2''')) UNION ALL
(SELECT * FROM via_index('m', 'm_v', 'v >= ''v1'' AND v < ''v2''') EXCEPT ALL
 SELECT * FROM via_index('h', 'h_v', 'v >= ''v1'' AND v < ''v2'''));
SELECT * FROM via_index('m', 'm_kw', 'k = 4 AND w % 2 = 0 AND w < 700') ORDER BY 1;
(SELECT * FROM via_index('h', 'h_kw', 'k < 50 AND w % 2 = 0') EXCEPT ALL
 SELECT * FROM via_index('m', 'm_kw', 'k < 50 AND w % 2 = 0')) UNION ALL
(SELECT * FROM via_index('m', 'm_kw', 'k < 50 AND w % 2 = 0') EXCEPT ALL
 SELECT * FROM via_index('h', 'h_kw', 'k < 50 AND w % 2 = 0'));
SELECT * FROM via_index('m', 'm_expr', '(lower(v) || w::text) = ''v3+5''');
SELECT * FROM via_index('m', 'm_expr', '(lower(v) || w::text) = ''v3+3''');
-- writes after the build keep the index right
UPDATE h SET v = 'changed ' || id WHERE id % 5 = 0;
UPDATE m SET v = 'changed ' || id WHERE id % 5 = 0;
UPDATE h SET w = w + 1 WHERE id % 7 = 0;
UPDATE m SET w = w + 1 WHERE id % 7 = 0;
INSERT INTO h SELECT i, i % 100, 'late' || i, i FROM generate_series(3000, 3100) i;
INSERT INTO m SELECT i, i % 100, 'late' || i, i FROM generate_series(3000, 3100) i;
SELECT bt_index_check('m_v', true), bt_index_check('m_kw', true), bt_index_check('m_expr', true);
SELECT count(*) FROM via_index('m', 'm_v', 'v >= '''' ');
SELECT count(*) FROM via_index('h', 'h_v', 'v >= '''' ');
SELECT * FROM via_index('m', 'm_v', 'v = ''changed 10''');

-- 2. REINDEX CONCURRENTLY (index, table) and plain REINDEX
SELECT 'm_v'::regclass::oid AS m_v_oid \gset
REINDEX INDEX CONCURRENTLY h_v;
REINDEX INDEX CONCURRENTLY m_v;
SELECT 'm_v'::regclass::oid <> :m_v_oid AS m_v_replaced;
SELECT * FROM index_state('m_v');
REINDEX TABLE CONCURRENTLY h;
REINDEX TABLE CONCURRENTLY m;
SELECT count(*) FROM pg_index WHERE indrelid = 'm'::regclass AND indisvalid;
SELECT count(*) FROM pg_index WHERE indrelid = 'h'::regclass AND indisvalid;
SELECT bt_index_check('m_v', true), bt_index_check('m_kw', true), bt_index_check('m_expr', true),
       bt_index_check('m_pkey', true);
REINDEX TABLE h;
REINDEX TABLE m;
SELECT bt_index_check('m_v', true), bt_index_check('m_pkey', true);
SELECT count(*) FROM via_index('m', 'm_pkey', 'id > 0');
SELECT count(*) FROM via_index('h', 'h_pkey', 'id > 0');
SELECT * FROM via_index('m', 'm_pkey', 'id = 10017');
SELECT * FROM cmp('h', 'm');

-- 3. a failed concurrent build: UNIQUE over duplicates leaves an invalid index
INSERT INTO h VALUES (20000, 5, 'v1', 0);
INSERT INTO m VALUES (20000, 5, 'v1', 0);
CREATE UNIQUE INDEX CONCURRENTLY h_v_uniq ON h (v);
CREATE UNIQUE INDEX CONCURRENTLY m_v_uniq ON m (v);
SELECT * FROM index_state('h_v_uniq');
SELECT * FROM index_state('m_v_uniq');
-- the planner ignores it, writes still maintain it, no duplicate check
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE v = 'v2';
RESET enable_seqscan;
INSERT INTO h VALUES (20001, 5, 'v1', 0);
INSERT INTO m VALUES (20001, 5, 'v1', 0);
-- REINDEX CONCURRENTLY still fails while duplicates exist
REINDEX INDEX CONCURRENTLY h_v_uniq;
REINDEX INDEX CONCURRENTLY m_v_uniq;
SELECT * FROM index_state('m_v_uniq');
-- remove the duplicates (keep the smallest id per v), then repair it
DELETE FROM h a USING h b WHERE a.v = b.v AND a.id > b.id;
DELETE FROM m a USING m b WHERE a.v = b.v AND a.id > b.id;
SELECT count(*), count(DISTINCT v) FROM m;
REINDEX INDEX CONCURRENTLY h_v_uniq;
REINDEX INDEX CONCURRENTLY m_v_uniq;
SELECT * FROM index_state('h_v_uniq');
SELECT * FROM index_state('m_v_uniq');
SELECT bt_index_check('m_v_uniq', true);
INSERT INTO h VALUES (20002, 6, 'v2', 0);
INSERT INTO m VALUES (20002, 6, 'v2', 0);
SELECT * FROM via_index('m', 'm_v_uniq', 'v = ''v2''');
-- a failed build whose duplicate comes from updates (in place on minidb)
UPDATE h SET w = -1 WHERE id = 5;
UPDATE m SET w = -1 WHERE id = 5;
UPDATE h SET w = -1 WHERE id = 7;
UPDATE m SET w = -1 WHERE id = 7;
CREATE UNIQUE INDEX CONCURRENTLY h_w_uniq ON h (w) WHERE w < 0;
CREATE UNIQUE INDEX CONCURRENTLY m_w_uniq ON m (w) WHERE w < 0;
SELECT * FROM index_state('m_w_uniq');
DROP INDEX h_w_uniq;
DROP INDEX m_w_uniq;
-- a concurrent unique build that succeeds, then enforces
CREATE UNIQUE INDEX CONCURRENTLY h_id_v ON h (id, v);
CREATE UNIQUE INDEX CONCURRENTLY m_id_v ON m (id, v);
SELECT * FROM index_state('m_id_v');
SELECT * FROM cmp('h', 'm');

-- 4. DROP INDEX CONCURRENTLY
DROP INDEX CONCURRENTLY h_expr;
DROP INDEX CONCURRENTLY m_expr;
DROP INDEX CONCURRENTLY h_v_uniq;
DROP INDEX CONCURRENTLY m_v_uniq;
SELECT count(*) FROM pg_index WHERE indrelid = 'm'::regclass;
SELECT count(*) FROM pg_index WHERE indrelid = 'h'::regclass;

-- 5. a concurrent build after a long chain of in-place updates of one row
UPDATE h SET w = w + 1 WHERE id = 1;
UPDATE m SET w = w + 1 WHERE id = 1;
UPDATE h SET w = w + 1 WHERE id = 1;
UPDATE m SET w = w + 1 WHERE id = 1;
UPDATE h SET w = w + 1 WHERE id = 1;
UPDATE m SET w = w + 1 WHERE id = 1;
CREATE INDEX CONCURRENTLY h_w ON h (w);
CREATE INDEX CONCURRENTLY m_w ON m (w);
SELECT * FROM via_index('m', 'm_w', 'w BETWEEN 1 AND 4') ORDER BY 1;
SELECT * FROM via_index('h', 'h_w', 'w BETWEEN 1 AND 4') ORDER BY 1;
SELECT bt_index_check('m_w', true);

SET client_min_messages = warning;
DROP SCHEMA ddl_cic CASCADE;
RESET client_min_messages;
