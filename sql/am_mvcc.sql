--
-- am_mvcc: visibility within one session, heap vs minidb: subtransactions,
-- cursors that keep their snapshot across later updates (through seq and
-- index scans), command ids (cmin, statements that must not see their own
-- writes), insert+update+delete of one row in one transaction.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_mvcc;
SET search_path = am_mvcc, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

CREATE TABLE h (id int PRIMARY KEY, k int, n int) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int, n int) USING minidb;
CREATE INDEX h_k ON h (k);
CREATE INDEX m_k ON m (k);
INSERT INTO h SELECT i, i, 0 FROM generate_series(1, 100) i;
INSERT INTO m SELECT i, i, 0 FROM generate_series(1, 100) i;

-- subtransactions: each level's changes vanish with ROLLBACK TO, in any mix
BEGIN;
INSERT INTO h VALUES (1000, 1000, 1);
INSERT INTO m VALUES (1000, 1000, 1);
SAVEPOINT a;
UPDATE h SET n = 2 WHERE id = 1000;
UPDATE m SET n = 2 WHERE id = 1000;
UPDATE h SET n = n + 1 WHERE id <= 3;
UPDATE m SET n = n + 1 WHERE id <= 3;
SAVEPOINT b;
DELETE FROM h WHERE id = 1000;
DELETE FROM m WHERE id = 1000;
UPDATE h SET k = k + 500 WHERE id <= 3;
UPDATE m SET k = k + 500 WHERE id <= 3;
SAVEPOINT c;
UPDATE h SET n = n + 10 WHERE id <= 3;
UPDATE m SET n = n + 10 WHERE id <= 3;
SELECT id, k, n FROM m WHERE id <= 3 OR id = 1000 ORDER BY id;
ROLLBACK TO c;
SELECT id, k, n FROM m WHERE id <= 3 OR id = 1000 ORDER BY id;
ROLLBACK TO b;
SELECT id, k, n FROM m WHERE id <= 3 OR id = 1000 ORDER BY id;
-- the row's versions from the rolled-back levels are skipped by index scans too
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, n FROM m WHERE k IN (1, 2, 3, 501, 502, 503, 1000) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT * FROM cmp('h', 'm');
SAVEPOINT d;
UPDATE h SET n = 99 WHERE id = 1000;
UPDATE m SET n = 99 WHERE id = 1000;
RELEASE d;
ROLLBACK TO a;
SELECT id, k, n FROM m WHERE id <= 3 OR id = 1000 ORDER BY id;
UPDATE h SET n = 5 WHERE id = 1000;
UPDATE m SET n = 5 WHERE id = 1000;
COMMIT;
SELECT id, k, n FROM m WHERE id <= 3 OR id = 1000 ORDER BY id;
SELECT * FROM cmp('h', 'm');
-- subtransactions from PL/pgSQL exception blocks, many of them
DO $$
DECLARE i int;
BEGIN
  FOR i IN 1..50 LOOP
    BEGIN
      UPDATE h SET n = n + 1 WHERE id = i;
      UPDATE m SET n = n + 1 WHERE id = i;
      IF i % 3 = 0 THEN RAISE EXCEPTION 'undo %', i; END IF;
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
  END LOOP;
END $$;
SELECT count(*) FILTER (WHERE n = 1) AS updated, count(*) FILTER (WHERE n = 0) AS undone
  FROM m WHERE id <= 50;
SELECT * FROM cmp('h', 'm');

-- cursor stability: a cursor keeps the snapshot of its DECLARE, also for
-- rows updated in place afterwards in the same transaction.  Fresh tables
-- and no ORDER BY, so the cursor streams a seq scan (no Sort reads ahead)
-- and rows come in insertion order on both AMs.
CREATE TABLE ch (id int PRIMARY KEY, k int, n int) USING heap;
CREATE TABLE cm (id int PRIMARY KEY, k int, n int) USING minidb;
INSERT INTO ch SELECT i, i, 0 FROM generate_series(1, 6) i;
INSERT INTO cm SELECT i, i, 0 FROM generate_series(1, 6) i;
BEGIN;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id, k, n FROM cm WHERE id <= 6;
DECLARE ch_c CURSOR FOR SELECT id, k, n FROM ch WHERE id <= 6;
DECLARE cm_c CURSOR FOR SELECT id, k, n FROM cm WHERE id <= 6;
FETCH 2 FROM ch_c;
FETCH 2 FROM cm_c;
UPDATE ch SET n = n + 100 WHERE id <= 6;
UPDATE cm SET n = n + 100 WHERE id <= 6;
UPDATE ch SET k = -k WHERE id IN (4, 5);     -- moves the rows on minidb
UPDATE cm SET k = -k WHERE id IN (4, 5);
UPDATE ch SET id = 7 WHERE id = 3;           -- and this one
UPDATE cm SET id = 7 WHERE id = 3;
DELETE FROM ch WHERE id = 6;
DELETE FROM cm WHERE id = 6;
FETCH ALL FROM ch_c;
FETCH ALL FROM cm_c;
FETCH BACKWARD 2 FROM cm_c;
-- the transaction itself sees its changes
SELECT id, k, n FROM cm ORDER BY id;
COMMIT;
SELECT * FROM cmp('ch', 'cm');
-- a cursor over an index scan, a scrollable cursor that goes back
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT id, k, n FROM m WHERE k BETWEEN 10 AND 14 ORDER BY k;
DECLARE cm2 SCROLL CURSOR FOR SELECT id, k, n FROM m WHERE k BETWEEN 10 AND 14 ORDER BY k;
FETCH 2 FROM cm2;
UPDATE m SET n = n + 1000 WHERE k BETWEEN 10 AND 14;
UPDATE m SET k = k + 1 WHERE k BETWEEN 10 AND 14;
FETCH ALL FROM cm2;
FETCH BACKWARD 3 FROM cm2;
FETCH ABSOLUTE 1 FROM cm2;
SELECT id, k, n FROM m WHERE id BETWEEN 10 AND 14 ORDER BY id;
ROLLBACK;
-- a WITH HOLD cursor materializes at COMMIT and outlives later changes
BEGIN;
DECLARE hold_m CURSOR WITH HOLD FOR SELECT id, n FROM m WHERE id BETWEEN 20 AND 23 ORDER BY id;
UPDATE m SET n = -1 WHERE id BETWEEN 20 AND 23;
COMMIT;
UPDATE m SET n = -2 WHERE id BETWEEN 20 AND 23;
FETCH ALL FROM hold_m;
CLOSE hold_m;
UPDATE h SET n = -2 WHERE id BETWEEN 20 AND 23;
SELECT * FROM cmp('h', 'm');

-- command ids: a statement never sees its own changes
-- every row is updated exactly once though each new version is still on the
-- page (in place) or later in the table (moved by a key update)
UPDATE h SET n = n + 1;
UPDATE m SET n = n + 1;
UPDATE h SET k = k + 10000;
UPDATE m SET k = k + 10000;
SELECT count(*), sum(n), min(k), max(k) FROM m;
SELECT * FROM cmp('h', 'm');
-- INSERT ... SELECT from itself reads only the rows that existed before
INSERT INTO h SELECT id + 2000, k, n FROM h;
INSERT INTO m SELECT id + 2000, k, n FROM m;
SELECT count(*) FROM m;
-- a subquery in UPDATE sees the table as of the statement's start
UPDATE h SET n = (SELECT max(n) FROM h) + 1 WHERE id IN (1, 2);
UPDATE m SET n = (SELECT max(n) FROM m) + 1 WHERE id IN (1, 2);
SELECT id, n FROM m WHERE id IN (1, 2) ORDER BY id;
-- a data-modifying CTE: the main query sees the pre-statement snapshot
WITH u AS (UPDATE h SET n = n + 5 WHERE id <= 10 RETURNING n)
SELECT (SELECT sum(n) FROM h WHERE id <= 10) AS before, (SELECT sum(n) FROM u) AS after;
WITH u AS (UPDATE m SET n = n + 5 WHERE id <= 10 RETURNING n)
SELECT (SELECT sum(n) FROM m WHERE id <= 10) AS before, (SELECT sum(n) FROM u) AS after;
-- a volatile function called per row sees the changes of earlier commands
-- in the transaction, but not of the statement running it
CREATE FUNCTION m_sum() RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT sum(n) FROM am_mvcc.m';
CREATE FUNCTION h_sum() RETURNS bigint LANGUAGE sql VOLATILE AS 'SELECT sum(n) FROM am_mvcc.h';
BEGIN;
UPDATE h SET n = n + 1 WHERE id = 3;
UPDATE m SET n = n + 1 WHERE id = 3;
SELECT h_sum() = m_sum() AS same_sum;
UPDATE h SET n = h_sum() WHERE id IN (4, 5);
UPDATE m SET n = m_sum() WHERE id IN (4, 5);
SELECT (SELECT n FROM h WHERE id = 4) = (SELECT n FROM m WHERE id = 4) AS same_n4,
       (SELECT n FROM h WHERE id = 5) = (SELECT n FROM m WHERE id = 5) AS same_n5;
COMMIT;
SELECT * FROM cmp('h', 'm');

-- cmin: the command that created the visible version
TRUNCATE h, m;
BEGIN;
INSERT INTO h VALUES (1, 1, 0);
INSERT INTO m VALUES (1, 1, 0);
INSERT INTO h VALUES (2, 2, 0);
INSERT INTO m VALUES (2, 2, 0);
UPDATE h SET n = 1 WHERE id = 1;
UPDATE m SET n = 1 WHERE id = 1;
UPDATE h SET k = 20 WHERE id = 2;
UPDATE m SET k = 20 WHERE id = 2;
SELECT id, k, n, cmin FROM h ORDER BY id;
SELECT id, k, n, cmin FROM m ORDER BY id;
SAVEPOINT s;
UPDATE h SET n = 2 WHERE id = 1;
UPDATE m SET n = 2 WHERE id = 1;
SELECT id, n, cmin FROM m ORDER BY id;
ROLLBACK TO s;
SELECT id, n, cmin FROM m ORDER BY id;
COMMIT;
SELECT id, k, n, cmin FROM m ORDER BY id;

-- insert, update (in place and moving), delete of one row in one transaction
BEGIN;
INSERT INTO h VALUES (10, 10, 0);
INSERT INTO m VALUES (10, 10, 0);
UPDATE h SET n = 1 WHERE id = 10;
UPDATE m SET n = 1 WHERE id = 10;
UPDATE h SET k = 11 WHERE id = 10;
UPDATE m SET k = 11 WHERE id = 10;
UPDATE h SET n = 2 WHERE id = 10;
UPDATE m SET n = 2 WHERE id = 10;
SELECT id, k, n FROM m WHERE id = 10;
DELETE FROM h WHERE id = 10;
DELETE FROM m WHERE id = 10;
SELECT count(*) FROM m WHERE id = 10 OR k IN (10, 11);
INSERT INTO h VALUES (10, 12, 3);
INSERT INTO m VALUES (10, 12, 3);
COMMIT;
SELECT id, k, n FROM m WHERE id = 10;
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, n FROM m WHERE k IN (10, 11, 12) ORDER BY id;
RESET enable_seqscan;
RESET enable_bitmapscan;
-- the same, rolled back: nothing
BEGIN;
INSERT INTO h VALUES (11, 10, 0);
INSERT INTO m VALUES (11, 10, 0);
UPDATE h SET n = 1 WHERE id = 11;
UPDATE m SET n = 1 WHERE id = 11;
UPDATE h SET k = 11 WHERE id = 11;
UPDATE m SET k = 11 WHERE id = 11;
DELETE FROM h WHERE id = 11;
DELETE FROM m WHERE id = 11;
ROLLBACK;
SELECT count(*) FROM m WHERE id = 11;
SELECT * FROM cmp('h', 'm');

SET client_min_messages = warning;
DROP SCHEMA am_mvcc CASCADE;
