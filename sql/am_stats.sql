--
-- am_stats: the cumulative statistics of a minidb table are heap's
-- (pg_stat_user_tables, pg_stat_xact_user_tables): scans and the rows they
-- read, index fetches, inserts, updates (in-place ones count as heap's HOT
-- updates), deletes, live and dead rows (so that autovacuum sees the
-- dead versions), and what VACUUM and ANALYZE report.  The same statements
-- run on a heap table and a minidb table, with the plans forced so that
-- both scan the same way; diff() lists every counter where they differ.
-- minidb prunes a row's old version when it prepends the next one, which
-- heap does not do; that pruning leaves n_dead_tup alone, so that it counts
-- what heap's would (PostgreSQL's isolation spec stats); only a page
-- pruned for room takes what it removed off it, as heap's pruning does.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_stats;
SET search_path = am_stats, public;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file

CREATE TABLE h (id int PRIMARY KEY, k int, v text) USING heap
  WITH (autovacuum_enabled = off);
CREATE TABLE m (id int PRIMARY KEY, k int, v text) USING minidb
  WITH (autovacuum_enabled = off);

-- counter, heap's value, minidb's value (view is pg_stat_user_tables or
-- pg_stat_xact_user_tables)
CREATE FUNCTION stats(view text DEFAULT 'pg_stat_user_tables')
RETURNS TABLE (counter text, heap bigint, minidb bigint) LANGUAGE plpgsql AS $$
DECLARE hj jsonb; mj jsonb;
BEGIN
  EXECUTE format('SELECT to_jsonb(s) FROM %s s WHERE relid = %s', view, 'am_stats.h'::regclass::oid) INTO hj;
  EXECUTE format('SELECT to_jsonb(s) FROM %s s WHERE relid = %s', view, 'am_stats.m'::regclass::oid) INTO mj;
  RETURN QUERY SELECT c, (hj ->> c)::bigint, (mj ->> c)::bigint
    FROM unnest(ARRAY['seq_scan', 'seq_tup_read', 'idx_scan', 'idx_tup_fetch',
                      'n_tup_ins', 'n_tup_upd', 'n_tup_del', 'n_tup_hot_upd',
                      'n_live_tup', 'n_dead_tup', 'n_mod_since_analyze',
                      'n_ins_since_vacuum', 'vacuum_count', 'analyze_count']) c
    WHERE hj ? c;
END $$;
CREATE FUNCTION diff(view text DEFAULT 'pg_stat_user_tables')
RETURNS TABLE (counter text, heap bigint, minidb bigint) LANGUAGE sql AS $$
  SELECT * FROM stats(view) s WHERE s.heap IS DISTINCT FROM s.minidb
$$;
-- DML finds its rows with a sequential scan on both tables
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;

-- 1. inserts, one of them rolled back
INSERT INTO h SELECT i, i, 'v' || i FROM generate_series(1, 50) i;
INSERT INTO m SELECT i, i, 'v' || i FROM generate_series(1, 50) i;
BEGIN;
INSERT INTO h VALUES (51, 51, 'gone');
INSERT INTO m VALUES (51, 51, 'gone');
ROLLBACK;
SELECT pg_stat_force_next_flush();
SELECT * FROM stats();
-- statistics for the planner, so that it plans both tables alike
ANALYZE h;
ANALYZE m;

-- 2. sequential scans: one per scan, every row they return
SELECT count(*) FROM h;
SELECT count(*) FROM m;
SELECT id FROM h WHERE k = 7;
SELECT id FROM m WHERE k = 7;
-- a rescan counts again, as heap's does (a correlated subquery)
SELECT x, (SELECT count(*) FROM h WHERE h.k = v.x) FROM (VALUES (1), (2), (3)) v(x);
SELECT x, (SELECT count(*) FROM m WHERE m.k = v.x) FROM (VALUES (1), (2), (3)) v(x);
-- TID scans are no sequential scans; TID range scans count their rows
SELECT count(*) FROM h WHERE ctid = '(0,1)';
SELECT count(*) FROM m WHERE ctid = '(0,1)';
SELECT count(*) FROM h WHERE ctid >= '(0,1)';
SELECT count(*) FROM m WHERE ctid >= '(0,1)';
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter LIKE 'seq%';

-- 3. index scans, bitmap scans and index-only scans: the fetches count
-- once, against the index (idx_tup_fetch sums them with the table's)
SET enable_seqscan = off;
SET enable_indexscan = on;
SELECT v FROM h WHERE id = 5;
SELECT v FROM m WHERE id = 5;
SELECT count(v) FROM h WHERE id < 10;
SELECT count(v) FROM m WHERE id < 10;
SET enable_indexscan = off;
SET enable_bitmapscan = on;
SELECT count(v) FROM h WHERE id < 20;
SELECT count(v) FROM m WHERE id < 20;
SET enable_bitmapscan = off;
SET enable_indexscan = on;
SET enable_indexonlyscan = on;
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE id < 30;
SELECT count(*) FROM h WHERE id < 30;
SELECT count(*) FROM m WHERE id < 30;
SET enable_indexonlyscan = off;
SET enable_indexscan = off;
SET enable_seqscan = on;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter LIKE 'idx%';

-- 4. updates in place (heap: HOT), updates of an indexed column (moved),
-- deletes: counted, and each leaves a dead version
UPDATE h SET k = k + 100 WHERE id <= 10;
UPDATE m SET k = k + 100 WHERE id <= 10;
UPDATE h SET id = id + 1000 WHERE id > 45;
UPDATE m SET id = id + 1000 WHERE id > 45;
DELETE FROM h WHERE id BETWEEN 20 AND 24;
DELETE FROM m WHERE id BETWEEN 20 AND 24;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter LIKE 'n_%';

-- 5. what the current transaction did, before it ends, and after a
-- rollback (its rows and versions are dead)
BEGIN;
INSERT INTO h SELECT i, i, 'x' FROM generate_series(100, 104) i;
INSERT INTO m SELECT i, i, 'x' FROM generate_series(100, 104) i;
UPDATE h SET k = -k WHERE id BETWEEN 30 AND 32;
UPDATE m SET k = -k WHERE id BETWEEN 30 AND 32;
SAVEPOINT s;
DELETE FROM h WHERE id IN (33, 100);
DELETE FROM m WHERE id IN (33, 100);
ROLLBACK TO s;
DELETE FROM h WHERE id = 34;
DELETE FROM m WHERE id = 34;
SELECT count(*) FROM h;
SELECT count(*) FROM m;
SELECT * FROM stats('pg_stat_xact_user_tables');
ROLLBACK;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter LIKE 'n_%';

-- 6. ANALYZE counts live and dead rows from the pages, as heap counts them
ANALYZE h;
ANALYZE m;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter IN ('n_live_tup', 'n_dead_tup', 'n_mod_since_analyze', 'analyze_count');

-- 7. VACUUM removes the dead versions and says how many rows live
SELECT pg_temp.quiesce();
VACUUM h;
VACUUM m;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter IN ('n_live_tup', 'n_dead_tup', 'n_ins_since_vacuum', 'vacuum_count');

-- 8. CREATE INDEX reads the table with a sequential scan
CREATE INDEX ON h (k);
CREATE INDEX ON m (k);
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter LIKE 'seq%';

-- 9. in-place updates, many times: the counters agree, n_dead_tup too
-- (minidb pruned the older versions as it went, heap holds them until a
-- page prune; both count every version an UPDATE superseded), and after
-- VACUUM both count what VACUUM found
UPDATE h SET k = k + 1;
UPDATE m SET k = k + 1;
UPDATE h SET v = v || 'y' WHERE id % 2 = 0;
UPDATE m SET v = v || 'y' WHERE id % 2 = 0;
UPDATE h SET v = v || 'z' WHERE id % 4 = 0;
UPDATE m SET v = v || 'z' WHERE id % 4 = 0;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter IN ('n_tup_upd', 'n_tup_hot_upd', 'n_live_tup', 'n_dead_tup');
SELECT pg_temp.quiesce();
VACUUM h;
VACUUM m;
SELECT pg_stat_force_next_flush();
SELECT * FROM diff();
SELECT * FROM stats() WHERE counter IN ('n_live_tup', 'n_dead_tup');

-- 10. a page pruned to make room keeps counting its deleted rows (their
-- records wait for VACUUM, as heap's LP_DEAD items do) but not the old
-- versions it removed; n_dead_tup stays what minidb_stats() finds
CREATE TABLE p (id int PRIMARY KEY, v text) USING minidb WITH (autovacuum_enabled = off);
INSERT INTO p SELECT i, repeat('p', 1000) FROM generate_series(1, 7) i;
DELETE FROM p WHERE id <= 3;
SELECT pg_temp.quiesce();
-- the page is full: for a second version of row 6 it is pruned (the
-- deleted rows lose their data versions; their records stay)
UPDATE p SET v = repeat('q', 1000) WHERE id = 6;
SELECT pg_temp.quiesce();
SELECT pg_stat_force_next_flush();
SELECT n_dead_tup, (SELECT dead_versions FROM minidb_stats('p'))
  FROM pg_stat_user_tables WHERE relid = 'p'::regclass;
UPDATE p SET v = repeat('r', 1500) WHERE id = 7;
-- both rows kept their TIDs: they were updated in place
SELECT ctid, id FROM p ORDER BY id;
SELECT pg_temp.quiesce();
SELECT pg_stat_force_next_flush();
SELECT n_dead_tup, (SELECT dead_versions FROM minidb_stats('p'))
  FROM pg_stat_user_tables WHERE relid = 'p'::regclass;
VACUUM p;
SELECT pg_stat_force_next_flush();
SELECT n_live_tup, n_dead_tup FROM pg_stat_user_tables WHERE relid = 'p'::regclass;

-- 11. a row updated in place twice: the second update prunes the first
-- one's old version (no snapshot needs it), which heap keeps until its page
-- is pruned; n_dead_tup counts both, as heap's does (PostgreSQL's
-- isolation spec stats)
CREATE TABLE h2 (id int, v int) USING heap WITH (autovacuum_enabled = off);
CREATE TABLE m2 (id int, v int) USING minidb WITH (autovacuum_enabled = off);
INSERT INTO h2 VALUES (1, 0);
INSERT INTO m2 VALUES (1, 0);
UPDATE h2 SET v = v + 1;
UPDATE m2 SET v = v + 1;
UPDATE h2 SET v = v + 1;
UPDATE m2 SET v = v + 1;
SELECT pg_stat_force_next_flush();
SELECT relname, n_tup_upd, n_tup_hot_upd, n_live_tup, n_dead_tup
  FROM pg_stat_user_tables WHERE relid IN ('h2'::regclass, 'm2'::regclass)
  ORDER BY relname;

RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_indexonlyscan;
SET client_min_messages = warning;
DROP SCHEMA am_stats CASCADE;
RESET client_min_messages;
