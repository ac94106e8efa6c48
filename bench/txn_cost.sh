#!/bin/bash
# bench/txn_cost.sh: CPU instructions per pgbench tpcb-like transaction,
# heap against minidb, counted by callgrind (a benchmark, not a test).
#
# An instruction count repeats exactly for the same binaries and input,
# whatever else the machine is doing, so one run per AM is enough and the
# result does not depend on the load.  What it leaves out is what TPS
# adds: waits (row locks, I/O, WAL), contention between backends, cache
# misses; bench/bloat.sh measures those.
#
# How: a throwaway cluster (scripts/cluster.sh in $OUT/cluster, the
# library preloaded), pgbench -i -s $TXN_COST_SCALE in one database per
# AM, VACUUM ANALYZE, CHECKPOINT, server stopped.  Then, for each AM and
# for two lengths ($TXN_COST_WARMUP and $TXN_COST_WARMUP + $TXN_COST_TXNS
# transactions), a copy of the data folder and one backend in single-user
# mode (postgres --single) under valgrind --tool=callgrind, reading
# pgbench's tpcb-like transactions with fixed random values (the same file
# for both AMs) from a file.  Instructions per transaction = the
# difference of the two counts / $TXN_COST_TXNS: start-up, the first
# transactions and shut-down cancel out.  synchronous_commit is on, so
# that each commit is flushed and the next reader may set hint bits (a
# single-user backend has no WAL writer to flush asynchronous commits).
#
# Output: $OUT/summary.txt (per AM instructions per transaction, and
# minidb/heap), $OUT/{heap,minidb}.top.txt (callgrind_annotate, inclusive,
# of the longer run).
#
# Knobs: TXN_COST_SCALE (10), TXN_COST_WARMUP (50), TXN_COST_TXNS (500),
# TXN_COST_OUT (bench/out/txn_cost), TXN_COST_PORT (5890), PG_CONFIG,
# TXN_COST_INIT (more pgbench -i options for both AMs, e.g.
# --foreign-keys).
# Needs valgrind and the extension installed (make install).  About two
# minutes on a 2-core machine at the defaults.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SCALE=${TXN_COST_SCALE:-10}
WARMUP=${TXN_COST_WARMUP:-50}
TXNS=${TXN_COST_TXNS:-500}
read -r -a INIT_OPTS <<<"${TXN_COST_INIT:-}"
OUT=${TXN_COST_OUT:-$REPO/bench/out/txn_cost}
PORT=${TXN_COST_PORT:-5890}
PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$($PG_CONFIG --bindir)

die() { echo "txn_cost: $*" >&2; exit 1; }
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

command -v valgrind >/dev/null || die "valgrind not found"
command -v callgrind_annotate >/dev/null || die "callgrind_annotate not found"
rm -rf "$OUT"
mkdir -p "$OUT" || die "cannot create $OUT"
[ "$(id -u)" -eq 0 ] && chown postgres: "$OUT"

# pgbench's tpcb-like script, its random values fixed (awk's srand(42))
txn_file() {    # txn_file N FILE
    awk -v n="$1" -v scale="$SCALE" 'BEGIN {
        srand(42);
        for (i = 0; i < n; i++) {
            a = int(rand() * 100000 * scale) + 1; t = int(rand() * 10 * scale) + 1;
            b = int(rand() * scale) + 1; d = int(rand() * 10001) - 5000;
            print "BEGIN;";
            printf "UPDATE pgbench_accounts SET abalance = abalance + %d WHERE aid = %d;\n", d, a;
            printf "SELECT abalance FROM pgbench_accounts WHERE aid = %d;\n", a;
            printf "UPDATE pgbench_tellers SET tbalance = tbalance + %d WHERE tid = %d;\n", d, t;
            printf "UPDATE pgbench_branches SET bbalance = bbalance + %d WHERE bid = %d;\n", d, b;
            printf "INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (%d, %d, %d, %d, CURRENT_TIMESTAMP);\n", t, b, a, d;
            print "END;";
        }
    }' >"$2"
}

export MINIDB_CLUSTER_DIR=$OUT/cluster MINIDB_PORT=$PORT
"$REPO/scripts/cluster.sh" start >/dev/null || die "the cluster did not start"
eval "$("$REPO/scripts/cluster.sh" env)"
for am in heap minidb; do
    psql -X -q -d postgres -c "CREATE DATABASE txn_$am" || die "createdb failed"
    psql -X -q -d "txn_$am" -c "CREATE EXTENSION minidb_am" || die "no minidb_am"
    PGOPTIONS="-c default_table_access_method=$am" \
        pgbench -i -q -s "$SCALE" "${INIT_OPTS[@]}" "txn_$am" >"$OUT/init.$am.txt" 2>&1 ||
        die "pgbench -i failed ($OUT/init.$am.txt)"
    psql -X -q -d "txn_$am" -c "VACUUM ANALYZE" -c "CHECKPOINT" || die "VACUUM failed"
done
"$REPO/scripts/cluster.sh" stop >/dev/null
DATA=$MINIDB_CLUSTER_DIR/data

txn_file "$WARMUP" "$OUT/txn.short.sql"
txn_file "$((WARMUP + TXNS))" "$OUT/txn.long.sql"
[ "$(id -u)" -eq 0 ] && chown -R postgres: "$OUT"

count() {    # count AM LENGTH: instructions of one single-user run
    local am=$1 len=$2 copy=$OUT/data.$1.$2 cg=$OUT/callgrind.$1.$2.out
    rm -rf "$copy"
    as_pg cp -a "$DATA" "$copy" || die "cannot copy the data folder"
    as_pg valgrind --tool=callgrind --callgrind-out-file="$cg" \
        "$BINDIR/postgres" --single -D "$copy" -c synchronous_commit=on \
        -c autovacuum=off "txn_$am" <"$OUT/txn.$len.sql" \
        >"$OUT/single.$am.$len.log" 2>&1 || die "the $am run failed ($OUT/single.$am.$len.log)"
    grep -q "ERROR" "$OUT/single.$am.$len.log" && die "errors in $OUT/single.$am.$len.log"
    rm -rf "$copy"
    sed -n 's/^summary: //p' "$cg"
}

declare -A PER
for am in heap minidb; do
    short=$(count "$am" short) || exit 1
    long=$(count "$am" long) || exit 1
    PER[$am]=$(( (long - short) / TXNS ))
    callgrind_annotate --inclusive=yes "$OUT/callgrind.$am.long.out" 2>/dev/null |
        head -120 >"$OUT/$am.top.txt"
done
{
    echo "pgbench tpcb-like, scale $SCALE, $TXNS transactions after $WARMUP, one single-user backend under callgrind ($($PG_CONFIG --version))"
    printf "instructions per transaction: heap %d, minidb %d, minidb/heap %s\n" \
        "${PER[heap]}" "${PER[minidb]}" \
        "$(awk -v a="${PER[minidb]}" -v b="${PER[heap]}" 'BEGIN { printf "%.3f", a / b }')"
} | tee "$OUT/summary.txt"
