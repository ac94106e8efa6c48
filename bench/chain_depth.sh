#!/bin/bash
# bench/chain_depth.sh: the chain-depth suite, run against a server that is
# already up (PGHOST, PGPORT, PGUSER set; run-bench.sh does all that) in
# database $BENCH_DB, which has minidb_am installed.
#
#   1. bench/suite.sql in ONE session: minidb_bench_chain_depth at depth 1
#      and 60 ($BENCH_REPS runs), the depth curve 1..120, paired ABBA runs
#      (minidb_bench_ab) for each fix against "before" and minidb against
#      heap, and minidb_bench_copy_vs_alloc;
#   2. bench/report.sql prints the tables (also saved in $OUT/report.txt);
#   3. $OUT/chain_depth.bench.txt: benchstat-compatible lines, one per run
#      and cell; $OUT/curve.bench.txt the same for the curve;
#   4. $OUT/chain_depth.png: gnuplot of ns/op against depth (bench/plot.gp).
#
# Knobs (environment): BENCH_QUICK=1 for a smoke run of well under a
# minute; otherwise BENCH_REPS (5), BENCH_ITERS (200000), BENCH_CURVE_ITERS
# (50000), BENCH_PAIRS (10), BENCH_AB_ITERS (100000), BENCH_COPY_ITERS
# (1000000); BENCH_OUT (bench/out).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
BENCH_DB=${BENCH_DB:-minidb_bench}
OUT=${BENCH_OUT:-$REPO/bench/out}

if [ "${BENCH_QUICK:-0}" = 1 ]; then
    : "${BENCH_REPS:=3}" "${BENCH_ITERS:=20000}" "${BENCH_CURVE_ITERS:=5000}"
    : "${BENCH_PAIRS:=4}" "${BENCH_AB_ITERS:=10000}" "${BENCH_COPY_ITERS:=100000}"
else
    : "${BENCH_REPS:=5}" "${BENCH_ITERS:=200000}" "${BENCH_CURVE_ITERS:=50000}"
    : "${BENCH_PAIRS:=10}" "${BENCH_AB_ITERS:=100000}" "${BENCH_COPY_ITERS:=1000000}"
fi

die() { echo "chain_depth: $*" >&2; exit 1; }
psql_bench() { psql -X -v ON_ERROR_STOP=1 -d "$BENCH_DB" "$@"; }

mkdir -p "$OUT" || die "cannot create $OUT"
start=$(date +%s)
echo "chain_depth: $BENCH_REPS runs x $BENCH_ITERS fetches per cell; curve $BENCH_CURVE_ITERS;" \
     "ABBA $BENCH_PAIRS pairs x $BENCH_AB_ITERS; copy $BENCH_COPY_ITERS${BENCH_QUICK:+ (BENCH_QUICK=$BENCH_QUICK)}"
echo "chain_depth: load before: $(cut -d' ' -f1-3 /proc/loadavg)"

psql_bench -q -v reps="$BENCH_REPS" -v iters="$BENCH_ITERS" \
    -v curve_iters="$BENCH_CURVE_ITERS" -v pairs="$BENCH_PAIRS" \
    -v ab_iters="$BENCH_AB_ITERS" -v copy_iters="$BENCH_COPY_ITERS" \
    -f "$HERE/suite.sql" || die "the suite failed"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

psql_bench -q -f "$HERE/report.sql" | tee "$OUT/report.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || die "the report failed"

# benchstat-compatible files: a header, then one line per run of each cell
header() {
    echo "goos: linux"
    echo "goarch: $(uname -m)"
    echo "pkg: minidb_am"
    echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//') ($(nproc) CPUs)"
}
benchlines() {
    psql_bench -tA -F ' ' -c "
        SELECT format('BenchmarkChainDepth/am=%s/path=%s/depth=%s/reader=%s %s %s ns/op %s B/op %s allocs/op',
                      table_am, path, depth, reader, iterations,
                      round(ns_per_op::numeric, 1), round(bytes_per_op), round(allocs_per_op))
        FROM $1 ORDER BY table_am DESC, path, depth, reader, run"
}
{ header; benchlines bench_runs
  psql_bench -tA -c "
        SELECT format('BenchmarkCopyVsAlloc/op=%s/bytes=%s %s %s ns/op', operation, bytes,
                      iterations, round(ns_per_op::numeric, 1))
        FROM bench_copy"
} >"$OUT/chain_depth.bench.txt" || die "cannot write the benchstat file"
{ header; benchlines bench_curve; } >"$OUT/curve.bench.txt" || die "cannot write the curve file"

# the plot: one row per depth, ns/op of the eight series
psql_bench -tA -F ' ' -c "
    SELECT depth,
           max(ns_per_op) FILTER (WHERE path = 'copy_eager' AND reader = 'newest'),
           max(ns_per_op) FILTER (WHERE path = 'copy_lazy' AND reader = 'newest'),
           max(ns_per_op) FILTER (WHERE path = 'view_lazy' AND reader = 'newest'),
           max(ns_per_op) FILTER (WHERE path = 'heap' AND reader = 'newest'),
           max(ns_per_op) FILTER (WHERE path = 'copy_eager' AND reader = 'oldest'),
           max(ns_per_op) FILTER (WHERE path = 'copy_lazy' AND reader = 'oldest'),
           max(ns_per_op) FILTER (WHERE path = 'view_lazy' AND reader = 'oldest'),
           max(ns_per_op) FILTER (WHERE path = 'heap' AND reader = 'oldest')
    FROM bench_curve GROUP BY depth ORDER BY depth" >"$OUT/curve.dat" ||
    die "cannot write the curve data"
subtitle="$(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $BENCH_CURVE_ITERS fetches per point, $(date -u +%F)"
if command -v gnuplot >/dev/null; then
    gnuplot -e "datafile='$OUT/curve.dat'; outfile='$OUT/chain_depth.png'; subtitle='$subtitle'" \
        "$HERE/plot.gp" || die "gnuplot failed"
else
    echo "chain_depth: gnuplot is missing; no plot (scripts/deps.sh installs gnuplot-nox)" >&2
fi

echo
echo "chain_depth: load after: $load_after; $(( $(date +%s) - start )) s"
echo "chain_depth: wrote $OUT/report.txt, $OUT/chain_depth.bench.txt, $OUT/curve.bench.txt, $OUT/chain_depth.png"
