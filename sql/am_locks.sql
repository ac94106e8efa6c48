-- Row locks, foreign keys and ON CONFLICT beside heap (issue 10, issue 9 #3)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;

-- ON CONFLICT DO UPDATE touching one row twice: heap's error, both AMs
CREATE TABLE oc_heap (k int PRIMARY KEY, v int) USING heap;
CREATE TABLE oc_minidb (k int PRIMARY KEY, v int) USING minidb;
INSERT INTO oc_heap VALUES (1, 0);
INSERT INTO oc_minidb VALUES (1, 0);
INSERT INTO oc_heap VALUES (1, 1), (1, 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO oc_minidb VALUES (1, 1), (1, 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO oc_heap VALUES (2, 1), (2, 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
INSERT INTO oc_minidb VALUES (2, 1), (2, 2) ON CONFLICT (k) DO UPDATE SET v = excluded.v;
SELECT 'heap' AS am, * FROM oc_heap UNION ALL SELECT 'minidb', * FROM oc_minidb ORDER BY 1, 2;

-- A referenced table's non-key UPDATE stays in place: its foreign-key
-- triggers fire only when a key changes.
CREATE TABLE parent (id int PRIMARY KEY, note text) USING minidb;
CREATE TABLE child (id int PRIMARY KEY, pid int REFERENCES parent, note text) USING minidb;
INSERT INTO parent VALUES (1, 'a'), (2, 'b');
INSERT INTO child VALUES (1, 1, 'x');
SELECT ctid FROM parent WHERE id = 1;
UPDATE parent SET note = 'changed' WHERE id = 1;
SELECT ctid, * FROM parent WHERE id = 1;
-- ... and a key change is still checked
UPDATE parent SET id = 10 WHERE id = 1;
DELETE FROM parent WHERE id = 1;
-- The referencing table's check triggers need the new row by TID: its
-- UPDATEs move, and a change of the (unindexed) referencing column is
-- checked, in the same statement and deferred.
UPDATE child SET pid = 3 WHERE id = 1;
UPDATE child SET pid = 2 WHERE id = 1;
SELECT * FROM child;
ALTER TABLE child ALTER CONSTRAINT child_pid_fkey DEFERRABLE INITIALLY DEFERRED;
BEGIN;
INSERT INTO child VALUES (2, 1, 'y');
UPDATE child SET pid = 99 WHERE id = 2;
COMMIT;
BEGIN;
INSERT INTO child VALUES (3, 99, 'z');
UPDATE child SET pid = 1 WHERE id = 3;
COMMIT;
SELECT * FROM child ORDER BY id;

-- minidb_row_locks: a lock, then bad input
BEGIN;
SELECT id FROM parent WHERE id = 2 FOR SHARE;
SELECT locked_row, multi, modes, pids = ARRAY[pg_backend_pid()] AS mine
  FROM minidb_row_locks('parent');
COMMIT;
SELECT * FROM minidb_row_locks('parent');
SELECT * FROM minidb_row_locks(NULL);
SELECT * FROM minidb_row_locks('oc_heap');
SELECT * FROM minidb_row_locks('parent_pkey');
SELECT * FROM minidb_row_locks(0);
CREATE ROLE minidb_locks_reader;
SET ROLE minidb_locks_reader;
SELECT * FROM minidb_row_locks('parent');
RESET ROLE;
GRANT SELECT ON parent TO minidb_locks_reader;
SET ROLE minidb_locks_reader;
SELECT * FROM minidb_row_locks('parent');
RESET ROLE;
REVOKE SELECT ON parent FROM minidb_locks_reader;
DROP ROLE minidb_locks_reader;

DROP TABLE child, parent, oc_heap, oc_minidb;
