--
-- am_toast: values of 100 kB and more through TOAST, stored, updated in
-- place, moved, deleted and rolled back, on heap and minidb side by side.
-- Values are compared by md5 and length.  toast_chunks() counts the chunks
-- that are not deleted (an MVCC count of the TOAST table): the old value's
-- chunks are deleted by the UPDATE or DELETE that drops the reference, as
-- heap does, so a minidb code path that forgets to (a leak) shows up as a
-- larger count than heap's; VACUUM must then not remove chunks that live
-- values still need.  autovacuum is off for these tables.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_toast;
SET search_path = am_toast, public;

-- an incompressible value of n kB, different for each seed
CREATE FUNCTION big(seed int, kb int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT string_agg(md5(seed::text || ':' || i), '') FROM generate_series(1, kb * 32) i
$$;
-- number of live chunks in the TOAST table of rel
CREATE FUNCTION toast_chunks(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s',
                 (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel)) INTO n;
  RETURN n;
END $$;
CREATE FUNCTION summary(rel regclass)
RETURNS TABLE(id int, k int, len_a int, md5_a text, len_b int, md5_b text)
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY EXECUTE format(
    'SELECT id, k, length(a), md5(a), length(b), md5(b) FROM %s ORDER BY id', rel);
END $$;
CREATE FUNCTION same(h regclass, m regclass) RETURNS bool LANGUAGE sql AS $$
  SELECT array_agg(s::text) IS NOT DISTINCT FROM (SELECT array_agg(t::text) FROM summary(m) t)
    FROM summary(h) s
$$;

CREATE TABLE h (id int PRIMARY KEY, k int, a text, b text) USING heap
  WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
CREATE TABLE m (id int PRIMARY KEY, k int, a text, b text) USING minidb
  WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);
SELECT reltoastrelid <> 0 AS has_toast_table FROM pg_class WHERE oid = 'm'::regclass;

INSERT INTO h VALUES (1, 1, big(1, 100), 'small'), (2, 2, big(2, 150), big(20, 120)),
  (3, 3, 'short', NULL), (4, 4, repeat('compressible ', 20000), big(40, 110));
INSERT INTO m VALUES (1, 1, big(1, 100), 'small'), (2, 2, big(2, 150), big(20, 120)),
  (3, 3, 'short', NULL), (4, 4, repeat('compressible ', 20000), big(40, 110));
SELECT * FROM summary('m');
SELECT same('h', 'm');
SELECT id, pg_column_size(a) = (SELECT pg_column_size(a) FROM h WHERE h.id = m.id) AS same_stored_size,
       pg_column_compression(a) AS compression FROM m ORDER BY id;
SELECT a = big(1, 100) AS exact_value FROM m WHERE id = 1;
SELECT toast_chunks('m') = toast_chunks('h') AS same_chunk_count, toast_chunks('m') > 0 AS toasted;

-- UPDATE of a small column only: the toasted values are kept
UPDATE h SET k = k + 10;
UPDATE m SET k = k + 10;
SELECT same('h', 'm');
-- UPDATE of a toasted column, to another big value and to a small one
UPDATE h SET a = big(11, 130) WHERE id = 1;
UPDATE m SET a = big(11, 130) WHERE id = 1;
UPDATE h SET b = 'now small' WHERE id = 2;
UPDATE m SET b = 'now small' WHERE id = 2;
UPDATE h SET a = big(3, 200) WHERE id = 3;
UPDATE m SET a = big(3, 200) WHERE id = 3;
SELECT * FROM summary('m');
SELECT same('h', 'm');
-- UPDATE of the key: the row moves, its toasted values come along
UPDATE h SET id = id + 100 WHERE id IN (2, 4);
UPDATE m SET id = id + 100 WHERE id IN (2, 4);
SELECT same('h', 'm');
-- an expression index over a toasted value
CREATE INDEX h_md5 ON h (md5(a));
CREATE INDEX m_md5 ON m (md5(a));
SET enable_seqscan = off;
SELECT id, k FROM m WHERE md5(a) = md5(big(3, 200));
RESET enable_seqscan;
-- rolled back: new big values vanish, old ones stay readable
BEGIN;
UPDATE h SET a = big(99, 100), b = big(98, 100);
UPDATE m SET a = big(99, 100), b = big(98, 100);
INSERT INTO h VALUES (50, 50, big(50, 120), big(51, 120));
INSERT INTO m VALUES (50, 50, big(50, 120), big(51, 120));
DELETE FROM h WHERE id = 1;
DELETE FROM m WHERE id = 1;
SELECT same('h', 'm');
ROLLBACK;
SELECT * FROM summary('m');
SELECT same('h', 'm');
-- the same row updated many times (a deep chain of toasted versions)
UPDATE h SET a = big(200, 100) WHERE id = 1;
UPDATE m SET a = big(200, 100) WHERE id = 1;
UPDATE h SET a = big(201, 100) WHERE id = 1;
UPDATE m SET a = big(201, 100) WHERE id = 1;
UPDATE h SET a = big(202, 100) WHERE id = 1;
UPDATE m SET a = big(202, 100) WHERE id = 1;
UPDATE h SET a = big(203, 100) WHERE id = 1;
UPDATE m SET a = big(203, 100) WHERE id = 1;
UPDATE h SET a = big(204, 100) WHERE id = 1;
UPDATE m SET a = big(204, 100) WHERE id = 1;
SELECT md5(a) = md5(big(204, 100)) AS newest_value FROM m WHERE id = 1;
SELECT same('h', 'm');
-- DELETE
DELETE FROM h WHERE id = 104;
DELETE FROM m WHERE id = 104;
SELECT * FROM summary('m');
SELECT same('h', 'm');

-- both TOAST tables hold exactly the chunks of the live values, also after
-- VACUUM
VACUUM h;
VACUUM m;
SELECT toast_chunks('m') = toast_chunks('h') AS same_chunk_count,
       toast_chunks('m') AS minidb_chunks;
SELECT same('h', 'm');
-- and stay bounded under a stream of big updates
UPDATE h SET b = big(300, 100) WHERE id = 1;
UPDATE m SET b = big(300, 100) WHERE id = 1;
UPDATE h SET b = big(301, 100) WHERE id = 1;
UPDATE m SET b = big(301, 100) WHERE id = 1;
UPDATE h SET b = big(302, 100) WHERE id = 1;
UPDATE m SET b = big(302, 100) WHERE id = 1;
VACUUM h;
VACUUM m;
SELECT toast_chunks('m') = toast_chunks('h') AS same_chunk_count,
       toast_chunks('m') AS minidb_chunks;
DELETE FROM h;
DELETE FROM m;
VACUUM h;
VACUUM m;
SELECT toast_chunks('h') AS heap_chunks, toast_chunks('m') AS minidb_chunks;
SELECT count(*) FROM m;

-- A moving UPDATE of a row with a toasted value, written earlier in the
-- same transaction: the UPDATE locks the row and lets the buffer go for its
-- TOAST work, and the version it ends must keep its own command id (a
-- combo command id): a cursor opened between the two still sees the row,
-- as heap's does.  (The UPDATE once read the version's header after the
-- lock had moved the record on the page, and the cursor saw no row.)
CREATE TABLE hc (k int PRIMARY KEY, v int, big text) USING heap;
CREATE TABLE mc (k int PRIMARY KEY, v int, big text) USING minidb;
CREATE INDEX hc_v ON hc (v);
CREATE INDEX mc_v ON mc (v);
BEGIN;
INSERT INTO hc VALUES (1, 1, big(8, 12));
INSERT INTO mc VALUES (1, 1, big(8, 12));
DECLARE hcur CURSOR FOR SELECT k, v, length(big) FROM hc;
DECLARE mcur CURSOR FOR SELECT k, v, length(big) FROM mc;
UPDATE hc SET v = 2 WHERE k = 1;
UPDATE mc SET v = 2 WHERE k = 1;
FETCH ALL FROM hcur;
FETCH ALL FROM mcur;
DECLARE hcur2 CURSOR FOR SELECT k, v FROM hc;
DECLARE mcur2 CURSOR FOR SELECT k, v FROM mc;
UPDATE hc SET v = 3, big = big || 'x' WHERE k = 1;
UPDATE mc SET v = 3, big = big || 'x' WHERE k = 1;
FETCH ALL FROM hcur2;
FETCH ALL FROM mcur2;
SELECT k, v, length(big) FROM mc;
COMMIT;
SELECT k, v, length(big), md5(big) = md5(big(8, 12) || 'x') AS correct FROM mc;

-- a toasted value in a temporary table
CREATE TEMP TABLE tm (id int, a text) USING minidb;
INSERT INTO tm VALUES (1, big(7, 150));
UPDATE tm SET a = a || 'tail' WHERE id = 1;
SELECT length(a), md5(a) = md5(big(7, 150) || 'tail') AS correct FROM tm;

SET client_min_messages = warning;
DROP SCHEMA am_toast CASCADE;
