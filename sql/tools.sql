--
-- tools: the heap tools a DBA reaches for, tried on a minidb table (m)
-- beside a heap table (h) with the same rows.  Which work, which refuse,
-- which answer wrongly, and the minidb function to use instead: README,
-- "Heap tools on minidb tables" is this file in prose.  (xmax is in
-- specs/tools_xmax.spec, damaged records in t/102_repair.pl, pg_dump and
-- pg_restore in t/100_ddl_dump_restore.pl.)
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS pg_visibility;
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS pgstattuple;
CREATE EXTENSION IF NOT EXISTS pg_surgery;
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pgrowlocks;
CREATE EXTENSION IF NOT EXISTS pg_freespacemap;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
CREATE EXTENSION IF NOT EXISTS pg_walinspect;
CREATE EXTENSION IF NOT EXISTS pg_prewarm;
RESET client_min_messages;
CREATE SCHEMA tools;
SET search_path = tools, public;
-- heap marks no page all-visible while its inserter's commit is not yet
-- flushed (this cluster runs synchronous_commit = off)
SET synchronous_commit = on;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file

CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
	EXECUTE q;
	RETURN 'works';
EXCEPTION WHEN others THEN
	RETURN SQLSTATE || ': ' || SQLERRM;
END $$;

CREATE TABLE h (id int PRIMARY KEY, v text) USING heap WITH (autovacuum_enabled = off);
CREATE TABLE m (id int PRIMARY KEY, v text) USING minidb WITH (autovacuum_enabled = off);
INSERT INTO h SELECT g, 'row ' || g FROM generate_series(1, 2000) g;
INSERT INTO m SELECT g, 'row ' || g FROM generate_series(1, 2000) g;
SELECT pg_temp.quiesce();
VACUUM (FREEZE) h;
VACUUM (FREEZE) m;

-- ---------------------------------------------------------------------
-- pg_visibility.  The visibility map is minidb's too (VACUUM sets it,
-- every page change clears it), so the map functions are right; the
-- row-level checks read minidb pages as heap pages and report every row
-- of a healthy, frozen table as corrupt.
-- ---------------------------------------------------------------------
SELECT 'h' AS t, all_visible = pg_relation_size('h') / 8192 AS all_pages_visible,
       all_frozen = pg_relation_size('h') / 8192 AS all_pages_frozen
  FROM pg_visibility_map_summary('h')
UNION ALL
SELECT 'm', all_visible = pg_relation_size('m') / 8192,
       all_frozen = pg_relation_size('m') / 8192
  FROM pg_visibility_map_summary('m');
SELECT 'h' AS t, bool_and(all_visible = pd_all_visible) AS map_matches_pages FROM pg_visibility('h')
UNION ALL
SELECT 'm', bool_and(all_visible = pd_all_visible) FROM pg_visibility('m');
-- wrong: every row of m
SELECT 'h' AS t, (SELECT count(*) FROM pg_check_frozen('h')) AS check_frozen,
       (SELECT count(*) FROM pg_check_visible('h')) AS check_visible
UNION ALL
SELECT 'm', (SELECT count(*) FROM pg_check_frozen('m')),
       (SELECT count(*) FROM pg_check_visible('m'));
-- instead: minidb_verify (damage), minidb_chain (a row's versions and
-- their flags), minidb_stats (live and dead versions)
SELECT count(*) AS damaged FROM minidb_verify('m');
-- (the committed hint is left out: without the preloaded library readers
-- set no hint bits, see README "WAL")
SELECT position, replace(flags, 'committed,', '') AS flags FROM minidb_chain('m', '(0,1)');
SELECT records, live_versions, dead_versions FROM minidb_stats('m');
-- a change clears the page's bits, on both
UPDATE h SET v = v || '+' WHERE id = 1;
UPDATE m SET v = v || '+' WHERE id = 1;
SELECT 'h' AS t, all_visible, all_frozen FROM pg_visibility_map('h', 0)
UNION ALL
SELECT 'm', all_visible, all_frozen FROM pg_visibility_map('m', 0);

-- ---------------------------------------------------------------------
-- pageinspect: raw pages and page headers are fine (a minidb page has an
-- 8-byte special area: magic number and flags); heap_page_items decodes
-- minidb records as heap tuple headers and returns garbage without an
-- error; index functions work (the indexes are ordinary indexes).
-- ---------------------------------------------------------------------
SELECT 'h' AS t, pagesize, version, special, lower > 24 AS has_items FROM page_header(get_raw_page('h', 1))
UNION ALL
SELECT 'm', pagesize, version, special, lower > 24 FROM page_header(get_raw_page('m', 1));
-- heap's t_ctid of an untouched tuple names the tuple itself; t_xmin is
-- the inserting transaction (the row's xmin); neither holds for minidb
SELECT 'h' AS t, bool_and(t_ctid = ('(1,' || lp || ')')::tid) AS ctid_is_self,
       bool_and(t_xmin = (SELECT xmin FROM h WHERE id = 1000)) AS xmin_is_rows
  FROM heap_page_items(get_raw_page('h', 1))
UNION ALL
SELECT 'm', bool_and(t_ctid = ('(1,' || lp || ')')::tid),
       bool_and(t_xmin = (SELECT xmin FROM m WHERE id = 1000))
  FROM heap_page_items(get_raw_page('m', 1));
SELECT 'h' AS t, count(*) FILTER (WHERE t_attrs IS NULL) AS undecoded
  FROM heap_page_item_attrs(get_raw_page('h', 1), 'h'::regclass)
UNION ALL
SELECT 'm', count(*) FILTER (WHERE t_attrs IS NULL)
  FROM heap_page_item_attrs(get_raw_page('m', 1), 'm'::regclass);
SELECT 'h' AS t, type, live_items > 0 AS has_items FROM bt_page_stats('h_pkey', 1)
UNION ALL
SELECT 'm', type, live_items > 0 FROM bt_page_stats('m_pkey', 1);
CREATE INDEX h_v_hash ON h USING hash (v);
CREATE INDEX m_v_hash ON m USING hash (v);
SELECT 'h' AS t, hash_page_type(get_raw_page('h_v_hash', 0)) AS metapage
UNION ALL
SELECT 'm', hash_page_type(get_raw_page('m_v_hash', 0));
VACUUM h;
VACUUM m;
SELECT 'h' AS t, fsm_page_contents(get_raw_page('h', 'fsm', 0)) <> '' AS fsm_readable
UNION ALL
SELECT 'm', fsm_page_contents(get_raw_page('m', 'fsm', 0)) <> '';
-- instead: minidb_chain(rel, tid) decodes a record's versions
SELECT position, xmin = (SELECT xmin FROM m WHERE id = 1000) AS xmin_is_rows,
       replace(flags, 'committed,', '') AS flags, visible
  FROM minidb_chain('m', (SELECT ctid FROM m WHERE id = 1000));

-- ---------------------------------------------------------------------
-- pgstattuple: refuses table AMs other than heap (the index functions
-- work); instead minidb_stats
-- ---------------------------------------------------------------------
SELECT pg_temp.try($$SELECT * FROM pgstattuple('m')$$) AS pgstattuple;
SELECT pg_temp.try($$SELECT * FROM pgstattuple_approx('m')$$) AS pgstattuple_approx;
SELECT pg_temp.try($$SELECT * FROM pgstatindex('m_pkey')$$) AS pgstatindex;
SELECT pg_relpages('m') = pg_relation_size('m') / 8192 AS relpages_right;

-- ---------------------------------------------------------------------
-- pg_surgery: refuses; instead minidb_force_kill (sql/repair.sql)
-- amcheck: verify_heapam refuses, the btree checks work (heapallindexed
-- included: it reads the table through the table AM); instead of
-- verify_heapam, minidb_verify
-- pgrowlocks: refuses; instead minidb_row_locks
-- ---------------------------------------------------------------------
SELECT pg_temp.try($$SELECT heap_force_kill('m', ARRAY['(0,1)']::tid[])$$) AS heap_force_kill;
SELECT pg_temp.try($$SELECT heap_force_freeze('m', ARRAY['(0,1)']::tid[])$$) AS heap_force_freeze;
SELECT pg_temp.try($$SELECT * FROM verify_heapam('m')$$) AS verify_heapam;
SELECT pg_temp.try($$SELECT bt_index_check('m_pkey', true)$$) AS bt_index_check;
SELECT pg_temp.try($$SELECT bt_index_parent_check('m_pkey', true, true)$$) AS bt_index_parent_check;
SELECT pg_temp.try($$SELECT * FROM pgrowlocks('m')$$) AS pgrowlocks;
SELECT count(*) AS rows_locked FROM minidb_row_locks('m');

-- ---------------------------------------------------------------------
-- pg_freespacemap: works; the figures are minidb's room for a new record
-- (every record's marker reserve already deducted)
-- ---------------------------------------------------------------------
DELETE FROM h WHERE id BETWEEN 1 AND 150;
DELETE FROM m WHERE id BETWEEN 1 AND 150;
SELECT pg_temp.quiesce();
VACUUM h;
VACUUM m;
SELECT 'h' AS t, pg_freespace('h', 0) > 4000 AS first_page_free
UNION ALL
SELECT 'm', pg_freespace('m', 0) > 4000;
SELECT 'h' AS t, count(*) FILTER (WHERE avail > 0) > 0 AS some_pages_free FROM pg_freespace('h')
UNION ALL
SELECT 'm', count(*) FILTER (WHERE avail > 0) > 0 FROM pg_freespace('m');

-- ---------------------------------------------------------------------
-- pg_buffercache, pg_prewarm: work (they see blocks, not records)
-- ---------------------------------------------------------------------
SELECT pg_prewarm('m') = pg_relation_size('m') / 8192 AS prewarmed_every_block;
SELECT count(*) > 0 AS blocks_cached
  FROM pg_buffercache
 WHERE relfilenode = pg_relation_filenode('m') AND relforknumber = 0
   AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database());

-- ---------------------------------------------------------------------
-- pg_walinspect: works.  minidb's page changes are resource manager
-- "minidb" records (library preloaded) or "Generic" ones (not preloaded);
-- the tool decodes the record headers, not what they do to a row.
-- ---------------------------------------------------------------------
SELECT pg_current_wal_insert_lsn() AS wal_start \gset
UPDATE m SET v = v || '!' WHERE id = 500;
SELECT count(*) > 0 AS minidb_or_generic_records
  FROM pg_get_wal_records_info(:'wal_start', pg_current_wal_flush_lsn())
 WHERE resource_manager IN ('minidb', 'Generic');

-- ---------------------------------------------------------------------
-- ALTER TABLE ... SET ACCESS METHOD (PostgreSQL 15): rewrites the table
-- into the other AM, indexes rebuilt, in both directions; the easiest
-- way to move a table between heap and minidb.
-- ---------------------------------------------------------------------
CREATE TABLE mig (id int PRIMARY KEY, k int, v text) USING heap;
CREATE INDEX mig_k ON mig (k);
ALTER TABLE mig ALTER COLUMN v SET STORAGE EXTERNAL;
INSERT INTO mig SELECT g, g % 10, CASE WHEN g % 100 = 0 THEN repeat(md5(g::text), 100) ELSE 'v' || g END
  FROM generate_series(1, 1000) g;
CREATE TEMP TABLE mig_before AS SELECT * FROM mig;
ALTER TABLE mig SET ACCESS METHOD minidb;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'mig'::regclass;
SELECT count(*) AS differing FROM ((TABLE mig EXCEPT ALL TABLE mig_before) UNION ALL (TABLE mig_before EXCEPT ALL TABLE mig)) d;
SELECT bt_index_check('mig_k', true), bt_index_check('mig_pkey', true);
SELECT records FROM minidb_stats('mig');
UPDATE mig SET v = v || '+' WHERE id <= 10;
ALTER TABLE mig SET ACCESS METHOD heap;
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = 'mig'::regclass;
UPDATE mig_before SET v = v || '+' WHERE id <= 10;
SELECT count(*) AS differing FROM ((TABLE mig EXCEPT ALL TABLE mig_before) UNION ALL (TABLE mig_before EXCEPT ALL TABLE mig)) d;
SELECT bt_index_check('mig_k', true), bt_index_check('mig_pkey', true);
SELECT pg_temp.try($$SELECT * FROM minidb_stats('mig')$$) AS minidb_stats_on_heap;

SET client_min_messages = warning;
DROP SCHEMA tools CASCADE;
RESET client_min_messages;
