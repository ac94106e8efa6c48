--
-- bench: the chain-depth benchmark functions (bench.c).  Shapes, the rows
-- every read path returns (identical for every depth and reader), measured
-- allocation counts (exact, unlike timings, which are never asserted), the
-- ABBA summary, every argument error, and who may call them.  Iteration
-- counts are tiny: this checks the machinery, it measures nothing.
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS minidb_am CASCADE;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
CREATE EXTENSION minidb_am;

-- Report SQLSTATE, message, detail and hint instead of failing the script
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN detail <> '' THEN ' (' || detail || ')' ELSE '' END ||
		CASE WHEN hint <> '' THEN ' [' || hint || ']' ELSE '' END;
END $$;

-- Shapes: arguments, defaults, results, fixed search_path; not SECURITY
-- DEFINER (they run as the caller; only their dblink calls run as the
-- owner, see sql/security.sql)
SELECT p.proname, pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result,
       p.prosecdef, p.proconfig, p.provolatile, p.proparallel
FROM pg_proc p
WHERE p.proname LIKE 'minidb\_bench\_%'
ORDER BY p.proname;

-- EXECUTE is granted to PUBLIC: the functions refuse callers that are
-- neither superusers nor members of minidb_bench themselves, naming the
-- role (below)
SELECT p.proname,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may,
       has_function_privilege('minidb_bench', p.oid, 'EXECUTE') AS minidb_bench_may
FROM pg_proc p
WHERE p.proname LIKE 'minidb\_bench\_%'
ORDER BY p.proname;

-- Every path returns the same row: same TID, same values, same xmin, for
-- every depth and reader; heap's HOT chain returns the same values (its
-- newest version sits at another TID of the chain).  The chains are as
-- deep as asked (versions = depth: minidb's record, heap's HOT chain).
CREATE TEMP TABLE rows AS
SELECT * FROM minidb_bench_chain_rows('{1,2,3,60,200}');

SELECT depth, reader,
       count(*) FILTER (WHERE table_am = 'minidb') AS minidb_paths,
       count(DISTINCT (row_tid, id, v, row_xmin::text)) FILTER (WHERE table_am = 'minidb') AS distinct_minidb_rows,
       min(v) FILTER (WHERE table_am = 'minidb') AS minidb_v,
       min(v) FILTER (WHERE table_am = 'heap') AS heap_v,
       min(row_tid) FILTER (WHERE table_am = 'minidb') AS minidb_tid,
       bool_and(versions = depth) AS chains_as_deep_as_asked
FROM rows
GROUP BY depth, reader
ORDER BY depth, reader;

-- Heap and minidb versions were written by the same transactions
SELECT depth, reader, count(DISTINCT row_xmin::text) AS distinct_xmins
FROM rows GROUP BY depth, reader ORDER BY depth, reader;

-- Measured allocations: exact counts (timings are not looked at).
-- copy_eager: the record copy, the decoded array, one chunk per version;
-- copy_lazy: the record copy; view_lazy and heap: nothing after warm-up.
SELECT table_am, depth, reader, path, iterations,
       ns_per_op > 0 AS timed, allocs_per_op,
       bytes_per_op = 0 AS no_bytes
FROM minidb_bench_chain_depth('{1,7}', 20)
ORDER BY depth, reader, table_am DESC, path;

-- One path, no heap
SELECT table_am, depth, reader, path, iterations, allocs_per_op
FROM minidb_bench_chain_depth('{2}', 5, '{view_lazy}', false);

-- Heap only
SELECT table_am, depth, reader, path, iterations, allocs_per_op
FROM minidb_bench_chain_depth('{2}', 5, '{}', true);

-- Copy versus allocate.  alloc_copy runs whole cycles of allocations
-- between context resets (1000 kB: 1000 chunks of 1 kB, 256 of 4000
-- bytes), at least one a round, so that its figure does not depend on the
-- count asked for: 100 iterations in 10 rounds run 10 cycles.
SELECT operation, bytes, alloc_bytes, iterations, ns_per_op > 0 AS timed,
       vs_copy > 0 AS ratio
FROM minidb_bench_copy_vs_alloc(897, 100);
SELECT operation, bytes, alloc_bytes, iterations
FROM minidb_bench_copy_vs_alloc(4000, 3);

-- ABBA: one row per pair, then the summary (pair IS NULL).  The ratio is
-- B/A of the unrounded times, shown to 0.001, the times to 0.1 ns: it must
-- equal b_ns / a_ns within what those roundings allow (twice), whatever
-- the times were (a run preempted on a loaded machine gives a ratio far
-- from 1, where a relative tolerance of the last digit does not hold)
SELECT pair, a_ns > 0 AS a_timed, b_ns > 0 AS b_timed,
       CASE WHEN pair IS NOT NULL THEN
         abs(ratio - b_ns / a_ns) <=
           0.0005 + 2 * (b_ns / a_ns) * (0.05 / a_ns + 0.05 / b_ns) END AS ratio_is_b_over_a,
       ratio_q1 IS NOT NULL AS has_q1, ratio_q1 <= ratio AND ratio <= ratio_q3 AS median_in_iqr,
       regexp_replace(verdict, '^(A faster|B faster|no difference detected) ', '') AS verdict_names
FROM minidb_bench_ab('copy_eager', 'view_lazy', 3, 'oldest', 4, 10);

-- heap against minidb
SELECT count(*) AS rows, count(*) FILTER (WHERE pair IS NULL) AS summaries
FROM minidb_bench_ab('heap', 'view_lazy', 5, 'newest', 3, 10);

-- the verdict follows the quartiles
SELECT (verdict LIKE 'B faster %') = (ratio_q3 < 1) AND (verdict LIKE 'A faster %') = (ratio_q1 > 1)
       AS verdict_consistent
FROM minidb_bench_ab('copy_lazy', 'copy_lazy', 1, 'newest', 5, 10)
WHERE pair IS NULL;

-- Record format V2 (version directory): every path returns the same rows
-- from V2 chains as from V1 chains, for every depth and reader
CREATE TEMP TABLE rows_v2 AS
SELECT * FROM minidb_bench_chain_rows('{1,2,3,60,200}', include_heap => false,
                                      format => 'v2');
SELECT count(*) AS v2_rows,
       count(*) FILTER (WHERE r2.versions = r2.depth) AS v2_as_deep_as_asked,
       count(*) FILTER (WHERE r2.v = r1.v AND r2.id = r1.id AND r2.row_tid = r1.row_tid)
         AS same_as_v1
FROM rows_v2 r2
JOIN rows r1 USING (table_am, depth, reader, path);

-- V1 against V2 on one read path, ABBA; the verdict says which is which
SELECT count(*) AS rows, count(*) FILTER (WHERE pair IS NULL) AS summaries,
       bool_and(a_ns > 0 AND b_ns > 0) AS timed,
       max(regexp_replace(verdict, '^(A faster|B faster|no difference detected) ', '')) AS verdict_names
FROM minidb_bench_ab('view_lazy', 'view_lazy', 7, 'newest', 3, 10,
                     a_format => 'v1', b_format => 'v2');

-- Values are rounded to what a measurement can tell apart: ns to 0.1,
-- ratios to 0.001, counts per op to 0.01 (not 16 decimals)
SELECT bool_and(ns_per_op::numeric = round(ns_per_op::numeric, 1)) AS ns_rounded,
       bool_and(bytes_per_op::numeric = round(bytes_per_op::numeric, 1)) AS bytes_rounded,
       bool_and(allocs_per_op::numeric = round(allocs_per_op::numeric, 2)) AS allocs_rounded
FROM minidb_bench_chain_depth('{1,3}', 7, '{copy_eager,copy_lazy}');
SELECT bool_and(a_ns::numeric = round(a_ns::numeric, 1) AND b_ns::numeric = round(b_ns::numeric, 1)) AS ns_rounded,
       bool_and(ratio::numeric = round(ratio::numeric, 3)) AS ratio_rounded,
       bool_and(ratio_q1::numeric = round(ratio_q1::numeric, 3) AND
                ratio_q3::numeric = round(ratio_q3::numeric, 3)) AS quartiles_rounded
FROM minidb_bench_ab('copy_lazy', 'view_lazy', 2, 'newest', 3, 11);
SELECT bool_and(ns_per_op::numeric = round(ns_per_op::numeric, 1)) AS ns_rounded,
       bool_and(vs_copy::numeric = round(vs_copy::numeric, 2)) AS ratio_rounded
FROM minidb_bench_copy_vs_alloc(300, 33);

-- Progress: a call of a million fetches or more reports each step as a
-- NOTICE (client_min_messages = warning silences them); smaller calls say
-- nothing (every call above)
SELECT count(*) AS rows
FROM minidb_bench_ab('view_lazy', 'view_lazy', 1, 'newest', 2, 300000);
SELECT count(*) AS rows FROM minidb_bench_copy_vs_alloc(64, 400000);
SET client_min_messages = warning;
SELECT count(*) AS rows FROM minidb_bench_copy_vs_alloc(64, 400000);
RESET client_min_messages;

-- Errors
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{0}', 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1,201}', 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{}', 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1,NULL}', 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{{1},{2}}', 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth(NULL, 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 0)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', -5)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, '{view_lazy,fast}')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, '{heap}')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, '{NULL}')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, '{}', false)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, include_heap => NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_rows('{500}')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_rows('{1}', '{copy}')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_rows('{1}', '{}', false)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(0, 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(2000000, 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(897, 0)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(NULL, 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'nope', 1, 'newest')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'middle')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 0, 'newest')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest', 1)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest', 1001)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest', 2, 0)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab(NULL, 'view_lazy', 1, 'newest')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest', NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10, format => 'v4')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_rows('{1}', format => NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('view_lazy', 'view_lazy', 1, 'newest', b_format => 'V2')$$);

-- Without dblink the chains cannot be written: a clear error
DROP EXTENSION dblink;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10)$$);
CREATE EXTENSION dblink;

-- Privileges: a member of minidb_bench may run them, anybody else is told
-- which role to ask for
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_minidb_bench_member;
DROP ROLE IF EXISTS regress_minidb_bench_nobody;
RESET client_min_messages;
CREATE ROLE regress_minidb_bench_member IN ROLE minidb_bench;
CREATE ROLE regress_minidb_bench_nobody;
SET ROLE regress_minidb_bench_nobody;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(10, 10)$$);
RESET ROLE;
-- DROP EXTENSION leaves the role (README, "Security"); once it is gone
-- (dropped by hand), the error says how to make it again
ALTER ROLE minidb_bench RENAME TO regress_minidb_bench_saved;
SET ROLE regress_minidb_bench_nobody;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(10, 10)$$);
RESET ROLE;
ALTER ROLE regress_minidb_bench_saved RENAME TO minidb_bench;
SET ROLE regress_minidb_bench_member;
SELECT table_am, depth, reader, path, v
FROM minidb_bench_chain_rows('{2}', '{view_lazy}');
SELECT count(*) FROM minidb_bench_copy_vs_alloc(10, 10);
RESET ROLE;
DROP ROLE regress_minidb_bench_member;
DROP ROLE regress_minidb_bench_nobody;

-- No writer connection or scratch schema is left behind
SELECT count(*) AS scratch_schemas FROM pg_namespace WHERE nspname LIKE 'minidb\_bench\_%';
SELECT coalesce(array_length(dblink_get_connections(), 1), 0) AS open_connections;
