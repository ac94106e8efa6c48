-- bench/report.sql: the tables run-bench.sh prints, from bench_* (see
-- bench/suite.sql).  Medians over runs; IQR = first..third quartile.
\set ON_ERROR_STOP 1
\pset pager off
\pset footer off

CREATE OR REPLACE TEMP VIEW cell AS
SELECT path, depth, reader,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY ns_per_op) AS ns,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY bytes_per_op) AS b,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY allocs_per_op) AS allocs,
       count(*) AS runs, min(iterations) AS iterations
FROM bench_runs GROUP BY path, depth, reader;

CREATE OR REPLACE TEMP VIEW path_order(path, o) AS
VALUES ('copy_eager', 1), ('copy_lazy', 2), ('view_lazy', 3), ('heap', 4);

\echo
\echo '== Table 1. Fetch by TID (table_index_fetch_tuple) of one row whose chain has 1 or 60'
\echo '   versions; median of the runs (ns/op), measured B/op and allocs/op after warm-up'
SELECT c.path, c.depth, c.reader, round(c.ns::numeric) AS "ns/op",
       round(c.b::numeric) AS "B/op", round(c.allocs::numeric, 1) AS "allocs/op",
       c.runs, c.iterations AS "iters/run"
FROM cell c JOIN path_order USING (path)
ORDER BY c.depth, c.reader, o;

CREATE OR REPLACE TEMP VIEW run_ratio AS
SELECT n.path, n.run,
       o1.ns_per_op / n1.ns_per_op AS old_new_1,
       o.ns_per_op / n.ns_per_op AS old_new_60,
       n.ns_per_op / n1.ns_per_op AS d60_d1_newest,
       o.ns_per_op / o1.ns_per_op AS d60_d1_oldest
FROM bench_runs n
JOIN bench_runs o ON o.run = n.run AND o.path = n.path AND o.depth = 60 AND o.reader = 'oldest'
JOIN bench_runs n1 ON n1.run = n.run AND n1.path = n.path AND n1.depth = 1 AND n1.reader = 'newest'
JOIN bench_runs o1 ON o1.run = n.run AND o1.path = n.path AND o1.depth = 1 AND o1.reader = 'oldest'
WHERE n.depth = 60 AND n.reader = 'newest';

CREATE OR REPLACE FUNCTION pg_temp.iqr(m float8, q1 float8, q3 float8) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
	SELECT to_char(m, 'FM990.00') || ' [' || to_char(q1, 'FM990.00') || '..' || to_char(q3, 'FM990.00') || ']'
$$;

\echo
\echo '== Table 2. Ratios within each run (both numbers from the same run): median [Q1..Q3] over runs'
SELECT path,
       pg_temp.iqr(percentile_cont(0.5) WITHIN GROUP (ORDER BY old_new_1),
                   percentile_cont(0.25) WITHIN GROUP (ORDER BY old_new_1),
                   percentile_cont(0.75) WITHIN GROUP (ORDER BY old_new_1)) AS "oldest/newest d1",
       pg_temp.iqr(percentile_cont(0.5) WITHIN GROUP (ORDER BY old_new_60),
                   percentile_cont(0.25) WITHIN GROUP (ORDER BY old_new_60),
                   percentile_cont(0.75) WITHIN GROUP (ORDER BY old_new_60)) AS "oldest/newest d60",
       pg_temp.iqr(percentile_cont(0.5) WITHIN GROUP (ORDER BY d60_d1_newest),
                   percentile_cont(0.25) WITHIN GROUP (ORDER BY d60_d1_newest),
                   percentile_cont(0.75) WITHIN GROUP (ORDER BY d60_d1_newest)) AS "d60/d1 newest",
       pg_temp.iqr(percentile_cont(0.5) WITHIN GROUP (ORDER BY d60_d1_oldest),
                   percentile_cont(0.25) WITHIN GROUP (ORDER BY d60_d1_oldest),
                   percentile_cont(0.75) WITHIN GROUP (ORDER BY d60_d1_oldest)) AS "d60/d1 oldest"
FROM run_ratio JOIN path_order USING (path)
GROUP BY path, o ORDER BY o;

\echo
\echo '== Table 3. Paired ABBA runs (minidb_bench_ab): B/A per pair, median [Q1..Q3], verdict'
SELECT b || ' vs ' || a AS "B vs A", depth, reader,
       round(a_ns::numeric) AS "A ns", round(b_ns::numeric) AS "B ns",
       pg_temp.iqr(ratio, ratio_q1, ratio_q3) AS "B/A [IQR]", verdict,
       (SELECT count(*) FROM bench_ab p WHERE p.a = s.a AND p.b = s.b AND p.depth = s.depth
           AND p.reader = s.reader AND p.pair IS NOT NULL) AS pairs
FROM bench_ab s
WHERE pair IS NULL
ORDER BY CASE a || '/' || b WHEN 'copy_eager/copy_lazy' THEN 1 WHEN 'copy_lazy/view_lazy' THEN 2
         WHEN 'copy_eager/view_lazy' THEN 3 ELSE 4 END, depth DESC, reader;

\echo
\echo '== Table 4. Copy versus allocate (minidb_bench_copy_vs_alloc, median of 10 ABBA rounds)'
SELECT operation, bytes, alloc_bytes, iterations, round(ns_per_op::numeric, 1) AS "ns/op",
       round(vs_copy::numeric, 1) AS "x copy"
FROM bench_copy;

\echo
\echo '== Table 5. Targets'
WITH ab AS (SELECT * FROM bench_ab WHERE pair IS NULL),
t(target, measured, met) AS (
	SELECT 'view_lazy newest: depth 60 <= 1.2x depth 1',
	       (SELECT pg_temp.iqr(percentile_cont(0.5) WITHIN GROUP (ORDER BY d60_d1_newest),
	                           percentile_cont(0.25) WITHIN GROUP (ORDER BY d60_d1_newest),
	                           percentile_cont(0.75) WITHIN GROUP (ORDER BY d60_d1_newest))
	        FROM run_ratio WHERE path = 'view_lazy'),
	       (SELECT percentile_cont(0.75) WITHIN GROUP (ORDER BY d60_d1_newest) <= 1.2
	        FROM run_ratio WHERE path = 'view_lazy')
	UNION ALL
	SELECT 'view_lazy: 0 B/op and 0 allocs/op after warm-up (every run, depth, reader)',
	       (SELECT max(bytes_per_op) || ' B/op, ' || max(allocs_per_op) || ' allocs/op at most'
	        FROM (SELECT * FROM bench_runs UNION ALL SELECT * FROM bench_curve) x WHERE path = 'view_lazy'),
	       (SELECT max(bytes_per_op) = 0 AND max(allocs_per_op) = 0
	        FROM (SELECT * FROM bench_runs UNION ALL SELECT * FROM bench_curve) x WHERE path = 'view_lazy')
	UNION ALL
	SELECT 'view_lazy / copy_eager at depth 60, ' || reader || ' <= 0.2',
	       pg_temp.iqr(ratio, ratio_q1, ratio_q3), ratio_q3 <= 0.2
	FROM ab WHERE a = 'copy_eager' AND b = 'view_lazy' AND depth = 60
	UNION ALL
	SELECT 'minidb (view_lazy) / heap, newest, depth 60 <= 0.2',
	       pg_temp.iqr(ratio, ratio_q1, ratio_q3), ratio_q3 <= 0.2
	FROM ab WHERE a = 'heap' AND b = 'view_lazy' AND depth = 60 AND reader = 'newest'
	UNION ALL
	SELECT 'minidb (view_lazy) / heap, newest, depth 1 <= 1.2',
	       pg_temp.iqr(ratio, ratio_q1, ratio_q3), ratio_q3 <= 1.2
	FROM ab WHERE a = 'heap' AND b = 'view_lazy' AND depth = 1 AND reader = 'newest'
	UNION ALL
	SELECT 'minidb (view_lazy) / heap, oldest, depth ' || depth || ' (no target; reported)',
	       pg_temp.iqr(ratio, ratio_q1, ratio_q3), NULL
	FROM ab WHERE a = 'heap' AND b = 'view_lazy' AND reader = 'oldest'
)
SELECT target, measured, CASE met WHEN true THEN 'met' WHEN false THEN 'MISSED' ELSE '-' END AS verdict
FROM t;
