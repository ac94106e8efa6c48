--
-- ddl_truncate: TRUNCATE on a heap table and a minidb table side by side:
-- inside a transaction (new storage, rolled back on abort, also to a
-- savepoint), the non-transactional path for a table created (or given new
-- storage) in the same transaction, RESTART IDENTITY, TOAST, unlogged
-- tables (init fork), several tables at once.
-- cmp(a, b) lists the rows in one table but not the other, as a multiset
-- (EXCEPT ALL both ways): it must always return 0 rows.
-- The expected output is heap's behaviour: running this file with
-- "\set am heap" instead of "\set am minidb" must give the same output
-- apart from that line.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
\set am minidb
CREATE SCHEMA ddl_truncate;
SET search_path = ddl_truncate, public;

\getenv abs_srcdir PG_ABS_SRCDIR
\set cmp_file :abs_srcdir '/sql/include/cmp.sql'
\i :cmp_file

-- number of chunks in a table's TOAST relation
CREATE FUNCTION toast_chunks(rel regclass) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %s',
                 (SELECT reltoastrelid::regclass FROM pg_class WHERE oid = rel))
    INTO n;
  RETURN n;
END $$;

-- the access method a table got
CREATE FUNCTION am_of(rel regclass) RETURNS name LANGUAGE sql AS
$$ SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.oid = rel $$;

CREATE TABLE h (id int PRIMARY KEY, k int, v text) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int, v text) USING :am;
CREATE INDEX h_k ON h (k);
CREATE INDEX m_k ON m (k);
SELECT am_of('h') AS h_am, am_of('m') = :'am' AS m_has_am;
INSERT INTO h SELECT i, i % 10, 'v' || i FROM generate_series(1, 500) i;
INSERT INTO m SELECT i, i % 10, 'v' || i FROM generate_series(1, 500) i;
-- a few more versions per row
UPDATE h SET v = v || '+' WHERE id % 3 = 0;
UPDATE m SET v = v || '+' WHERE id % 3 = 0;
UPDATE h SET k = k + 100 WHERE id % 7 = 0;
UPDATE m SET k = k + 100 WHERE id % 7 = 0;
SELECT * FROM cmp('h', 'm');

-- 1. TRUNCATE inside a transaction, rolled back
SELECT relfilenode AS h_node FROM pg_class WHERE oid = 'h'::regclass \gset
SELECT relfilenode AS m_node FROM pg_class WHERE oid = 'm'::regclass \gset
BEGIN;
TRUNCATE h;
TRUNCATE m;
SELECT (SELECT count(*) FROM h) AS h_rows, (SELECT count(*) FROM m) AS m_rows;
INSERT INTO h VALUES (1, 1, 'in the truncating transaction');
INSERT INTO m VALUES (1, 1, 'in the truncating transaction');
SELECT * FROM m ORDER BY id;
SELECT relfilenode <> :h_node AS h_new_storage FROM pg_class WHERE oid = 'h'::regclass;
SELECT relfilenode <> :m_node AS m_new_storage FROM pg_class WHERE oid = 'm'::regclass;
ROLLBACK;
SELECT relfilenode = :h_node AS h_old_storage FROM pg_class WHERE oid = 'h'::regclass;
SELECT relfilenode = :m_node AS m_old_storage FROM pg_class WHERE oid = 'm'::regclass;
SELECT count(*), sum(k), count(DISTINCT v) FROM m;
SELECT * FROM cmp('h', 'm');
-- the old storage's indexes work again
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id, k, v FROM m WHERE k = 107 ORDER BY id;
SELECT count(*) FROM m WHERE id BETWEEN 100 AND 199;
RESET enable_seqscan;
RESET enable_bitmapscan;

-- 2. TRUNCATE to a savepoint that is rolled back, then one that commits
BEGIN;
INSERT INTO h VALUES (1001, 1, 'sp');
INSERT INTO m VALUES (1001, 1, 'sp');
SAVEPOINT s1;
TRUNCATE h;
TRUNCATE m;
SELECT (SELECT count(*) FROM h) AS h_rows, (SELECT count(*) FROM m) AS m_rows;
ROLLBACK TO SAVEPOINT s1;
SELECT (SELECT count(*) FROM h) AS h_rows, (SELECT count(*) FROM m) AS m_rows;
COMMIT;
SELECT * FROM cmp('h', 'm');

BEGIN;
TRUNCATE h;
TRUNCATE m;
INSERT INTO h VALUES (1, 2, 'after truncate');
INSERT INTO m VALUES (1, 2, 'after truncate');
COMMIT;
SELECT relfilenode <> :h_node AS h_new_storage FROM pg_class WHERE oid = 'h'::regclass;
SELECT relfilenode <> :m_node AS m_new_storage FROM pg_class WHERE oid = 'm'::regclass;
SELECT * FROM m ORDER BY id;
SELECT * FROM cmp('h', 'm');
-- the new storage takes rows and index lookups
INSERT INTO h SELECT i, i % 5, 'w' || i FROM generate_series(2, 300) i;
INSERT INTO m SELECT i, i % 5, 'w' || i FROM generate_series(2, 300) i;
SET enable_seqscan = off;
SELECT count(*) FROM m WHERE k = 3;
SELECT id, v FROM m WHERE id = 250;
RESET enable_seqscan;
SELECT * FROM cmp('h', 'm');
-- plain TRUNCATE, outside a transaction block: empty, zero size
TRUNCATE h;
TRUNCATE m;
SELECT pg_relation_size('h') AS h_size, pg_relation_size('m') AS m_size,
       (SELECT count(*) FROM m) AS m_rows;

-- 3. a table created in the same transaction: non-transactional truncate,
--    same storage, and its indexes and TOAST truncated with it
BEGIN;
CREATE TABLE hn (id int PRIMARY KEY, big text) USING heap;
CREATE TABLE mn (id int PRIMARY KEY, big text) USING :am;
ALTER TABLE hn ALTER COLUMN big SET STORAGE EXTERNAL;
ALTER TABLE mn ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO hn SELECT i, repeat(chr(65 + i % 26), 3000) FROM generate_series(1, 50) i;
INSERT INTO mn SELECT i, repeat(chr(65 + i % 26), 3000) FROM generate_series(1, 50) i;
SELECT relfilenode AS hn_node FROM pg_class WHERE oid = 'hn'::regclass \gset
SELECT relfilenode AS mn_node FROM pg_class WHERE oid = 'mn'::regclass \gset
SELECT toast_chunks('hn') > 0 AS hn_toasted, toast_chunks('mn') > 0 AS mn_toasted;
TRUNCATE hn;
TRUNCATE mn;
SELECT relfilenode = :hn_node AS hn_same_storage FROM pg_class WHERE oid = 'hn'::regclass;
SELECT relfilenode = :mn_node AS mn_same_storage FROM pg_class WHERE oid = 'mn'::regclass;
SELECT count(*) AS mn_rows, toast_chunks('mn') AS mn_chunks, pg_relation_size('mn') AS mn_size FROM mn;
INSERT INTO hn VALUES (7, repeat('z', 5000)), (8, 'small');
INSERT INTO mn VALUES (7, repeat('z', 5000)), (8, 'small');
-- a second TRUNCATE with a savepoint in between is transactional again
SAVEPOINT s2;
TRUNCATE hn;
TRUNCATE mn;
ROLLBACK TO SAVEPOINT s2;
COMMIT;
SELECT id, length(big), left(big, 3) FROM mn ORDER BY id;
SET enable_seqscan = off;
SELECT id, length(big) FROM mn WHERE id = 7;
RESET enable_seqscan;
SELECT * FROM cmp('hn', 'mn');

-- storage given in this transaction (rd_newRelfilenodeSubid): the second
-- TRUNCATE of a transaction is non-transactional
BEGIN;
TRUNCATE hn;
TRUNCATE mn;
INSERT INTO hn VALUES (1, 'one');
INSERT INTO mn VALUES (1, 'one');
SELECT relfilenode AS mn_node2 FROM pg_class WHERE oid = 'mn'::regclass \gset
TRUNCATE hn;
TRUNCATE mn;
SELECT relfilenode = :mn_node2 AS mn_same_storage FROM pg_class WHERE oid = 'mn'::regclass;
INSERT INTO hn VALUES (2, 'two');
INSERT INTO mn VALUES (2, 'two');
COMMIT;
SELECT * FROM mn ORDER BY id;
SELECT * FROM cmp('hn', 'mn');

-- 4. TRUNCATE ... RESTART IDENTITY (and CONTINUE IDENTITY, the default)
CREATE TABLE hi (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, s serial, v text) USING heap;
CREATE TABLE mi (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, s serial, v text) USING :am;
INSERT INTO hi (v) SELECT 'a' || i FROM generate_series(1, 5) i;
INSERT INTO mi (v) SELECT 'a' || i FROM generate_series(1, 5) i;
TRUNCATE hi;
TRUNCATE mi;
INSERT INTO hi (v) VALUES ('continue');
INSERT INTO mi (v) VALUES ('continue');
SELECT * FROM mi ORDER BY id;
TRUNCATE hi RESTART IDENTITY;
TRUNCATE mi RESTART IDENTITY;
INSERT INTO hi (v) VALUES ('restart 1'), ('restart 2');
INSERT INTO mi (v) VALUES ('restart 1'), ('restart 2');
SELECT * FROM mi ORDER BY id;
SELECT * FROM cmp('hi', 'mi');
-- rolled back: the sequences keep going where they were
BEGIN;
TRUNCATE hi RESTART IDENTITY;
TRUNCATE mi RESTART IDENTITY;
INSERT INTO hi (v) VALUES ('rolled back');
INSERT INTO mi (v) VALUES ('rolled back');
SELECT * FROM mi ORDER BY id;
ROLLBACK;
INSERT INTO hi (v) VALUES ('after rollback');
INSERT INTO mi (v) VALUES ('after rollback');
SELECT * FROM mi ORDER BY id;
SELECT * FROM cmp('hi', 'mi');

-- 5. TRUNCATE of a table with TOAST
CREATE TABLE ht (id int PRIMARY KEY, big text, c text) USING heap;
CREATE TABLE mt (id int PRIMARY KEY, big text, c text) USING :am;
ALTER TABLE ht ALTER COLUMN big SET STORAGE EXTERNAL;
ALTER TABLE mt ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO ht SELECT i, repeat(md5(i::text), 100 + i), repeat('c', 3000 * (i % 2))
  FROM generate_series(1, 40) i;
INSERT INTO mt SELECT i, repeat(md5(i::text), 100 + i), repeat('c', 3000 * (i % 2))
  FROM generate_series(1, 40) i;
UPDATE ht SET big = big || 'x' WHERE id % 4 = 0;
UPDATE mt SET big = big || 'x' WHERE id % 4 = 0;
SELECT toast_chunks('ht') = toast_chunks('mt') AS same_chunks, toast_chunks('mt') > 0 AS toasted;
SELECT * FROM cmp('ht', 'mt');
SELECT reltoastrelid AS mt_toast FROM pg_class WHERE oid = 'mt'::regclass \gset
SELECT relfilenode AS mt_toast_node FROM pg_class WHERE oid = :mt_toast \gset
BEGIN;
TRUNCATE ht;
TRUNCATE mt;
SELECT toast_chunks('mt') AS mt_chunks_in_txn;
SELECT relfilenode <> :mt_toast_node AS toast_new_storage FROM pg_class WHERE oid = :mt_toast;
ROLLBACK;
SELECT relfilenode = :mt_toast_node AS toast_old_storage FROM pg_class WHERE oid = :mt_toast;
SELECT id, length(big), md5(big), length(c) FROM mt WHERE id IN (1, 4, 40) ORDER BY id;
SELECT * FROM cmp('ht', 'mt');
-- both at once, committed; the TOAST relation is emptied as well
TRUNCATE ht, mt;
SELECT toast_chunks('ht') AS ht_chunks, toast_chunks('mt') AS mt_chunks,
       (SELECT count(*) FROM mt) AS mt_rows;
INSERT INTO ht VALUES (1, repeat('q', 9000), NULL);
INSERT INTO mt VALUES (1, repeat('q', 9000), NULL);
SELECT toast_chunks('ht') = toast_chunks('mt') AS same_chunks;
SELECT * FROM cmp('ht', 'mt');

-- 6. an unlogged table: the new storage gets its init fork
CREATE UNLOGGED TABLE hu (id int PRIMARY KEY, v text) USING heap;
CREATE UNLOGGED TABLE mu (id int PRIMARY KEY, v text) USING :am;
INSERT INTO hu SELECT i, 'u' || i FROM generate_series(1, 100) i;
INSERT INTO mu SELECT i, 'u' || i FROM generate_series(1, 100) i;
TRUNCATE hu;
TRUNCATE mu;
SELECT (pg_stat_file(pg_relation_filepath('hu') || '_init')).size AS hu_init_size,
       (pg_stat_file(pg_relation_filepath('mu') || '_init')).size AS mu_init_size;
INSERT INTO hu VALUES (1, 'after');
INSERT INTO mu VALUES (1, 'after');
SELECT * FROM mu;
SELECT * FROM cmp('hu', 'mu');

-- 7. TRUNCATE ... CASCADE through a foreign key between AMs
CREATE TABLE fk_parent (id int PRIMARY KEY) USING :am;
CREATE TABLE fk_child_h (id int REFERENCES fk_parent) USING heap;
CREATE TABLE fk_child_m (id int REFERENCES fk_parent) USING :am;
INSERT INTO fk_parent SELECT generate_series(1, 10);
INSERT INTO fk_child_h SELECT generate_series(1, 10);
INSERT INTO fk_child_m SELECT generate_series(1, 10);
TRUNCATE fk_parent;
SET client_min_messages = warning;
TRUNCATE fk_parent CASCADE;
RESET client_min_messages;
SELECT (SELECT count(*) FROM fk_parent) AS p, (SELECT count(*) FROM fk_child_h) AS ch,
       (SELECT count(*) FROM fk_child_m) AS cm;

SET client_min_messages = warning;
DROP SCHEMA ddl_truncate CASCADE;
RESET client_min_messages;
