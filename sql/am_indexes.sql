--
-- am_indexes: btree, hash, gist, gin and brin indexes on a heap table and a
-- minidb table; index scans, bitmap heap scans and index-only scans, each
-- forced with enable_* and proven with EXPLAIN (COSTS OFF); unique
-- violations; TIDs kept by in-place updates; CREATE INDEX after updates.
-- cmp(a, b, q) lists rows satisfying q that are in one table only: it runs
-- the same query on both tables under the current enable_* settings, so it
-- reads the minidb table through the forced path.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS amcheck;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
CREATE SCHEMA am_indexes;
SET search_path = am_indexes, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

CREATE TABLE h (id int PRIMARY KEY, k int, v text, p point, r int4range,
                a int[], t tsvector, b int, note text)
  USING heap WITH (autovacuum_enabled = off);
CREATE TABLE m (id int PRIMARY KEY, k int, v text, p point, r int4range,
                a int[], t tsvector, b int, note text)
  USING minidb WITH (autovacuum_enabled = off);
INSERT INTO h SELECT i, i % 50, 'v' || (i % 300), point(i % 40, i / 40),
  int4range(i % 100, i % 100 + i % 7 + 1), ARRAY[i % 10, i % 13, i % 17],
  to_tsvector('simple', 'w' || (i % 20) || ' x' || (i % 9)), i, 'n' || i
  FROM generate_series(1, 2000) i;
INSERT INTO m SELECT i, i % 50, 'v' || (i % 300), point(i % 40, i / 40),
  int4range(i % 100, i % 100 + i % 7 + 1), ARRAY[i % 10, i % 13, i % 17],
  to_tsvector('simple', 'w' || (i % 20) || ' x' || (i % 9)), i, 'n' || i
  FROM generate_series(1, 2000) i;
CREATE INDEX h_k ON h USING btree (k);
CREATE INDEX m_k ON m USING btree (k);
CREATE INDEX h_v ON h USING hash (v);
CREATE INDEX m_v ON m USING hash (v);
CREATE INDEX h_p ON h USING gist (p);
CREATE INDEX m_p ON m USING gist (p);
CREATE INDEX h_r ON h USING gist (r);
CREATE INDEX m_r ON m USING gist (r);
CREATE INDEX h_a ON h USING gin (a);
CREATE INDEX m_a ON m USING gin (a);
CREATE INDEX h_t ON h USING gin (t);
CREATE INDEX m_t ON m USING gin (t);
CREATE INDEX h_b ON h USING brin (b) WITH (pages_per_range = 2);
CREATE INDEX m_b ON m USING brin (b) WITH (pages_per_range = 2);
CREATE INDEX h_expr ON h (lower(v), k) WHERE k < 10;
CREATE INDEX m_expr ON m (lower(v), k) WHERE k < 10;

-- a workload between index creation and the scans: in-place updates
-- (non-indexed column), updates of every kind of indexed column, deletes,
-- rolled-back changes
UPDATE h SET note = note || '+' WHERE id % 3 = 0;
UPDATE m SET note = note || '+' WHERE id % 3 = 0;
UPDATE h SET k = k + 100 WHERE id % 10 = 1;
UPDATE m SET k = k + 100 WHERE id % 10 = 1;
UPDATE h SET v = v || 'u', p = point(p[0] + 0.5, p[1]) WHERE id % 10 = 2;
UPDATE m SET v = v || 'u', p = point(p[0] + 0.5, p[1]) WHERE id % 10 = 2;
UPDATE h SET r = int4range(lower(r) + 1000, upper(r) + 1000), a = a || 99 WHERE id % 10 = 3;
UPDATE m SET r = int4range(lower(r) + 1000, upper(r) + 1000), a = a || 99 WHERE id % 10 = 3;
UPDATE h SET t = t || to_tsvector('simple', 'extra'), b = b + 5000 WHERE id % 10 = 4;
UPDATE m SET t = t || to_tsvector('simple', 'extra'), b = b + 5000 WHERE id % 10 = 4;
UPDATE h SET note = note || '*', k = k WHERE id % 10 = 5;   -- assigns k, value unchanged
UPDATE m SET note = note || '*', k = k WHERE id % 10 = 5;
DELETE FROM h WHERE id % 10 = 6;
DELETE FROM m WHERE id % 10 = 6;
BEGIN;
UPDATE h SET k = -1, v = 'gone', b = -1 WHERE id % 10 = 7;
UPDATE m SET k = -1, v = 'gone', b = -1 WHERE id % 10 = 7;
DELETE FROM h WHERE id % 10 = 8;
DELETE FROM m WHERE id % 10 = 8;
INSERT INTO h (id, k, v) SELECT i, -1, 'gone' FROM generate_series(5001, 5100) i;
INSERT INTO m (id, k, v) SELECT i, -1, 'gone' FROM generate_series(5001, 5100) i;
ROLLBACK;
SELECT * FROM cmp('h', 'm');

-- plain index scans
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SET enable_indexonlyscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE k = 7;
SELECT * FROM cmp('h', 'm', 'k = 7');
SELECT * FROM cmp('h', 'm', 'k BETWEEN 100 AND 120');
SELECT * FROM cmp('h', 'm', 'k = -1');
SELECT id, k, note FROM m WHERE k = 101 ORDER BY id LIMIT 5;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE id = 1234;
SELECT id, k, v, note FROM m WHERE id = 1233;
SELECT * FROM cmp('h', 'm', 'id BETWEEN 1000 AND 1100');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE v = 'v12u';
SELECT * FROM cmp('h', 'm', 'v = ''v12u''');
SELECT * FROM cmp('h', 'm', 'v = ''v13''');
SELECT count(*) FROM m WHERE v = 'gone';
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE p <@ box '((0,0),(10.5,10))';
SELECT * FROM cmp('h', 'm', 'p <@ box ''((0,0),(10.5,10))''');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE r && int4range(1000, 1010);
SELECT * FROM cmp('h', 'm', 'r && int4range(1000, 1010)');
SELECT * FROM cmp('h', 'm', 'r @> 50');
EXPLAIN (COSTS OFF) SELECT id FROM m ORDER BY p <-> point '(5,5)' LIMIT 3;
SELECT count(*) FROM (SELECT id FROM m ORDER BY p <-> point '(20,20)' LIMIT 10) s;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE lower(v) = 'v5' AND k < 10;
SELECT * FROM cmp('h', 'm', 'lower(v) = ''v5'' AND k < 10');
-- backward and ordered index scans
SELECT id FROM m WHERE k = 7 ORDER BY k DESC, id DESC LIMIT 3;
SELECT (SELECT array_agg(id ORDER BY k, id) FROM h WHERE k < 20) =
       (SELECT array_agg(id ORDER BY k, id) FROM m WHERE k < 20) AS same_order;
RESET enable_indexonlyscan;

-- index-only scans (correct answers whether or not the visibility map
-- lets them skip the table)
EXPLAIN (COSTS OFF) SELECT k FROM m WHERE k BETWEEN 10 AND 20;
SELECT (SELECT array_agg(k ORDER BY k) FROM h WHERE k BETWEEN 10 AND 20) =
       (SELECT array_agg(k ORDER BY k) FROM m WHERE k BETWEEN 10 AND 20) AS same_keys;
SELECT count(*), sum(k) FROM m WHERE k BETWEEN 100 AND 200;
SELECT count(*), sum(k) FROM h WHERE k BETWEEN 100 AND 200;
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE id > 1500;
SELECT count(*) FROM m WHERE id > 1500;
SELECT count(*) FROM h WHERE id > 1500;
VACUUM h;
VACUUM m;
SELECT count(*), sum(k) FROM m WHERE k BETWEEN 0 AND 200;
SELECT count(*), sum(k) FROM h WHERE k BETWEEN 0 AND 200;

-- bitmap heap scans: exact (btree, hash, gist, gin) and lossy (brin)
SET enable_indexscan = off;
SET enable_bitmapscan = on;
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE k = 7;
SELECT * FROM cmp('h', 'm', 'k = 7');
SELECT * FROM cmp('h', 'm', 'k IN (1, 2, 101, 102)');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE k = 3 OR id < 20;
SELECT * FROM cmp('h', 'm', 'k = 3 OR id < 20');
SELECT * FROM cmp('h', 'm', 'k = 3 AND id < 1000');
SELECT * FROM cmp('h', 'm', 'v = ''v22u''');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE a @> ARRAY[3, 99];
SELECT * FROM cmp('h', 'm', 'a @> ARRAY[3, 99]');
SELECT * FROM cmp('h', 'm', 'a && ARRAY[5]');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE t @@ to_tsquery('simple', 'w3 & extra');
SELECT * FROM cmp('h', 'm', 't @@ to_tsquery(''simple'', ''w3 & extra'')');
SELECT * FROM cmp('h', 'm', 't @@ to_tsquery(''simple'', ''w4 | x2'')');
SELECT * FROM cmp('h', 'm', 'p <@ box ''((30,0),(40,50))''');
SELECT * FROM cmp('h', 'm', 'r @> 1003');
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE b BETWEEN 500 AND 600;
SELECT * FROM cmp('h', 'm', 'b BETWEEN 500 AND 600');
SELECT * FROM cmp('h', 'm', 'b > 5000');
SELECT count(*), sum(b) FROM m WHERE b BETWEEN 500 AND 600;
SELECT count(*), sum(b) FROM h WHERE b BETWEEN 500 AND 600;
-- a BitmapOr covering most of the table
EXPLAIN (COSTS OFF) SELECT * FROM m WHERE k < 40 OR id > 100;
SELECT * FROM cmp('h', 'm', 'k < 40 OR id > 100');
RESET enable_indexscan;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- every index agrees with its table (amcheck walks the table and looks up
-- every visible row in the btree)
SELECT bt_index_check('m_pkey', true), bt_index_check('m_k', true), bt_index_check('m_expr', true);
SELECT bt_index_check('h_pkey', true), bt_index_check('h_k', true), bt_index_check('h_expr', true);

-- unique violations
\set VERBOSITY terse
INSERT INTO h (id) VALUES (5);
INSERT INTO m (id) VALUES (5);
UPDATE h SET id = 7 WHERE id = 9;
UPDATE m SET id = 7 WHERE id = 9;
-- a row updated in place many times is still one key
UPDATE h SET note = 'again' WHERE id = 3;
UPDATE m SET note = 'again' WHERE id = 3;
UPDATE h SET note = 'and again' WHERE id = 3;
UPDATE m SET note = 'and again' WHERE id = 3;
INSERT INTO h (id) VALUES (3);
INSERT INTO m (id) VALUES (3);
\set VERBOSITY default
-- a deleted key, or a key moved away, can be reused; in the same transaction too
INSERT INTO h (id, k) VALUES (6, 6);
INSERT INTO m (id, k) VALUES (6, 6);
BEGIN;
DELETE FROM h WHERE id = 10;
DELETE FROM m WHERE id = 10;
INSERT INTO h (id, k, note) VALUES (10, 10, 'reborn');
INSERT INTO m (id, k, note) VALUES (10, 10, 'reborn');
UPDATE h SET id = 20000 WHERE id = 11;
UPDATE m SET id = 20000 WHERE id = 11;
UPDATE h SET id = 11 WHERE id = 12;
UPDATE m SET id = 11 WHERE id = 12;
COMMIT;
-- a failed insert leaves no visible row behind and the key stays usable
\set VERBOSITY terse
INSERT INTO m (id, note) VALUES (30000, 'ok'), (30001, 'ok'), (13, 'dup');
\set VERBOSITY default
INSERT INTO h (id, note) VALUES (30000, 'ok'), (30001, 'ok');
INSERT INTO m (id, note) VALUES (30000, 'ok'), (30001, 'ok');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, note FROM m WHERE id IN (6, 10, 11, 12, 20000, 30000, 30001) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT * FROM cmp('h', 'm');

-- TIDs: an UPDATE of no indexed column keeps the row's TID on minidb (heap
-- makes a HOT copy on the same page, so this is the one check that has no
-- heap counterpart); an UPDATE of an indexed column moves the row.
-- Neither adds an index entry to the untouched btree index k... until k
-- itself changes: count the leaf items of a one-page btree, on both AMs.
CREATE TABLE h2 (id int PRIMARY KEY, k int, note text) USING heap;
CREATE TABLE m2 (id int PRIMARY KEY, k int, note text) USING minidb;
CREATE INDEX h2_k ON h2 (k);
CREATE INDEX m2_k ON m2 (k);
INSERT INTO h2 SELECT i, i, 'n' FROM generate_series(1, 20) i;
INSERT INTO m2 SELECT i, i, 'n' FROM generate_series(1, 20) i;
SELECT ctid AS tid_before FROM m2 WHERE id = 7 \gset
UPDATE m2 SET note = 'in place' WHERE id = 7;
UPDATE h2 SET note = 'in place' WHERE id = 7;
SELECT ctid = :'tid_before' AS same_tid FROM m2 WHERE id = 7;
UPDATE m2 SET note = note || '!' WHERE id = 7;
UPDATE m2 SET note = note || '!' WHERE id = 7;
UPDATE h2 SET note = note || '!' WHERE id = 7;
UPDATE h2 SET note = note || '!' WHERE id = 7;
SELECT ctid = :'tid_before' AS same_tid_after_three FROM m2 WHERE id = 7;
SELECT (SELECT count(*) FROM bt_page_items('h2_k', 1)) AS heap_k_items,
       (SELECT count(*) FROM bt_page_items('m2_k', 1)) AS minidb_k_items,
       (SELECT count(*) FROM bt_page_items('m2_pkey', 1)) AS minidb_pkey_items;
UPDATE m2 SET k = 700 WHERE id = 7;
UPDATE h2 SET k = 700 WHERE id = 7;
SELECT ctid = :'tid_before' AS same_tid_after_key_update FROM m2 WHERE id = 7;
SELECT (SELECT count(*) FROM bt_page_items('h2_k', 1)) AS heap_k_items,
       (SELECT count(*) FROM bt_page_items('m2_k', 1)) AS minidb_k_items,
       (SELECT count(*) FROM bt_page_items('m2_pkey', 1)) AS minidb_pkey_items;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, note FROM m2 WHERE k = 700;
SELECT id, k, note FROM m2 WHERE k = 7;
SELECT id, k, note FROM m2 WHERE id = 7;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT * FROM cmp('h2', 'm2');

-- CREATE INDEX after updates: on a column that was updated in place, inside
-- the updating transaction (the old versions differ in the new column, so
-- the index must be marked indcheckxmin, as heap does for a broken HOT
-- chain), and after commit
BEGIN;
UPDATE h2 SET note = 'changed ' || id WHERE id <= 5;
UPDATE m2 SET note = 'changed ' || id WHERE id <= 5;
CREATE INDEX h2_note ON h2 (note);
CREATE INDEX m2_note ON m2 (note);
SELECT indexrelid::regclass, indcheckxmin FROM pg_index
 WHERE indexrelid IN ('h2_note'::regclass, 'm2_note'::regclass) ORDER BY 1::text;
COMMIT;
UPDATE h2 SET note = 'later ' || id WHERE id BETWEEN 6 AND 8;
UPDATE m2 SET note = 'later ' || id WHERE id BETWEEN 6 AND 8;
CREATE INDEX h2_note2 ON h2 (note, k);
CREATE INDEX m2_note2 ON m2 (note, k);
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM cmp('h2', 'm2', 'note LIKE ''changed%''');
SELECT * FROM cmp('h2', 'm2', 'note = ''later 7''');
SELECT id, k, note FROM m2 WHERE note = 'later 7';
SELECT id, k, note FROM m2 WHERE note = 'n!!';
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT bt_index_check('m2_note', true), bt_index_check('m2_note2', true), bt_index_check('m2_k', true);
-- CREATE INDEX CONCURRENTLY and REINDEX on the big table
CREATE INDEX CONCURRENTLY m_note_cic ON m (note);
CREATE INDEX CONCURRENTLY h_note_cic ON h (note);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'm_note_cic'::regclass;
REINDEX TABLE m;
REINDEX TABLE h;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT * FROM cmp('h', 'm', 'note LIKE ''n1%''');
SELECT * FROM cmp('h', 'm', 'k = 3');
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT bt_index_check('m_note_cic', true), bt_index_check('m_pkey', true), bt_index_check('m_k', true);

-- An UPDATE that changes only a column a BRIN index summarizes: on 16+ heap
-- keeps it HOT and the server adds a BRIN entry for the same TID
-- (TU_Summarizing); minidb then updates in place and answers the same, so
-- that the block range's summary covers the new value and a bitmap scan
-- through the BRIN index finds the row.  On 15 both move the row.  The
-- in-place count equals heap's HOT count on every version.
CREATE TABLE hb (id int PRIMARY KEY, b int, c text)
  USING heap WITH (autovacuum_enabled = off);
CREATE TABLE mb (id int PRIMARY KEY, b int, c text)
  USING minidb WITH (autovacuum_enabled = off);
INSERT INTO hb SELECT i, i, 'c' FROM generate_series(1, 50) i;
INSERT INTO mb SELECT i, i, 'c' FROM generate_series(1, 50) i;
CREATE INDEX hb_b ON hb USING brin (b);
CREATE INDEX mb_b ON mb USING brin (b);
UPDATE hb SET b = 100000 + id WHERE id <= 3;
UPDATE mb SET b = 100000 + id WHERE id <= 3;
SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id, b FROM mb WHERE b > 100000;
SELECT * FROM cmp('hb', 'mb', 'b > 100000');
SELECT id, b FROM mb WHERE b > 100000 ORDER BY id;
RESET enable_seqscan;
RESET enable_indexscan;
SELECT pg_stat_force_next_flush();
SELECT pg_stat_get_tuples_hot_updated('hb'::regclass) =
       pg_stat_get_tuples_hot_updated('mb'::regclass) AS same_in_place,
       pg_stat_get_tuples_updated('mb'::regclass) AS updated;

SET client_min_messages = warning;
DROP SCHEMA am_indexes CASCADE;
