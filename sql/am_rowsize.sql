--
-- am_rowsize: rows near the page size, on heap and minidb side by side.
-- A row heap stores, minidb stores (its record carries more header than a
-- heap tuple, so TOAST must go further for it, and no request for room may
-- exceed a page); a row heap refuses, minidb refuses with heap's error.
-- try() runs a statement on the heap table and on the minidb table
-- (%1$s is "h" or "m"; "USING %1$s" names the AM) and reports "ok" or the
-- error for each.  It runs once per row: it is called in FROM (LATERAL).
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_rowsize;
SET search_path = am_rowsize, public;

-- incompressible text of n bytes, different for each seed
CREATE FUNCTION noise(seed int, n int) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT left(string_agg(md5(seed::text || ':' || i), ''), n)
    FROM generate_series(0, n / 32) i
$$;
-- the contents of table "<h|m>_<name>", one line per row, in id order
CREATE FUNCTION rows_of(name text) RETURNS TABLE (am text, id int, summary text)
LANGUAGE plpgsql AS $$
DECLARE a text;
BEGIN
  FOREACH a IN ARRAY ARRAY['h', 'm'] LOOP
    RETURN QUERY EXECUTE format(
      'SELECT %L, id, md5(t::text) || '' '' || length(t::text) FROM %I t', a, a || '_' || name);
  END LOOP;
END $$;
-- do the two tables hold the same rows?
CREATE FUNCTION same(name text) RETURNS bool LANGUAGE sql AS $$
  SELECT (SELECT array_agg(id || summary ORDER BY id, summary) FROM rows_of(name) WHERE am = 'h')
    IS NOT DISTINCT FROM
         (SELECT array_agg(id || summary ORDER BY id, summary) FROM rows_of(name) WHERE am = 'm')
$$;
CREATE FUNCTION try(stmt text, OUT heap text, OUT minidb text)
LANGUAGE plpgsql AS $$
BEGIN
  BEGIN
    EXECUTE regexp_replace(format(stmt, 'h'), 'USING h\M', 'USING heap', 'g');
    heap := 'ok';
  EXCEPTION WHEN others THEN
    heap := SQLSTATE || ': ' || SQLERRM;
  END;
  BEGIN
    EXECUTE regexp_replace(format(stmt, 'm'), 'USING m\M', 'USING minidb', 'g');
    minidb := 'ok';
  EXCEPTION WHEN others THEN
    minidb := SQLSTATE || ': ' || SQLERRM;
  END;
END $$;

-- 1. PostgreSQL's own case (insert.sql): fillfactor 10, a PLAIN column
SELECT * FROM try('CREATE TABLE %1$s_large (id int, b text) USING %1$s WITH (fillfactor = 10)');
SELECT * FROM try('ALTER TABLE %1$s_large ALTER COLUMN b SET STORAGE plain');
SELECT * FROM try('INSERT INTO %1$s_large (SELECT 1, NULL)');
-- still fits on the first page (a "nearly empty" page takes it)
SELECT * FROM try('INSERT INTO %1$s_large (SELECT 2, repeat(''a'', 1000))');
SELECT pg_relation_size('h_large') AS heap_size, pg_relation_size('m_large') AS minidb_size;
SELECT * FROM try('INSERT INTO %1$s_large (SELECT 3, NULL)');
-- too big for heap's page with room to spare: the relation is extended
SELECT * FROM try('INSERT INTO %1$s_large (SELECT 4, repeat(''a'', 8126))');
SELECT * FROM rows_of('large') ORDER BY id, am;

-- 2. every size around the limits, PLAIN storage, compressible and not
SELECT * FROM try('CREATE TABLE %1$s_plain (id int, b text) USING %1$s WITH (autovacuum_enabled = off)');
SELECT * FROM try('ALTER TABLE %1$s_plain ALTER COLUMN b SET STORAGE plain');
SELECT n, t.* FROM generate_series(8060, 8150, 6) n,
  LATERAL try(format('INSERT INTO %%1$s_plain VALUES (%s, repeat(''a'', %s))', n, n)) t;
SELECT n, t.* FROM generate_series(8060, 8150, 6) n,
  LATERAL try(format('INSERT INTO %%1$s_plain VALUES (%s, noise(%s, %s))', -n, n, n)) t;
SELECT same('plain');
SELECT count(*) FROM m_plain;
-- minidb keeps a PLAIN value as heap does while it fits, and compresses
-- it (or moves it out of line) only when the record would not fit
SELECT id, pg_column_compression(m.b) AS minidb_compression,
       pg_column_compression(h.b) AS heap_compression,
       pg_column_size(m.b) = pg_column_size(h.b) AS same_size
  FROM m_plain m JOIN h_plain h USING (id) WHERE abs(id) IN (8060, 8090, 8096, 8120, 8126) ORDER BY id;
-- the same through COPY (multi_insert)
\copy (SELECT id + 100000, b FROM h_plain) TO 'results/am_rowsize.copy'
\copy h_plain FROM 'results/am_rowsize.copy'
\copy m_plain FROM 'results/am_rowsize.copy'
SELECT same('plain');
SELECT count(*) FROM m_plain;

-- 3. MAIN storage: heap keeps an incompressible value inline up to the
-- page; minidb moves it out of line when its record would not fit
SELECT * FROM try('CREATE TABLE %1$s_main (id int, b text) USING %1$s WITH (autovacuum_enabled = off)');
SELECT * FROM try('ALTER TABLE %1$s_main ALTER COLUMN b SET STORAGE main');
SELECT n, t.* FROM generate_series(8060, 8150, 10) n,
  LATERAL try(format('INSERT INTO %%1$s_main VALUES (%s, noise(%s, %s))', n, n, n)) t;
SELECT * FROM try('INSERT INTO %1$s_main VALUES (1, repeat(noise(1, 2000), 5))');
SELECT same('main');

-- 4. rows of values that cannot be toasted (fixed-width columns): here a
-- minidb record holds 16 bytes less than a heap tuple (the page's special
-- space, and the room kept for the row's end; 1017 bigint columns fit
-- heap's page, 1016 minidb's): minidb refuses what does not fit with the
-- same SQLSTATE (program limit exceeded)
CREATE FUNCTION wide(rel text, ncols int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE TABLE %I (%s) USING %s', rel,
                 (SELECT string_agg('c' || i || ' bigint', ', ') FROM generate_series(1, ncols) i),
                 CASE WHEN rel LIKE 'h%' THEN 'heap' ELSE 'minidb' END);
END $$;
SELECT n, t.* FROM unnest(ARRAY[1000, 1011, 1012, 1017, 1018]) n,
  LATERAL try(format('SELECT wide(''%%1$s_w%s'', %s); INSERT INTO %%1$s_w%s SELECT %s FROM generate_series(1, 3)',
                     n, n, n, (SELECT string_agg('1', ', ') FROM generate_series(1, n)))) t;

-- the same for a PLAIN value too big for minidb's record when it does not
-- compress and the table has no TOAST table to move it to (heap's rule
-- decides whether a table gets one: PLAIN columns do not ask for it)
SELECT * FROM try('CREATE TABLE %1$s_plain_like (LIKE h_plain INCLUDING STORAGE) USING %1$s');
SELECT relname, reltoastrelid <> 0 AS has_toast FROM pg_class
  WHERE relname IN ('h_plain_like', 'm_plain_like') ORDER BY relname;
SELECT n, t.* FROM unnest(ARRAY[8080, 8120, 8126]) n,
  LATERAL try(format('INSERT INTO %%1$s_plain_like VALUES (%s, noise(%s, %s)), (%s, repeat(''a'', %s))', n, n, n, -n, n)) t;
SELECT (SELECT count(*) FROM h_plain_like) AS heap_rows,
       (SELECT count(*) FROM m_plain_like) AS minidb_rows;

-- 5. many columns
SELECT * FROM try(format('CREATE TABLE %%1$s_many (id int, %s) USING %%1$s',
  (SELECT string_agg('t' || i || ' text', ', ') FROM generate_series(1, 300) i)));
SELECT * FROM try(format('INSERT INTO %%1$s_many SELECT g, %s FROM generate_series(1, 5) g',
  (SELECT string_agg(format('noise(g * 1000 + %s, 27)', i), ', ') FROM generate_series(1, 300) i)));
SELECT * FROM try(format('INSERT INTO %%1$s_many (id, %s) SELECT g, %s FROM generate_series(6, 8) g',
  (SELECT string_agg('t' || i, ', ') FROM generate_series(1, 300, 2) i),
  (SELECT string_agg(format('repeat(''x'', 54 + %s)', i), ', ') FROM generate_series(1, 300, 2) i)));
SELECT same('many');
SELECT * FROM try(format('CREATE TABLE %%1$s_vc (id int, %s) USING %%1$s',
  (SELECT string_agg('v' || i || ' varchar(90)', ', ') FROM generate_series(1, 100) i)));
SELECT * FROM try(format('INSERT INTO %%1$s_vc SELECT g, %s FROM generate_series(1, 5) g',
  (SELECT string_agg(format('noise(g * 100 + %s, 90)', i), ', ') FROM generate_series(1, 100) i)));
SELECT same('vc');

-- 6. fillfactor: rows of every size on tables kept 10%, 50% and 100% full
SELECT f, t.* FROM unnest(ARRAY[10, 50, 100]) f,
  LATERAL try(format('CREATE TABLE %%1$s_ff%s (id int, b text) USING %%1$s WITH (fillfactor = %s, autovacuum_enabled = off)', f, f)) t;
SELECT f, t.* FROM unnest(ARRAY[10, 50, 100]) f,
  LATERAL try(format('ALTER TABLE %%1$s_ff%s ALTER COLUMN b SET STORAGE plain', f)) t;
SELECT f, n, t.* FROM unnest(ARRAY[10, 50, 100]) f,
  unnest(ARRAY[100, 800, 840, 1000, 2000, 4000, 7300, 7400, 8000]) n,
  LATERAL try(format('INSERT INTO %%1$s_ff%s SELECT g, noise(g, %s) FROM generate_series(1, 3) g', f, n)) t
  ORDER BY f, n;
SELECT f, same('ff' || f) FROM unnest(ARRAY[10, 50, 100]) f;
-- a rewrite (VACUUM FULL) keeps the fillfactor's room too: afterwards a
-- row that grows a little stays on its page (heap: a HOT update; minidb:
-- in place)
SELECT * FROM try('CREATE TABLE %1$s_ffr (id int, b text) USING %1$s WITH (fillfactor = 50, autovacuum_enabled = off)');
SELECT * FROM try('INSERT INTO %1$s_ffr SELECT g, repeat(''r'', 200) FROM generate_series(1, 300) g');
VACUUM FULL h_ffr;
VACUUM FULL m_ffr;
CREATE TABLE blocks AS
  SELECT 'h' AS am, id, (ctid::text::point)[0] AS blk FROM h_ffr
  UNION ALL SELECT 'm', id, (ctid::text::point)[0] FROM m_ffr;
SELECT * FROM try('UPDATE %1$s_ffr SET b = b || ''+'' WHERE id %% 10 = 0');
SELECT b.am, count(*) FILTER (WHERE b.blk <> (t.ctid::text::point)[0]) AS moved_to_another_page
  FROM blocks b JOIN (SELECT 'h' AS am, id, ctid FROM h_ffr
                      UNION ALL SELECT 'm', id, ctid FROM m_ffr) t USING (am, id)
  GROUP BY b.am ORDER BY b.am;
SELECT same('ffr');

-- 7. UPDATE: rows that grow past the limit, versions that do not fit in
-- place, and a row updated near the limit again and again
SELECT * FROM try('CREATE TABLE %1$s_upd (id int PRIMARY KEY, k int, b text) USING %1$s WITH (autovacuum_enabled = off)');
SELECT * FROM try('ALTER TABLE %1$s_upd ALTER COLUMN b SET STORAGE plain');
SELECT * FROM try('INSERT INTO %1$s_upd VALUES (1, 0, ''small''), (2, 0, repeat(''z'', 8000)), (3, 0, noise(3, 3000)), (4, 0, noise(4, 8000))');
-- 1 grows past minidb's limit (not heap's); then past heap's too; 2 gets a
-- small change (no room for a second version in place: the row moves)
SELECT * FROM try('UPDATE %1$s_upd SET b = repeat(''y'', 8120) WHERE id = 1');
SELECT * FROM try('UPDATE %1$s_upd SET b = repeat(''y'', 8126) WHERE id = 1');
SELECT * FROM try('UPDATE %1$s_upd SET k = k + 1 WHERE id = 2');
-- 2 grows by 90 bytes: heap keeps it inline, minidb must compress it
SELECT * FROM try('UPDATE %1$s_upd SET b = b || repeat(''z'', 90) WHERE id = 2');
-- 3: versions pile up in one transaction until they no longer fit
BEGIN;
UPDATE h_upd SET k = k + 1 WHERE id = 3;
UPDATE m_upd SET k = k + 1 WHERE id = 3;
UPDATE h_upd SET k = k + 1 WHERE id = 3;
UPDATE m_upd SET k = k + 1 WHERE id = 3;
UPDATE h_upd SET k = k + 1, b = b || 'x' WHERE id = 3;
UPDATE m_upd SET k = k + 1, b = b || 'x' WHERE id = 3;
COMMIT;
-- 4: an incompressible row near the limit, updated again and again
SELECT g, t.* FROM generate_series(1, 7) g,
  LATERAL try(format('UPDATE %%1$s_upd SET k = k + 1, b = noise(%s, 8000 + %s) WHERE id = 4', g, g * 20)) t;
SELECT * FROM try('UPDATE %1$s_upd SET b = noise(5, 8200) WHERE id = 4');  -- too big for heap too
SELECT same('upd');
SELECT id, k, length(b) FROM m_upd ORDER BY id;
SELECT * FROM try('DELETE FROM %1$s_upd WHERE id = 2');
SELECT same('upd');

-- 8. toast_tuple_target: minidb toasts exactly what heap toasts, so the
-- stored sizes and compression agree value by value
SELECT * FROM try('CREATE TABLE %1$s_ttt (id int, b text, c text) USING %1$s WITH (toast_tuple_target = 256, autovacuum_enabled = off)');
SELECT * FROM try('INSERT INTO %1$s_ttt SELECT g, repeat(chr(64 + g), 300 * g), noise(g, 100 * g) FROM generate_series(1, 25) g');
SELECT same('ttt');
SELECT count(*) AS same_sizes FROM h_ttt h JOIN m_ttt m USING (id)
  WHERE pg_column_size(h.b) = pg_column_size(m.b) AND pg_column_size(h.c) = pg_column_size(m.c)
    AND pg_column_compression(h.b) IS NOT DISTINCT FROM pg_column_compression(m.b)
    AND pg_column_compression(h.c) IS NOT DISTINCT FROM pg_column_compression(m.c);

SET client_min_messages = warning;
DROP SCHEMA am_rowsize CASCADE;
RESET client_min_messages;
