--
-- repair: minidb_force_kill (pg_surgery's heap_force_kill for minidb) and
-- minidb_verify (what verify_heapam lists for heap) on healthy records: what
-- a killed record looks like to every kind of scan, that VACUUM then
-- removes its index entries and frees it, and every error.  Damaged
-- records themselves (bytes overwritten in the relation file) are in
-- t/102_repair.pl.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS pg_visibility;
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS amcheck;
DROP ROLE IF EXISTS regress_minidb_repair_outsider;
RESET client_min_messages;
CREATE SCHEMA repair;
SET search_path = repair, public;

CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN detail <> '' THEN ' (' || detail || ')' ELSE '' END;
END $$;
-- index entries of the primary key, all leaf pages
CREATE FUNCTION pg_temp.index_entries(idx regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT sum((SELECT count(*) FROM bt_page_items(idx::text, b) WHERE b.b > 0))
    FROM generate_series(1, (pg_relation_size(idx) / 8192)::int - 1) b(b)
   WHERE (SELECT type FROM bt_page_stats(idx::text, b)) = 'l'
$$;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file

CREATE TABLE t (id int PRIMARY KEY, v text) USING minidb
  WITH (autovacuum_enabled = off);
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 400) g;
-- VACUUM marks the page all-visible only when no other backend of this
-- database holds a snapshot older than the insert (an autovacuum worker's
-- ANALYZE of an earlier test's table can, on a slow machine): wait for
-- them to go, up to a minute
SELECT pg_temp.quiesce();
VACUUM t;
SELECT ctid, id FROM t WHERE id IN (3, 4, 200) ORDER BY id;
SELECT all_visible FROM pg_visibility_map('t', 0);

-- Kill two records (a duplicate and an unsorted array are fine)
SELECT minidb_force_kill('t', ARRAY['(0,4)', '(0,3)', '(0,4)']::tid[]) AS killed;
-- the page's all-visible mark went with the change, so index-only scans
-- look at the table again
SELECT all_visible FROM pg_visibility_map('t', 0);
SELECT lp, lp_flags, lp_len FROM heap_page_items(get_raw_page('t', 0)) WHERE lp IN (2, 3, 4, 5);

-- No scan returns them, and nothing else is lost
SELECT count(*), sum(id) FROM t;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id, v FROM t WHERE id BETWEEN 2 AND 5;
SELECT id, v FROM t WHERE id BETWEEN 2 AND 5;
EXPLAIN (COSTS OFF) SELECT count(id) FROM t WHERE id > 0;
SELECT count(id) FROM t WHERE id > 0;
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT id, v FROM t WHERE id BETWEEN 2 AND 5;
SELECT id, v FROM t WHERE id BETWEEN 2 AND 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
RESET enable_indexscan;
RESET enable_indexonlyscan;
SELECT * FROM t WHERE ctid = '(0,3)';
-- an insert does not reuse a dead item: its index entry is still there
INSERT INTO t VALUES (1000, 'new');
SELECT ctid <> '(0,3)' AND ctid <> '(0,4)' AS elsewhere FROM t WHERE id = 1000;
SELECT pg_temp.index_entries('t_pkey') AS index_entries;

-- Again: skipped, with a NOTICE each; the call can be repeated
SELECT minidb_force_kill('t', ARRAY['(0,3)']::tid[]) AS killed;

-- VACUUM removes the index entries, then frees the items
VACUUM t;
SELECT pg_temp.index_entries('t_pkey') AS index_entries;
SELECT lp, lp_flags FROM heap_page_items(get_raw_page('t', 0)) WHERE lp IN (3, 4);
SELECT minidb_force_kill('t', ARRAY['(0,3)']::tid[]) AS killed;
SELECT bt_index_check('t_pkey', true);
SELECT count(*) FROM minidb_verify('t', check_toast => true, check_indexes => true) AS damaged;
SET enable_seqscan = off;
SELECT count(id) FROM t WHERE id > 0;
RESET enable_seqscan;

-- A table without indexes
CREATE TABLE n (id int, v text) USING minidb;
INSERT INTO n SELECT g, 'n' || g FROM generate_series(1, 10) g;
SELECT minidb_force_kill('n', ARRAY['(0,10)']::tid[]) AS killed;
SELECT count(*) FROM n;
VACUUM n;
SELECT lp, lp_flags FROM heap_page_items(get_raw_page('n', 0)) WHERE lp = 10;

-- A rolled-back transaction does not bring the record back: the page
-- change is not transactional, as with heap_force_kill
BEGIN;
SELECT minidb_force_kill('n', ARRAY['(0,1)']::tid[]) AS killed;
ROLLBACK;
SELECT count(*) FROM n;

-- Errors.  Every TID is checked before anything changes: a bad one in the
-- list leaves the good ones alone.
SELECT pg_temp.try($$SELECT minidb_force_kill('t', ARRAY['(0,5)', '(0,999)']::tid[])$$);
SELECT count(*) FROM t WHERE id = 5;
SELECT pg_temp.try($$SELECT minidb_force_kill('t', ARRAY['(99,1)']::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill('t', ARRAY['(0,0)']::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill('t', ARRAY['(0,5)', NULL]::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill('t', '{{"(0,5)"}}'::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill('t', NULL)$$);
SELECT pg_temp.try($$SELECT minidb_force_kill(NULL, ARRAY['(0,5)']::tid[])$$);
SELECT minidb_force_kill('t', '{}') AS killed;
CREATE TABLE h (id int) USING heap;
INSERT INTO h VALUES (1);
CREATE VIEW tv AS SELECT * FROM t;
SELECT pg_temp.try($$SELECT minidb_force_kill('h', ARRAY['(0,1)']::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill('t_pkey', ARRAY['(0,1)']::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill('tv', ARRAY['(0,1)']::tid[])$$);
SELECT pg_temp.try($$SELECT minidb_force_kill(0, ARRAY['(0,1)']::tid[])$$);
SELECT pg_temp.try($$SELECT * FROM minidb_verify('h')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_verify('t_pkey')$$);
SELECT count(*) FROM minidb_verify(NULL);

-- Superusers only: EXECUTE is not granted to PUBLIC, and the function
-- refuses non-superusers even when it is granted
CREATE ROLE regress_minidb_repair_outsider;
GRANT USAGE ON SCHEMA repair TO regress_minidb_repair_outsider;
SET ROLE regress_minidb_repair_outsider;
SELECT pg_temp.try($$SELECT minidb_force_kill('repair.t', ARRAY['(0,5)']::tid[])$$);
SELECT pg_temp.try($$SELECT * FROM minidb_verify('repair.t')$$);
RESET ROLE;
-- minidb_verify: the table's owner, and members of pg_stat_scan_tables
GRANT pg_stat_scan_tables TO regress_minidb_repair_outsider;
SET ROLE regress_minidb_repair_outsider;
SELECT pg_temp.try($$SELECT * FROM minidb_verify('repair.t', true, true)$$);
RESET ROLE;
REVOKE pg_stat_scan_tables FROM regress_minidb_repair_outsider;
CREATE TABLE repair.owned (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO repair.owned SELECT g, repeat('x', g) FROM generate_series(1, 50) g;
ALTER TABLE repair.owned OWNER TO regress_minidb_repair_outsider;
SET ROLE regress_minidb_repair_outsider;
SELECT count(*) FROM minidb_verify('repair.owned', check_toast => true, check_indexes => true);
RESET ROLE;
DROP TABLE repair.owned;
GRANT EXECUTE ON FUNCTION minidb_force_kill(regclass, tid[]) TO regress_minidb_repair_outsider;
SET ROLE regress_minidb_repair_outsider;
SELECT pg_temp.try($$SELECT minidb_force_kill('repair.t', ARRAY['(0,5)']::tid[])$$);
RESET ROLE;
SELECT count(*) FROM t WHERE id = 5;
REVOKE EXECUTE ON FUNCTION minidb_force_kill(regclass, tid[]) FROM regress_minidb_repair_outsider;
SELECT has_function_privilege('public', 'minidb_force_kill(regclass, tid[])', 'EXECUTE') AS public_may_kill,
       has_function_privilege('public', 'minidb_verify(regclass, boolean, boolean)', 'EXECUTE') AS public_may_verify;

REVOKE USAGE ON SCHEMA repair FROM regress_minidb_repair_outsider;
SET client_min_messages = warning;
DROP SCHEMA repair CASCADE;
RESET client_min_messages;
DROP ROLE regress_minidb_repair_outsider;
