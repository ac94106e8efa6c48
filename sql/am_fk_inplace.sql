--
-- am_fk_inplace: UPDATEs of a table with foreign keys (the referencing
-- side), heap and minidb side by side.  An UPDATE that queues no
-- foreign-key check (the key unchanged and whole, the row not written by
-- this transaction) stays in place on minidb, as heap's is HOT; every
-- other one moves the row, so that the check, which fetches the row by
-- TID when it fires (at the statement's end or at commit), finds the
-- version it was queued for.  Each case runs the same statements on both
-- tables; errors must be the same, and cmp() must list no row.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_fk_inplace;
SET search_path = am_fk_inplace, public;
\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

-- moved(t): rows of t whose TID changed since keep(t)
CREATE TABLE kept (tbl text, id int, tid tid);
CREATE FUNCTION keep(t regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM kept WHERE tbl = t::text;
  EXECUTE format('INSERT INTO kept SELECT %L, id, ctid FROM %s', t::text, t);
END $$;
CREATE FUNCTION moved(t regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s x JOIN kept k ON k.tbl = %L AND k.id = x.id
                  WHERE k.tid <> x.ctid', t, t::text) INTO n;
  RETURN n;
END $$;

CREATE TABLE hp (id int PRIMARY KEY, note text) USING heap;
CREATE TABLE mp (id int PRIMARY KEY, note text) USING minidb;
INSERT INTO hp SELECT i, 'p' || i FROM generate_series(1, 10) i;
INSERT INTO mp SELECT i, 'p' || i FROM generate_series(1, 10) i;
CREATE TABLE hc (id int PRIMARY KEY, pid int REFERENCES hp, note text) USING heap;
CREATE TABLE mc (id int PRIMARY KEY, pid int REFERENCES mp, note text) USING minidb;
INSERT INTO hc SELECT i, 1 + i % 10, 'c' || i FROM generate_series(1, 40) i;
INSERT INTO mc SELECT i, 1 + i % 10, 'c' || i FROM generate_series(1, 40) i;

-- a committed row, its key unchanged: in place, no check
SELECT keep('mc');
UPDATE hc SET note = note || 'u' WHERE id <= 20;
UPDATE mc SET note = note || 'u' WHERE id <= 20;
SELECT moved('mc') AS moved;
SELECT * FROM cmp('hc', 'mc');

-- the key changed (pid has no index): the check runs, the row moves
SELECT keep('mc');
UPDATE hc SET pid = 5 WHERE id = 21;
UPDATE mc SET pid = 5 WHERE id = 21;
SELECT moved('mc') AS moved;
UPDATE hc SET pid = 99 WHERE id = 22;
UPDATE mc SET pid = 99 WHERE id = 22;
SELECT * FROM cmp('hc', 'mc');

-- rows this transaction inserted or updated: their checks are queued
-- whatever changes, so they move, and the checks see what heap's see
BEGIN;
INSERT INTO hc VALUES (41, 3, 'new');
INSERT INTO mc VALUES (41, 3, 'new');
UPDATE hc SET note = 'again' WHERE id IN (1, 41);
UPDATE mc SET note = 'again' WHERE id IN (1, 41);
SELECT keep('mc');
UPDATE hc SET note = 'thrice' WHERE id IN (1, 41);
UPDATE mc SET note = 'thrice' WHERE id IN (1, 41);
SELECT moved('mc') AS moved;
COMMIT;
SELECT * FROM cmp('hc', 'mc');

-- a deferred key: the checks fire at commit.  The inserted row's check
-- finds it updated and leaves it to the UPDATE's; a parent deleted under
-- a child fails the commit with the same error on both
CREATE TABLE hdp (id int PRIMARY KEY) USING heap;
CREATE TABLE mdp (id int PRIMARY KEY) USING minidb;
INSERT INTO hdp SELECT generate_series(1, 12);
INSERT INTO mdp SELECT generate_series(1, 12);
CREATE TABLE hd (id int PRIMARY KEY, pid int REFERENCES hdp DEFERRABLE INITIALLY DEFERRED,
                 note text) USING heap;
CREATE TABLE md (id int PRIMARY KEY, pid int REFERENCES mdp DEFERRABLE INITIALLY DEFERRED,
                 note text) USING minidb;
INSERT INTO hd SELECT i, 1 + i % 10, 'd' || i FROM generate_series(1, 20) i;
INSERT INTO md SELECT i, 1 + i % 10, 'd' || i FROM generate_series(1, 20) i;
BEGIN;
INSERT INTO hd VALUES (21, 11, 'late');
UPDATE hd SET note = 'later' WHERE id = 21;
DELETE FROM hdp WHERE id = 11;
COMMIT;
BEGIN;
INSERT INTO md VALUES (21, 11, 'late');
UPDATE md SET note = 'later' WHERE id = 21;
DELETE FROM mdp WHERE id = 11;
COMMIT;
-- the same, the parent put back before commit
BEGIN;
INSERT INTO hd VALUES (21, 11, 'late');
UPDATE hd SET note = 'later' WHERE id = 21;
DELETE FROM hdp WHERE id = 11;
INSERT INTO hdp VALUES (11);
COMMIT;
BEGIN;
INSERT INTO md VALUES (21, 11, 'late');
UPDATE md SET note = 'later' WHERE id = 21;
DELETE FROM mdp WHERE id = 11;
INSERT INTO mdp VALUES (11);
COMMIT;
-- a committed row updated in place, then its parent deleted
SELECT keep('md');
BEGIN;
UPDATE hd SET note = 'in place' WHERE id = 5;
DELETE FROM hdp WHERE id = 6;
COMMIT;
BEGIN;
UPDATE md SET note = 'in place' WHERE id = 5;
SELECT moved('md') AS moved;
DELETE FROM mdp WHERE id = 6;
COMMIT;
-- the key changed to a parent deleted before commit
BEGIN;
UPDATE hd SET pid = 12 WHERE id = 7;
DELETE FROM hdp WHERE id = 12;
COMMIT;
BEGIN;
UPDATE md SET pid = 12 WHERE id = 7;
DELETE FROM mdp WHERE id = 12;
COMMIT;
SELECT * FROM cmp('hd', 'md');
SELECT * FROM cmp('hdp', 'mdp');

-- savepoints: an in-place UPDATE rolled back, then the key changed
BEGIN;
SAVEPOINT a;
UPDATE hc SET note = 'sp' WHERE id = 30;
ROLLBACK TO a;
UPDATE hc SET pid = 5 WHERE id = 30;
COMMIT;
BEGIN;
SAVEPOINT a;
UPDATE mc SET note = 'sp' WHERE id = 30;
ROLLBACK TO a;
UPDATE mc SET pid = 5 WHERE id = 30;
COMMIT;
SELECT * FROM cmp('hc', 'mc');

-- MATCH FULL, NOT VALID: an old row whose key is partly NULL fails its
-- check on any UPDATE, on both
CREATE TABLE hk (a int, b int, PRIMARY KEY (a, b)) USING heap;
CREATE TABLE mk (a int, b int, PRIMARY KEY (a, b)) USING minidb;
INSERT INTO hk VALUES (1, 1);
INSERT INTO mk VALUES (1, 1);
CREATE TABLE hf (id int PRIMARY KEY, a int, b int, note text) USING heap;
CREATE TABLE mf (id int PRIMARY KEY, a int, b int, note text) USING minidb;
INSERT INTO hf VALUES (1, 1, 1, 'whole'), (2, 1, NULL, 'partly'), (3, NULL, NULL, 'none'),
                      (4, 7, 7, 'dangling');
INSERT INTO mf VALUES (1, 1, 1, 'whole'), (2, 1, NULL, 'partly'), (3, NULL, NULL, 'none'),
                      (4, 7, 7, 'dangling');
ALTER TABLE hf ADD FOREIGN KEY (a, b) REFERENCES hk MATCH FULL NOT VALID;
ALTER TABLE mf ADD FOREIGN KEY (a, b) REFERENCES mk MATCH FULL NOT VALID;
SELECT keep('mf');
UPDATE hf SET note = note || '!' WHERE id IN (1, 3, 4);
UPDATE mf SET note = note || '!' WHERE id IN (1, 3, 4);
SELECT moved('mf') AS moved;
UPDATE hf SET note = note || '!' WHERE id = 2;
UPDATE mf SET note = note || '!' WHERE id = 2;
-- a row whose key names no parent (NOT VALID let it stay): its first
-- UPDATE in a transaction is not checked, its second is (the row is now
-- this transaction's), and fails on both
BEGIN;
UPDATE hf SET note = note || '?' WHERE id = 4;
UPDATE hf SET note = note || '?' WHERE id = 4;
ROLLBACK;
BEGIN;
UPDATE mf SET note = note || '?' WHERE id = 4;
UPDATE mf SET note = note || '?' WHERE id = 4;
ROLLBACK;
SELECT * FROM cmp('hf', 'mf');

-- a self-referencing key: a node's note in place, its parent moved
CREATE TABLE ht (id int PRIMARY KEY, up int REFERENCES ht, note text) USING heap;
CREATE TABLE mt (id int PRIMARY KEY, up int REFERENCES mt, note text) USING minidb;
INSERT INTO ht VALUES (1, NULL, 'root');
INSERT INTO mt VALUES (1, NULL, 'root');
INSERT INTO ht SELECT i, i / 2, 'n' || i FROM generate_series(2, 15) i;
INSERT INTO mt SELECT i, i / 2, 'n' || i FROM generate_series(2, 15) i;
SELECT keep('mt');
UPDATE ht SET note = upper(note);
UPDATE mt SET note = upper(note);
SELECT moved('mt') AS moved;
UPDATE ht SET up = 1 WHERE id > 7;
UPDATE mt SET up = 1 WHERE id > 7;
UPDATE ht SET up = 40 WHERE id = 9;
UPDATE mt SET up = 40 WHERE id = 9;
DELETE FROM ht WHERE id = 2;
DELETE FROM mt WHERE id = 2;
SELECT * FROM cmp('ht', 'mt');

-- a referenced key changed with ON UPDATE CASCADE: the children's keys
-- change, so they move
CREATE TABLE hqp (id int PRIMARY KEY) USING heap;
CREATE TABLE mqp (id int PRIMARY KEY) USING minidb;
INSERT INTO hqp SELECT generate_series(1, 3);
INSERT INTO mqp SELECT generate_series(1, 3);
CREATE TABLE hq (id int PRIMARY KEY, pid int REFERENCES hqp ON UPDATE CASCADE, note text) USING heap;
CREATE TABLE mq (id int PRIMARY KEY, pid int REFERENCES mqp ON UPDATE CASCADE, note text) USING minidb;
INSERT INTO hq SELECT i, 1 + i % 3, 'q' || i FROM generate_series(1, 9) i;
INSERT INTO mq SELECT i, 1 + i % 3, 'q' || i FROM generate_series(1, 9) i;
SELECT keep('mq');
UPDATE hqp SET id = 100 WHERE id = 2;
UPDATE mqp SET id = 100 WHERE id = 2;
SELECT moved('mq') AS moved;
SELECT keep('mq');
UPDATE hq SET note = 'after' WHERE pid = 100;
UPDATE mq SET note = 'after' WHERE pid = 100;
SELECT moved('mq') AS moved;
SELECT * FROM cmp('hq', 'mq');

-- another AFTER row trigger beside the key's: every UPDATE moves
CREATE TABLE log (tbl text, old text, new text);
CREATE FUNCTION log_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO log VALUES (TG_TABLE_NAME, OLD::text, NEW::text);
  RETURN NULL;
END $$;
CREATE TRIGGER hc_log AFTER UPDATE ON hc FOR EACH ROW EXECUTE FUNCTION log_row();
CREATE TRIGGER mc_log AFTER UPDATE ON mc FOR EACH ROW EXECUTE FUNCTION log_row();
SELECT keep('mc');
UPDATE hc SET note = note || 'l' WHERE id BETWEEN 31 AND 33;
UPDATE mc SET note = note || 'l' WHERE id BETWEEN 31 AND 33;
SELECT moved('mc') AS moved;
SELECT old, new, count(*) FROM log GROUP BY old, new HAVING count(*) <> 2 ORDER BY 1, 2;
SELECT * FROM cmp('hc', 'mc');

DROP SCHEMA am_fk_inplace CASCADE;
