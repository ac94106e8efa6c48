--
-- vacuum_verbose: VACUUM (VERBOSE) of a minidb table reports in heap's
-- lines (vacuumlazy.c's heap_vacuum_rel: pages, tuples, removable cutoff,
-- index scan, one line per index, I/O timings, read and write rates,
-- buffer usage, WAL usage, system usage), then minidb's own lines, each
-- starting with "minidb".  Heap is the oracle: the same statements run on
-- a heap table and a minidb table, and every line heap prints must be in
-- minidb's report, in the same order.  VACUUM (PARALLEL n) vacuums the
-- indexes of a minidb table in parallel workers, as heap does ("launched
-- ... parallel vacuum worker").
--
-- INFO messages cannot be read from SQL, so VACUUM runs in a psql started
-- by COPY ... FROM PROGRAM (the server's own psql, on its socket), and its
-- output comes back as rows; numbers that change from run to run
-- (xids, timings, buffers, WAL) are masked, except the tuple counts, which
-- must be heap's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS amcheck;
RESET client_min_messages;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file
CREATE SCHEMA vv_heap;
CREATE SCHEMA vv_minidb;
CREATE TABLE vv_heap.t (a int PRIMARY KEY, b int) USING heap
  WITH (autovacuum_enabled = off);
CREATE TABLE vv_minidb.t (a int PRIMARY KEY, b int) USING minidb
  WITH (autovacuum_enabled = off);
CREATE INDEX t_b ON vv_heap.t (b);
CREATE INDEX t_b ON vv_minidb.t (b);
CREATE TABLE vv_heap.noidx (a int, b int) USING heap
  WITH (autovacuum_enabled = off);
CREATE TABLE vv_minidb.noidx (a int, b int) USING minidb
  WITH (autovacuum_enabled = off);
INSERT INTO vv_heap.t SELECT i, i FROM generate_series(1, 3000) i;
INSERT INTO vv_minidb.t SELECT i, i FROM generate_series(1, 3000) i;
INSERT INTO vv_heap.noidx SELECT i, i FROM generate_series(1, 3000) i;
INSERT INTO vv_minidb.noidx SELECT i, i FROM generate_series(1, 3000) i;
DELETE FROM vv_heap.t WHERE a % 3 = 0;
DELETE FROM vv_minidb.t WHERE a % 3 = 0;
DELETE FROM vv_heap.noidx WHERE a % 4 = 0;
DELETE FROM vv_minidb.noidx WHERE a % 4 = 0;

-- psql for the server, as this session's user, on the first socket
SELECT format('%s/psql -X -q -U %s -h %s -p %s -d %s -c "SET track_io_timing = on" -c "SET min_parallel_index_scan_size = 0"',
              (SELECT setting FROM pg_config WHERE name = 'BINDIR'),
              quote_ident(current_user),
              split_part(current_setting('unix_socket_directories'), ',', 1),
              current_setting('port'), quote_ident(current_database())) AS psql
\gset
CREATE TEMP TABLE report (n serial, am text, line text);
\set cmd :psql ' -c "VACUUM (VERBOSE, PARALLEL 2) vv_heap.t" -c "DELETE FROM vv_heap.t WHERE a % 5 = 0" -c "VACUUM (VERBOSE, INDEX_CLEANUP off) vv_heap.t" -c "VACUUM (VERBOSE) vv_heap.noidx" 2>&1'
SELECT pg_temp.quiesce();
COPY report (line) FROM PROGRAM :'cmd' WITH (FORMAT text, DELIMITER E'\x01');
UPDATE report SET am = 'heap' WHERE am IS NULL;
\set cmd :psql ' -c "VACUUM (VERBOSE, PARALLEL 2) vv_minidb.t" -c "DELETE FROM vv_minidb.t WHERE a % 5 = 0" -c "VACUUM (VERBOSE, INDEX_CLEANUP off) vv_minidb.t" -c "VACUUM (VERBOSE) vv_minidb.noidx" 2>&1'
COPY report (line) FROM PROGRAM :'cmd' WITH (FORMAT text, DELIMITER E'\x01');
UPDATE report SET am = 'minidb' WHERE am IS NULL;

-- masked: the database, the schema, every number but a tuples line's
CREATE TEMP VIEW masked AS
SELECT n, am,
       CASE WHEN l LIKE 'tuples:%' THEN l
            ELSE regexp_replace(regexp_replace(l, '[0-9]+(\.[0-9]+)?', 'N', 'g'),
                                'workers? ', 'worker(s) ')
       END AS line
FROM (SELECT n, am, replace(replace(line, current_database() || '.', 'DB.'),
                            'vv_' || am || '.', 'vv.') AS l
      FROM report) r;

-- minidb's report, whole
SELECT line FROM masked WHERE am = 'minidb' ORDER BY n;

-- every heap line is in minidb's report, in heap's order: minidb's report
-- without its own lines is heap's, line for line
SELECT h.line AS heap, m.line AS minidb
FROM (SELECT line, row_number() OVER (ORDER BY n) AS i FROM masked
      WHERE am = 'heap') h
FULL JOIN (SELECT line, row_number() OVER (ORDER BY n) AS i FROM masked
           WHERE am = 'minidb' AND line NOT LIKE 'minidb %') m USING (i)
WHERE h.line IS DISTINCT FROM m.line;

-- the parallel vacuum left correct indexes
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT count(*) FROM vv_minidb.t WHERE b > 0;
SELECT count(*) FROM vv_minidb.t WHERE a > 0;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT count(*) FROM vv_minidb.t;
SELECT bt_index_check('vv_minidb.t_pkey', true), bt_index_check('vv_minidb.t_b', true);

DROP SCHEMA vv_heap CASCADE;
DROP SCHEMA vv_minidb CASCADE;
