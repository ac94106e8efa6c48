-- pgTAP: the extension's privileges and settings (issue 11, items 1, 6, 7).
-- The behaviour behind them (the writer session, cancels, locks, hint
-- bits) is tested by sql/security.sql.  See 10_chain_objects.sql for how
-- these files are run.
\set ON_ERROR_STOP 1
\set QUIET 1
\pset format unaligned
\pset tuples_only true
\pset pager off

BEGIN;
SELECT plan(25);

-- No function of the extension runs with its owner's rights
SELECT is_empty($$
	SELECT p.oid::regprocedure::text
	FROM pg_depend d JOIN pg_proc p ON p.oid = d.objid
	WHERE d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
	  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minidb_am')
	  AND p.prosecdef
$$, 'no function of the extension is SECURITY DEFINER');

-- The benchmark functions pin their search_path
SELECT is((SELECT proconfig FROM pg_proc WHERE oid = f::regprocedure),
		  ARRAY['search_path=pg_catalog, pg_temp'],
		  f || ' runs with search_path pg_catalog, pg_temp')
FROM unnest(ARRAY['minidb_bench_chain_depth(integer[], integer, text[], boolean, text)',
				  'minidb_bench_chain_rows(integer[], text[], boolean, text)',
				  'minidb_bench_copy_vs_alloc(integer, integer)',
				  'minidb_bench_ab(text, text, integer, text, integer, integer, text, text)']) f;

-- Callers outside minidb_bench get 42501 from the function itself, with a
-- hint naming the role
CREATE ROLE minidb_tap_outsider NOLOGIN;
SET ROLE minidb_tap_outsider;
SELECT throws_ok(q, '42501', 'permission denied for the minidb benchmark functions',
				 'an outsider may not run ' || split_part(q, '(', 1))
FROM unnest(ARRAY[
	$$SELECT * FROM minidb_bench_chain_depth('{1}', 10)$$,
	$$SELECT * FROM minidb_bench_chain_rows('{1}')$$,
	$$SELECT * FROM minidb_bench_copy_vs_alloc(10, 10)$$,
	$$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest')$$,
	$$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 10)$$]) q;
RESET ROLE;
CREATE FUNCTION pg_temp.hint_of(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	h text;
BEGIN
	EXECUTE q;
	RETURN NULL;
EXCEPTION WHEN insufficient_privilege THEN
	GET STACKED DIAGNOSTICS h = PG_EXCEPTION_HINT;
	RETURN h;
END $$;
SET ROLE minidb_tap_outsider;
SELECT pg_temp.hint_of($$SELECT * FROM minidb_bench_chain_rows('{1}')$$) AS outsider_hint \gset
RESET ROLE;
SELECT is(:'outsider_hint'::text, 'A superuser may grant the role: GRANT minidb_bench TO minidb_tap_outsider;',
		  'the error tells the outsider which role to ask for');

-- ... and the argument checks come after the caller check (no probing)
SET ROLE minidb_tap_outsider;
SELECT throws_ok($$SELECT * FROM minidb_bench_chain_depth('{0}', 0)$$, '42501', NULL,
				 'an outsider learns nothing about the arguments');
RESET ROLE;

-- Members of minidb_bench pass the check (argument errors show it)
CREATE ROLE minidb_tap_member NOLOGIN IN ROLE minidb_bench;
SET ROLE minidb_tap_member;
SELECT throws_ok($$SELECT * FROM minidb_bench_copy_vs_alloc(0, 10)$$, '22023', NULL,
				 'a member of minidb_bench gets past the caller check');
RESET ROLE;

-- Settings: minidb.read_path is superuser-only, minidb.record_format is not
SELECT is((SELECT context FROM pg_settings WHERE name = 'minidb.read_path'), 'superuser',
		  'minidb.read_path can be set by superusers only');
SELECT is((SELECT context FROM pg_settings WHERE name = 'minidb.record_format'), 'user',
		  'minidb.record_format is a user setting');
SET ROLE minidb_tap_outsider;
SELECT throws_ok($$SET minidb.read_path = copy_eager$$, '42501', NULL,
				 'an ordinary role may not choose the read path');
RESET ROLE;

-- minidb_chain_build depends on minidb.record_format: STABLE
SELECT volatility_is('public', 'minidb_chain_build',
	ARRAY['text[]', 'xid[]', 'cid[]', 'text[]', 'tid'], 'stable',
	'minidb_chain_build is stable');

-- The role: made by the extension, marked, cannot log in
SELECT has_role('minidb_bench', 'the extension made role minidb_bench');
SELECT is((SELECT rolcanlogin FROM pg_roles WHERE rolname = 'minidb_bench'), false,
		  'minidb_bench cannot log in');
SELECT is((SELECT rolsuper OR rolcreaterole OR rolcreatedb OR rolreplication OR rolbypassrls
		   FROM pg_roles WHERE rolname = 'minidb_bench'), false,
		  'minidb_bench has no special attributes');
SELECT is((SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = 'minidb_bench'),
		  'may run the minidb_am benchmark functions (minidb_bench_*)',
		  'minidb_bench carries the comment the extension recognizes it by');

-- minidb_chain and minidb_stats: the owner (or a superuser) only
CREATE TABLE minidb_tap_t (id int) USING minidb;
INSERT INTO minidb_tap_t VALUES (1);
GRANT SELECT ON minidb_tap_t TO minidb_tap_outsider;
SET ROLE minidb_tap_outsider;
SELECT throws_ok($$SELECT * FROM minidb_stats('minidb_tap_t')$$, '42501',
				 'must be owner of table minidb_tap_t', 'minidb_stats refuses a non-owner');
SELECT throws_ok($$SELECT * FROM minidb_chain('minidb_tap_t', '(0,1)')$$, '42501',
				 'must be owner of table minidb_tap_t', 'minidb_chain refuses a non-owner');
RESET ROLE;
ALTER TABLE minidb_tap_t OWNER TO minidb_tap_outsider;
SET ROLE minidb_tap_outsider;
SELECT lives_ok($$SELECT * FROM minidb_stats('minidb_tap_t')$$, 'minidb_stats serves the owner');
SELECT lives_ok($$SELECT * FROM minidb_chain('minidb_tap_t', '(0,1)')$$, 'minidb_chain serves the owner');
RESET ROLE;

SELECT * FROM finish();
ROLLBACK;
