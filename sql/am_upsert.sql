--
-- am_upsert: INSERT ... ON CONFLICT on a heap table and a minidb table
-- side by side (speculative insertion, its confirmation and its
-- super-deletion), compared after every step.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_upsert;
SET search_path = am_upsert, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

CREATE TABLE h (id int PRIMARY KEY, k int UNIQUE, v text, n int DEFAULT 0) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int UNIQUE, v text, n int DEFAULT 0) USING minidb;
INSERT INTO h SELECT i, i * 10, 'v' || i FROM generate_series(1, 100) i;
INSERT INTO m SELECT i, i * 10, 'v' || i FROM generate_series(1, 100) i;

-- DO NOTHING: new keys go in, existing ones are skipped
INSERT INTO h SELECT i, i * 10, 'new' FROM generate_series(95, 110) i ON CONFLICT DO NOTHING;
INSERT INTO m SELECT i, i * 10, 'new' FROM generate_series(95, 110) i ON CONFLICT DO NOTHING;
SELECT count(*) AS cmp FROM cmp('h', 'm');
SELECT count(*) FROM m WHERE v = 'new';

-- DO UPDATE, with RETURNING and a WHERE on the update
INSERT INTO h VALUES (5, 50, 'x'), (200, 2000, 'y') ON CONFLICT (id)
  DO UPDATE SET v = excluded.v || '!', n = h.n + 1 RETURNING id, v, n;
INSERT INTO m VALUES (5, 50, 'x'), (200, 2000, 'y') ON CONFLICT (id)
  DO UPDATE SET v = excluded.v || '!', n = m.n + 1 RETURNING id, v, n;
INSERT INTO h SELECT i, i * 10, 'w' FROM generate_series(1, 20) i ON CONFLICT (id)
  DO UPDATE SET n = h.n + 10 WHERE h.id % 2 = 0;
INSERT INTO m SELECT i, i * 10, 'w' FROM generate_series(1, 20) i ON CONFLICT (id)
  DO UPDATE SET n = m.n + 10 WHERE m.id % 2 = 0;
SELECT count(*) AS cmp FROM cmp('h', 'm');

-- a conflict on the other unique index (k): the speculative row is
-- super-deleted and must never show up
INSERT INTO h VALUES (300, 30, 'conflict on k') ON CONFLICT DO NOTHING;
INSERT INTO m VALUES (300, 30, 'conflict on k') ON CONFLICT DO NOTHING;
SELECT count(*) AS cmp FROM cmp('h', 'm');
SELECT count(*) FROM m WHERE id = 300;
INSERT INTO m VALUES (301, 40, 'again') ON CONFLICT (id) DO UPDATE SET v = 'never';
-- the same key twice in one statement, as on heap
INSERT INTO h VALUES (400, 4000, 'a'), (400, 4001, 'b') ON CONFLICT (id) DO UPDATE SET v = excluded.v;
INSERT INTO m VALUES (400, 4000, 'a'), (400, 4001, 'b') ON CONFLICT (id) DO UPDATE SET v = excluded.v;

-- in a transaction that rolls back, and with a savepoint
BEGIN;
INSERT INTO h VALUES (500, 5000, 'rb') ON CONFLICT DO NOTHING;
INSERT INTO m VALUES (500, 5000, 'rb') ON CONFLICT DO NOTHING;
ROLLBACK;
BEGIN;
SAVEPOINT s;
INSERT INTO h VALUES (501, 5010, 'sp') ON CONFLICT (id) DO UPDATE SET v = 'sp2';
INSERT INTO m VALUES (501, 5010, 'sp') ON CONFLICT (id) DO UPDATE SET v = 'sp2';
ROLLBACK TO s;
INSERT INTO h VALUES (501, 5010, 'kept') ON CONFLICT (id) DO UPDATE SET v = 'sp2';
INSERT INTO m VALUES (501, 5010, 'kept') ON CONFLICT (id) DO UPDATE SET v = 'sp2';
COMMIT;
SELECT count(*) AS cmp FROM cmp('h', 'm');

-- index scans agree after super-deletions, and VACUUM tidies up
SET enable_seqscan = off;
SELECT id, k, v, n FROM m WHERE id IN (5, 200, 300, 301, 400, 500, 501) ORDER BY id;
RESET enable_seqscan;
VACUUM m;
SELECT count(*) AS cmp FROM cmp('h', 'm');

DROP SCHEMA am_upsert CASCADE;
