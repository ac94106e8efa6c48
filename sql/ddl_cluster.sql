--
-- ddl_cluster: CLUSTER and VACUUM FULL (relation_copy_for_cluster) on a
-- heap table and a minidb table side by side: the same rows afterwards,
-- physical (ctid) order following the index for CLUSTER, new storage,
-- working indexes (amcheck with heapallindexed), reltuples, shrinking,
-- freezing as the server's cutoffs say (CLUSTER and VACUUM FULL freeze
-- with a minimum age of 0), rollback, and tables with TOAST values.
-- Keeping the versions an older snapshot still needs is tested in
-- specs/ddl_cluster_snapshot.spec.
-- cmp(a, b): rows in one table but not the other (EXCEPT ALL both ways),
-- always 0 rows.  The expected output is heap's behaviour (run with
-- "\set am heap" it is the same apart from that line).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
\set am minidb
CREATE SCHEMA ddl_cluster;
SET search_path = ddl_cluster, public;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file

\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file
CREATE FUNCTION node(rel regclass) RETURNS oid LANGUAGE sql AS
$$ SELECT relfilenode FROM pg_class WHERE oid = rel $$;
-- rows (by the query's column k) out of order when read in ctid order
CREATE FUNCTION out_of_order(rel regclass, col text, descending bool DEFAULT false)
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM (SELECT %2$s AS c, lag(%2$s) OVER (ORDER BY ctid) AS p
                  FROM %1$s) s WHERE %3$s', rel, col,
                 CASE WHEN descending THEN 'p < c' ELSE 'p > c' END) INTO n;
  RETURN n;
END $$;
-- live rows whose visible version is frozen, for either table AM
CREATE FUNCTION frozen_rows(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  IF (SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel) = 'heap' THEN
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

CREATE TABLE h (id int PRIMARY KEY, k int, v text) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int, v text) USING :am;
CREATE INDEX h_k ON h (k);
CREATE INDEX m_k ON m (k);
CREATE INDEX h_v ON h (v DESC);
CREATE INDEX m_v ON m (v DESC);
-- k is a permutation of 0..1008, unrelated to insertion order
INSERT INTO h SELECT i, (i * 37) % 1009, 'v' || i FROM generate_series(1, 1000) i;
INSERT INTO m SELECT i, (i * 37) % 1009, 'v' || i FROM generate_series(1, 1000) i;
UPDATE h SET v = v || '+' WHERE id % 3 = 0;           -- in place on minidb
UPDATE m SET v = v || '+' WHERE id % 3 = 0;
UPDATE h SET v = v || '+' WHERE id % 6 = 0;
UPDATE m SET v = v || '+' WHERE id % 6 = 0;
UPDATE h SET k = k + 2000 WHERE id % 10 = 0;          -- the row moves on minidb
UPDATE m SET k = k + 2000 WHERE id % 10 = 0;
DELETE FROM h WHERE id % 7 = 0;
DELETE FROM m WHERE id % 7 = 0;
BEGIN;
UPDATE h SET v = 'aborted' WHERE id % 5 = 0;
UPDATE m SET v = 'aborted' WHERE id % 5 = 0;
DELETE FROM h WHERE id % 4 = 0;
DELETE FROM m WHERE id % 4 = 0;
ROLLBACK;
SELECT * FROM cmp('h', 'm');
SELECT out_of_order('h', 'k') > 0 AS h_unordered, out_of_order('m', 'k') > 0 AS m_unordered;

-- 1. CLUSTER ... USING: same rows, ctid order follows the index
SELECT node('h') AS h_node, node('m') AS m_node \gset
SELECT pg_temp.quiesce();
CLUSTER h USING h_k;
CLUSTER m USING m_k;
SELECT node('h') <> :h_node AS h_new_storage, node('m') <> :m_node AS m_new_storage;
SELECT * FROM cmp('h', 'm');
SELECT out_of_order('h', 'k') AS h_out_of_order, out_of_order('m', 'k') AS m_out_of_order;
SELECT id, k, v FROM m ORDER BY ctid LIMIT 6;
SELECT (SELECT array_agg(id ORDER BY ctid) FROM h) = (SELECT array_agg(id ORDER BY ctid) FROM m)
  AS same_physical_order;
SELECT indisclustered FROM pg_index WHERE indexrelid = 'm_k'::regclass;
SELECT reltuples FROM pg_class WHERE oid = 'h'::regclass;
SELECT reltuples FROM pg_class WHERE oid = 'm'::regclass;
-- every version is older than the cutoff (minimum age 0): all frozen
SELECT frozen_rows('h') AS h_frozen, frozen_rows('m') AS m_frozen, (SELECT count(*) FROM m) AS m_rows;
-- the indexes were rebuilt and are complete
SELECT bt_index_check('h_k', true), bt_index_check('h_v', true), bt_index_check('h_pkey', true);
SELECT bt_index_check('m_k', true), bt_index_check('m_v', true), bt_index_check('m_pkey', true);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, v FROM m WHERE k BETWEEN 2000 AND 2100 ORDER BY k;
SELECT id, k, v FROM m WHERE v = 'v996++';
RESET enable_seqscan;
RESET enable_bitmapscan;
-- the table takes writes afterwards
UPDATE h SET v = 'after cluster' WHERE id < 30;
UPDATE m SET v = 'after cluster' WHERE id < 30;
INSERT INTO h SELECT i, i, 'new' FROM generate_series(3000, 3050) i;
INSERT INTO m SELECT i, i, 'new' FROM generate_series(3000, 3050) i;
DELETE FROM h WHERE id BETWEEN 100 AND 150;
DELETE FROM m WHERE id BETWEEN 100 AND 150;
SELECT * FROM cmp('h', 'm');

-- 2. CLUSTER again through indisclustered, and on another index (DESC)
SELECT pg_temp.quiesce();
CLUSTER h;
CLUSTER m;
SELECT out_of_order('h', 'k') AS h_out_of_order, out_of_order('m', 'k') AS m_out_of_order;
CLUSTER h USING h_v;
CLUSTER m USING m_v;
SELECT out_of_order('h', 'v', true) AS h_out_of_order, out_of_order('m', 'v', true) AS m_out_of_order;
SELECT (SELECT array_agg(id ORDER BY ctid) FROM h) = (SELECT array_agg(id ORDER BY ctid) FROM m)
  AS same_physical_order;
SELECT id, v FROM m ORDER BY ctid LIMIT 4;
SELECT * FROM cmp('h', 'm');

-- 3. CLUSTER in a transaction that rolls back
SELECT node('m') AS m_node \gset
BEGIN;
CLUSTER h USING h_pkey;
CLUSTER m USING m_pkey;
SELECT id FROM m ORDER BY ctid LIMIT 3;
ROLLBACK;
SELECT node('m') = :m_node AS m_old_storage;
SELECT (SELECT array_agg(id ORDER BY ctid) FROM h) = (SELECT array_agg(id ORDER BY ctid) FROM m)
  AS same_physical_order;
SELECT * FROM cmp('h', 'm');
-- not on a partial index, as on heap
CREATE INDEX h_part ON h (k) WHERE k > 10;
CREATE INDEX m_part ON m (k) WHERE k > 10;
CLUSTER h USING h_part;
CLUSTER m USING m_part;

-- 4. VACUUM FULL: same rows, new storage, smaller, indexes fine
DELETE FROM h WHERE id % 10 <> 1;
DELETE FROM m WHERE id % 10 <> 1;
SELECT pg_relation_size('h') AS h_size, pg_relation_size('m') AS m_size \gset
SELECT node('h') AS h_node, node('m') AS m_node \gset
SELECT pg_temp.quiesce();
VACUUM FULL h;
VACUUM FULL m;
SELECT node('h') <> :h_node AS h_new_storage, node('m') <> :m_node AS m_new_storage;
SELECT pg_relation_size('h') < :h_size AS h_shrank, pg_relation_size('m') < :m_size AS m_shrank;
SELECT * FROM cmp('h', 'm');
SELECT reltuples FROM pg_class WHERE oid = 'h'::regclass;
SELECT reltuples FROM pg_class WHERE oid = 'm'::regclass;
SELECT frozen_rows('h') AS h_frozen, frozen_rows('m') AS m_frozen, (SELECT count(*) FROM m) AS m_rows;
SELECT bt_index_check('m_k', true), bt_index_check('m_v', true), bt_index_check('m_pkey', true);
SET enable_seqscan = off;
SELECT id, k, v FROM m WHERE id IN (1, 11, 21, 3001) ORDER BY id;
RESET enable_seqscan;
-- VACUUM (FULL, FREEZE), ANALYZE, VERBOSE-free; and in a transaction block: refused
VACUUM (FULL, FREEZE, ANALYZE) h;
VACUUM (FULL, FREEZE, ANALYZE) m;
SELECT reltuples FROM pg_class WHERE oid = 'm'::regclass;
SELECT * FROM cmp('h', 'm');
BEGIN;
VACUUM FULL m;
ROLLBACK;
-- an empty table
CREATE TABLE he (id int) USING heap;
CREATE TABLE me (id int) USING :am;
INSERT INTO he VALUES (1);
INSERT INTO me VALUES (1);
DELETE FROM he;
DELETE FROM me;
SELECT pg_temp.quiesce();
VACUUM FULL he;
VACUUM FULL me;
SELECT pg_relation_size('he') AS he_size, pg_relation_size('me') AS me_size;

-- 5. tables with TOAST values (the new relation's TOAST table must hold
--    every value its rows point to)
CREATE TABLE ht (id int PRIMARY KEY, k int, big text) USING heap;
CREATE TABLE mt (id int PRIMARY KEY, k int, big text) USING :am;
CREATE INDEX ht_k ON ht (k);
CREATE INDEX mt_k ON mt (k);
ALTER TABLE ht ALTER COLUMN big SET STORAGE EXTERNAL;
ALTER TABLE mt ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO ht SELECT i, 100 - i, repeat(md5(i::text), 200) FROM generate_series(1, 60) i;
INSERT INTO mt SELECT i, 100 - i, repeat(md5(i::text), 200) FROM generate_series(1, 60) i;
UPDATE ht SET big = big || 'u' WHERE id % 2 = 0;
UPDATE mt SET big = big || 'u' WHERE id % 2 = 0;
VACUUM FULL ht;
VACUUM FULL mt;
SELECT id, length(big), md5(big) FROM mt WHERE id IN (1, 2, 60) ORDER BY id;
SELECT * FROM cmp('ht', 'mt');
CLUSTER ht USING ht_k;
CLUSTER mt USING mt_k;
SELECT id, length(big), md5(big) FROM mt WHERE id IN (1, 2, 60) ORDER BY id;
SELECT * FROM cmp('ht', 'mt');
UPDATE ht SET big = big || 'w' WHERE id % 3 = 0;
UPDATE mt SET big = big || 'w' WHERE id % 3 = 0;
SELECT * FROM cmp('ht', 'mt');

-- CLUSTER in the transaction that moved rows by changing their key: the
-- recently dead "moved" markers become tombstones in the new relation
-- (a key-changing marker must not leave its keys-updated flag behind)
CREATE TABLE kc_heap (key int PRIMARY KEY) USING heap;
CREATE TABLE kc_minidb (key int PRIMARY KEY) USING minidb;
INSERT INTO kc_heap VALUES (10), (20), (30);
INSERT INTO kc_minidb VALUES (10), (20), (30);
BEGIN;
UPDATE kc_heap SET key = 100 WHERE key = 10;
UPDATE kc_minidb SET key = 100 WHERE key = 10;
CLUSTER kc_heap_pkey ON kc_heap;
CLUSTER kc_minidb_pkey ON kc_minidb;
SELECT * FROM cmp('kc_heap', 'kc_minidb');
COMMIT;
SELECT * FROM cmp('kc_heap', 'kc_minidb');
SELECT key FROM kc_minidb ORDER BY key;

SET client_min_messages = warning;
DROP SCHEMA ddl_cluster CASCADE;
RESET client_min_messages;
