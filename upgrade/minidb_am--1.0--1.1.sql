/* minidb_am 1.0 -> 1.1: every SQL-visible change since release 1.0 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION minidb_am UPDATE TO '1.1'" to load this file. \quit

-- Every statement can run twice: a database that installed a development
-- build of main between 1.0 and 1.1 (labelled 1.0, holding some of these
-- changes already) updates too.  CREATE OR REPLACE replaces only members
-- of this extension.

-- The role minidb_bench (20_bench.sql): 1.0 used any role of that name;
-- 1.1 uses it only when minidb_am made it (its comment says so), as a
-- fresh CREATE EXTENSION does, and makes it when it is missing.
DO $$
DECLARE
	marker CONSTANT text :=
		'may run the minidb_am benchmark functions (minidb_bench_*)';
	found_role oid;
BEGIN
	SELECT r.oid INTO found_role FROM pg_catalog.pg_roles r
	 WHERE r.rolname OPERATOR(pg_catalog.=) 'minidb_bench';
	IF found_role IS NULL THEN
		CREATE ROLE minidb_bench NOLOGIN;
		EXECUTE pg_catalog.format('COMMENT ON ROLE minidb_bench IS %L', marker);
	ELSIF pg_catalog.shobj_description(found_role, 'pg_authid')
			IS DISTINCT FROM marker THEN
		RAISE EXCEPTION 'role "minidb_bench" already exists and was not created by minidb_am'
			USING ERRCODE = 'duplicate_object',
				  DETAIL = 'Its members would run the minidb_am benchmark functions, which write through a superuser connection.',
				  HINT = pg_catalog.format('Drop or rename that role, or, if it is meant for these benchmarks, mark it with COMMENT ON ROLE minidb_bench IS %L and update the extension again.', marker);
	END IF;
END $$;

-- 05_am_funcs.sql: who holds a row (row locks like heap's)
CREATE OR REPLACE FUNCTION minidb_row_locks(rel regclass)
RETURNS TABLE(locked_row tid, locker xid, multi bool, xids xid[],
              modes text[], pids int[])
AS 'MODULE_PATHNAME', 'minidb_row_locks'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION minidb_row_locks(regclass) IS
'rows held by running transactions, with their holders'' xids, modes and pids, as pgrowlocks shows them (needs SELECT on the table)';

-- 10_chain.sql: the record's format is minidb.record_format's, so the
-- builder is STABLE, not IMMUTABLE
ALTER FUNCTION minidb_chain_build(text[], xid[], cid[], text[], tid) STABLE;

-- 20_bench.sql: the benchmarks run as their caller (not SECURITY DEFINER);
-- EXECUTE for PUBLIC, the functions check their caller themselves and
-- name the role in their error
ALTER FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) SECURITY INVOKER;
ALTER FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) SECURITY INVOKER;
ALTER FUNCTION minidb_bench_copy_vs_alloc(int, int) SECURITY INVOKER;
ALTER FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) SECURITY INVOKER;

REVOKE ALL ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) FROM minidb_bench;
REVOKE ALL ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) FROM minidb_bench;
REVOKE ALL ON FUNCTION minidb_bench_copy_vs_alloc(int, int) FROM minidb_bench;
REVOKE ALL ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) FROM minidb_bench;
GRANT EXECUTE ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_copy_vs_alloc(int, int) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) TO PUBLIC;

COMMENT ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) IS
'time fetches by TID of a row whose chain has each depth, newest and oldest reader, per read path and beside heap (superuser or member of minidb_bench)';
COMMENT ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) IS
'the row each read path (and heap) returns from chains of each depth, for each reader (superuser or member of minidb_bench)';
COMMENT ON FUNCTION minidb_bench_copy_vs_alloc(int, int) IS
'ns per op: copy into an existing buffer, palloc+copy (reset every 1000), palloc+copy+pfree (superuser or member of minidb_bench)';
COMMENT ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) IS
'paired ABBA comparison of two read paths or heap: per-pair B/A, then median, IQR and verdict (superuser or member of minidb_bench)';

-- 40_repair.sql: what verify_heapam and pg_surgery's heap_force_kill do
-- for heap.  A development build labelled 1.0 may hold minidb_check,
-- which minidb_verify replaced: drop it if the extension owns it.
DO $$
BEGIN
	IF pg_catalog.to_regprocedure('minidb_check(regclass)') IS NOT NULL AND
	   EXISTS (SELECT 1 FROM pg_catalog.pg_depend d
			   WHERE d.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
				 AND d.objid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('minidb_check(regclass)')
				 AND d.refclassid OPERATOR(pg_catalog.=) 'pg_catalog.pg_extension'::pg_catalog.regclass
				 AND d.refobjid OPERATOR(pg_catalog.=) (SELECT e.oid FROM pg_catalog.pg_extension e
														 WHERE e.extname OPERATOR(pg_catalog.=) 'minidb_am')
				 AND d.deptype OPERATOR(pg_catalog.=) 'e') THEN
		DROP FUNCTION minidb_check(regclass);
	END IF;
END $$;

-- amcheck's verify_heapam for minidb tables (verify_heapam refuses them):
-- one row per problem, never stopping at the first: pages, line pointers,
-- record and version headers, the walkers agreeing, transaction IDs and
-- multixacts within their bounds, row lockers, moved markers' successors,
-- attributes; with check_toast every external value some snapshot may
-- still read is fetched; with check_indexes every visible row has its
-- entry in every btree index and every entry names a record.  Superusers,
-- the table's owner and members of pg_stat_scan_tables (checked before
-- the table is locked); AccessShareLock.  Not parallel safe: each page is
-- checked in a subtransaction, so that damage becomes a row.
CREATE OR REPLACE FUNCTION minidb_verify(rel regclass,
                              check_toast boolean DEFAULT false,
                              check_indexes boolean DEFAULT false)
RETURNS TABLE(blkno bigint, offnum integer, version integer, field text,
              msg text)
AS 'MODULE_PATHNAME', 'minidb_verify'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION minidb_verify(regclass, boolean, boolean) IS
'every problem of a minidb table, as amcheck''s verify_heapam lists heap''s: pages, line pointers, records, versions, transaction IDs, lockers, moved rows, optionally TOAST values and btree index entries (superuser, table owner or pg_stat_scan_tables)';

CREATE OR REPLACE FUNCTION minidb_force_kill(rel regclass, tids tid[])
RETURNS int
AS 'MODULE_PATHNAME', 'minidb_force_kill'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION minidb_force_kill(regclass, tid[]) IS
'make the records at these TIDs dead without reading them, as pg_surgery''s heap_force_kill does for heap (superuser)';

REVOKE ALL ON FUNCTION minidb_force_kill(regclass, tid[]) FROM PUBLIC;

-- Scans over many rows, minidb beside heap in the same call (bench.c,
-- "minidb_bench_scan"); see 20_bench.sql.
CREATE OR REPLACE FUNCTION minidb_bench_scan(
    kinds text[] DEFAULT '{seq_count,seq_filter,index_range,bitmap,tid_range,analyze}',
    rows int DEFAULT 1000000,
    pairs int DEFAULT 10,
    data text DEFAULT 'narrow',
    format text DEFAULT 'v3')
RETURNS TABLE(kind text, data text, table_rows int, rows_read bigint,
              pair int, heap_ms float8, minidb_ms float8, ratio float8,
              ratio_q1 float8, ratio_q3 float8, verdict text,
              heap_pages bigint, minidb_pages bigint,
              heap_bytes_per_row float8, minidb_bytes_per_row float8,
              heap_allocs_per_row float8, minidb_allocs_per_row float8)
AS 'MODULE_PATHNAME', 'minidb_bench_scan'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_scan(text[], int, int, text, text) IS
'paired ABBA scans (sequential count and filter, index range, bitmap, TID range, ANALYZE) of a minidb table beside a heap table: per-pair minidb/heap, median, IQR, verdict, bytes and allocations per row (superuser or member of minidb_bench)';

REVOKE ALL ON FUNCTION minidb_bench_scan(text[], int, int, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_scan(text[], int, int, text, text) TO PUBLIC;
