--
-- vacuum_options: VACUUM's options give minidb tables heap's warnings and
-- errors.  The same statements run twice, first with heap as the default
-- table access method, then with minidb, so that each message can be
-- compared line by line (VERBOSE output differs by design and is not
-- used).  A temporary table cannot be vacuumed in parallel: where heap
-- would have used parallel workers for its indexes (PARALLEL n, at least
-- two indexes, index vacuuming on), it warns, and so does minidb (which
-- vacuums the indexes of other tables in parallel as heap does:
-- sql/vacuum_verbose.sql).
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA vacuum_options;
SET search_path = vacuum_options, public;

SET default_table_access_method = heap;
CREATE TEMPORARY TABLE tmp (a int PRIMARY KEY, b int, c text)
  WITH (autovacuum_enabled = off);
CREATE INDEX tmp_b ON tmp (b);
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
  WHERE c.oid = 'tmp'::regclass;
INSERT INTO tmp SELECT i, i, repeat('c', 500) FROM generate_series(1, 200) i;
DELETE FROM tmp WHERE a % 3 = 0;
UPDATE tmp SET c = 'short' WHERE a % 5 = 0;
VACUUM (PARALLEL 1, FULL FALSE) tmp;   -- warning: not in parallel
VACUUM (PARALLEL 2, INDEX_CLEANUP auto) tmp;
VACUUM (PARALLEL 2, INDEX_CLEANUP on, ANALYZE) tmp;
VACUUM (PARALLEL 2, DISABLE_PAGE_SKIPPING, FREEZE, TRUNCATE false, SKIP_LOCKED) tmp;
VACUUM (PARALLEL 2, INDEX_CLEANUP off) tmp;   -- no index vacuuming: no warning
VACUUM (PARALLEL 0) tmp;                      -- parallel off: no warning
VACUUM tmp;
VACUUM (PARALLEL 2, FULL) tmp;                -- errors
VACUUM (PARALLEL) tmp;
VACUUM (PARALLEL -1) tmp;
VACUUM (PARALLEL 2) tmp (b);
VACUUM (PROCESS_TOAST false, FULL) tmp;
VACUUM (INDEX_CLEANUP maybe) tmp;
VACUUM (FULL, PARALLEL 0, FREEZE) tmp;
VACUUM (ANALYZE, PARALLEL 1) tmp (b, c);
DROP INDEX tmp_b;
VACUUM (PARALLEL 1) tmp;                      -- one index: no warning
SELECT count(*), sum(a) FROM tmp;
DROP TABLE tmp;
CREATE TABLE perm (a int PRIMARY KEY, b int) WITH (autovacuum_enabled = off);
CREATE INDEX perm_b ON perm (b);
INSERT INTO perm SELECT i, i FROM generate_series(1, 100) i;
DELETE FROM perm WHERE a % 2 = 0;
VACUUM (PARALLEL 2) perm;                     -- not temporary: no warning
SELECT count(*) FROM perm;
DROP TABLE perm;

SET default_table_access_method = minidb;
CREATE TEMPORARY TABLE tmp (a int PRIMARY KEY, b int, c text)
  WITH (autovacuum_enabled = off);
CREATE INDEX tmp_b ON tmp (b);
SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
  WHERE c.oid = 'tmp'::regclass;
INSERT INTO tmp SELECT i, i, repeat('c', 500) FROM generate_series(1, 200) i;
DELETE FROM tmp WHERE a % 3 = 0;
UPDATE tmp SET c = 'short' WHERE a % 5 = 0;
VACUUM (PARALLEL 1, FULL FALSE) tmp;   -- warning: not in parallel
VACUUM (PARALLEL 2, INDEX_CLEANUP auto) tmp;
VACUUM (PARALLEL 2, INDEX_CLEANUP on, ANALYZE) tmp;
VACUUM (PARALLEL 2, DISABLE_PAGE_SKIPPING, FREEZE, TRUNCATE false, SKIP_LOCKED) tmp;
VACUUM (PARALLEL 2, INDEX_CLEANUP off) tmp;   -- no index vacuuming: no warning
VACUUM (PARALLEL 0) tmp;                      -- parallel off: no warning
VACUUM tmp;
VACUUM (PARALLEL 2, FULL) tmp;                -- errors
VACUUM (PARALLEL) tmp;
VACUUM (PARALLEL -1) tmp;
VACUUM (PARALLEL 2) tmp (b);
VACUUM (PROCESS_TOAST false, FULL) tmp;
VACUUM (INDEX_CLEANUP maybe) tmp;
VACUUM (FULL, PARALLEL 0, FREEZE) tmp;
VACUUM (ANALYZE, PARALLEL 1) tmp (b, c);
DROP INDEX tmp_b;
VACUUM (PARALLEL 1) tmp;                      -- one index: no warning
SELECT count(*), sum(a) FROM tmp;
DROP TABLE tmp;
CREATE TABLE perm (a int PRIMARY KEY, b int) WITH (autovacuum_enabled = off);
CREATE INDEX perm_b ON perm (b);
INSERT INTO perm SELECT i, i FROM generate_series(1, 100) i;
DELETE FROM perm WHERE a % 2 = 0;
VACUUM (PARALLEL 2) perm;                     -- not temporary: no warning
SELECT count(*) FROM perm;
DROP TABLE perm;

RESET default_table_access_method;
DROP SCHEMA vacuum_options;
