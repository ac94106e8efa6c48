-- pgTAP: the repair functions' objects (issue 15, item 3): minidb_check
-- and minidb_force_kill exist with their signatures, volatility and
-- strictness, belong to the extension, and minidb_force_kill is for
-- superusers only.  Their behaviour is tested by sql/repair.sql and
-- t/102_repair.pl.  See 10_chain_objects.sql for how these files are run.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
SELECT plan(11);

SELECT has_function('minidb_check', ARRAY['regclass'], 'minidb_check(regclass) exists');
SELECT function_returns('minidb_check', ARRAY['regclass'], 'setof record',
						'minidb_check returns a set of rows');
SELECT is(pg_get_function_result('minidb_check(regclass)'::regprocedure),
		  'TABLE(ctid tid, version integer, field text, detail text)',
		  'minidb_check returns (ctid, version, field, detail)');
SELECT is_strict('minidb_check', ARRAY['regclass'], 'minidb_check is STRICT');
SELECT has_function('minidb_force_kill', ARRAY['regclass', 'tid[]'],
					'minidb_force_kill(regclass, tid[]) exists');
SELECT function_returns('minidb_force_kill', ARRAY['regclass', 'tid[]'], 'integer',
						'minidb_force_kill returns the number of records killed');
SELECT isnt_strict('minidb_force_kill', ARRAY['regclass', 'tid[]'],
				   'minidb_force_kill is not STRICT: NULL arguments are errors');
SELECT volatility_is('minidb_force_kill', ARRAY['regclass', 'tid[]'], 'volatile',
					 'minidb_force_kill is VOLATILE');
SELECT is((SELECT count(*) FROM pg_depend d
			WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
			  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minidb_am')
			  AND d.objid IN ('minidb_check(regclass)'::regprocedure,
							  'minidb_force_kill(regclass, tid[])'::regprocedure)),
		  2::bigint, 'both belong to the extension');
SELECT ok(NOT has_function_privilege('public', 'minidb_force_kill(regclass, tid[])', 'EXECUTE'),
		  'PUBLIC may not run minidb_force_kill');
SELECT ok(has_function_privilege('public', 'minidb_check(regclass)', 'EXECUTE'),
		  'PUBLIC may run minidb_check (it checks table ownership itself)');

SELECT * FROM finish();
ROLLBACK;
