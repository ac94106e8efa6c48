--
-- chain: the record format through SQL.  minidb_chain_build makes a chain
-- record (bytea) from values, minidb_chain_decode reads it back through the
-- reference walker or the fast walker; they must agree, and damaged byte
-- strings must give ERRCODE_DATA_CORRUPTED (XX001) naming version and field.
--
-- Other test files may have left the extension behind: start afresh
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS minidb_am CASCADE;
RESET client_min_messages;
CREATE EXTENSION minidb_am;
-- the byte offsets below are V1's; V2 is covered by the unit tests and the fuzzer
SET minidb.record_format = v1;

-- Report SQLSTATE, message and detail of a statement instead of failing the script
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
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

-- Do both walkers decode a chain to the same rows?
CREATE FUNCTION pg_temp.walkers_agree(c bytea) RETURNS bool LANGUAGE sql AS $$
	SELECT NOT EXISTS (
		(SELECT * FROM minidb_chain_decode(c, 'reference')
		 EXCEPT ALL SELECT * FROM minidb_chain_decode(c, 'fast'))
		UNION ALL
		(SELECT * FROM minidb_chain_decode(c, 'fast')
		 EXCEPT ALL SELECT * FROM minidb_chain_decode(c, 'reference')))
$$;

-- Set rh_len (bytes 4..7, little-endian) to the byte string's length
CREATE FUNCTION pg_temp.with_len(b bytea) RETURNS bytea LANGUAGE sql AS $$
	SELECT set_byte(set_byte(set_byte(set_byte(b, 4, l & 255), 5, (l >> 8) & 255),
						 6, (l >> 16) & 255), 7, (l >> 24) & 255)
	FROM (SELECT length(b) AS l) s
$$;

CREATE TABLE chains (name text PRIMARY KEY, c bytea);
INSERT INTO chains VALUES
	('four', minidb_chain_build(ARRAY['three', 'two', NULL, 'one'],
		flags => ARRAY['committed', 'committed', 'aborted', 'frozen,committed'])),
	('one', minidb_chain_build(ARRAY['only'])),
	('deleted', minidb_chain_build(ARRAY[NULL, 'gone'], xids => '{700,650}',
		cids => '{2,1}', flags => ARRAY['tombstone', 'committed'])),
	('moved', minidb_chain_build(ARRAY[NULL, 'here before'],
		flags => ARRAY['moved,committed', NULL], successor => '(42,7)')),
	('empty and multibyte', minidb_chain_build(ARRAY['', 'Grüße, 世界', repeat('x', 200)])),
	('deep', minidb_chain_build(ARRAY(SELECT 'version ' || g FROM generate_series(1000, 1, -1) g)));

-- The two walkers, side by side
SELECT * FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'four'), 'reference');
SELECT * FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'four'), 'fast');
SELECT * FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'deleted'));
SELECT * FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'moved'));
SELECT position, len, length(value) AS chars, left(value, 12) AS value
FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'empty and multibyte'), 'reference');

-- They agree on every chain, and the deep one has 1000 versions, newest first
SELECT name, pg_temp.walkers_agree(c) AS agree, length(c) AS bytes,
	(SELECT count(*) FROM minidb_chain_decode(c)) AS versions
FROM chains ORDER BY name;
SELECT position, xmin, value FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'deep'))
WHERE position IN (0, 1, 998, 999);

-- Validation without an error
SELECT name, (minidb_chain_check(c)).* FROM chains ORDER BY name;

-- Timing helper: which version it found, over how many (timings vary)
SELECT walker, position, versions, iterations, ns_per_op > 0 AS timed
FROM minidb_chain_walk_timing((SELECT c FROM chains WHERE name = 'deep'), 100);
SELECT walker, position FROM minidb_chain_walk_timing((SELECT c FROM chains WHERE name = 'four'), 100, 1);
SELECT walker, position FROM minidb_chain_walk_timing((SELECT c FROM chains WHERE name = 'four'), 100, -1);

--
-- Damaged byte strings: an ERROR with SQLSTATE XX001 naming version and field,
-- through both walkers, never a crash.
--
CREATE TABLE damaged (what text, c bytea);
INSERT INTO damaged
SELECT 'truncated tail', pg_temp.with_len(substring(c FROM 1 FOR length(c) - 3)) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'truncated, rh_len not fixed', substring(c FROM 1 FOR length(c) - 3) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'garbled vh_len of version 0', set_byte(set_byte(c, 36, 255), 37, 255) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'impossible count', set_byte(set_byte(c, 2, 255), 3, 255) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'count that cannot fit', set_byte(set_byte(c, 2, 255), 3, 127) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'one version too many', set_byte(c, 2, 5) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'unknown format', set_byte(c, 0, 9) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'trailing bytes', pg_temp.with_len(c || '\x0000000000000000'::bytea) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'reserved byte of version 1', set_byte(c, 24 + 24 + 15, 1) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'committed and aborted', set_byte(c, 24 + 8, 3) FROM chains WHERE name = 'four'
UNION ALL
SELECT 'garbage', '\xdeadbeefdeadbeefdeadbeefdeadbeefdeadbeefdeadbeef'::bytea
UNION ALL
SELECT 'empty', ''::bytea;

SELECT what, walker, pg_temp.try(format('SELECT * FROM minidb_chain_decode(%L::bytea, %L)', c, walker)) AS result
FROM damaged, (VALUES ('reference'), ('fast')) w(walker)
ORDER BY what, walker;

-- Checking says the same without raising
SELECT what, (minidb_chain_check(c)).* FROM damaged ORDER BY what;

-- Structure intact, data damaged: the value's varlena header lies
SELECT pg_temp.try(format('SELECT * FROM minidb_chain_decode(%L::bytea, %L)',
	set_byte(c, 24 + 16, 255), w))
FROM chains, (VALUES ('reference'), ('fast')) v(w) WHERE name = 'one';

-- What a user sees
SELECT * FROM minidb_chain_decode('\x0100'::bytea);

--
-- NULL and bad arguments
--
SELECT count(*) FROM minidb_chain_decode(NULL);
SELECT count(*) FROM minidb_chain_decode((SELECT c FROM chains WHERE name = 'one'), NULL);
SELECT pg_temp.try($$SELECT * FROM minidb_chain_decode(minidb_chain_build('{a}'), 'slow')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build(NULL)$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{{a,b},{c,d}}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a,b}', xids => '{5}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a,b}', xids => '{5,NULL}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a,b}', xids => '{5,0}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a,b}', cids => '{1,NULL}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a}', flags => '{bogus}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a}', flags => '{hasnull}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a}', flags => '{tombstone}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{NULL}', flags => '{"committed,aborted"}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a,NULL}', flags => '{NULL,moved}', successor => '(1,1)')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build('{NULL}', flags => '{moved}')$$);
SELECT pg_temp.try($$SELECT minidb_chain_build(ARRAY[repeat('x', 70000)])$$);
SELECT pg_temp.try($$SELECT minidb_chain_build(array_fill('x'::text, ARRAY[40000]))$$);
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 5)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 100, 3)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(NULL)$$);

DROP TABLE chains, damaged;
