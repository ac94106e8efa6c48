#!/bin/bash
# bench/versions.sh [--table] [VERSION...]   (default: 15 17 18)
#
# The chain-depth benchmark (./run-bench.sh) on each PostgreSQL version,
# one after the other on this machine, then its Table 1 side by side as
# markdown: the median ns/op of each cell (path, depth, reader) for every
# version, and the allocations per fetch (B/op, allocs/op after warm-up).
# For the README's section "The chain-depth benchmark"; rerun it after a
# change of the read path.
#
#   15  on the host: ./run-bench.sh against $PG_CONFIG (default pg_config;
#       the system PostgreSQL 15, or a private install)
#   17  in the Debian 13 chroot, 18 in the Debian forky chroot:
#       scripts/pgchroot.sh VERSION run -- ./run-bench.sh (made the first
#       time, reused afterwards; needs root)
#
# Each run's cluster is stopped afterwards.  Everything each run wrote
# (report.txt, chain_depth.bench.txt, the plot, the full output) is kept
# in $BENCH_VERSIONS_OUT/pgVERSION (default bench/out/versions, gitignored);
# the table is printed last and saved as table.md there.  --table prints
# the table again from the files of the last runs, running nothing.
#
# Environment: PG_CONFIG (15's), MINIDB_PORT_15, MINIDB_PORT_17,
# MINIDB_PORT_18 (each version's cluster port; defaults 5415, 5417, 5418:
# the chroots share the host's network), BENCH_VERSIONS_OUT, and what
# run-bench.sh and bench/chain_depth.sh read (BENCH_QUICK=1 for a smoke
# run, BENCH_REPS, BENCH_ITERS, ...).  The load average before and after
# each run is printed with the table: run it on an otherwise idle machine.
set -u
REPO=$(cd "$(dirname "$0")/.." && pwd)
cd "$REPO" || exit 1
TABLE_ONLY=0
if [ "${1:-}" = --table ]; then
    TABLE_ONLY=1
    shift
fi
VERSIONS=${*:-15 17 18}
OUT=${BENCH_VERSIONS_OUT:-$REPO/bench/out/versions}
mkdir -p "$OUT" || exit 1

die() { echo "bench/versions: $*" >&2; exit 1; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

declare -A LOAD_BEFORE LOAD_AFTER SECS SERVER WHEN
FAILED=()
for v in $VERSIONS; do
    dir=$OUT/pg$v
    if [ "$TABLE_ONLY" = 1 ]; then
        # what the last run noted
        [ -f "$dir/run.txt" ] && . "$dir/run.txt"
        continue
    fi
    rm -rf "$dir"
    mkdir -p "$dir"
    port_var=MINIDB_PORT_$v
    port=${!port_var:-54$v}
    echo "######################## chain-depth benchmark, PostgreSQL $v ########################"
    LOAD_BEFORE[$v]=$(load)
    start=$SECONDS
    case $v in
    15)
        MINIDB_PORT=$port BENCH_OUT=$dir bash -c './run-bench.sh; rc=$?; scripts/cluster.sh stop >/dev/null; exit $rc' \
            2>&1 | tee "$dir/output.txt"
        rc=${PIPESTATUS[0]}
        ;;
    17 | 18)
        # the chroot's copy writes bench/out inside the chroot; copied out
        MINIDB_PORT=$port scripts/pgchroot.sh "$v" run -- \
            bash -c './run-bench.sh; rc=$?; scripts/cluster.sh stop >/dev/null; exit $rc' \
            2>&1 | tee "$dir/output.txt"
        rc=${PIPESTATUS[0]}
        root=$(scripts/pgchroot.sh "$v" path)
        cp -r "$root/minidb_am/bench/out/." "$dir/" 2>/dev/null
        ;;
    *) die "PostgreSQL $v: not supported here (15 on the host, 17 and 18 in chroots)" ;;
    esac
    SECS[$v]=$((SECONDS - start))
    LOAD_AFTER[$v]=$(load)
    SERVER[$v]=$(sed -n 's/^server: *//p' "$dir/output.txt" | head -1 | cut -d' ' -f1-2)
    printf 'SECS[%s]=%q\nLOAD_BEFORE[%s]=%q\nLOAD_AFTER[%s]=%q\nSERVER[%s]=%q\nWHEN[%s]=%q\n' \
        "$v" "${SECS[$v]}" "$v" "${LOAD_BEFORE[$v]}" "$v" "${LOAD_AFTER[$v]}" \
        "$v" "${SERVER[$v]}" "$v" "$(date -u +%F)" >"$dir/run.txt"
    if [ "$rc" -ne 0 ] || [ ! -s "$dir/chain_depth.bench.txt" ]; then
        echo "bench/versions: PostgreSQL $v: run-bench.sh failed (exit $rc); see $dir/output.txt" >&2
        FAILED+=("$v")
    fi
done

# Median over the runs of each cell, per version: "am path depth reader" ->
# ns/op, and B/op, allocs/op
medians() {
    awk '/^BenchmarkChainDepth\// {
            split($1, f, "/"); key = ""
            for (i = 2; i <= 5; i++) { sub(/^[a-z]+=/, "", f[i]); key = key (i > 2 ? " " : "") f[i] }
            n[key]++; ns[key, n[key]] = $3; b[key] = $5; a[key] = $7
         }
         END {
            for (k in n) {
                m = n[k]
                for (i = 1; i <= m; i++) v[i] = ns[k, i]
                for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
                med = (m % 2) ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
                printf "%s\t%.0f\t%s\t%s\n", k, med, b[k], a[k]
            }
         }' "$1"
}

{
    echo "Machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(uname -sr)."
    echo "Code: $(git -C "$REPO" rev-parse --short HEAD 2>/dev/null)$(git -C "$REPO" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')."
    echo "Command: \`bench/versions.sh $VERSIONS\`$([ "${BENCH_QUICK:-0}" = 1 ] && echo ' (BENCH_QUICK=1)')."
    for v in $VERSIONS; do
        echo "PostgreSQL $v (${SERVER[$v]:-?}), ${WHEN[$v]:-$(date -u +%F)}: ${SECS[$v]:-?} s, load average ${LOAD_BEFORE[$v]:-?} before, ${LOAD_AFTER[$v]:-?} after."
    done
    echo
    printf '| path | depth | reader |'
    for v in $VERSIONS; do printf ' %s ns/op |' "$v"; done
    for v in $VERSIONS; do printf ' %s B/op, allocs/op |' "$v"; done
    echo
    printf '|---|---:|---|'
    for v in $VERSIONS; do printf -- '---:|'; done
    for v in $VERSIONS; do printf -- '---:|'; done
    echo
    declare -A NS BA
    for v in $VERSIONS; do
        [ -s "$OUT/pg$v/chain_depth.bench.txt" ] || continue
        while IFS=$'\t' read -r key ns b a; do
            NS["$v $key"]=$ns
            BA["$v $key"]="$b, $a"
        done < <(medians "$OUT/pg$v/chain_depth.bench.txt")
    done
    for depth in 1 60; do
        for reader in newest oldest; do
            for path in copy_eager copy_lazy view_lazy heap; do
                am=minidb
                [ "$path" = heap ] && am=heap
                key="$am $path $depth $reader"
                printf '| %s | %s | %s |' "$path" "$depth" "$reader"
                for v in $VERSIONS; do printf ' %s |' "${NS["$v $key"]:--}"; done
                for v in $VERSIONS; do printf ' %s |' "${BA["$v $key"]:--}"; done
                echo
            done
        done
    done
} >"$OUT/table.md"
echo
echo "==================== chain-depth, median ns/op by version ($OUT/table.md) ===================="
cat "$OUT/table.md"
[ ${#FAILED[@]} -eq 0 ] || die "failed on: ${FAILED[*]}"
