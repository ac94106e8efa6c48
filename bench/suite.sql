-- bench/suite.sql: the chain-depth suite, run by bench/chain_depth.sh in
-- ONE session of a long-running server.  psql variables (set by the
-- runner): reps, iters, curve_iters, pairs, ab_iters, copy_iters.
-- Results go to tables bench_* in this database; bench/report.sql reads
-- them.  Every number comes from the SQL functions of bench.c.
\set ON_ERROR_STOP 1
\pset pager off
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
DROP TABLE IF EXISTS bench_runs, bench_curve, bench_ab, bench_copy;
RESET client_min_messages;

CREATE TABLE bench_runs (run int, table_am text, depth int, reader text,
    path text, iterations int, ns_per_op float8, bytes_per_op float8,
    allocs_per_op float8);
CREATE TABLE bench_curve (LIKE bench_runs);
CREATE TABLE bench_ab (a text, b text, depth int, reader text, pair int,
    a_ns float8, b_ns float8, ratio float8, ratio_q1 float8,
    ratio_q3 float8, verdict text);
CREATE TABLE bench_copy (operation text, bytes int, alloc_bytes int,
    iterations int, ns_per_op float8, vs_copy float8);

-- 1. depth 1 and 60, both readers, three paths and heap: :reps runs, each
--    a fresh pair of chains (so a run's ratios are paired within the run)
\echo == chain depth 1 and 60, :reps runs of :iters fetches per cell
SELECT format($q$INSERT INTO bench_runs SELECT %s, * FROM minidb_bench_chain_depth('{1,60}', %s)$q$,
              r, :iters)
FROM generate_series(1, :reps) r \gexec

-- 2. the curve for the plot
\echo == depth curve 1..120, :curve_iters fetches per point
INSERT INTO bench_curve
SELECT 1, * FROM minidb_bench_chain_depth('{1,2,4,8,16,32,60,120}', :curve_iters);

-- 3. paired ABBA comparisons: each fix against "before", minidb against heap
\echo == paired ABBA comparisons, :pairs pairs of :ab_iters fetches
SELECT format($q$INSERT INTO bench_ab SELECT %L, %L, %s, %L, * FROM minidb_bench_ab(%L, %L, %s, %L, %s, %s)$q$,
              a, b, depth, reader, a, b, depth, reader, :pairs, :ab_iters)
FROM (VALUES ('copy_eager', 'copy_lazy'), ('copy_eager', 'view_lazy'),
             ('copy_lazy', 'view_lazy'), ('heap', 'view_lazy')) AS c(a, b),
     (VALUES (1), (60)) AS d(depth),
     (VALUES ('newest'), ('oldest')) AS r(reader)
ORDER BY a, b, depth, reader \gexec

-- 4. copy versus allocate, the profile's merged cost pulled apart
\echo == copy 897 bytes versus allocate 1 kB and copy, :copy_iters each
INSERT INTO bench_copy SELECT * FROM minidb_bench_copy_vs_alloc(897, :copy_iters);
