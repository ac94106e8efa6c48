-- pgTAP: damaged records and bad arguments give the documented errors, and
-- both walkers agree on valid chains.  See 10_chain_objects.sql for how
-- these files are run.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
-- the damaged byte strings below are V1 records (V2 has its own unit and
-- fuzz tests); the builder follows minidb.record_format
SET LOCAL minidb.record_format = v1;
SELECT plan(34);

-- A four-version chain, 116 bytes: versions at offsets 24, 48, 72, 96
SELECT minidb_chain_build(ARRAY['three', 'two', NULL, 'one'],
	flags => ARRAY['committed', 'committed', 'aborted', 'frozen,committed']) AS c \gset

-- Set rh_len (bytes 4..7, little-endian) to the byte string's length
CREATE FUNCTION pg_temp.with_len(b bytea) RETURNS bytea LANGUAGE sql AS $$
	SELECT set_byte(set_byte(set_byte(set_byte(b, 4, l & 255), 5, (l >> 8) & 255),
						 6, (l >> 16) & 255), 7, (l >> 24) & 255)
	FROM (SELECT length(b) AS l) s
$$;

CREATE TEMP TABLE damaged (what text, c bytea, msg text);
INSERT INTO damaged VALUES
	('truncated tail', pg_temp.with_len(substring(:'c'::bytea FROM 1 FOR 113)),
	 'corrupted minidb record: version 3, field "vh_len": length 20 at offset 96 runs past record end 113'),
	('truncated without fixing rh_len', substring(:'c'::bytea FROM 1 FOR 113),
	 'corrupted minidb record: record header, field "rh_len": header says 116 bytes but the record is 113 bytes'),
	('garbled length', set_byte(set_byte(:'c'::bytea, 60, 255), 61, 255),
	 'corrupted minidb record: version 1, field "vh_len": length 65535 at offset 48 runs past record end 116'),
	('impossible count', set_byte(set_byte(:'c'::bytea, 2, 255), 3, 255),
	 'corrupted minidb record: record header, field "rh_nversions": 65535 versions exceed the limit of 32767'),
	('count one too high', set_byte(:'c'::bytea, 2, 5),
	 'corrupted minidb record: version 4, field "rh_nversions": record ends at 116 before version 4 of 5 begins'),
	('trailing bytes', pg_temp.with_len(:'c'::bytea || '\x0000000000000000'::bytea),
	 'corrupted minidb record: version 3, field "vh_len": last version ends at 116 but the record ends at 124 (8 trailing bytes)'),
	('unknown format', set_byte(:'c'::bytea, 0, 9),
	 'corrupted minidb record: record header, field "rh_format": unknown record format 9 (this build reads formats 1 to 3)'),
	('shorter than a header', '\x01'::bytea,
	 'corrupted minidb record: record header, field "rh_len": record length 1 is shorter than the record header (24 bytes)');

-- 8 damaged records x 2 walkers
SELECT throws_ok(format('SELECT * FROM minidb_chain_decode(%L::bytea, %L)', c, w),
				 'XX001', msg, what || ': ' || w || ' walker raises data_corrupted naming version and field')
FROM damaged, (VALUES ('reference'), ('fast')) v(w)
ORDER BY what, w;

-- the timing helper refuses them too
SELECT throws_ok(format('SELECT * FROM minidb_chain_walk_timing(%L::bytea, 10)', c),
				 'XX001', msg, what || ': timing helper raises data_corrupted')
FROM damaged WHERE what IN ('truncated tail', 'impossible count')
ORDER BY what;

-- minidb_chain_check names the same version and field without raising
SELECT results_eq(
	$$SELECT bool_and(format('corrupted minidb record: %s, field "%s": %s',
							 CASE WHEN (minidb_chain_check(c)).version < 0 THEN 'record header'
								  ELSE 'version ' || (minidb_chain_check(c)).version END,
							 (minidb_chain_check(c)).field, (minidb_chain_check(c)).detail) = msg)
	  FROM damaged$$,
	ARRAY[true], 'minidb_chain_check reports what the walkers raise');

-- Both walkers agree on valid chains
SELECT results_eq(
	format('SELECT * FROM minidb_chain_decode(%L::bytea, ''reference'')', :'c'),
	format('SELECT * FROM minidb_chain_decode(%L::bytea, ''fast'')', :'c'),
	'both walkers decode the four-version chain alike');
SELECT results_eq(
	$$SELECT * FROM minidb_chain_decode(minidb_chain_build(ARRAY(SELECT 'v' || g FROM generate_series(1, 300) g)), 'reference')$$,
	$$SELECT * FROM minidb_chain_decode(minidb_chain_build(ARRAY(SELECT 'v' || g FROM generate_series(1, 300) g)), 'fast')$$,
	'both walkers decode a 300-version chain alike');
SELECT results_eq(
	format('SELECT position, value FROM minidb_chain_decode(%L::bytea)', :'c'),
	$$VALUES (0, 'three'), (1, 'two'), (2, NULL), (3, 'one')$$,
	'versions come back newest first, NULL values as NULL');

-- NULL arguments
SELECT is_empty('SELECT * FROM minidb_chain_decode(NULL)', 'decode of NULL is empty (strict)');
SELECT is_empty(format('SELECT * FROM minidb_chain_decode(%L::bytea, NULL)', :'c'),
	'decode with a NULL walker is empty (strict)');
SELECT throws_ok('SELECT minidb_chain_build(NULL)', '22004', 'vals must not be NULL',
	'build of NULL raises null_value_not_allowed');
SELECT throws_ok('SELECT * FROM minidb_chain_walk_timing(NULL)', '22004',
	'chain and iterations must not be NULL', 'timing of NULL raises null_value_not_allowed');

-- Bad arguments
SELECT throws_ok(format('SELECT * FROM minidb_chain_decode(%L::bytea, ''slow'')', :'c'),
	'22023', 'unknown walker "slow"', 'an unknown walker raises invalid_parameter_value');
SELECT throws_ok($$SELECT minidb_chain_build('{}')$$, '22023', 'a chain needs at least one version',
	'an empty chain raises invalid_parameter_value');
SELECT throws_ok($$SELECT minidb_chain_build('{a}', flags => '{bogus}')$$, '22023',
	'unknown version flag "bogus" for version 0', 'an unknown flag raises invalid_parameter_value');
SELECT throws_ok($$SELECT minidb_chain_build('{a}', flags => '{tombstone}')$$, '22023',
	'version 0 is a tombstone or moved marker and carries no value',
	'a tombstone with a value raises invalid_parameter_value');
SELECT throws_ok($$SELECT minidb_chain_build('{NULL,a}', flags => '{moved,NULL}')$$, '22023',
	'these versions do not form a valid minidb record',
	'a moved head without successor raises invalid_parameter_value');
SELECT throws_ok($$SELECT minidb_chain_build('{a,b}', xids => '{1}')$$, '2202E',
	'xids has 1 elements but vals has 2', 'arrays of different lengths raise array_subscript_error');
SELECT throws_ok($$SELECT minidb_chain_build(ARRAY[repeat('x', 70000)])$$, '54000',
	'value of version 0 is too long: 70020 bytes, a version holds at most 65535',
	'a value too long for one version raises program_limit_exceeded');
SELECT throws_ok($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 1)$$, '22023',
	'iterations must be between 10 and 100000000', 'too few timing iterations raise invalid_parameter_value');

SELECT * FROM finish();
ROLLBACK;
