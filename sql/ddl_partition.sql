--
-- ddl_partition: declarative partitioning with minidb partitions, and with
-- a mix of heap and minidb partitions, beside the same partitioned table
-- made only of heap partitions: routing, UPDATE moving rows to another
-- partition (also between table AMs), partitioned indexes, pruning,
-- ATTACH / DETACH PARTITION, a default partition, partition-wise
-- aggregates, TRUNCATE of one partition, and what PG 15 allows for the
-- access method of a partitioned table itself.  The concurrent updater
-- racing a cross-partition UPDATE is specs/ddl_partition_move.spec.
-- cmp(a, b): rows in one table but not the other (EXCEPT ALL both ways),
-- always 0 rows.  The expected output is heap's behaviour (run with
-- "\set am heap" it is the same apart from that line).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
\set am minidb
CREATE SCHEMA ddl_partition;
SET search_path = ddl_partition, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file
CREATE FUNCTION am_of(rel regclass) RETURNS name LANGUAGE sql AS
$$ SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel $$;
-- rows per partition, by partition bound (names differ between tables)
CREATE FUNCTION per_part(rel regclass) RETURNS TABLE(bound text, n bigint) LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT pg_get_expr(c.relpartbound, c.oid), count(x.*) FROM pg_inherits i
       JOIN pg_class c ON c.oid = i.inhrelid
       LEFT JOIN %1$s x ON x.tableoid = c.oid
      WHERE i.inhparent = %2$s GROUP BY 1 ORDER BY 1', rel, rel::oid);
END $$;

-- A partitioned table itself takes no access method before PG 17; from 17
-- on it keeps one, which its new partitions get by default ...
DO $$
BEGIN
  CREATE TABLE bad (id int) PARTITION BY RANGE (id) USING minidb;
  CREATE TABLE bad1 PARTITION OF bad FOR VALUES FROM (0) TO (10);
  ASSERT current_setting('server_version_num')::int >= 170000, 'accepted before 17';
  ASSERT am_of('bad1') = 'minidb', 'the partition did not get minidb';
  DROP TABLE bad;
EXCEPTION WHEN feature_not_supported THEN
  ASSERT current_setting('server_version_num')::int < 170000, SQLERRM;
END $$;
-- ... its partitions do, explicitly or through default_table_access_method
CREATE TABLE hp (id int, k int, v text, PRIMARY KEY (k, id)) PARTITION BY RANGE (k);
CREATE TABLE hp1 PARTITION OF hp FOR VALUES FROM (0) TO (100) USING heap;
CREATE TABLE hp2 PARTITION OF hp FOR VALUES FROM (100) TO (200) USING heap;
CREATE TABLE hp3 PARTITION OF hp FOR VALUES FROM (200) TO (300) USING heap;
CREATE TABLE hpd PARTITION OF hp DEFAULT USING heap;
-- all minidb
CREATE TABLE mp (id int, k int, v text, PRIMARY KEY (k, id)) PARTITION BY RANGE (k);
CREATE TABLE mp1 PARTITION OF mp FOR VALUES FROM (0) TO (100) USING :am;
CREATE TABLE mp2 PARTITION OF mp FOR VALUES FROM (100) TO (200) USING :am;
SET default_table_access_method = :am;
CREATE TABLE mp3 PARTITION OF mp FOR VALUES FROM (200) TO (300);
CREATE TABLE mpd PARTITION OF mp DEFAULT;
RESET default_table_access_method;
-- mixed: heap, minidb, heap, minidb default
CREATE TABLE xp (id int, k int, v text, PRIMARY KEY (k, id)) PARTITION BY RANGE (k);
CREATE TABLE xp1 PARTITION OF xp FOR VALUES FROM (0) TO (100) USING heap;
CREATE TABLE xp2 PARTITION OF xp FOR VALUES FROM (100) TO (200) USING :am;
CREATE TABLE xp3 PARTITION OF xp FOR VALUES FROM (200) TO (300) USING heap;
CREATE TABLE xpd PARTITION OF xp DEFAULT USING :am;
SELECT c.relname,
       am_of(c.oid) = CASE WHEN c.relname IN ('xp1', 'xp3') THEN 'heap' ELSE :'am' END AS expected_am
  FROM pg_class c WHERE c.relnamespace = 'ddl_partition'::regnamespace
   AND c.relkind IN ('r', 'p') AND c.relname ~ '^[mx]p' ORDER BY 1;
CREATE INDEX ON hp (v);
CREATE INDEX ON mp (v);
CREATE INDEX ON xp (v);

INSERT INTO hp SELECT i, i % 350, 'v' || i FROM generate_series(1, 1400) i;
INSERT INTO mp SELECT i, i % 350, 'v' || i FROM generate_series(1, 1400) i;
INSERT INTO xp SELECT i, i % 350, 'v' || i FROM generate_series(1, 1400) i;
SELECT * FROM per_part('mp');
SELECT * FROM cmp('hp', 'mp');
SELECT * FROM cmp('hp', 'xp');

-- 1. UPDATE inside a partition (in place) and across partitions
UPDATE hp SET v = v || '+' WHERE id % 3 = 0;
UPDATE mp SET v = v || '+' WHERE id % 3 = 0;
UPDATE xp SET v = v || '+' WHERE id % 3 = 0;
-- every row of partition 1 moves up by 100 (heap -> minidb in xp), and
-- partition 2 to 3 (minidb -> heap in xp), 3 to the default
UPDATE hp SET k = k + 100 WHERE k < 300 AND id % 2 = 0;
UPDATE mp SET k = k + 100 WHERE k < 300 AND id % 2 = 0;
UPDATE xp SET k = k + 100 WHERE k < 300 AND id % 2 = 0;
SELECT * FROM per_part('mp');
SELECT * FROM per_part('xp');
SELECT * FROM cmp('hp', 'mp');
SELECT * FROM cmp('hp', 'xp');
-- and back down, with RETURNING
WITH u AS (UPDATE hp SET k = k - 250 WHERE k >= 300 AND id BETWEEN 200 AND 210
            RETURNING id, k, v, tableoid = 'hp1'::regclass AS in_p1)
  SELECT * FROM u ORDER BY id;
WITH u AS (UPDATE mp SET k = k - 250 WHERE k >= 300 AND id BETWEEN 200 AND 210
            RETURNING id, k, v, tableoid = 'mp1'::regclass AS in_p1)
  SELECT * FROM u ORDER BY id;
WITH u AS (UPDATE xp SET k = k - 250 WHERE k >= 300 AND id BETWEEN 200 AND 210
            RETURNING id, k, v, tableoid = 'xp1'::regclass AS in_p1)
  SELECT * FROM u ORDER BY id;
SELECT * FROM cmp('hp', 'mp');
SELECT * FROM cmp('hp', 'xp');
-- moved rows are gone from the old partitions
SELECT (SELECT count(*) FROM mp1 WHERE k >= 100) AS misplaced_mp1,
       (SELECT count(*) FROM xp2 WHERE k < 100 OR k >= 200) AS misplaced_xp2;
-- a cross-partition UPDATE rolled back, and one to a savepoint
BEGIN;
UPDATE mp SET k = 150 WHERE id = 2;
UPDATE xp SET k = 150 WHERE id = 2;
SAVEPOINT s;
UPDATE mp SET k = 250 WHERE id = 4;
UPDATE xp SET k = 250 WHERE id = 4;
ROLLBACK TO SAVEPOINT s;
SELECT id, k, tableoid::regclass FROM mp WHERE id IN (2, 4) ORDER BY id;
SELECT id, k, tableoid::regclass FROM xp WHERE id IN (2, 4) ORDER BY id;
ROLLBACK;
SELECT * FROM cmp('hp', 'mp');
SELECT * FROM cmp('hp', 'xp');
-- a row that fits no partition is refused once the default is gone
DELETE FROM hp WHERE k >= 300;
DELETE FROM mp WHERE k >= 300;
DELETE FROM xp WHERE k >= 300;
DROP TABLE hpd;
DROP TABLE mpd;
DROP TABLE xpd;
UPDATE mp SET k = 500 WHERE id = 1;
UPDATE xp SET k = 500 WHERE id = 1;

-- 2. indexes, pruning, partition-wise aggregation
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM xp WHERE k = 150 AND id = 1;
SELECT * FROM mp WHERE v = 'v999+';
SELECT * FROM xp WHERE v = 'v999+';
SELECT id, k, v FROM mp WHERE k = 150 ORDER BY id;
SELECT id, k, v FROM xp WHERE k = 150 ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
SET enable_partitionwise_aggregate = on;
SELECT k / 100 AS part, count(*), sum(id) FROM mp GROUP BY 1 ORDER BY 1;
SELECT k / 100 AS part, count(*), sum(id) FROM xp GROUP BY 1 ORDER BY 1;
RESET enable_partitionwise_aggregate;

-- 3. ATTACH / DETACH PARTITION with a minidb table (attach scans it)
CREATE TABLE mnew (id int, k int, v text, PRIMARY KEY (k, id)) USING :am;
INSERT INTO mnew SELECT i, 300 + i % 50, 'attached' || i FROM generate_series(1, 200) i;
CREATE TABLE hnew (id int, k int, v text, PRIMARY KEY (k, id)) USING heap;
INSERT INTO hnew SELECT i, 300 + i % 50, 'attached' || i FROM generate_series(1, 200) i;
-- a row outside the bound makes ATTACH fail
INSERT INTO mnew VALUES (999, 999, 'out of range');
INSERT INTO hnew VALUES (999, 999, 'out of range');
ALTER TABLE hp ATTACH PARTITION hnew FOR VALUES FROM (300) TO (400);
ALTER TABLE mp ATTACH PARTITION mnew FOR VALUES FROM (300) TO (400);
DELETE FROM hnew WHERE id = 999;
DELETE FROM mnew WHERE id = 999;
ALTER TABLE hp ATTACH PARTITION hnew FOR VALUES FROM (300) TO (400);
ALTER TABLE mp ATTACH PARTITION mnew FOR VALUES FROM (300) TO (400);
SELECT * FROM per_part('mp');
SELECT * FROM cmp('hp', 'mp');
UPDATE hp SET k = k + 200 WHERE k < 100 AND id % 5 = 0;
UPDATE mp SET k = k + 200 WHERE k < 100 AND id % 5 = 0;
SELECT * FROM cmp('hp', 'mp');
ALTER TABLE hp DETACH PARTITION hp2;
ALTER TABLE mp DETACH PARTITION mp2;
SELECT am_of('mp2') = :'am' AS kept_am, count(*) FROM mp2;
SELECT * FROM cmp('hp2', 'mp2');
SELECT * FROM cmp('hp', 'mp');
ALTER TABLE mp DETACH PARTITION mp3 CONCURRENTLY;
ALTER TABLE hp DETACH PARTITION hp3 CONCURRENTLY;
SELECT * FROM cmp('hp3', 'mp3');

-- 4. TRUNCATE of one partition and of the parent
TRUNCATE mp1;
TRUNCATE hp1;
SELECT * FROM cmp('hp', 'mp');
TRUNCATE xp;
SELECT count(*) FROM xp;

-- 5. list and hash partitioning, minidb partitions, rows moving between them
CREATE TABLE hl (id int, c text, v int) PARTITION BY LIST (c);
CREATE TABLE hl_a PARTITION OF hl FOR VALUES IN ('a') USING heap;
CREATE TABLE hl_b PARTITION OF hl FOR VALUES IN ('b') USING heap;
CREATE TABLE ml (id int, c text, v int) PARTITION BY LIST (c);
CREATE TABLE ml_a PARTITION OF ml FOR VALUES IN ('a') USING :am;
CREATE TABLE ml_b PARTITION OF ml FOR VALUES IN ('b') PARTITION BY HASH (id);
CREATE TABLE ml_b0 PARTITION OF ml_b FOR VALUES WITH (MODULUS 2, REMAINDER 0) USING :am;
CREATE TABLE ml_b1 PARTITION OF ml_b FOR VALUES WITH (MODULUS 2, REMAINDER 1) USING heap;
INSERT INTO hl SELECT i, 'a', i FROM generate_series(1, 100) i;
INSERT INTO ml SELECT i, 'a', i FROM generate_series(1, 100) i;
UPDATE hl SET c = 'b', v = v + 1 WHERE id % 2 = 0;
UPDATE ml SET c = 'b', v = v + 1 WHERE id % 2 = 0;
UPDATE hl SET id = id + 1 WHERE c = 'b' AND id < 20;
UPDATE ml SET id = id + 1 WHERE c = 'b' AND id < 20;
SELECT * FROM cmp('hl', 'ml');
SELECT c, count(*), sum(v) FROM ml GROUP BY c ORDER BY c;
SELECT (SELECT count(*) FROM ml_b0) + (SELECT count(*) FROM ml_b1) AS b_rows;

SET client_min_messages = warning;
DROP SCHEMA ddl_partition CASCADE;
RESET client_min_messages;
