--
-- ddl_rewrite: table rewrites and the migration path, on a heap table and
-- a minidb table side by side: ALTER TABLE ... ADD COLUMN with a volatile
-- default, ALTER COLUMN TYPE, SET UNLOGGED / SET LOGGED, ALTER TABLE ...
-- SET TABLESPACE (an in-place tablespace), and, besides ALTER TABLE ...
-- SET ACCESS METHOD (sql/tools.sql, sql/am_dml.sql), the other ways to move
-- a heap table's data into minidb: CREATE TABLE ... USING minidb AS
-- SELECT, CREATE TABLE (LIKE ...) USING minidb + INSERT ... SELECT, SELECT
-- INTO under default_table_access_method, and a materialized view USING
-- minidb.
-- cmp(a, b) lists the rows in one table but not the other (EXCEPT ALL both
-- ways): always 0 rows.  The expected output is heap's behaviour (run with
-- "\set am heap" it is the same apart from that line).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
\set am minidb
CREATE SCHEMA ddl_rewrite;
SET search_path = ddl_rewrite, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file
CREATE FUNCTION am_of(rel regclass) RETURNS name LANGUAGE sql AS
$$ SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel $$;
CREATE FUNCTION node(rel regclass) RETURNS oid LANGUAGE sql AS
$$ SELECT relfilenode FROM pg_class WHERE oid = rel $$;

CREATE TABLE h (id int PRIMARY KEY, k int, v text, big text) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int, v text, big text) USING :am;
CREATE INDEX h_k ON h (k);
CREATE INDEX m_k ON m (k);
INSERT INTO h SELECT i, i % 50, 'v' || i, CASE WHEN i % 100 = 0 THEN repeat(md5(i::text), 400) END
  FROM generate_series(1, 1000) i;
INSERT INTO m SELECT i, i % 50, 'v' || i, CASE WHEN i % 100 = 0 THEN repeat(md5(i::text), 400) END
  FROM generate_series(1, 1000) i;
UPDATE h SET v = v || '+' WHERE id % 3 = 0;        -- in place on minidb
UPDATE m SET v = v || '+' WHERE id % 3 = 0;
UPDATE h SET k = k + 1000 WHERE id % 11 = 0;       -- moves the row on minidb
UPDATE m SET k = k + 1000 WHERE id % 11 = 0;
DELETE FROM h WHERE id % 13 = 0;
DELETE FROM m WHERE id % 13 = 0;
SELECT * FROM cmp('h', 'm');

-- 1. ADD COLUMN with a volatile default: the table is rewritten and every
--    row gets its own value
SELECT node('h') AS h_node, node('m') AS m_node \gset
CREATE SEQUENCE hs;
CREATE SEQUENCE ms;
ALTER TABLE h ADD COLUMN s int DEFAULT nextval('hs'), ADD COLUMN t timestamptz DEFAULT clock_timestamp();
ALTER TABLE m ADD COLUMN s int DEFAULT nextval('ms'), ADD COLUMN t timestamptz DEFAULT clock_timestamp();
SELECT node('h') <> :h_node AS h_rewritten, node('m') <> :m_node AS m_rewritten;
SELECT count(*), count(DISTINCT s), min(s), max(s), count(t) FROM m;
SELECT * FROM cmp('h', 'm', cols => '(x.id, x.k, x.v, x.big)');
-- and a non-volatile default does not rewrite
SELECT node('m') AS m_node \gset
ALTER TABLE h ADD COLUMN c int DEFAULT 7;
ALTER TABLE m ADD COLUMN c int DEFAULT 7;
SELECT node('m') = :m_node AS m_not_rewritten;
SELECT count(*) FILTER (WHERE c = 7) FROM m;
INSERT INTO h (id, k, v) VALUES (5000, 1, 'new');
INSERT INTO m (id, k, v) VALUES (5000, 1, 'new');
SELECT id, k, v, s IS NOT NULL AS has_s, c FROM m WHERE id = 5000;
ALTER TABLE h DROP COLUMN s, DROP COLUMN t;
ALTER TABLE m DROP COLUMN s, DROP COLUMN t;
SELECT * FROM cmp('h', 'm');

-- 2. ALTER COLUMN TYPE (rewrite, indexes rebuilt), also on a TOASTed column
SELECT node('m') AS m_node \gset
ALTER TABLE h ALTER COLUMN k TYPE bigint USING k * 10, ALTER COLUMN big TYPE varchar;
ALTER TABLE m ALTER COLUMN k TYPE bigint USING k * 10, ALTER COLUMN big TYPE varchar;
SELECT node('m') <> :m_node AS m_rewritten;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'm'::regclass AND attname IN ('k', 'big') ORDER BY attnum;
SELECT * FROM cmp('h', 'm');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, v FROM m WHERE k = 10110 ORDER BY id;
SELECT id, length(big), md5(big) FROM m WHERE id = 200;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- rolled back: the old storage and type come back
BEGIN;
ALTER TABLE h ALTER COLUMN v TYPE varchar(10);
ALTER TABLE m ALTER COLUMN v TYPE varchar(10);
UPDATE h SET v = 'in txn' WHERE id = 1;
UPDATE m SET v = 'in txn' WHERE id = 1;
ROLLBACK;
SELECT format_type(atttypid, atttypmod) FROM pg_attribute
 WHERE attrelid = 'm'::regclass AND attname = 'v';
SELECT id, v FROM m WHERE id = 1;
SELECT * FROM cmp('h', 'm');
-- a failing conversion leaves the table as it was
ALTER TABLE h ALTER COLUMN v TYPE int USING v::int;
ALTER TABLE m ALTER COLUMN v TYPE int USING v::int;
SELECT * FROM cmp('h', 'm');

-- 3. SET UNLOGGED / SET LOGGED
ALTER TABLE h SET UNLOGGED;
ALTER TABLE m SET UNLOGGED;
SELECT relpersistence, am_of(oid) = :'am' AS am_kept FROM pg_class WHERE oid = 'm'::regclass;
SELECT (pg_stat_file(pg_relation_filepath('m') || '_init')).size AS m_init_size;
SELECT * FROM cmp('h', 'm');
UPDATE h SET v = 'unlogged' WHERE id = 2;
UPDATE m SET v = 'unlogged' WHERE id = 2;
ALTER TABLE h SET LOGGED;
ALTER TABLE m SET LOGGED;
SELECT relpersistence, am_of(oid) = :'am' AS am_kept FROM pg_class WHERE oid = 'm'::regclass;
SELECT pg_stat_file(pg_relation_filepath('m') || '_init', true) IS NULL AS m_no_init;
SELECT * FROM cmp('h', 'm');
SET enable_seqscan = off;
SELECT id, v FROM m WHERE id = 2;
RESET enable_seqscan;

-- 4. ALTER TABLE ... SET TABLESPACE (relation_copy_data: every fork)
SET allow_in_place_tablespaces = true;
CREATE TABLESPACE ddl_rewrite_ts LOCATION '';
RESET allow_in_place_tablespaces;
VACUUM h;      -- gives both a free space map and a visibility map fork
VACUUM m;
SELECT pg_relation_size('m', 'fsm') > 0 AS m_has_fsm;
SELECT pg_relation_size('m', 'vm') AS m_vm_size \gset
SELECT pg_relation_size('m', 'fsm') AS m_fsm_size \gset
-- rolled back first
BEGIN;
ALTER TABLE h SET TABLESPACE ddl_rewrite_ts;
ALTER TABLE m SET TABLESPACE ddl_rewrite_ts;
SELECT count(*) FROM m;
ROLLBACK;
SELECT reltablespace = 0 AS m_default_ts FROM pg_class WHERE oid = 'm'::regclass;
SELECT * FROM cmp('h', 'm');
ALTER TABLE h SET TABLESPACE ddl_rewrite_ts;
ALTER TABLE m SET TABLESPACE ddl_rewrite_ts;
SELECT t.spcname FROM pg_class c JOIN pg_tablespace t ON t.oid = c.reltablespace
 WHERE c.oid = 'm'::regclass;
SELECT pg_relation_size('m', 'fsm') = :m_fsm_size AS fsm_copied,
       pg_relation_size('m', 'vm') = :m_vm_size AS vm_copied;
SELECT * FROM cmp('h', 'm');
SET enable_seqscan = off;
SELECT id, k, v, length(big) FROM m WHERE id IN (3, 100, 5000) ORDER BY id;
RESET enable_seqscan;
UPDATE h SET v = 'moved ts' WHERE id < 20;
UPDATE m SET v = 'moved ts' WHERE id < 20;
INSERT INTO h (id, k, v) SELECT i, 1, 'ts' FROM generate_series(6000, 6100) i;
INSERT INTO m (id, k, v) SELECT i, 1, 'ts' FROM generate_series(6000, 6100) i;
SELECT * FROM cmp('h', 'm');
-- an unlogged table keeps its init fork in the new tablespace
CREATE UNLOGGED TABLE hu (id int, v text) USING heap;
CREATE UNLOGGED TABLE mu (id int, v text) USING :am;
INSERT INTO hu SELECT i, 'u' || i FROM generate_series(1, 100) i;
INSERT INTO mu SELECT i, 'u' || i FROM generate_series(1, 100) i;
ALTER TABLE hu SET TABLESPACE ddl_rewrite_ts;
ALTER TABLE mu SET TABLESPACE ddl_rewrite_ts;
SELECT (pg_stat_file(pg_relation_filepath('mu') || '_init')).size AS mu_init_size;
SELECT * FROM cmp('hu', 'mu');
ALTER TABLE h SET TABLESPACE pg_default;
ALTER TABLE m SET TABLESPACE pg_default;
DROP TABLE hu, mu;
SELECT * FROM cmp('h', 'm');

-- 5. the migration path from heap to minidb
-- 5a. CREATE TABLE ... USING minidb AS SELECT
CREATE TABLE m_ctas USING minidb AS SELECT * FROM h;
SELECT am_of('m_ctas');
SELECT * FROM cmp('h', 'm_ctas');
-- WITH NO DATA, then INSERT ... SELECT
CREATE TABLE m_nodata USING minidb AS SELECT * FROM h WITH NO DATA;
INSERT INTO m_nodata SELECT * FROM h;
SELECT am_of('m_nodata'), (SELECT count(*) FROM m_nodata) AS n;
SELECT * FROM cmp('h', 'm_nodata');
-- 5b. CREATE TABLE (LIKE ... INCLUDING ALL) USING minidb + INSERT ... SELECT,
--     then swap names in one transaction
CREATE TABLE h_src (id int PRIMARY KEY, k int NOT NULL DEFAULT 0, v text CHECK (v <> ''),
                    big text) USING heap;
INSERT INTO h_src SELECT id, k, v, big FROM h;
CREATE INDEX h_src_k ON h_src (k);
BEGIN;
CREATE TABLE m_dst (LIKE h_src INCLUDING ALL) USING minidb;
INSERT INTO m_dst SELECT * FROM h_src;
ALTER TABLE h_src RENAME TO h_old;
ALTER TABLE m_dst RENAME TO h_src;
COMMIT;
SELECT am_of('h_src'), (SELECT count(*) FROM h_src) AS n;
SELECT indexrelid::regclass IS NOT NULL AS has_index, indisunique, indisprimary
  FROM pg_index WHERE indrelid = 'h_src'::regclass ORDER BY indisprimary, indisunique;
SELECT * FROM cmp('h_old', 'h_src');
INSERT INTO h_src (id, v) VALUES (1, 'dup');        -- the primary key came along
INSERT INTO h_src (id, v) VALUES (7001, '');        -- and the check constraint
SET enable_seqscan = off;
SELECT id, k, v FROM h_src WHERE k = 1010 ORDER BY id;
RESET enable_seqscan;
-- 5c. SELECT INTO and CREATE TABLE AS follow default_table_access_method
SET default_table_access_method = minidb;
SELECT * INTO m_into FROM h WHERE id <= 500;
CREATE TABLE m_ctas2 AS SELECT id, v FROM h;
RESET default_table_access_method;
SELECT am_of('m_into') AS into_am, am_of('m_ctas2') AS ctas_am;
SELECT count(*) FROM m_into;
-- 5d. a materialized view stored as minidb, refreshed (also concurrently)
CREATE MATERIALIZED VIEW mv USING minidb AS SELECT k, count(*) AS n FROM h GROUP BY k;
CREATE UNIQUE INDEX mv_k ON mv (k);
SELECT am_of('mv');
UPDATE h SET k = 1 WHERE id <= 100;
REFRESH MATERIALIZED VIEW mv;
SELECT * FROM mv WHERE k IN (1, 2, 10) ORDER BY k;
UPDATE h SET k = 2 WHERE id <= 50;
REFRESH MATERIALIZED VIEW CONCURRENTLY mv;
SELECT * FROM mv WHERE k IN (1, 2, 10) ORDER BY k;
SELECT (SELECT count(*) FROM mv) = (SELECT count(DISTINCT k) FROM h) AS mv_complete;

SET client_min_messages = warning;
DROP SCHEMA ddl_rewrite CASCADE;
RESET client_min_messages;
DROP TABLESPACE ddl_rewrite_ts;
