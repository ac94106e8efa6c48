#!/bin/bash
# bench/scan.sh: the scan suite (README, "The scan benchmark"), run against
# a server that is already up (PGHOST, PGPORT, PGUSER set; run-bench.sh
# does all that) in database $BENCH_DB, which has minidb_am and dblink.
#
#   1. minidb_bench_scan once per data set ($BENCH_SCAN_DATA: narrow rows
#      and pgbench_accounts rows), every kind, $BENCH_SCAN_PAIRS ABBA pairs
#      over $BENCH_SCAN_ROWS rows; rows kept in table bench_scan;
#   2. bench/scan_report.sql prints the table (also $OUT/scan_report.txt);
#   3. $OUT/scan.bench.txt: benchstat-compatible lines, one per pair, table
#      AM and kind (ns per row read);
#   4. $OUT/scan.png: minidb/heap per kind, median and IQR, with the
#      targets (bench/scan_plot.gp).
#
# Knobs: BENCH_QUICK=1 (20000 rows, 4 pairs: seconds); BENCH_SCAN_ROWS
# (1000000: pgbench scale 10), BENCH_SCAN_PAIRS (10), BENCH_SCAN_DATA
# ("narrow pgbench"), BENCH_SCAN_KINDS (every kind, e.g.
# "seq_count,seq_filter"), BENCH_OUT (bench/out).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BENCH_DB=${BENCH_DB:-minidb_bench}
OUT=${BENCH_OUT:-$REPO/bench/out}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_SCAN_ROWS:=20000}" "${BENCH_SCAN_PAIRS:=4}"
else
    : "${BENCH_SCAN_ROWS:=1000000}" "${BENCH_SCAN_PAIRS:=10}"
fi
: "${BENCH_SCAN_DATA:=narrow pgbench}"
: "${BENCH_SCAN_KINDS:=seq_count,seq_filter,index_range,bitmap,tid_range,analyze}"

die() { echo "scan: $*" >&2; exit 1; }
psql_bench() { psql -X -v ON_ERROR_STOP=1 -d "$BENCH_DB" "$@"; }

mkdir -p "$OUT" || die "cannot create $OUT"
start=$(date +%s)
echo "scan: $BENCH_SCAN_ROWS rows per data set ($BENCH_SCAN_DATA), $BENCH_SCAN_PAIRS ABBA pairs per kind${BENCH_QUICK:+ (BENCH_QUICK=$BENCH_QUICK)}"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "scan: load before: $load_before"

psql_bench -q -c "SET client_min_messages = warning" -c "DROP TABLE IF EXISTS bench_scan" \
    -c "CREATE TABLE bench_scan AS SELECT * FROM minidb_bench_scan() WITH NO DATA" ||
    die "cannot create table bench_scan"
for data in $BENCH_SCAN_DATA; do
    psql_bench -q -v rows="$BENCH_SCAN_ROWS" -v pairs="$BENCH_SCAN_PAIRS" \
        -v data="$data" -v kinds="{$BENCH_SCAN_KINDS}" <<'SQL' ||
INSERT INTO bench_scan
SELECT * FROM minidb_bench_scan(:'kinds', :'rows', :'pairs', :'data');
SQL
        die "minidb_bench_scan failed for data set $data"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

psql_bench -q -f "$HERE/scan_report.sql" | tee "$OUT/scan_report.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || die "the report failed"

{
    echo "goos: linux"
    echo "goarch: $(uname -m)"
    echo "pkg: minidb_am"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') ($(nproc) CPUs)"
    psql_bench -tA -c "
        SELECT format('BenchmarkScan/am=%s/kind=%s/data=%s/rows=%s %s %s ns/op', am, kind, data,
                      table_rows, rows_read, round((ms * 1e6 / rows_read)::numeric, 1))
        FROM bench_scan, LATERAL (VALUES ('heap', heap_ms), ('minidb', minidb_ms)) AS s(am, ms)
        WHERE pair IS NOT NULL ORDER BY data, kind, am, pair"
} >"$OUT/scan.bench.txt" || die "cannot write the benchstat file"

# the plot: one row per data set and kind: label, median, Q1, Q3, target
psql_bench -tA -F ' ' -c "
    SELECT kind || '/' || data, ratio, ratio_q1, ratio_q3,
           CASE WHEN kind LIKE 'seq%' THEN 1.1 WHEN kind = 'tid_range' THEN 'NaN' ELSE 1.2 END
    FROM bench_scan WHERE pair IS NULL
    ORDER BY data DESC, array_position('{seq_count,seq_filter,index_range,bitmap,tid_range,analyze}'::text[], kind)" \
    >"$OUT/scan.dat" || die "cannot write the plot data"
subtitle="$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $BENCH_SCAN_ROWS rows, $BENCH_SCAN_PAIRS pairs, load $load_before .. $load_after, $(date -u +%F)"
if command -v gnuplot >/dev/null; then
    gnuplot -e "datafile='$OUT/scan.dat'; outfile='$OUT/scan.png'; subtitle='$subtitle'" \
        "$HERE/scan_plot.gp" || die "gnuplot failed"
else
    echo "scan: gnuplot is missing; no plot (scripts/deps.sh installs gnuplot-nox)" >&2
fi

echo
echo "scan: load after: $load_after; $(( $(date +%s) - start )) s"
echo "scan: wrote $OUT/scan_report.txt, $OUT/scan.bench.txt, $OUT/scan.png"
