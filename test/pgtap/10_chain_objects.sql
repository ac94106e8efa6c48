-- pgTAP: the chain functions exist with the right signatures, owner and
-- privileges.  Run by ./run-tests.sh with pg_prove against a database that
-- has pgtap and minidb_am installed; everything happens in a transaction
-- that is rolled back.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
SELECT plan(47);

SELECT has_extension('minidb_am', 'extension minidb_am is installed');

-- minidb_chain_build
SELECT has_function('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'minidb_chain_build(text[], xid[], cid[], text[], tid) exists');
SELECT function_returns('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'bytea', 'minidb_chain_build returns bytea');
SELECT function_lang_is('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'c', 'minidb_chain_build is written in C');
SELECT volatility_is('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'stable',
	'minidb_chain_build is stable (its record format is minidb.record_format''s)');
SELECT isnt_strict('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'minidb_chain_build is not strict (NULL arguments mean defaults)');
SELECT isnt_definer('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'minidb_chain_build is not SECURITY DEFINER');
SELECT is(pg_get_function_arguments('minidb_chain_build(text[], xid[], cid[], text[], tid)'::regprocedure),
	'vals text[], xids xid[] DEFAULT NULL::xid[], cids cid[] DEFAULT NULL::cid[], flags text[] DEFAULT NULL::text[], successor tid DEFAULT NULL::tid',
	'minidb_chain_build argument names and defaults');

-- minidb_chain_decode
SELECT has_function('public', 'minidb_chain_decode', ARRAY['bytea', 'text'],
	'minidb_chain_decode(bytea, text) exists');
SELECT function_returns('public', 'minidb_chain_decode', ARRAY['bytea', 'text'], 'setof record',
	'minidb_chain_decode returns a set of rows');
SELECT function_lang_is('public', 'minidb_chain_decode', ARRAY['bytea', 'text'], 'c',
	'minidb_chain_decode is written in C');
SELECT volatility_is('public', 'minidb_chain_decode', ARRAY['bytea', 'text'], 'immutable',
	'minidb_chain_decode is immutable');
SELECT is_strict('public', 'minidb_chain_decode', ARRAY['bytea', 'text'],
	'minidb_chain_decode is strict');
SELECT isnt_definer('public', 'minidb_chain_decode', ARRAY['bytea', 'text'],
	'minidb_chain_decode is not SECURITY DEFINER');
SELECT is(pg_get_function_arguments('minidb_chain_decode(bytea, text)'::regprocedure),
	'chain bytea, walker text DEFAULT ''fast''::text', 'minidb_chain_decode arguments; the fast walker is the default');
SELECT is(pg_get_function_result('minidb_chain_decode(bytea, text)'::regprocedure),
	'TABLE("position" integer, xmin xid, cid cid, flags text, natts integer, len integer, value text)',
	'minidb_chain_decode result columns');

-- minidb_chain_check
SELECT has_function('public', 'minidb_chain_check', ARRAY['bytea'], 'minidb_chain_check(bytea) exists');
SELECT function_returns('public', 'minidb_chain_check', ARRAY['bytea'], 'record', 'minidb_chain_check returns a row');
SELECT is_strict('public', 'minidb_chain_check', ARRAY['bytea'], 'minidb_chain_check is strict');
SELECT isnt_definer('public', 'minidb_chain_check', ARRAY['bytea'], 'minidb_chain_check is not SECURITY DEFINER');
SELECT is(pg_get_function_arguments('minidb_chain_check(bytea)'::regprocedure),
	'chain bytea, OUT valid boolean, OUT version integer, OUT field text, OUT detail text',
	'minidb_chain_check arguments');

-- minidb_chain_walk_timing
SELECT has_function('public', 'minidb_chain_walk_timing', ARRAY['bytea', 'integer', 'integer'],
	'minidb_chain_walk_timing(bytea, integer, integer) exists');
SELECT function_returns('public', 'minidb_chain_walk_timing', ARRAY['bytea', 'integer', 'integer'],
	'setof record', 'minidb_chain_walk_timing returns a set of rows');
SELECT volatility_is('public', 'minidb_chain_walk_timing', ARRAY['bytea', 'integer', 'integer'],
	'volatile', 'minidb_chain_walk_timing is volatile (it measures)');
SELECT isnt_definer('public', 'minidb_chain_walk_timing', ARRAY['bytea', 'integer', 'integer'],
	'minidb_chain_walk_timing is not SECURITY DEFINER');
SELECT is(pg_get_function_result('minidb_chain_walk_timing(bytea, integer, integer)'::regprocedure),
	'TABLE(walker text, "position" integer, versions integer, iterations integer, ns_per_op double precision, ns_min double precision)',
	'minidb_chain_walk_timing result columns');

-- Owner: whoever created the extension; membership: the extension
SELECT is((SELECT extowner::regrole::name FROM pg_extension WHERE extname = 'minidb_am'),
	current_user, 'the extension is owned by its installer');
SELECT function_owner_is('public', 'minidb_chain_build', ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'],
	current_user, 'minidb_chain_build is owned by the extension owner');
SELECT function_owner_is('public', 'minidb_chain_decode', ARRAY['bytea', 'text'],
	current_user, 'minidb_chain_decode is owned by the extension owner');
SELECT function_owner_is('public', 'minidb_chain_check', ARRAY['bytea'],
	current_user, 'minidb_chain_check is owned by the extension owner');
SELECT function_owner_is('public', 'minidb_chain_walk_timing', ARRAY['bytea', 'integer', 'integer'],
	current_user, 'minidb_chain_walk_timing is owned by the extension owner');
SELECT is((SELECT count(*) FROM pg_depend d
		   WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
			 AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minidb_am')
			 AND d.objid IN ('minidb_chain_build(text[], xid[], cid[], text[], tid)'::regprocedure,
							 'minidb_chain_decode(bytea, text)'::regprocedure,
							 'minidb_chain_check(bytea)'::regprocedure,
							 'minidb_chain_walk_timing(bytea, integer, integer)'::regprocedure)),
	4::bigint, 'the four chain functions belong to the extension');

-- Privileges: every role may call them (they read only the bytes given),
-- granted explicitly to PUBLIC; minidb_chain_walk_timing, which runs as long
-- as asked, then refuses callers outside minidb_bench itself, naming the role
CREATE ROLE minidb_tap_nobody NOLOGIN NOINHERIT;
SELECT function_privs_are('public', 'minidb_chain_build', ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'],
	'minidb_tap_nobody', ARRAY['EXECUTE'], 'an unprivileged role may execute minidb_chain_build');
SELECT function_privs_are('public', 'minidb_chain_decode', ARRAY['bytea', 'text'],
	'minidb_tap_nobody', ARRAY['EXECUTE'], 'an unprivileged role may execute minidb_chain_decode');
SELECT function_privs_are('public', 'minidb_chain_check', ARRAY['bytea'],
	'minidb_tap_nobody', ARRAY['EXECUTE'], 'an unprivileged role may execute minidb_chain_check');
SELECT function_privs_are('public', 'minidb_chain_walk_timing', ARRAY['bytea', 'integer', 'integer'],
	'minidb_tap_nobody', ARRAY['EXECUTE'], 'an unprivileged role may execute minidb_chain_walk_timing');
SELECT ok(EXISTS (SELECT 1 FROM pg_proc p, aclexplode(p.proacl) a
				  WHERE p.oid = f::regprocedure AND a.grantee = 0 AND a.privilege_type = 'EXECUTE'),
	f || ' is granted to PUBLIC explicitly')
FROM unnest(ARRAY['minidb_chain_build(text[], xid[], cid[], text[], tid)',
				  'minidb_chain_decode(bytea, text)',
				  'minidb_chain_check(bytea)',
				  'minidb_chain_walk_timing(bytea, integer, integer)']) f;
SELECT is((SELECT count(*) FROM pg_proc p, aclexplode(p.proacl) a
		   WHERE p.oid IN ('minidb_chain_build(text[], xid[], cid[], text[], tid)'::regprocedure,
						   'minidb_chain_decode(bytea, text)'::regprocedure,
						   'minidb_chain_check(bytea)'::regprocedure,
						   'minidb_chain_walk_timing(bytea, integer, integer)'::regprocedure)
			 AND a.grantee <> 0 AND a.grantee <> p.proowner),
	0::bigint, 'no role other than PUBLIC and the owner holds privileges on them');

-- ... and calling them as that role works (results checked as the owner)
SET ROLE minidb_tap_nobody;
SELECT minidb_chain_build('{b,a}') AS nobody_chain \gset
SELECT string_agg(value, ',' ORDER BY position) AS nobody_fast
FROM minidb_chain_decode(:'nobody_chain', 'fast') \gset
SELECT string_agg(value, ',' ORDER BY position) AS nobody_reference
FROM minidb_chain_decode(:'nobody_chain', 'reference') \gset
SELECT valid AS nobody_valid FROM minidb_chain_check(:'nobody_chain') \gset
RESET ROLE;
SELECT is(:'nobody_fast'::text, 'b,a'::text, 'an unprivileged role builds and decodes through the fast walker');
SELECT is(:'nobody_reference'::text, 'b,a'::text, 'an unprivileged role decodes through the reference walker');
SELECT ok(:'nobody_valid'::bool, 'an unprivileged role checks a chain');
SET ROLE minidb_tap_nobody;
SELECT throws_ok(format('SELECT * FROM minidb_chain_walk_timing(%L::bytea, 10)', :'nobody_chain'),
	'42501', 'permission denied for the minidb benchmark functions',
	'an unprivileged role may not time the walkers (it would choose how long the call runs)');
RESET ROLE;
CREATE ROLE minidb_tap_bench NOLOGIN IN ROLE minidb_bench;
SET ROLE minidb_tap_bench;
SELECT count(*) AS member_timing FROM minidb_chain_walk_timing(:'nobody_chain', 10) \gset
RESET ROLE;
SELECT is(:'member_timing'::int, 2, 'a member of minidb_bench times both walkers');

-- Nothing else of ours is callable by PUBLIC by accident: every function of
-- the extension that PUBLIC may execute is one of the four above or the
-- table AM handler (which takes internal and cannot be called from SQL)
SELECT is_empty($$
	SELECT p.oid::regprocedure::text
	FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minidb_am')
	  AND has_function_privilege('minidb_tap_nobody', p.oid, 'EXECUTE')
	  AND p.proname NOT IN ('minidb_chain_build', 'minidb_chain_decode',
							'minidb_chain_check', 'minidb_chain_walk_timing')
	  AND NOT 'internal'::regtype = ANY (p.proargtypes)
	  AND p.prosecdef
$$, 'no SECURITY DEFINER function of the extension is open to PUBLIC');

SELECT * FROM finish();
ROLLBACK;
