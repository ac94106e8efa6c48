--
-- chain_v3: the compact record format (V3) through SQL and on tables.
-- Records of one version take 16 bytes before their data; a superseded
-- version is stored as its difference from the newer one; a DELETE or a
-- moving UPDATE ends the row in the record's header (walkers show it as
-- an "end" marker 0); the two walkers agree; damage names the V3 field.
-- On tables: as many rows per page as heap, updates in place where heap's
-- would be HOT, old snapshots read versions rebuilt from differences, and
-- a V1 record becomes V3 when it is written (also after a rolled-back
-- DELETE, move or lock); the record an insert or an in-place UPDATE writes
-- keeps its own reserve on its page, by its format.
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

-- 8. A V1 or V2 record keeps its own format's reserve (24 bytes, for the
-- marker its row's end adds) on its page, and so does the record an insert
-- adds: on a page an insert filled, every row can be deleted or moved in
-- its own format.  Until 2026-12-02 an insert kept 8 bytes (a V3 record's
-- reserve) for the record it added, whatever its format, and the last
-- DELETE or moving UPDATE of such a page failed with XX001 ("no room for
-- a change of the record").
-- n bytes pglz does not compress
CREATE FUNCTION noise(n int) RETURNS text LANGUAGE sql AS $$
	SELECT substr(string_agg(md5(i::text), ''), 1, n)
	  FROM generate_series(1, n / 32 + 1) i
$$;
-- A row of 8096 bytes: as a V1 or V2 record (8144 bytes) the longest a
-- page took with 8 bytes kept; with the 24 its format keeps, its value
-- goes out of line
SET minidb.record_format = v1;
CREATE TABLE wide1 (id int, v text) USING minidb;
ALTER TABLE wide1 ALTER v SET STORAGE plain;
INSERT INTO wide1 VALUES (1, noise(8096));
SELECT lp, format, (SELECT lp_len < 8144 FROM heap_page_items(get_raw_page('wide1', 0)) i
                     WHERE i.lp = f.lp) AS shorter
  FROM formats('wide1') f;
SELECT try('DELETE FROM wide1');
SELECT count(*) FROM wide1;
SET minidb.record_format = v2;
CREATE TABLE wide2 (id int, v text) USING minidb;
ALTER TABLE wide2 ALTER v SET STORAGE plain;
INSERT INTO wide2 VALUES (1, noise(8096));
SELECT * FROM formats('wide2');
SELECT try('UPDATE wide2 SET id = -id');
SELECT id, v = noise(8096) AS same FROM wide2;
-- A page of 50 two-version V2 rows (a DELETE adds 24 bytes to each: a
-- marker and a directory step), then the longest row that fits with keep
-- bytes for its own record, in the same transaction, so that no version
-- can be pruned; returns where that row went
CREATE FUNCTION two_version_page(rel text, keep int) RETURNS tid
LANGUAGE plpgsql AS $$
DECLARE
	len int;
	t tid;
BEGIN
	EXECUTE format('CREATE TABLE %I (id int, v text) USING minidb', rel);
	EXECUTE format('ALTER TABLE %I ALTER v SET STORAGE plain', rel);
	EXECUTE format('INSERT INTO %I SELECT g, ''row '' || g FROM generate_series(1, 50) g', rel);
	EXECUTE format('UPDATE %I SET v = v || ''+''', rel);
	-- the free space less a line pointer, the 50 records' reserves and
	-- keep, to MAXALIGN, less the 48 bytes before the text's data
	SELECT (upper - lower - 4 - 24 * 50 - keep) / 8 * 8 - 48 INTO len
	  FROM page_header(get_raw_page(rel, 0));
	EXECUTE format('INSERT INTO %I VALUES (0, noise(%s)) RETURNING ctid',
				   rel, len) INTO t;
	RETURN t;
END $$;
BEGIN;
SELECT two_version_page('twov24', 24) AS kept_24, two_version_page('twov8', 8) AS kept_8;
SELECT count(*) AS versions FROM twov24, minidb_chain('twov24', twov24.ctid);
SELECT count(*) AS problems FROM minidb_verify('twov24');
SELECT try('DELETE FROM twov24') AS delete_24, try('DELETE FROM twov8') AS delete_8;
SELECT (SELECT count(*) FROM twov24) AS left_24, (SELECT count(*) FROM twov8) AS left_8;
ROLLBACK;
RESET minidb.record_format;

-- 9. An in-place UPDATE counts the reserve of the record it writes: a V3
-- row whose moving UPDATE aborted holds its xmax and successor fields
-- (nothing left to grow by, so its reserve is 0), and the in-place UPDATE
-- that drops them writes a record that keeps 8 bytes again.  Until
-- 2026-12-02 the room check counted the record's old reserve (0), and an
-- UPDATE that filled the page left the last DELETE of its rows XX001.
-- A row whose moving UPDATE aborted; with fill, on a page 0 filled with
-- rows of its size (so that the move went to page 1)
CREATE FUNCTION aborted_move_page(rel text, fill bool) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	t tid;
	i int := 2;
BEGIN
	EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, v text) USING minidb', rel);
	EXECUTE format('ALTER TABLE %I ALTER v SET STORAGE plain', rel);
	EXECUTE format('INSERT INTO %I VALUES (1, noise(40))', rel);
	WHILE fill LOOP
		EXECUTE format('INSERT INTO %I VALUES (%s, noise(40)) RETURNING ctid',
					   rel, i + 100) INTO t;
		EXIT WHEN t >= '(1,0)';
		i := i + 1;
	END LOOP;
	BEGIN
		EXECUTE format('UPDATE %I SET id = 10 WHERE id = 1', rel);
		RAISE EXCEPTION 'undo';
	EXCEPTION WHEN raise_exception THEN
		NULL;
	END;
END $$;
-- The length of row 1's record once an in-place UPDATE sets v to len
-- bytes, after the same history (on a table of its own, with room)
CREATE FUNCTION updated_len(len int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
	n int;
BEGIN
	PERFORM aborted_move_page('probe', false);
	EXECUTE format('UPDATE probe SET v = repeat(''z'', %s) WHERE id = 1', len);
	SELECT lp_len INTO n FROM heap_page_items(get_raw_page('probe', 0)) WHERE lp = 1;
	DROP TABLE probe;
	RETURN n;
END $$;
-- Row 1 updated with the longest v that fits in place when the new
-- record's reserve is counted as the old one's (0); returns where the row
-- went: now to page 1, since the new record keeps 8 bytes
CREATE FUNCTION fill_by_update(rel text) RETURNS tid
LANGUAGE plpgsql AS $$
DECLARE
	target int;
	len int;
	t tid;
BEGIN
	PERFORM aborted_move_page(rel, true);
	-- free space, plus the record's own room, less the other records'
	-- reserves (8 bytes each), to MAXALIGN
	SELECT (p.upper - p.lower + (i.lp_len + 7) / 8 * 8 - 8 * (n.c - 1)) / 8 * 8
	  INTO target
	  FROM page_header(get_raw_page(rel, 0)) p,
		   heap_page_items(get_raw_page(rel, 0)) i,
		   (SELECT count(*) AS c FROM heap_page_items(get_raw_page(rel, 0))) n
	 WHERE i.lp = 1;
	len := target - updated_len(8) + 8;
	WHILE len > 0 AND (updated_len(len) + 7) / 8 * 8 > target LOOP
		len := len - 1;
	END LOOP;
	EXECUTE format('UPDATE %I SET v = repeat(''z'', %s) WHERE id = 1 RETURNING ctid',
				   rel, len) INTO t;
	RETURN t;
END $$;
BEGIN;
SELECT fill_by_update('rend') AS row_1;
SELECT count(*) AS problems FROM minidb_verify('rend');
SELECT try('DELETE FROM rend WHERE ctid < ''(1,0)''');
SELECT count(*) FROM rend WHERE ctid < '(1,0)';
ROLLBACK;

-- 10. A V1 or V2 row whose DELETE, moving UPDATE or row lock rolled back
-- is written again in V3 (the default).  A V1/V2 row's end is a marker
-- version at its head, which V3 cannot hold below a version: the write
-- prunes the aborted marker, as it prunes a V3 row's aborted end, and
-- converts the rest.  Until 2026-12-02 the writer sized the V3 record with
-- the marker still in it, and every DELETE or UPDATE of such a row failed
-- with XX000 ("minidb record builder: a marker below the newest
-- version").  Rows (f, h, op): format f (1 or 2); history h rolled back (1
-- a DELETE, 2 a moving UPDATE of the indexed k, 3 FOR UPDATE, 4 a DELETE
-- rolled back to a savepoint of the transaction that then writes the row);
-- then op in V3 (1 DELETE, 2 an UPDATE in place, 3 a moving UPDATE).
SET minidb.record_format = v1;
CREATE TABLE leg (f int, h int, op int, k int, v text, PRIMARY KEY (f, h, op))
	USING minidb;
CREATE INDEX leg_k ON leg (k);
INSERT INTO leg SELECT 1, h, op, 100 + 10 * h + op, 'old'
  FROM generate_series(1, 4) h, generate_series(1, 3) op;
SET minidb.record_format = v2;
INSERT INTO leg SELECT 2, h, op, 200 + 10 * h + op, 'old'
  FROM generate_series(1, 4) h, generate_series(1, 3) op;
BEGIN;
DELETE FROM leg WHERE h = 1;
ROLLBACK;
BEGIN;
UPDATE leg SET k = k + 1000 WHERE h = 2;
ROLLBACK;
BEGIN;
SELECT count(*) FROM (SELECT FROM leg WHERE h = 3 FOR UPDATE) s;
ROLLBACK;
-- each record still in its format, an aborted DELETE or move its marker 0
SELECT l.f, l.h, fm.format,
	   string_agg(c.position || CASE WHEN c.flags ~ 'tombstone|moved'
								  THEN ' marker' ELSE '' END, ', '
				  ORDER BY c.position) AS versions
  FROM leg l
  JOIN formats('leg') fm ON fm.lp = (l.ctid::text::point)[1]::int
  CROSS JOIN LATERAL minidb_chain('leg', l.ctid) c
 WHERE l.op = 1
 GROUP BY 1, 2, 3 ORDER BY 1, 2;
RESET minidb.record_format;
BEGIN;
SET LOCAL minidb.record_format = v2;
SAVEPOINT s;
DELETE FROM leg WHERE h = 4;
ROLLBACK TO s;
RESET minidb.record_format;
DELETE FROM leg WHERE op = 1;
UPDATE leg SET v = 'new' WHERE op = 2;
UPDATE leg SET k = k + 1000 WHERE op = 3;
COMMIT;
SELECT f, h, op, k, v FROM leg ORDER BY f, h, op;
-- every write made V3 (the ended records, the rewritten, the moved rows');
-- the 6 in V2 are the new records of the moving UPDATE that rolled back
SELECT format, count(*) FROM formats('leg') GROUP BY 1 ORDER BY 1;
SET enable_seqscan = off;
SELECT f, h, op FROM leg WHERE k > 1000 ORDER BY f, h, op;
SELECT count(*) AS old_keys FROM leg WHERE k < 1000 AND op = 3;
RESET enable_seqscan;
SELECT count(*) AS problems FROM minidb_verify('leg');
-- and the rows go on: written again, deleted, vacuumed
UPDATE leg SET v = v || '+';
DELETE FROM leg WHERE h <= 2;
SELECT f, h, op, k, v FROM leg ORDER BY f, h, op;
VACUUM leg;
SELECT count(*) AS problems FROM minidb_verify('leg');

DROP SCHEMA chain_v3 CASCADE;
