-- bench/format_ab.sql: record format V1 against V2 (version directory) on
-- the production read path (view_lazy), as in README "Record format V2".
--   psql -X -d DB -f bench/format_ab.sql   (DB has dblink; minidb_am)
-- 1. paired ABBA runs, 20 pairs x 100000 fetches, B = V2, A = V1;
-- 2. depth 60 / depth 1 per format: 10 runs of minidb_bench_chain_depth,
--    alternating v1 v2 v2 v1 ..., ratio of the two cells of each run.
\set ON_ERROR_STOP 1
CREATE EXTENSION IF NOT EXISTS dblink;
\timing off
CREATE TEMP TABLE ab (depth int, reader text, pair int, a_ns float8, b_ns float8, ratio float8, q1 float8, q3 float8, verdict text);
INSERT INTO ab SELECT 1, 'newest', * FROM minidb_bench_ab('view_lazy','view_lazy',1,'newest',20,100000,'v1','v2');
INSERT INTO ab SELECT 60, 'newest', * FROM minidb_bench_ab('view_lazy','view_lazy',60,'newest',20,100000,'v1','v2');
INSERT INTO ab SELECT 1, 'oldest', * FROM minidb_bench_ab('view_lazy','view_lazy',1,'oldest',20,100000,'v1','v2');
INSERT INTO ab SELECT 60, 'oldest', * FROM minidb_bench_ab('view_lazy','view_lazy',60,'oldest',20,100000,'v1','v2');
SELECT depth, reader, round(a_ns::numeric,1) AS v1_ns, round(b_ns::numeric,1) AS v2_ns, round(ratio::numeric,3) AS v2_over_v1, round(q1::numeric,3) AS q1, round(q3::numeric,3) AS q3, verdict FROM ab WHERE pair IS NULL ORDER BY reader, depth;
-- depth curve per format: alternate v1 v2 v2 v1 ..., 6 runs each
CREATE TEMP TABLE cd (run int, fmt text, table_am text, depth int, reader text, path text, iterations int, ns float8, b float8, a float8);
DO $$
BEGIN
  FOR r IN 1..10 LOOP
    IF r % 2 = 1 THEN
      INSERT INTO cd SELECT r, 'v1', * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, 'v1');
      INSERT INTO cd SELECT r, 'v2', * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, 'v2');
    ELSE
      INSERT INTO cd SELECT r, 'v2', * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, 'v2');
      INSERT INTO cd SELECT r, 'v1', * FROM minidb_bench_chain_depth('{1,60}', 200000, '{view_lazy}', false, 'v1');
    END IF;
  END LOOP;
END $$;
SELECT fmt, reader, depth, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ns)::numeric,1) AS median_ns, max(b) AS bytes_op, max(a) AS allocs_op
FROM cd GROUP BY fmt, reader, depth ORDER BY reader, depth, fmt;
SELECT x.fmt, x.reader, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY x.ns / y.ns)::numeric,2) AS d60_over_d1,
       round(percentile_cont(0.25) WITHIN GROUP (ORDER BY x.ns / y.ns)::numeric,2) AS q1,
       round(percentile_cont(0.75) WITHIN GROUP (ORDER BY x.ns / y.ns)::numeric,2) AS q3
FROM cd x JOIN cd y ON x.run = y.run AND x.fmt = y.fmt AND x.reader = y.reader AND x.depth = 60 AND y.depth = 1
GROUP BY x.fmt, x.reader ORDER BY x.reader, x.fmt;
