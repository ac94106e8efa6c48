--
-- am_index_build: every index AM built over a wide minidb table of many
-- types (the shape of PostgreSQL's brin test, which crashed the server),
-- and BRIN's summarization, which scans block ranges of the table
-- (table_index_build_range_scan with a start block and a block count).
-- The same statements run on a heap table; every query runs on both with
-- sequential scans off, and heap's answer is printed beside minidb's.
--
SET client_min_messages = warning;   -- no NOTICE when they already exist
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS bloom;
RESET client_min_messages;
CREATE SCHEMA am_index_build;
SET search_path = am_index_build, public;

CREATE TABLE h (byteacol bytea, charcol "char", namecol name, int8col bigint,
  int2col smallint, int4col integer, textcol text, oidcol oid, tidcol tid,
  float4col real, float8col double precision, macaddrcol macaddr,
  inetcol inet, cidrcol cidr, bpcharcol character, datecol date,
  timecol time without time zone, timestampcol timestamp without time zone,
  timestamptzcol timestamp with time zone, intervalcol interval,
  timetzcol time with time zone, bitcol bit(10), varbitcol bit varying(16),
  numericcol numeric, uuidcol uuid, int4rangecol int4range, lsncol pg_lsn,
  boxcol box, arrcol int[], tsvcol tsvector, jsoncol jsonb, pointcol point)
  USING heap WITH (fillfactor = 10, autovacuum_enabled = off);
CREATE TABLE m (LIKE h) USING minidb WITH (fillfactor = 10, autovacuum_enabled = off);

-- rows from..upto, the same on both tables (every 17th row has NULLs)
CREATE FUNCTION fill(rel regclass, lo int, hi int) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$
    INSERT INTO %s SELECT
      repeat(md5(i::text), 4)::bytea, chr(65 + i %% 26)::"char",
      md5(i::text)::name, 142857 * i, (i %% 1000)::int2, i * 7,
      CASE WHEN i %% 17 <> 0 THEN repeat(md5(i::text), 4) END,
      (i * 3)::oid, format('(%%s,%%s)', i, i %% 20)::tid,
      (i %% 4 + 1.0) / (i %% 100 + 1), i::float8 / (i + 1),
      format('%%s:00:%%s:00:%%s:00', to_hex(i %% 256), to_hex((i * 7) %% 256),
             to_hex(i %% 100))::macaddr,
      inet '10.2.3.4/24' + i, cidr '10.2.3/24' + i, chr(65 + i %% 26)::bpchar,
      date '1995-08-15' + i, time '01:20:30' + i * interval '18.5 second',
      timestamp '1942-07-23 03:05:09' + i * interval '36.38 hours',
      timestamptz '1972-10-10 03:00' + i * interval '1 hour',
      justify_days(justify_hours(i * interval '12 minutes')),
      timetz '01:30:20+02' + i * interval '15 seconds',
      (i %% 1000)::bit(10), i::bit(16)::varbit, i::numeric * 1.5 / 7,
      md5(i::text)::uuid, int4range(i, i + 10),
      format('%%s/%%s', to_hex(i), to_hex(i * 1000))::pg_lsn,
      box(point(i, i * 2), point(i + 10, i * 2 + 5)),
      CASE WHEN i %% 17 <> 0 THEN ARRAY[i %% 10, i %% 7, i] END,
      to_tsvector('simple', 'w' || (i %% 10) || ' x' || (i %% 3)),
      jsonb_build_object('k', i %% 5, 'i', i), point(i %% 50, i / 10)
    FROM generate_series(%s, %s) i$q$, rel, lo, hi);
END $$;
SELECT fill('h', 1, 300), fill('m', 1, 300);
SELECT pg_relation_size('m') > 20 * 8192 AS many_pages;

-- heap's answer and minidb's to query q (%1$I is the table)
CREATE FUNCTION answers(q text, OUT heap text, OUT minidb text)
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format(q, 'h') INTO heap;
  EXECUTE format(q, 'm') INTO minidb;
END $$;

-- the indexes, on both tables: BRIN over every column that has a BRIN
-- opclass (with two pages per range, so the build crosses many ranges)
CREATE FUNCTION make_indexes(rel regclass) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format($q$CREATE INDEX %1$s_brin ON %1$s USING brin (
    byteacol, charcol, namecol, int8col, int2col, int4col, textcol, oidcol,
    tidcol, float4col, float8col, macaddrcol, inetcol inet_inclusion_ops,
    inetcol inet_minmax_ops, cidrcol inet_inclusion_ops, cidrcol inet_minmax_ops,
    bpcharcol, datecol, timecol, timestampcol, timestamptzcol, intervalcol,
    timetzcol, bitcol, varbitcol, numericcol, uuidcol, int4rangecol, lsncol,
    boxcol) WITH (pages_per_range = 2)$q$, rel);
  EXECUTE format('CREATE INDEX %1$s_brin_multi ON %1$s USING brin (int8col int8_minmax_multi_ops, numericcol numeric_minmax_multi_ops, uuidcol uuid_minmax_multi_ops, textcol text_bloom_ops) WITH (pages_per_range = 1)', rel);
  EXECUTE format('CREATE INDEX %1$s_gin ON %1$s USING gin (arrcol, tsvcol, jsoncol)', rel);
  EXECUTE format('CREATE INDEX %1$s_gist ON %1$s USING gist (boxcol, int4rangecol, inetcol inet_ops, tsvcol) WITH (buffering = on)', rel);
  EXECUTE format('CREATE INDEX %1$s_gist_sorted ON %1$s USING gist (pointcol)', rel);
  EXECUTE format('CREATE INDEX %1$s_spg_point ON %1$s USING spgist (pointcol)', rel);
  EXECUTE format('CREATE INDEX %1$s_spg_text ON %1$s USING spgist (textcol)', rel);
  EXECUTE format('CREATE INDEX %1$s_spg_range ON %1$s USING spgist (int4rangecol)', rel);
  EXECUTE format('CREATE INDEX %1$s_spg_inet ON %1$s USING spgist (inetcol)', rel);
  EXECUTE format('CREATE INDEX %1$s_hash ON %1$s USING hash (textcol)', rel);
  EXECUTE format('CREATE INDEX %1$s_bloom ON %1$s USING bloom (int4col, textcol)', rel);
  EXECUTE format('CREATE INDEX %1$s_btree ON %1$s (int8col, namecol) INCLUDE (boxcol)', rel);
END $$;
SELECT make_indexes('h');
SELECT make_indexes('m');
-- one built concurrently (an MVCC build and the validation scan)
CREATE INDEX CONCURRENTLY m_brin_cic ON m USING brin (textcol, numericcol) WITH (pages_per_range = 1);
CREATE INDEX CONCURRENTLY h_brin_cic ON h USING brin (textcol, numericcol) WITH (pages_per_range = 1);
SELECT count(*) AS valid_indexes FROM pg_index WHERE indrelid = 'm'::regclass AND indisvalid;

-- the queries: each answered through an index on both tables
CREATE TABLE queries (id serial, q text);
INSERT INTO queries (q) VALUES
  ('SELECT count(*) FROM %1$I WHERE byteacol < ''b''::bytea'),
  ('SELECT count(*) FROM %1$I WHERE charcol = ''M''::"char"'),
  ('SELECT count(*) FROM %1$I WHERE namecol > ''e''::name'),
  ('SELECT count(*) FROM %1$I WHERE int8col BETWEEN 1428570 AND 14285700'),
  ('SELECT count(*) FROM %1$I WHERE int2col >= 250'),
  ('SELECT count(*) FROM %1$I WHERE textcol >= ''c'''),
  ('SELECT count(*) FROM %1$I WHERE oidcol < 200'),
  ('SELECT count(*) FROM %1$I WHERE tidcol > ''(150,0)''::tid'),
  ('SELECT count(*) FROM %1$I WHERE float4col < 0.05'),
  ('SELECT count(*) FROM %1$I WHERE float8col > 0.99'),
  ('SELECT count(*) FROM %1$I WHERE macaddrcol > ''80:00:00:00:00:00''::macaddr'),
  ('SELECT count(*) FROM %1$I WHERE inetcol << inet ''10.2.3.0/24'''),
  ('SELECT count(*) FROM %1$I WHERE cidrcol >= cidr ''10.2.4.0/24'''),
  ('SELECT count(*) FROM %1$I WHERE bpcharcol = ''Q''::bpchar'),
  ('SELECT count(*) FROM %1$I WHERE datecol > ''1995-12-01''::date'),
  ('SELECT count(*) FROM %1$I WHERE timecol < ''01:30:00''::time'),
  ('SELECT count(*) FROM %1$I WHERE timestampcol > ''1943-01-01''::timestamp'),
  ('SELECT count(*) FROM %1$I WHERE timestamptzcol < ''1972-10-15 00:00+00''::timestamptz'),
  ('SELECT count(*) FROM %1$I WHERE intervalcol > ''1 day''::interval'),
  ('SELECT count(*) FROM %1$I WHERE timetzcol < ''01:31:00+02''::timetz'),
  ('SELECT count(*) FROM %1$I WHERE bitcol > B''0010000000'''),
  ('SELECT count(*) FROM %1$I WHERE varbitcol < B''0000000001000000''::varbit'),
  ('SELECT count(*) FROM %1$I WHERE numericcol > 30.5'),
  ('SELECT count(*) FROM %1$I WHERE uuidcol < ''40000000-0000-0000-0000-000000000000''::uuid'),
  ('SELECT count(*) FROM %1$I WHERE int4rangecol && int4range(100, 120)'),
  ('SELECT count(*) FROM %1$I WHERE lsncol > ''80/0''::pg_lsn'),
  ('SELECT count(*) FROM %1$I WHERE boxcol && box(point(50, 50), point(120, 260))'),
  ('SELECT count(*) FROM %1$I WHERE arrcol @> ARRAY[3]'),
  ('SELECT count(*) FROM %1$I WHERE tsvcol @@ to_tsquery(''simple'', ''w4 & x1'')'),
  ('SELECT count(*) FROM %1$I WHERE jsoncol @> ''{"k": 2}'''),
  ('SELECT count(*) FROM %1$I WHERE pointcol <@ box(point(0, 0), point(10, 10))'),
  ('SELECT string_agg(int4col::text, '','' ORDER BY int4col) FROM (SELECT int4col FROM %1$I ORDER BY pointcol <-> point(25, 12) LIMIT 3) s'),
  ('SELECT count(*) FROM %1$I WHERE textcol LIKE ''a%%'''),
  ('SELECT count(*) FROM %1$I WHERE textcol = repeat(md5(''42''), 4)'),
  ('SELECT count(*) FROM %1$I WHERE int4col = 700 AND textcol = repeat(md5(''100''), 4)'),
  ('SELECT count(*) FROM %1$I WHERE int8col = 142857 * 77'),
  ('SELECT count(*) FROM %1$I WHERE int4rangecol @> 250'),
  ('SELECT count(*) FROM %1$I WHERE inetcol >>= inet ''10.2.3.77''');

SET enable_seqscan = off;
-- the plans use the indexes
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE byteacol < 'b'::bytea;
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE textcol = repeat(md5('42'), 4);
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE int4col = 700 AND textcol = repeat(md5('100'), 4);
EXPLAIN (COSTS OFF) SELECT count(*) FROM m WHERE pointcol <@ box(point(0, 0), point(10, 10));

SELECT id, (answers(q)).* FROM queries ORDER BY id;
-- and every query gives heap's answer
SELECT count(*) AS differing FROM queries, answers(q) b WHERE b.heap IS DISTINCT FROM b.minidb;

-- BRIN summarization: new rows make unsummarized ranges; summarize them,
-- take a range back and summarize it again (each scans a block range)
SELECT fill('h', 301, 500), fill('m', 301, 500);
SELECT brin_summarize_new_values('h_brin') > 0 AS heap_summarized,
       brin_summarize_new_values('m_brin') > 0 AS minidb_summarized;
SELECT brin_summarize_new_values('h_brin_multi') > 0 AS heap_summarized,
       brin_summarize_new_values('m_brin_multi') > 0 AS minidb_summarized;
SELECT brin_summarize_new_values('m_brin') AS nothing_left;
SELECT brin_desummarize_range('h_brin', 0), brin_desummarize_range('m_brin', 0);
SELECT brin_desummarize_range('h_brin', 10), brin_desummarize_range('m_brin', 10);
SELECT brin_summarize_range('h_brin', 0), brin_summarize_range('m_brin', 0);
SELECT brin_summarize_range('h_brin', 11), brin_summarize_range('m_brin', 11);
SELECT brin_summarize_range('m_brin', 1000000) AS beyond_the_end;
-- the last range, only partly there
SELECT brin_desummarize_range('h_brin', (pg_relation_size('h') / 8192 - 1)::bigint),
       brin_desummarize_range('m_brin', (pg_relation_size('m') / 8192 - 1)::bigint);
SELECT brin_summarize_range('h_brin', (pg_relation_size('h') / 8192 - 1)::bigint),
       brin_summarize_range('m_brin', (pg_relation_size('m') / 8192 - 1)::bigint);
SELECT brin_summarize_new_values('m_brin_cic') > 0 AS cic_summarized;
SELECT id, (answers(q)).* FROM queries ORDER BY id;
SELECT count(*) AS differing FROM queries, answers(q) b WHERE b.heap IS DISTINCT FROM b.minidb;

-- updated and deleted rows (old versions in the chains) and a REINDEX
UPDATE h SET int8col = int8col + 1, textcol = textcol || 'x' WHERE int4col % 3 = 0;
UPDATE m SET int8col = int8col + 1, textcol = textcol || 'x' WHERE int4col % 3 = 0;
UPDATE h SET float8col = -float8col WHERE int4col % 5 = 0;
UPDATE m SET float8col = -float8col WHERE int4col % 5 = 0;
DELETE FROM h WHERE int4col % 11 = 0;
DELETE FROM m WHERE int4col % 11 = 0;
SELECT brin_summarize_new_values('m_brin') >= 0 AS summarized;
SELECT brin_summarize_new_values('h_brin') >= 0 AS summarized;
REINDEX TABLE h;
REINDEX TABLE m;
SELECT count(*) AS differing FROM queries, answers(q) b WHERE b.heap IS DISTINCT FROM b.minidb;
SELECT * FROM answers('SELECT count(*) FROM %1$I WHERE float8col < 0');
RESET enable_seqscan;

-- BRIN over a table whose first range lost its rows, summarized again
CREATE FUNCTION small(rel regclass) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('INSERT INTO %s SELECT i, repeat(md5(i::text), 8) FROM generate_series(1, 100) i', rel);
  EXECUTE format('CREATE INDEX %1$s_brin ON %1$s USING brin (a, t) WITH (pages_per_range = 1, autosummarize = on)', rel);
  EXECUTE format('DELETE FROM %s WHERE a <= 20', rel);
END $$;
CREATE TABLE h2 (a int, t text) USING heap WITH (fillfactor = 10, autovacuum_enabled = off);
CREATE TABLE m2 (a int, t text) USING minidb WITH (fillfactor = 10, autovacuum_enabled = off);
SELECT small('h2'), small('m2');
VACUUM h2;
VACUUM m2;
SELECT brin_desummarize_range('h2_brin', 0), brin_desummarize_range('m2_brin', 0);
SELECT brin_summarize_range('h2_brin', 0), brin_summarize_range('m2_brin', 0);
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT count(*) FROM m2 WHERE a < 30;
SELECT * FROM answers('SELECT count(*) FROM %1$s2 WHERE a < 30');
SELECT * FROM answers('SELECT count(*) FROM %1$s2 WHERE t > ''e''');
RESET enable_seqscan;

SET client_min_messages = warning;
DROP SCHEMA am_index_build CASCADE;
RESET client_min_messages;
