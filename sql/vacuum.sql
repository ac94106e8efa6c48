--
-- vacuum: VACUUM on minidb tables.  Dead records and their index entries
-- go (index scans and amcheck agree), chains come back to one version,
-- relfrozenxid advances and versions are frozen, the visibility map lets
-- index-only scans skip the table until the next change, empty pages at
-- the end are truncated (unless vacuum_truncate is off), and a VACUUM
-- cancelled half-way leaves a consistent table.  Also minidb_stats() and
-- minidb_horizon().  Counts that depend on page layout are printed as
-- booleans; autovacuum is off for every table here.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
CREATE SCHEMA vacuum_m;
SET search_path = vacuum_m, public;

CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE;
END $$;
-- Heap Fetches of an index-only scan, from EXPLAIN ANALYZE
CREATE FUNCTION heap_fetches(q text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
  EXECUTE 'EXPLAIN (ANALYZE, FORMAT JSON, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q INTO plan;
  RETURN (plan -> 0 -> 'Plan' -> 'Plans' -> 0 ->> 'Heap Fetches')::int;
END $$;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file
-- every row through each index agrees with a sequential scan
CREATE FUNCTION indexes_agree(rel regclass) RETURNS bool LANGUAGE plpgsql AS $$
DECLARE seq text; via_pk text; via_k text;
BEGIN
  SET LOCAL enable_indexscan = off; SET LOCAL enable_bitmapscan = off;
  SET LOCAL enable_indexonlyscan = off; SET LOCAL enable_seqscan = on;
  EXECUTE format('SELECT string_agg(x::text, '','' ORDER BY id) FROM %s x', rel) INTO seq;
  SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = on;
  EXECUTE format('SELECT string_agg(x::text, '','' ORDER BY id) FROM %s x WHERE id > -1000000', rel) INTO via_pk;
  EXECUTE format('SELECT string_agg(x::text, '','' ORDER BY id) FROM %s x WHERE k > -1000000', rel) INTO via_k;
  RETURN seq IS NOT DISTINCT FROM via_pk AND seq IS NOT DISTINCT FROM via_k;
END $$;

CREATE TABLE m (id int PRIMARY KEY, k int, v text) USING minidb
  WITH (autovacuum_enabled = off, fillfactor = 80);
CREATE INDEX m_k ON m (k);
INSERT INTO m SELECT i, i, 'v' || i FROM generate_series(1, 3000) i;
-- chains: two in-place updates of an unindexed column (the fillfactor
-- leaves them room, as it would heap's HOT updates)
UPDATE m SET v = v || 'a' WHERE id % 3 = 0;
UPDATE m SET v = v || 'b' WHERE id % 3 = 0;
-- dead records: deleted rows, and rows moved by an indexed-column update
SELECT ctid AS deleted_tid FROM m WHERE id = 2000 \gset
SELECT ctid AS moved_tid FROM m WHERE id = 10 \gset
DELETE FROM m WHERE id BETWEEN 1500 AND 2500;
UPDATE m SET k = -k WHERE id <= 100;
SELECT pg_temp.quiesce();
SELECT records > 1999 AS records_include_dead, dead_versions > 0 AS has_dead,
       depth_max >= 2 AS has_chains
  FROM minidb_stats('m');

-- 1. VACUUM removes dead records and their index entries
SELECT pg_temp.quiesce();
VACUUM m;
SELECT records, live_versions, dead_versions, depth_max, depth_p50, depth_p99
  FROM minidb_stats('m');
SELECT count(*) FROM m;
SELECT try(format('SELECT * FROM minidb_chain(%L, %L)', 'm', :'deleted_tid')) AS deleted_record;
SELECT try(format('SELECT * FROM minidb_chain(%L, %L)', 'm', :'moved_tid')) AS moved_record;
SELECT indexes_agree('m');
SELECT try($$SELECT bt_index_check('vacuum_m.m_pkey', true)$$) AS pkey_check,
       try($$SELECT bt_index_parent_check('vacuum_m.m_k', true)$$) AS k_parent_check;
-- the indexes hold one entry per row again (lazy bulk delete removed the rest)
SELECT (SELECT reltuples FROM pg_class WHERE oid = 'm_pkey'::regclass) AS pkey_tuples,
       (SELECT reltuples FROM pg_class WHERE oid = 'm_k'::regclass) AS k_tuples;
SELECT n_dead_tup, vacuum_count > 0 AS vacuumed FROM pg_stat_user_tables WHERE relid = 'm'::regclass;

-- 2. the visibility map: index-only scans skip the table after VACUUM...
SELECT relallvisible = relpages AS all_visible FROM pg_class WHERE oid = 'm'::regclass;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
-- (EXPLAIN ANALYZE's scan and Heap Fetches lines: the rest of its text
-- differs between versions)
CREATE FUNCTION explain_fetches(q text) RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE line text;
BEGIN
  FOR line IN EXECUTE 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ' || q LOOP
    IF line ~ 'Scan|Heap Fetches' THEN
      RETURN NEXT regexp_replace(line, ' \(actual .*\)$', '');
    END IF;
  END LOOP;
END $$;
SELECT explain_fetches('SELECT count(k) FROM m WHERE k BETWEEN 1 AND 1000');
SELECT count(k) FROM m WHERE k BETWEEN 1 AND 1000;
-- ...and after a change to a page, fetch it again and see the change
UPDATE m SET k = 5000 WHERE id = 500;
DELETE FROM m WHERE id = 600;
SELECT heap_fetches('SELECT count(k) FROM m WHERE k BETWEEN 1 AND 1000') > 0 AS fetched;
SELECT count(k) FROM m WHERE k BETWEEN 1 AND 1000;
SELECT count(*) FROM m WHERE k = 5000;
-- an in-place update (same TID, no new index entry) clears it too
UPDATE m SET v = 'changed' WHERE id = 700;
SELECT count(*) FILTER (WHERE v = 'changed') AS changed FROM m WHERE k BETWEEN 690 AND 710;
SELECT pg_temp.quiesce();
VACUUM m;
SELECT heap_fetches('SELECT count(k) FROM m WHERE k BETWEEN 1 AND 1000') AS fetches_after_vacuum;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- 3. freezing: VACUUM FREEZE freezes every version and advances relfrozenxid
SELECT relfrozenxid AS old_frozenxid FROM pg_class WHERE oid = 'm'::regclass \gset
SELECT count(*) FILTER (WHERE flags LIKE '%frozen%') AS frozen_before
  FROM m, minidb_chain('m', m.ctid) WHERE m.id <= 10;
SELECT pg_temp.quiesce();
VACUUM (FREEZE) m;
SELECT age(relfrozenxid) < age(:'old_frozenxid'::xid) AS relfrozenxid_advanced
  FROM pg_class WHERE oid = 'm'::regclass;
SELECT count(*) AS versions, bool_and(flags LIKE '%frozen%') AS frozen,
       bool_and(visible) AS visible
  FROM m, minidb_chain('m', m.ctid) WHERE m.id <= 10;
SELECT relallvisible = relpages AS all_visible FROM pg_class WHERE oid = 'm'::regclass;
-- frozen rows take updates and deletes as usual
UPDATE m SET v = 'after freeze' WHERE id = 1;
DELETE FROM m WHERE id = 2;
SELECT id, v FROM m WHERE id <= 3 ORDER BY id;
-- (the new version's hint bits depend on when its commit reached the disk)
SELECT position, flags LIKE '%frozen%' AS frozen
  FROM minidb_chain('m', (SELECT ctid FROM m WHERE id = 1)) ORDER BY position;

-- 4. truncation of empty pages at the end, honouring vacuum_truncate
CREATE TABLE tr (id int PRIMARY KEY, k int, v text) USING minidb
  WITH (autovacuum_enabled = off);
CREATE TABLE tr_keep (id int PRIMARY KEY, k int, v text) USING minidb
  WITH (autovacuum_enabled = off, vacuum_truncate = false);
INSERT INTO tr SELECT i, i, repeat('x', 100) FROM generate_series(1, 2000) i;
INSERT INTO tr_keep SELECT * FROM tr;
SELECT pg_relation_size('tr') AS size_before \gset
DELETE FROM tr WHERE id > 100;
DELETE FROM tr_keep WHERE id > 100;
SELECT pg_temp.quiesce();
VACUUM tr;
VACUUM tr_keep;
SELECT pg_relation_size('tr') < :size_before / 4 AS truncated,
       pg_relation_size('tr_keep') = :size_before AS kept;
SELECT count(*), sum(id) FROM tr;
SELECT relpages = pg_relation_size('tr') / 8192 AS relpages_ok FROM pg_class WHERE oid = 'tr'::regclass;
VACUUM (TRUNCATE) tr_keep;
SELECT pg_relation_size('tr_keep') < :size_before / 4 AS truncated_on_request;
-- the free space map lets inserts reuse the space
VACUUM tr_keep;
SELECT pg_relation_size('tr_keep') AS keep_size \gset
INSERT INTO tr SELECT i, i, repeat('x', 100) FROM generate_series(101, 300) i;
SELECT pg_relation_size('tr') <= :size_before / 4 AS reused;

-- 5. INDEX_CLEANUP off leaves dead line pointers (and their index
-- entries); a later VACUUM removes them
DELETE FROM tr WHERE id <= 50;
SELECT pg_temp.quiesce();
VACUUM (INDEX_CLEANUP off) tr;
SELECT count(*) FROM tr WHERE id <= 50;
SELECT indexes_agree('tr');
VACUUM tr;
SELECT indexes_agree('tr'), (SELECT records FROM minidb_stats('tr')) AS records;

-- 6. a table without indexes: one pass
CREATE TABLE noidx (id int, v text) USING minidb WITH (autovacuum_enabled = off);
INSERT INTO noidx SELECT i, 'v' FROM generate_series(1, 1000) i;
UPDATE noidx SET v = 'w' WHERE id % 2 = 0;
DELETE FROM noidx WHERE id % 5 = 0;
SELECT pg_temp.quiesce();
VACUUM noidx;
SELECT records, dead_versions, depth_max FROM minidb_stats('noidx');
SELECT count(*), count(*) FILTER (WHERE v = 'w') FROM noidx;

-- 7. cancelled half-way (statement_timeout, slowed down by the cost
-- delay): every page stays consistent; the next VACUUM finishes the job
CREATE TABLE big (id int PRIMARY KEY, k int, v text) USING minidb
  WITH (autovacuum_enabled = off);
CREATE INDEX big_k ON big (k);
INSERT INTO big SELECT i, i % 1000, repeat('b', 50) FROM generate_series(1, 20000) i;
UPDATE big SET v = 'u' WHERE id % 4 = 0;
DELETE FROM big WHERE id % 7 = 0;
UPDATE big SET k = k + 1 WHERE id % 11 = 0;
SELECT count(*) AS rows_before, sum(k) AS k_before FROM big \gset
SELECT pg_temp.quiesce();
SET vacuum_cost_delay = '10ms';
SET vacuum_cost_limit = 1;
SET statement_timeout = '300ms';
\set VERBOSITY terse
VACUUM big;
\set VERBOSITY default
RESET statement_timeout;
RESET vacuum_cost_delay;
RESET vacuum_cost_limit;
SELECT count(*) = :rows_before AS same_rows, sum(k) = :k_before AS same_k FROM big;
SELECT indexes_agree('big');
SELECT try($$SELECT bt_index_check('vacuum_m.big_pkey', true)$$) AS pkey_check,
       try($$SELECT bt_index_check('vacuum_m.big_k', true)$$) AS k_check;
SELECT dead_versions > 0 AS work_left FROM minidb_stats('big');
VACUUM big;
SELECT count(*) = :rows_before AS same_rows, sum(k) = :k_before AS same_k FROM big;
SELECT indexes_agree('big');
SELECT try($$SELECT bt_index_parent_check('vacuum_m.big_pkey', true)$$) AS pkey_parent_check,
       try($$SELECT bt_index_parent_check('vacuum_m.big_k', true)$$) AS k_parent_check;
SELECT records = :rows_before AS one_record_per_row, dead_versions, depth_max
  FROM minidb_stats('big');

-- 8. minidb_stats: shape, NULL, not a minidb table, not the owner
SELECT proname, proisstrict, pg_get_function_result(oid) AS result
  FROM pg_proc WHERE proname = 'minidb_stats';
SELECT * FROM minidb_stats(NULL);
CREATE TABLE h (id int) USING heap;
CREATE VIEW mview AS SELECT * FROM m;
SELECT try($$SELECT * FROM minidb_stats('vacuum_m.h')$$) AS heap_table,
       try($$SELECT * FROM minidb_stats('vacuum_m.mview')$$) AS view,
       try($$SELECT * FROM minidb_stats('vacuum_m.m_pkey')$$) AS index;
CREATE TABLE empty_m (id int) USING minidb;
SELECT * FROM minidb_stats('empty_m');
CREATE ROLE regress_vacuum_other;
GRANT USAGE ON SCHEMA vacuum_m TO regress_vacuum_other;
GRANT SELECT ON m TO regress_vacuum_other;
SET ROLE regress_vacuum_other;
SELECT try($$SELECT * FROM minidb_stats('vacuum_m.m')$$) AS not_owner;
RESET ROLE;

-- 9. minidb_horizon: who holds the horizon back (this session, at least)
SELECT holder, state FROM minidb_horizon() WHERE pid = pg_backend_pid();
SELECT current_setting('max_prepared_transactions')::int > 0 AS can_prepare \gset
\if :can_prepare
BEGIN;
INSERT INTO m VALUES (100000, 100000, 'prepared');
PREPARE TRANSACTION 'regress_vacuum_horizon';
SELECT holder, name, xmin_age >= 0 AS has_age
  FROM minidb_horizon() WHERE holder = 'prepared transaction'
   AND name = 'regress_vacuum_horizon';
COMMIT PREPARED 'regress_vacuum_horizon';
\else
SELECT 'prepared transaction' AS holder, 'regress_vacuum_horizon' AS name, true AS has_age;
\endif

SET client_min_messages = warning;
DROP SCHEMA vacuum_m CASCADE;
DROP ROLE regress_vacuum_other;
RESET client_min_messages;
