--
-- chain_v3: the compact record format (V3) through SQL and on tables.
-- Records of one version take 16 bytes before their data; a superseded
-- version is stored as its difference from the newer one; a DELETE or a
-- moving UPDATE ends the row in the record's header (walkers show it as
-- an "end" marker 0); the two walkers agree; damage names the V3 field.
-- On tables: as many rows per page as heap, updates in place where heap's
-- would be HOT, old snapshots read versions rebuilt from differences, and
-- a V1 record becomes V3 when it is written.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS pageinspect;
RESET client_min_messages;
CREATE SCHEMA chain_v3;
SET search_path = chain_v3, public;
SET minidb.record_format = v3;

CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN detail <> '' THEN ' (' || detail || ')' ELSE '' END;
END $$;

CREATE FUNCTION walkers_agree(c bytea) RETURNS bool LANGUAGE sql AS $$
	SELECT NOT EXISTS (
		(SELECT * FROM minidb_chain_decode(c, 'reference')
		 EXCEPT ALL SELECT * FROM minidb_chain_decode(c, 'fast'))
		UNION ALL
		(SELECT * FROM minidb_chain_decode(c, 'fast')
		 EXCEPT ALL SELECT * FROM minidb_chain_decode(c, 'reference')))
$$;

-- 1. Sizes: the record's first byte is its format (3); one version takes
-- 16 bytes before its data (heap's tuple header alone takes 24)
SELECT get_byte(minidb_chain_build('{abc}'), 0) & 7 AS format,
       length(minidb_chain_build('{abc}')) AS one_version_bytes,
       length(minidb_chain_build('{abc}')) - 16 AS data_bytes;

-- 2. Differences: an account-like row updated a little at a time keeps
-- its older versions as differences ("delta"); the newest is whole
CREATE TABLE chains (name text PRIMARY KEY, c bytea);
INSERT INTO chains VALUES
	('small changes', minidb_chain_build(ARRAY(
		SELECT 'account ' || lpad(g::text, 6, '0') || repeat(' ', 80) || 'balance'
		FROM generate_series(5, 1, -1) g))),
	('nothing shared', minidb_chain_build(ARRAY['aaaaaaaaaaaaaaaaaaaa', 'bbbbbbbbbbbbbbbbbbbb'])),
	('deleted', minidb_chain_build(ARRAY[NULL, 'gone', 'was'],
		flags => ARRAY['tombstone', 'committed', 'committed'])),
	('moved', minidb_chain_build(ARRAY[NULL, 'here before'],
		flags => ARRAY['moved,committed', NULL], successor => '(42,7)')),
	('deep', minidb_chain_build(ARRAY(SELECT 'version ' || g FROM generate_series(300, 1, -1) g)));
SELECT position, flags, len, value FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'small changes'));
SELECT position, flags, len FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'nothing shared'));
SELECT name, walkers_agree(c) FROM chains ORDER BY name;
SELECT length(c) AS deep_bytes,
       (SELECT sum(length(value)) FROM minidb_chain_decode(c)) AS deep_data_bytes
  FROM chains WHERE name = 'deep';

-- 3. A row's end: a DELETE or a moving UPDATE is not a version of its own
-- but the header's xmax; walkers show it as an "end" marker 0, and the
-- version it ended keeps its cmax as its cid (heap's t_cid)
SELECT position, xmin, cid, flags, value FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'deleted'));
SELECT position, xmin, flags, value FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'moved'));
SELECT try($$SELECT minidb_chain_build('{NULL}', flags => '{tombstone}')$$) AS only_an_end;
SELECT try($$SELECT minidb_chain_build('{a,NULL,b}', flags => '{NULL,tombstone,NULL}')$$) AS end_below_the_head;
SELECT try($$SELECT minidb_chain_build('{NULL,a}', flags => '{moved,NULL}')$$) AS moved_nowhere;

-- 4. Damage names the V3 field: header bits, the trailer, a difference
-- whose prefix and suffix overrun the newer version
WITH c AS (SELECT c FROM chains WHERE name = 'small changes'),
damaged(name, b) AS (
	SELECT 'xinfo bit without xmax', set_byte(c, 1, 2) FROM c
	UNION ALL SELECT 'truncated', substring(c FROM 1 FOR length(c) - 1) FROM c
	UNION ALL SELECT 'trailer count', set_byte(c, length(c) - 2, 200) FROM c
	UNION ALL SELECT 'affix past the newer version',
		set_byte(set_byte(c, (SELECT get_byte(c, length(c) - 12) + 256 * get_byte(c, length(c) - 11)) + 12 +
			(4 - (SELECT get_byte(c, length(c) - 12) + 256 * get_byte(c, length(c) - 11)) % 4) % 4, 255),
			(SELECT get_byte(c, length(c) - 12) + 256 * get_byte(c, length(c) - 11)) + 13 +
			(4 - (SELECT get_byte(c, length(c) - 12) + 256 * get_byte(c, length(c) - 11)) % 4) % 4, 255) FROM c)
SELECT name, (minidb_chain_check(b)).* FROM damaged ORDER BY name;

-- 5. On a table: 100 narrow rows take as many pages as heap's, and an
-- UPDATE of an unindexed column stays in place where heap's is HOT
CREATE TABLE m (k int PRIMARY KEY, v int, w text) USING minidb;
CREATE INDEX ON m (v);
CREATE TABLE h (k int PRIMARY KEY, v int, w text) USING heap;
CREATE INDEX ON h (v);
INSERT INTO m SELECT g, g, 'x' FROM generate_series(1, 100) g;
INSERT INTO h SELECT g, g, 'x' FROM generate_series(1, 100) g;
SELECT pg_relation_size('m') / 8192 AS minidb_pages, pg_relation_size('h') / 8192 AS heap_pages;
UPDATE m SET w = 'y' WHERE k <= 50;
UPDATE h SET w = 'y' WHERE k <= 50;
SELECT pg_stat_force_next_flush();
SELECT relname, n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables
 WHERE relname IN ('m', 'h') AND schemaname = 'chain_v3' ORDER BY relname;
SELECT count(*) AS rows_kept_their_tid FROM m WHERE k <= 50 AND ctid = ('(0,' || k || ')')::tid;

-- 6. An old snapshot reads the version stored as a difference, rebuilt
CREATE TABLE acct (id int PRIMARY KEY, balance int, filler text) USING minidb
  WITH (fillfactor = 50);
INSERT INTO acct SELECT g, 0, repeat('f', 84) FROM generate_series(1, 20) g;
BEGIN ISOLATION LEVEL REPEATABLE READ;
DECLARE old CURSOR FOR SELECT id, balance, length(filler) FROM acct WHERE id <= 3 ORDER BY id;
UPDATE acct SET balance = balance + 10 WHERE id <= 3;
UPDATE acct SET balance = balance + 10 WHERE id <= 3;
SELECT position, flags LIKE '%delta%' AS delta FROM minidb_chain('acct', (SELECT ctid FROM acct WHERE id = 1));
FETCH ALL FROM old;
SELECT id, balance FROM acct WHERE id <= 3 ORDER BY id;
COMMIT;

-- 7. A V1 record becomes V3 when it is written (and a V3 one stays V3
-- whatever the setting says)
SET minidb.record_format = v1;
CREATE TABLE conv (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO conv VALUES (1, 'one'), (2, 'two');
CREATE FUNCTION formats(rel regclass) RETURNS TABLE (lp int, format int) LANGUAGE sql AS $$
	SELECT lp::int, get_byte(get_raw_page(rel::text, 0), lp_off) & 7
	  FROM heap_page_items(get_raw_page(rel::text, 0)) WHERE lp_flags = 1 ORDER BY lp
$$;
SELECT * FROM formats('conv');
SET minidb.record_format = v3;
UPDATE conv SET v = 'uno' WHERE id = 1;
SELECT * FROM formats('conv');
SELECT * FROM conv ORDER BY id;
SET minidb.record_format = v1;
UPDATE conv SET v = 'eins' WHERE id = 1;
SELECT * FROM formats('conv');
SELECT * FROM conv ORDER BY id;
RESET minidb.record_format;

DROP SCHEMA chain_v3 CASCADE;
