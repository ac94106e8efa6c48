-- bench/scan_report.sql: the scan table run-bench.sh prints, from
-- bench_scan (bench/scan.sh): one line per data set and kind, the summary
-- row of minidb_bench_scan (medians over the ABBA pairs; IQR = first..third
-- quartile of the per-pair ratio minidb/heap).
\set ON_ERROR_STOP 1
\pset pager off
\pset footer off

\echo
\echo '== Table 5. Scans of many rows, minidb beside heap in the same call (minidb_bench_scan),'
\echo '   ABBA pairs: median ms per run, ns per row read, minidb/heap median [Q1..Q3], target;'
\echo '   bytes and allocations per returned row after warm-up (minidb / heap)'
SELECT s.data, s.kind, s.table_rows AS "rows", s.rows_read AS "read",
       round(s.heap_ms::numeric, 2) AS "heap ms", round(s.minidb_ms::numeric, 2) AS "minidb ms",
       round((s.heap_ms * 1e6 / s.rows_read)::numeric) AS "heap ns/row",
       round((s.minidb_ms * 1e6 / s.rows_read)::numeric) AS "minidb ns/row",
       format('%s [%s..%s]', round(s.ratio::numeric, 2), round(s.ratio_q1::numeric, 2),
              round(s.ratio_q3::numeric, 2)) AS "minidb/heap",
       coalesce('<= ' || t.target, '-') AS target,
       CASE WHEN t.target IS NULL THEN '-'
            WHEN s.ratio <= t.target THEN 'met' ELSE 'missed' END AS verdict,
       CASE WHEN s.minidb_bytes_per_row IS NULL THEN '-'
            ELSE format('%s / %s', s.minidb_bytes_per_row, s.heap_bytes_per_row) END AS "B/row",
       CASE WHEN s.minidb_allocs_per_row IS NULL THEN '-'
            ELSE format('%s / %s', s.minidb_allocs_per_row, s.heap_allocs_per_row) END AS "allocs/row",
       format('%s / %s', s.minidb_pages, s.heap_pages) AS pages
FROM bench_scan s
LEFT JOIN (VALUES ('seq_count', 1.1), ('seq_filter', 1.1), ('index_range', 1.2),
                  ('bitmap', 1.2), ('analyze', 1.2)) AS t(kind, target) USING (kind)
WHERE s.pair IS NULL
ORDER BY s.data DESC,
         array_position('{seq_count,seq_filter,index_range,bitmap,tid_range,analyze}'::text[], s.kind);
