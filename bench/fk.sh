#!/bin/bash
# bench/fk.sh: foreign keys under contention, heap against minidb (a
# benchmark, not a test).  Runs against a server that is already up
# (PGHOST, PGPORT, PGUSER set, e.g. eval "$(scripts/cluster.sh env)") with
# minidb_am installed.
#
# The workload (issue 10): a few hot parents whose non-key column is
# updated all the time, and children inserted against them.  Each
# transaction updates one random parent and inserts a child of another
# random parent, in that order: the crosswise pattern that deadlocks when
# a child's FOR KEY SHARE check on its parent waits for a non-key UPDATE
# (heap never waits there).  pgbench retries nothing; a deadlock or
# serialization failure ends the client's transaction and is counted.
#
# ABBA pairs: pair i runs heap then minidb for odd i, minidb then heap for
# even i, FK_SECONDS each, FK_CLIENTS clients, in databases fk_heap and
# fk_minidb recreated before every run.  Printed: one line per run (TPS,
# failed transactions, deadlocks in the server log of that run's window,
# and two integrity counts that must be 0: "lost", the committed parent
# increments minus the committed children -- every transaction commits one
# of each or neither -- and "dupes", parent ids seen more than once), then
# the per-pair ratio minidb/heap of TPS with its median and IQR.  The
# script exits 1 when an integrity count is not 0.
#
# Knobs: FK_SECONDS (60), FK_CLIENTS (4), FK_PAIRS (2), FK_PARENTS (10).
set -u
SECS=${FK_SECONDS:-60}
CLIENTS=${FK_CLIENTS:-4}
PAIRS=${FK_PAIRS:-2}
PARENTS=${FK_PARENTS:-10}
WORK=$(mktemp -d /tmp/minidb_fk.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

die() { echo "fk: $*" >&2; exit 1; }
q() { PGOPTIONS="-c client_min_messages=warning" psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

command -v pgbench >/dev/null || die "pgbench not found"
q postgres "SELECT 1" >/dev/null || die "no server (set PGHOST/PGPORT/PGUSER)"

cat >"$WORK/txn.sql" <<SQL
\set p1 random(1, $PARENTS)
\set p2 random(1, $PARENTS)
BEGIN;
UPDATE fk_parent SET hits = hits + 1 WHERE id = :p1;
INSERT INTO fk_child (pid) VALUES (:p2);
COMMIT;
SQL

setup() {    # setup AM
    q postgres "DROP DATABASE IF EXISTS fk_$1" >/dev/null
    q postgres "CREATE DATABASE fk_$1" >/dev/null
    q "fk_$1" "CREATE EXTENSION IF NOT EXISTS minidb_am;
        CREATE TABLE fk_parent (id int PRIMARY KEY, hits bigint NOT NULL DEFAULT 0) USING $1;
        INSERT INTO fk_parent (id) SELECT generate_series(1, $PARENTS);
        CREATE TABLE fk_child (id bigserial PRIMARY KEY, pid int NOT NULL REFERENCES fk_parent) USING $1;" \
        >/dev/null && q "fk_$1" "VACUUM ANALYZE fk_parent" >/dev/null || die "setup of $1 failed"
}

run() {    # run AM -> prints "AM TPS FAILED DEADLOCKS"
    local am=$1 out=$WORK/pgbench.$1.out before after
    setup "$am"
    before=$(q postgres "SELECT deadlocks FROM pg_stat_database WHERE datname = 'fk_$am'")
    pgbench -n -f "$WORK/txn.sql" -c "$CLIENTS" -j "$CLIENTS" -T "$SECS" \
        --failures-detailed "fk_$am" >"$out" 2>&1 || { cat "$out" >&2; die "pgbench failed on $am"; }
    grep -q '^tps = ' "$out" || { cat "$out" >&2; die "pgbench printed no TPS on $am"; }
    sleep 1    # let the statistics of the last transactions arrive
    after=$(q postgres "SELECT deadlocks FROM pg_stat_database WHERE datname = 'fk_$am'")
    check=$(q "fk_$am" "SELECT (SELECT sum(hits) FROM fk_parent) - (SELECT count(*) FROM fk_child),
                               (SELECT count(*) - count(DISTINCT id) FROM fk_parent)" | tr '|' ' ')
    printf '%s %s %s %s %s\n' "$am" \
        "$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$out")" \
        "$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")" \
        "$((after - before))" "$check"
}

echo "fk: $PAIRS ABBA pairs, $SECS s per run, $CLIENTS clients, $PARENTS parents"
printf '%-6s %-7s %10s %8s %10s %6s %6s\n' pair am tps failed deadlocks lost dupes
ratios=()
broken=0
for i in $(seq 1 "$PAIRS"); do
    if [ $((i % 2)) -eq 1 ]; then order="heap minidb"; else order="minidb heap"; fi
    declare -A tps=()
    for am in $order; do
        line=$(run "$am") || exit 1
        read -r a t f d lost dupes <<<"$line"
        tps[$a]=$t
        printf '%-6s %-7s %10s %8s %10s %6s %6s\n' "$i" "$a" "$t" "${f:-0}" "$d" "$lost" "$dupes"
        [ "$lost" = 0 ] && [ "$dupes" = 0 ] || broken=1
    done
    ratios+=("$(awk -v m="${tps[minidb]}" -v h="${tps[heap]}" 'BEGIN { print m / h }')")
    unset tps
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '
    function quant(p,   h, lo) { h = (NR - 1) * p + 1; lo = int(h);
        return (lo >= NR) ? r[NR] : r[lo] + (h - lo) * (r[lo + 1] - r[lo]) }
    { r[NR] = $1 }
    END { printf "TPS minidb/heap per pair: median %.2f, IQR [%.2f .. %.2f] over %d pairs\n",
          quant(0.5), quant(0.25), quant(0.75), NR }'
for am in heap minidb; do q postgres "DROP DATABASE IF EXISTS fk_$am" >/dev/null; done
[ "$broken" = 0 ] || { echo "fk: integrity check failed (lost or duplicated rows)" >&2; exit 1; }
