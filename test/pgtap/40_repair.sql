-- pgTAP: the repair functions' objects (issue 15, item 3; issue 11):
-- minidb_verify and minidb_force_kill exist with their signatures,
-- defaults, volatility, strictness and parallel safety, belong to the
-- extension, minidb_force_kill is for superusers only, and minidb_check
-- (which minidb_verify replaced) is gone.  Their behaviour is tested by
-- sql/repair.sql, t/102_repair.pl and t/104_corruption.pl.  See
-- 10_chain_objects.sql for how these files are run.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
SELECT plan(15);

SELECT has_function('minidb_verify', ARRAY['regclass', 'boolean', 'boolean'],
					'minidb_verify(regclass, boolean, boolean) exists');
SELECT function_returns('minidb_verify', ARRAY['regclass', 'boolean', 'boolean'],
						'setof record', 'minidb_verify returns a set of rows');
SELECT is(pg_get_function_result('minidb_verify(regclass, boolean, boolean)'::regprocedure),
		  'TABLE(blkno bigint, offnum integer, version integer, field text, msg text)',
		  'minidb_verify returns (blkno, offnum, version, field, msg)');
SELECT is(pg_get_function_arguments('minidb_verify(regclass, boolean, boolean)'::regprocedure),
		  'rel regclass, check_toast boolean DEFAULT false, check_indexes boolean DEFAULT false',
		  'check_toast and check_indexes are off unless asked for');
SELECT is_strict('minidb_verify', ARRAY['regclass', 'boolean', 'boolean'],
				 'minidb_verify is STRICT');
SELECT volatility_is('minidb_verify', ARRAY['regclass', 'boolean', 'boolean'], 'volatile',
					 'minidb_verify is VOLATILE');
SELECT is((SELECT proparallel FROM pg_proc
			WHERE oid = 'minidb_verify(regclass, boolean, boolean)'::regprocedure),
		  'u'::"char", 'minidb_verify is PARALLEL UNSAFE (it runs subtransactions)');
SELECT hasnt_function('minidb_check', ARRAY['regclass'],
					  'minidb_check is gone: minidb_verify replaced it');
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
			  AND d.objid IN ('minidb_verify(regclass, boolean, boolean)'::regprocedure,
							  'minidb_force_kill(regclass, tid[])'::regprocedure)),
		  2::bigint, 'both belong to the extension');
SELECT ok(NOT has_function_privilege('public', 'minidb_force_kill(regclass, tid[])', 'EXECUTE'),
		  'PUBLIC may not run minidb_force_kill');
SELECT ok(has_function_privilege('public', 'minidb_verify(regclass, boolean, boolean)', 'EXECUTE'),
		  'PUBLIC may run minidb_verify (it checks its caller itself: owner, pg_stat_scan_tables, superuser)');

SELECT * FROM finish();
ROLLBACK;
