--
-- am_scans: every way the executor reads a table, heap vs minidb.
-- cmp(a, b, q) lists rows (whole-row text, multiset) that satisfy q in one
-- table but not in the other: it must always return 0 rows.  Physical
-- layouts differ between the AMs, so nothing here prints a ctid other than
-- (0,1) or depends on how many rows fit a page.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_scans;
SET search_path = am_scans, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

CREATE TABLE h (id int, k int, pad text) USING heap WITH (autovacuum_enabled = off);
CREATE TABLE m (id int, k int, pad text) USING minidb WITH (autovacuum_enabled = off);
INSERT INTO h SELECT i, i % 100, repeat(chr(65 + i % 26), 100) FROM generate_series(1, 3000) i;
INSERT INTO m SELECT i, i % 100, repeat(chr(65 + i % 26), 100) FROM generate_series(1, 3000) i;
-- in-place updates, moving updates and deletes all over the table
UPDATE h SET k = k + 1000 WHERE id % 7 = 0;
UPDATE m SET k = k + 1000 WHERE id % 7 = 0;
UPDATE h SET pad = pad || 'x' WHERE id % 5 = 0;
UPDATE m SET pad = pad || 'x' WHERE id % 5 = 0;
UPDATE h SET k = k + 1 WHERE id % 7 = 0;
UPDATE m SET k = k + 1 WHERE id % 7 = 0;
DELETE FROM h WHERE id % 11 = 0;
DELETE FROM m WHERE id % 11 = 0;

-- sequential scan
EXPLAIN (COSTS OFF) SELECT * FROM m;
SELECT * FROM cmp('h', 'm');
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM m;
SELECT id, k, left(pad, 3) FROM m WHERE id <= 12 ORDER BY id;
-- a filter and a LIMIT (the scan stops early and is ended cleanly)
SELECT count(*) FROM (SELECT * FROM m WHERE k > 1000 LIMIT 10) s;
SELECT * FROM cmp('h', 'm', 'k > 1000 AND id % 2 = 1');
-- a rescan: the inner side of a nested loop is scanned again and again
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
SELECT count(*) FROM (VALUES (1), (2), (3)) v(x) JOIN m ON m.k = v.x;
SELECT count(*) FROM (VALUES (1), (2), (3)) v(x) JOIN h ON h.k = v.x;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;

-- parallel sequential scan
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT count(*), sum(k) FROM m;
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM m;
SELECT count(*), sum(id), sum(k), sum(length(pad)) FROM h;
EXPLAIN (COSTS OFF) SELECT id FROM m WHERE k = 1007;
SELECT id FROM m WHERE k = 1007 ORDER BY id;
SELECT
  (SELECT array_agg(id ORDER BY id) FROM h WHERE k % 10 = 3) =
  (SELECT array_agg(id ORDER BY id) FROM m WHERE k % 10 = 3) AS same_rows;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;

-- TID scans: the first row ever inserted is at (0,1) on both
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE ctid = '(0,1)';
SELECT ctid, id, k FROM h WHERE ctid = '(0,1)';
SELECT ctid, id, k FROM m WHERE ctid = '(0,1)';
-- a TID taken from the row itself, a list of TIDs, a TID in a subquery
SELECT count(*) FROM m a WHERE ctid = (SELECT ctid FROM m b WHERE b.id = 1234);
SELECT a.id FROM m a WHERE ctid = ANY (ARRAY(SELECT ctid FROM m b WHERE b.id IN (2, 3, 1234)))
 ORDER BY id;
SELECT a.id FROM m a WHERE ctid IN (SELECT ctid FROM m b WHERE b.id BETWEEN 100 AND 105)
 ORDER BY id;
-- TIDs that point nowhere find nothing: past the end, a huge offset, a
-- deleted row; the TID a row had before an UPDATE never shows the old
-- version (whether the row kept that TID depends on the AM and the free
-- space: minidb updates in place when it can, this table has no index)
SELECT count(*) FROM m WHERE ctid = '(4000000,1)';
SELECT count(*) FROM m WHERE ctid = '(0,2000)';
SELECT count(*) FROM m WHERE ctid = '(0,0)';
SELECT ctid AS deleted_tid FROM m WHERE id = 2000 \gset
DELETE FROM m WHERE id = 2000;
DELETE FROM h WHERE id = 2000;
SELECT count(*) FROM m WHERE ctid = :'deleted_tid';
SELECT ctid AS moved_tid FROM m WHERE id = 2001 \gset
UPDATE m SET id = -2001 WHERE id = 2001;
UPDATE h SET id = -2001 WHERE id = 2001;
SELECT count(*) FROM m WHERE ctid = :'moved_tid' AND id = 2001;
SELECT count(*) FROM m WHERE ctid = (SELECT ctid FROM m WHERE id = -2001);
-- currtid2 finds the row's newest TID from its old one
SELECT currtid2('am_scans.m', :'moved_tid') = (SELECT ctid FROM m WHERE id = -2001) AS latest_tid_found;

-- TID range scans: compare with the same range computed without TID quals
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE ctid < '(1,0)';
SELECT (SELECT count(*) FROM m WHERE ctid < '(1,0)') =
       (SELECT count(*) FROM m WHERE (ctid::text::point)[0] < 1) AS same_count,
       (SELECT count(*) FROM m WHERE ctid < '(1,0)') > 0 AS nonempty;
SELECT (SELECT array_agg(id ORDER BY id) FROM m WHERE ctid >= '(1,0)' AND ctid < '(3,0)') =
       (SELECT array_agg(id ORDER BY id) FROM m
         WHERE (ctid::text::point)[0] >= 1 AND (ctid::text::point)[0] < 3) AS same_rows;
SELECT (SELECT count(*) FROM m WHERE ctid > '(0,1)') + 1 = (SELECT count(*) FROM m) AS all_but_first;
SELECT count(*) FROM m WHERE ctid >= '(4000000,0)';
SELECT (SELECT count(*) FROM h WHERE ctid < '(1,0)') =
       (SELECT count(*) FROM h WHERE (ctid::text::point)[0] < 1) AS heap_same_count;

-- TABLESAMPLE: 100 percent is everything, 0 percent nothing, REPEATABLE
-- gives the same sample twice; which rows a partial sample picks differs
-- between AMs, so only sanity is checked for those
SELECT * FROM cmp('h', 'm');
SELECT count(*) = (SELECT count(*) FROM m) AS system_all FROM m TABLESAMPLE SYSTEM (100);
SELECT count(*) = (SELECT count(*) FROM m) AS bernoulli_all FROM m TABLESAMPLE BERNOULLI (100);
SELECT count(*) FROM m TABLESAMPLE SYSTEM (0);
SELECT count(*) FROM m TABLESAMPLE BERNOULLI (0);
SELECT (SELECT array_agg(x::text ORDER BY id) FROM m x TABLESAMPLE SYSTEM (100) REPEATABLE (3)) =
       (SELECT array_agg(x::text ORDER BY id) FROM h x) AS system_100_same_rows;
SELECT (SELECT array_agg(x::text ORDER BY id) FROM m x TABLESAMPLE BERNOULLI (100) REPEATABLE (3)) =
       (SELECT array_agg(x::text ORDER BY id) FROM h x) AS bernoulli_100_same_rows;
CREATE TEMP TABLE s1 AS SELECT id FROM m TABLESAMPLE SYSTEM (40) REPEATABLE (42);
CREATE TEMP TABLE s2 AS SELECT id FROM m TABLESAMPLE SYSTEM (40) REPEATABLE (42);
CREATE TEMP TABLE b1 AS SELECT id FROM m TABLESAMPLE BERNOULLI (30) REPEATABLE (7);
CREATE TEMP TABLE b2 AS SELECT id FROM m TABLESAMPLE BERNOULLI (30) REPEATABLE (7);
SELECT (SELECT array_agg(id ORDER BY id) FROM s1) IS NOT DISTINCT FROM
       (SELECT array_agg(id ORDER BY id) FROM s2) AS system_repeatable,
       (SELECT array_agg(id ORDER BY id) FROM b1) IS NOT DISTINCT FROM
       (SELECT array_agg(id ORDER BY id) FROM b2) AS bernoulli_repeatable;
-- sampled rows are real rows, each once; BERNOULLI (30) of ~2700 rows is
-- nowhere near 0 or all of them
SELECT (SELECT count(*) FROM b1 WHERE id NOT IN (SELECT id FROM h)) AS bogus_rows,
       (SELECT count(*) - count(DISTINCT id) FROM b1) AS duplicate_rows,
       (SELECT count(*) FROM b1) BETWEEN 500 AND 1200 AS bernoulli_count_sane,
       (SELECT count(*) FROM s1) BETWEEN 1 AND (SELECT count(*) FROM m) - 1 AS system_count_sane,
       (SELECT count(*) FROM s1 WHERE id NOT IN (SELECT id FROM h)) AS system_bogus_rows;

-- ANALYZE: on a table this small every row is sampled, so reltuples and
-- the column statistics are exact and the same for both AMs
ANALYZE h;
ANALYZE m;
SELECT relname, reltuples, relpages > 0 AS has_pages FROM pg_class
 WHERE relname IN ('h', 'm') AND relnamespace = 'am_scans'::regnamespace ORDER BY relname;
SELECT count(*) FROM m;
SELECT attname, null_frac, n_distinct, avg_width FROM pg_stats
 WHERE schemaname = 'am_scans' AND tablename = 'm' ORDER BY attname;
SELECT attname, null_frac, n_distinct, avg_width,
       most_common_vals::text, most_common_freqs::text, histogram_bounds::text FROM pg_stats
 WHERE schemaname = 'am_scans' AND tablename = 'h'
EXCEPT
SELECT attname, null_frac, n_distinct, avg_width,
       most_common_vals::text, most_common_freqs::text, histogram_bounds::text FROM pg_stats
 WHERE schemaname = 'am_scans' AND tablename = 'm';
-- estimates for a filtered scan come from those statistics
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE k = 5;

-- system columns
SELECT tableoid::regclass, count(*) FROM m GROUP BY 1;
SELECT count(*) FILTER (WHERE xmin::text::bigint > 0) AS rows_with_xmin,
       count(DISTINCT ctid) = count(*) AS ctids_unique FROM m;
BEGIN;
INSERT INTO m VALUES (-1, 0, 'first');
INSERT INTO h VALUES (-1, 0, 'first');
INSERT INTO m VALUES (-2, 0, 'second');
INSERT INTO h VALUES (-2, 0, 'second');
UPDATE m SET pad = 'updated' WHERE id = -1;
UPDATE h SET pad = 'updated' WHERE id = -1;
SELECT id, pad, cmin, xmin = pg_current_xact_id()::xid AS my_xmin,
       tableoid::regclass FROM m WHERE id IN (-1, -2) ORDER BY id;
SELECT id, pad, cmin, xmin = pg_current_xact_id()::xid AS my_xmin,
       tableoid::regclass FROM h WHERE id IN (-1, -2) ORDER BY id;
SELECT count(*) FROM m WHERE xmin = pg_current_xact_id()::xid;
COMMIT;
SELECT id, cmin, xmin = (SELECT xmin FROM h WHERE id = -1) AS same_xact_as_heap_row
  FROM m WHERE id IN (-1, -2) ORDER BY id;
SELECT * FROM cmp('h', 'm');

SET client_min_messages = warning;
DROP SCHEMA am_scans CASCADE;
