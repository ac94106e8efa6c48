--
-- bench_scan: minidb_bench_scan (bench.c), scans of many rows beside heap.
-- Shapes, the rows every kind reads (the function itself checks every
-- run's count against the data, on both tables, and each query's plan),
-- allocations per returned row after the warm-up (counted, so exact:
-- zero on every read path), every argument error, who may call it, and
-- the cleanup after a cancel.  Tables are tiny and pairs few: this checks
-- the machinery, it measures nothing (timings are never printed).
--
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS minidb_am CASCADE;
CREATE EXTENSION IF NOT EXISTS dblink;
RESET client_min_messages;
CREATE EXTENSION minidb_am;

CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	detail text;
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'no error';
EXCEPTION WHEN others OR query_canceled THEN
	GET STACKED DIAGNOSTICS detail = PG_EXCEPTION_DETAIL, hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN detail <> '' THEN ' (' || detail || ')' ELSE '' END ||
		CASE WHEN hint <> '' THEN ' [' || hint || ']' ELSE '' END;
END $$;

-- Shape: not SECURITY DEFINER, search_path pinned, EXECUTE to PUBLIC
SELECT pg_get_function_arguments(p.oid) AS arguments,
       pg_get_function_result(p.oid) AS result,
       p.prosecdef, p.proconfig, p.provolatile, p.proparallel,
       has_function_privilege('public', p.oid, 'EXECUTE') AS public_may
FROM pg_proc p WHERE p.proname = 'minidb_bench_scan';

-- Every kind on both data sets: one row per pair, then the summary; the
-- rows each kind reads (the table, the 200-row range, ANALYZE's sample);
-- both tables hold every row (pages); nothing allocated per returned row
-- after the warm-up by minidb; heap below one allocation per hundred rows
-- (with tiny shared_buffers, as t/012 runs this suite, heap's scan reads
-- through a ring and its hint-bit writes allocate now and then); no figure
-- for ANALYZE
CREATE TEMP TABLE scan AS
SELECT * FROM minidb_bench_scan(rows => 2000, pairs => 3);
INSERT INTO scan
SELECT * FROM minidb_bench_scan('{seq_count,seq_filter,tid_range}', 2000, 2, 'pgbench');
SELECT kind, data, table_rows, rows_read,
       count(*) FILTER (WHERE pair IS NOT NULL) AS pairs,
       bool_and(heap_ms > 0 AND minidb_ms > 0 AND ratio > 0) AS timed,
       max(verdict) ~ '^(A faster|B faster|no difference detected) \(A = heap, B = minidb\)$' AS verdict_ok,
       bool_or(ratio_q1 <= ratio AND ratio <= ratio_q3) AS median_within_iqr,
       max(heap_pages) > 0 AND max(minidb_pages) > 0 AS pages,
       max(heap_allocs_per_row) < 0.01 AS heap_allocs_below_1pct,
       max(minidb_bytes_per_row) AS minidb_bytes,
       max(minidb_allocs_per_row) AS minidb_allocs
FROM scan GROUP BY kind, data, table_rows, rows_read
ORDER BY data DESC, min(ctid);

-- A kind asked twice is measured once
SELECT kind, count(*) FROM minidb_bench_scan('{tid_range,seq_count,tid_range}', 1000, 2)
GROUP BY kind ORDER BY kind;

-- Arguments
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_scan}', 1000, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{}', 1000, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count,NULL}', 1000, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{{seq_count},{bitmap}}', 1000, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan(NULL, 1000, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 999, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 10000001, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', NULL, 2)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 1)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 1001)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 2, 'wide')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 2, NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 2, format => 'v4')$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 2, format => NULL)$$);
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan(rows => 10000000, pairs => 1000)$$);

-- Without dblink the tables cannot be loaded: a clear error
DROP EXTENSION dblink;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 2)$$);
CREATE EXTENSION dblink;

-- Privileges: a member of minidb_bench may run it (its queries read the
-- owner's scratch schema as the owner), anybody else is told which role
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_minidb_bench_scan_member;
DROP ROLE IF EXISTS regress_minidb_bench_scan_nobody;
RESET client_min_messages;
CREATE ROLE regress_minidb_bench_scan_member IN ROLE minidb_bench;
CREATE ROLE regress_minidb_bench_scan_nobody;
SET ROLE regress_minidb_bench_scan_nobody;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count}', 1000, 2)$$);
RESET ROLE;
SET ROLE regress_minidb_bench_scan_member;
SELECT kind, rows_read, minidb_allocs_per_row
FROM minidb_bench_scan('{seq_filter,analyze}', 2000, 2) WHERE pair IS NULL;
RESET ROLE;
DROP ROLE regress_minidb_bench_scan_member;
DROP ROLE regress_minidb_bench_scan_nobody;

-- The caller's planner settings do not change the plans it measures
SET enable_seqscan = off;
SET enable_indexscan = off;
SET enable_bitmapscan = off;
SET enable_tidscan = off;
SET max_parallel_workers_per_gather = 4;
SELECT kind, rows_read FROM minidb_bench_scan(rows => 1000, pairs => 2)
WHERE pair IS NULL;
SHOW enable_seqscan;
RESET ALL;

-- A cancelled call (statement_timeout) leaves no schema or connection.
-- Its work (4 * 10^8 rows read) takes far longer than the timeout: 8 * 10^7
-- once finished inside it on a fast machine.
SET statement_timeout = '3s';
SET client_min_messages = warning;	-- its progress NOTICEs depend on timing
SELECT pg_temp.try($$SELECT * FROM minidb_bench_scan('{seq_count,seq_filter}', 200000, 1000)$$) AS cancelled;
RESET statement_timeout;
RESET client_min_messages;
SELECT count(*) AS scratch_schemas FROM pg_namespace WHERE nspname LIKE 'minidb\_bench\_%';
SELECT coalesce(array_length(dblink_get_connections(), 1), 0) AS open_connections;
