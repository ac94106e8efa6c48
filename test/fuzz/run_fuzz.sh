#!/bin/bash
# Run the libFuzzer differential harness for chain.c.
#
#   run_fuzz.sh fuzz    BINARY SECONDS   bounded run from the whole seed corpus;
#                                        passes when nothing crashed
#   run_fuzz.sh planted BINARY SECONDS   BINARY has the planted early exit;
#                                        starts from the valid seeds only and
#                                        passes when the harness reports
#                                        MINIDB-DIFF-MISMATCH within SECONDS
#
# New corpus entries and crash artifacts go to test/fuzz/work/ (gitignored),
# never into the committed seeds.  FUZZ_JOBS is not used: one process.
set -u
mode=$1 bin=$2 seconds=$3
here=$(cd "$(dirname "$0")" && pwd)
work=$here/work/$mode
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts"
log=$work/fuzz.log
common=(-max_len=8192 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/artifacts/")

case $mode in
fuzz)
    echo "fuzz: $bin for ${seconds}s from test/fuzz/seeds (log: $log)"
    "$bin" "${common[@]}" -max_total_time="$seconds" \
        "$work/corpus" "$here/seeds/valid" "$here/seeds/damaged" >"$log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
    if [ $rc -ne 0 ]; then
        echo "fuzz: FAILED (exit $rc); last lines of the log:"
        grep -m1 -A3 'MINIDB-DIFF-MISMATCH\|ERROR: AddressSanitizer\|runtime error\|ERROR: libFuzzer' "$log"
        tail -20 "$log"
        ls "$work/artifacts"
        exit 1
    fi
    echo "fuzz: ok, ${execs:-?} inputs in ${seconds}s, ${cov:-cov: ?}, no crash, no mismatch"
    ;;
planted)
    echo "plantedbug: $bin (fast walker skips the tail after a hit), bound ${seconds}s"
    start=$(date +%s.%N)
    "$bin" "${common[@]}" -max_total_time="$seconds" -seed=1 \
        "$work/corpus" "$here/seeds/valid" >"$log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }')
    line=$(grep -m1 'MINIDB-DIFF-MISMATCH' "$log")
    if [ -n "$line" ]; then
        echo "plantedbug: ok, caught in ${wall}s wall: ${line}"
        exit 0
    fi
    if [ $rc -ne 0 ]; then
        echo "plantedbug: FAILED: the fuzzer stopped (exit $rc) without the differential mismatch:"
        tail -20 "$log"
        exit 1
    fi
    echo "plantedbug: FAILED: planted bug not caught within ${seconds}s"
    exit 1
    ;;
*)
    echo "usage: $0 fuzz|planted BINARY SECONDS" >&2
    exit 2
    ;;
esac
