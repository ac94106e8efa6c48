/* minidb_am: the chain-depth benchmark suite (bench.c) */

-- Who may run the benchmarks (and minidb_chain_walk_timing): superusers,
-- and members of minidb_bench.  Roles are cluster-wide, outlive the
-- extension and cannot be its members, so a role of that name may already
-- exist: it is used only when an earlier CREATE EXTENSION minidb_am (in
-- this or another database) made it, as its comment says; any other role
-- of that name is refused, because whoever created it, and its members,
-- would run the benchmarks.  DROP EXTENSION leaves the role (other
-- databases may use it); DROP ROLE minidb_bench once no database has the
-- extension.
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
				  HINT = pg_catalog.format('Drop or rename that role, or, if it is meant for these benchmarks, mark it with COMMENT ON ROLE minidb_bench IS %L and create the extension again.', marker);
	END IF;
END $$;

-- The chains are written through dblink (CREATE EXTENSION dblink first),
-- one committed transaction per version, while this session's snapshot
-- holds the removal horizon; see bench.c.  The functions run as their
-- caller; only their dblink calls run as the functions' owner (the
-- superuser who created the extension: dblink lets only superusers
-- connect without a password), into a writer session whose search_path
-- and role are pinned in its startup packet and checked, and which is
-- sent only schema-qualified statements built from validated arguments.
-- EXECUTE is granted to PUBLIC: the functions themselves refuse callers
-- that are neither superusers nor members of minidb_bench, with a hint
-- naming the role.

-- ns, bytes and allocations per fetch by TID (table_index_fetch_tuple),
-- for each depth, reader and minidb read path, and heap's HOT chain.
-- format: the minidb records' format (minidb.record_format: v1, v2).
CREATE FUNCTION minidb_bench_chain_depth(
    depths int[] DEFAULT '{1,60}',
    iterations int DEFAULT 200000,
    paths text[] DEFAULT '{copy_eager,copy_lazy,view_lazy}',
    include_heap bool DEFAULT true,
    format text DEFAULT 'v2')
RETURNS TABLE(table_am text, depth int, reader text, path text,
              iterations int, ns_per_op float8, bytes_per_op float8,
              allocs_per_op float8)
AS 'MODULE_PATHNAME', 'minidb_bench_chain_depth'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) IS
'time fetches by TID of a row whose chain has each depth, newest and oldest reader, per read path and beside heap (superuser or member of minidb_bench)';

-- The row each of those fetches returns: every path must agree.
CREATE FUNCTION minidb_bench_chain_rows(
    depths int[] DEFAULT '{1,60}',
    paths text[] DEFAULT '{copy_eager,copy_lazy,view_lazy}',
    include_heap bool DEFAULT true,
    format text DEFAULT 'v2')
RETURNS TABLE(table_am text, depth int, reader text, path text,
              versions int, row_tid tid, id int, v text, row_xmin xid)
AS 'MODULE_PATHNAME', 'minidb_bench_chain_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) IS
'the row each read path (and heap) returns from chains of each depth, for each reader (superuser or member of minidb_bench)';

-- Copy into an existing buffer, versus palloc 1 kB and copy.
CREATE FUNCTION minidb_bench_copy_vs_alloc(
    bytes int DEFAULT 897,
    iterations int DEFAULT 1000000)
RETURNS TABLE(operation text, bytes int, alloc_bytes int, iterations int,
              ns_per_op float8, vs_copy float8)
AS 'MODULE_PATHNAME', 'minidb_bench_copy_vs_alloc'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_copy_vs_alloc(int, int) IS
'ns per op: copy into an existing buffer, palloc+copy (reset every 1000), palloc+copy+pfree (superuser or member of minidb_bench)';

-- A against B (read paths or heap), ABBA over pairs.  One row per pair,
-- then a summary row (pair IS NULL): medians, quartiles of B/A, verdict.
-- a_format, b_format: the record format of each side's minidb chain
-- (v1, v2), e.g. ('view_lazy', 'view_lazy', 60, 'newest', a_format => 'v1',
-- b_format => 'v2') compares the two formats on one read path.
CREATE FUNCTION minidb_bench_ab(
    a text, b text, depth int, reader text,
    pairs int DEFAULT 10,
    iterations int DEFAULT 100000,
    a_format text DEFAULT 'v2',
    b_format text DEFAULT 'v2')
RETURNS TABLE(pair int, a_ns float8, b_ns float8, ratio float8,
              ratio_q1 float8, ratio_q3 float8, verdict text)
AS 'MODULE_PATHNAME', 'minidb_bench_ab'
LANGUAGE C VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) IS
'paired ABBA comparison of two read paths or heap: per-pair B/A, then median, IQR and verdict (superuser or member of minidb_bench)';

REVOKE ALL ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_bench_copy_vs_alloc(int, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_copy_vs_alloc(int, int) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) TO PUBLIC;

-- Scans over many rows, minidb beside heap in the same call (bench.c,
-- "minidb_bench_scan"): the writer loads rows narrow rows (data 'narrow':
-- id int4, k int4) or pgbench_accounts rows (data 'pgbench', scale =
-- rows / 100000) into one table of each access method; each kind's query
-- then runs alternately on both, ABBA over pairs.  One row per kind and
-- pair (ms of each, ratio = minidb / heap), then a summary row per kind
-- (pair IS NULL): medians, quartiles of the ratio, verdict (A = heap,
-- B = minidb), pages of each table, and bytes and allocations per
-- returned row of a counted run after the warm-up (NULL for analyze).
CREATE FUNCTION minidb_bench_scan(
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
