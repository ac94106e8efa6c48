#!/bin/bash
# bench/bloat.sh: the bloat benchmark, heap against minidb (a benchmark,
# not a test).  Runs against a server that is already up (PGHOST, PGPORT,
# PGUSER set, e.g. eval "$(scripts/cluster.sh env)"); minidb_am must be
# installed (make install).
#
# For each workload (TPC-B-like: pgbench's built-in tpcb-like on its four
# tables; and "update1": a single-table non-key update of
# pgbench_accounts.abalance) and each client count, one run on heap and
# one on minidb, alternately (ABBA order: heap first for the 1st, 3rd, ...
# client count, minidb first for the others).  Every run:
#
#   1. pgbench -i -s $SCALE in database bloat_<am>, its tables created
#      with default_table_access_method = <am> (PG15's pgbench has no
#      --table-access-method), then VACUUM ANALYZE and CHECKPOINT; sizes;
#   2. a REPEATABLE READ reader opens a snapshot in the same database (the
#      removal horizon is per database) and holds it for the whole run;
#   3. pgbench -T $SECONDS -c N with a per-transaction log (-l): TPS,
#      latency p50/p99 from the log, WAL bytes per transaction from
#      pg_current_wal_lsn() before and after / transactions;
#   4. sizes again with the reader still holding (tables = pg_table_size,
#      i.e. heap + FSM + VM (+ TOAST); indexes = pg_indexes_size; summed
#      over the four tables), and for minidb the chain depth of
#      pgbench_accounts (minidb_stats);
#   5. the reader ends (pg_cancel_backend), VACUUM of the four tables,
#      sizes once more.
#
# Output: $OUT/results.tsv (one line per run), $OUT/summary.md (the
# tables for the README), pgbench outputs and logs in $OUT/runs/.
#
# Knobs: BLOAT_SCALE (10), BLOAT_SECONDS (30), BLOAT_CLIENTS ("1 2 4 8"),
# BLOAT_WORKLOADS ("tpcb update1"), BLOAT_OUT (bench/out/bloat),
# BLOAT_KEEP_LOGS=1 keeps pgbench's per-transaction logs.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SCALE=${BLOAT_SCALE:-10}
SECONDS_PER_RUN=${BLOAT_SECONDS:-30}
CLIENTS=${BLOAT_CLIENTS:-1 2 4 8}
WORKLOADS=${BLOAT_WORKLOADS:-tpcb update1}
OUT=${BLOAT_OUT:-$REPO/bench/out/bloat}
RUNS=$OUT/runs

die() { echo "bloat: $*" >&2; exit 1; }
q() {    # q DB SQL: one value
    psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

command -v pgbench >/dev/null || die "pgbench not found"
q postgres "SELECT 1" >/dev/null || die "no server (set PGHOST/PGPORT/PGUSER)"
mkdir -p "$RUNS" || die "cannot create $RUNS"

for am in heap minidb; do
    if [ "$(q postgres "SELECT count(*) FROM pg_database WHERE datname = 'bloat_$am'")" = 0 ]; then
        q postgres "CREATE DATABASE bloat_$am" >/dev/null || die "cannot create bloat_$am"
    fi
    q "bloat_$am" "CREATE EXTENSION IF NOT EXISTS minidb_am" >/dev/null ||
        die "cannot create extension minidb_am in bloat_$am"
done

cat >"$OUT/update1.sql" <<'EOF'
\set aid random(1, 100000 * :scale)
\set delta random(-5000, 5000)
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
EOF

SIZES_SQL="SELECT coalesce(sum(pg_table_size(c.oid)), 0) || ' ' || coalesce(sum(pg_indexes_size(c.oid)), 0)
             FROM pg_class c WHERE c.relname IN ('pgbench_accounts', 'pgbench_branches',
                                                  'pgbench_tellers', 'pgbench_history')
              AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace"

# percentile (0..1) of the latency column (us) of pgbench -l logs, in ms
latency_pct() {
    local files=$1 p=$2
    # shellcheck disable=SC2086
    cat $files | awk '{print $3}' | sort -n | awk -v p="$p" '
        { v[NR] = $1 }
        END { if (NR == 0) { print "NaN"; exit }
              i = int(p * NR + 0.999999); if (i < 1) i = 1; if (i > NR) i = NR;
              printf "%.3f\n", v[i] / 1000 }'
}

start_reader() {    # start_reader DB
    local db=$1
    ( psql -X -q -d "$db" <<'EOF'
SET application_name = 'bloat_reader';
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM pgbench_branches;
SELECT pg_sleep(86400);
COMMIT;
EOF
    ) >"$RUNS/reader.log" 2>&1 &
    READER_SHELL=$!
    for _ in $(seq 1 100); do
        [ "$(q "$db" "SELECT count(*) FROM pg_stat_activity
                      WHERE application_name = 'bloat_reader' AND backend_xmin IS NOT NULL
                        AND query LIKE '%pg_sleep%'")" = 1 ] && return 0
        sleep 0.1
    done
    die "the reader did not start"
}

stop_reader() {    # stop_reader DB
    q "$1" "SELECT pg_cancel_backend(pid) FROM pg_stat_activity
            WHERE application_name = 'bloat_reader'" >/dev/null
    wait "$READER_SHELL" 2>/dev/null
}

run_one() {    # run_one AM WORKLOAD CLIENTS
    local am=$1 wl=$2 c=$3 db=bloat_$1 tag="$2.c$3.$1"
    local threads=$(( c < 2 ? c : 2 ))
    local script_args
    if [ "$wl" = tpcb ]; then script_args=(-b tpcb-like); else script_args=(-f "$OUT/update1.sql"); fi

    PGOPTIONS="-c default_table_access_method=$am" \
        pgbench -i -s "$SCALE" -q -d "$db" >"$RUNS/$tag.init.txt" 2>&1 ||
        die "pgbench -i failed for $tag (see $RUNS/$tag.init.txt)"
    [ "$(q "$db" "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
                  WHERE c.relname = 'pgbench_accounts'")" = "$am" ] ||
        die "pgbench_accounts is not a $am table"
    q "$db" "VACUUM ANALYZE" >/dev/null
    q "$db" "CHECKPOINT" >/dev/null
    read -r t0 i0 <<<"$(q "$db" "$SIZES_SQL")"

    start_reader "$db"
    local lsn0; lsn0=$(q "$db" "SELECT pg_current_wal_lsn()")
    rm -f "$RUNS/log.$tag".*
    pgbench -n -d "$db" -c "$c" -j "$threads" -T "$SECONDS_PER_RUN" -l \
        --log-prefix="$RUNS/log.$tag" "${script_args[@]}" >"$RUNS/$tag.pgbench.txt" 2>&1 ||
        die "pgbench failed for $tag (see $RUNS/$tag.pgbench.txt)"
    local lsn1; lsn1=$(q "$db" "SELECT pg_current_wal_lsn()")
    local wal; wal=$(q "$db" "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint")
    read -r t1 i1 <<<"$(q "$db" "$SIZES_SQL")"
    local depth="-"
    if [ "$am" = minidb ]; then
        depth=$(q "$db" "SELECT depth_max || '/' || depth_p99 FROM minidb_stats('pgbench_accounts')")
    fi
    stop_reader "$db"
    q "$db" "VACUUM pgbench_accounts, pgbench_branches, pgbench_tellers, pgbench_history" >/dev/null
    read -r t2 i2 <<<"$(q "$db" "$SIZES_SQL")"

    local tps txns p50 p99
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$RUNS/$tag.pgbench.txt")
    txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$RUNS/$tag.pgbench.txt")
    p50=$(latency_pct "$RUNS/log.$tag.*" 0.50)
    p99=$(latency_pct "$RUNS/log.$tag.*" 0.99)
    [ "${BLOAT_KEEP_LOGS:-0}" = 1 ] || rm -f "$RUNS/log.$tag".*
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' \
        "$wl" "$c" "$am" "$tps" "$p50" "$p99" "$txns" "$wal" \
        "$t0" "$i0" "$t1" "$i1" "$t2" "$i2" "$depth" >>"$OUT/results.tsv"
    printf 'bloat: %-7s c=%-2s %-6s tps=%-9s p50=%sms p99=%sms total %s -> %s MB (after VACUUM %s MB) WAL/txn=%s\n' \
        "$wl" "$c" "$am" "$tps" "$p50" "$p99" \
        "$(( (t0 + i0) / 1048576 ))" "$(( (t1 + i1) / 1048576 ))" "$(( (t2 + i2) / 1048576 ))" \
        "$(( txns > 0 ? wal / txns : 0 ))"
}

started=$(date +%s)
echo "bloat: scale $SCALE, $SECONDS_PER_RUN s per run, clients: $CLIENTS; workloads: $WORKLOADS"
echo "bloat: machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bloat: server: $(q postgres "SELECT version()" | cut -d, -f1); shared_buffers $(q postgres "SHOW shared_buffers"), synchronous_commit $(q postgres "SHOW synchronous_commit"), full_page_writes $(q postgres "SHOW full_page_writes"), fsync $(q postgres "SHOW fsync")"
printf 'workload\tclients\tam\ttps\tp50_ms\tp99_ms\ttxns\twal_bytes\ttable_before\tindex_before\ttable_held\tindex_held\ttable_vacuumed\tindex_vacuumed\tdepth_max_p99\n' >"$OUT/results.tsv"

for wl in $WORKLOADS; do
    n=0
    for c in $CLIENTS; do
        if [ $((n % 2)) = 0 ]; then order="heap minidb"; else order="minidb heap"; fi
        for am in $order; do
            run_one "$am" "$wl" "$c"
        done
        n=$((n + 1))
    done
done

# ---- the summary tables ----
awk -F'\t' '
function mb(x) { return sprintf("%.1f", x / 1048576) }
NR == 1 { next }
{
    key = $1 SUBSEP $2
    if (!(key in seen)) { order[++n] = key; seen[key] = 1 }
    tps[key, $3] = $4; p50[key, $3] = $5; p99[key, $3] = $6
    walx[key, $3] = ($7 > 0 ? $8 / $7 : 0)
    tb[key, $3] = $9; ib[key, $3] = $10; th[key, $3] = $11; ih[key, $3] = $12
    tv[key, $3] = $13; iv[key, $3] = $14; depth[key, $3] = $15
}
END {
    print "| workload | clients | AM | TPS | p50 ms | p99 ms | tables MB before -> held | indexes MB before -> held | total growth MB | WAL B/txn | total MB after reader ends + VACUUM | chain depth max/p99 |"
    print "|---|---:|---|---:|---:|---:|---|---|---:|---:|---:|---|"
    for (k = 1; k <= n; k++) {
        split(order[k], kc, SUBSEP)
        for (a = 1; a <= 2; a++) {
            am = (a == 1 ? "heap" : "minidb"); key = order[k]
            if (!((key, am) in tps)) continue
            printf "| %s | %s | %s | %.0f | %s | %s | %s -> %s | %s -> %s | %s | %.0f | %s | %s |\n",
                kc[1], kc[2], am, tps[key, am], p50[key, am], p99[key, am],
                mb(tb[key, am]), mb(th[key, am]), mb(ib[key, am]), mb(ih[key, am]),
                mb(th[key, am] + ih[key, am] - tb[key, am] - ib[key, am]),
                walx[key, am], mb(tv[key, am] + iv[key, am]), depth[key, am]
        }
    }
    print ""
    print "| workload | clients | TPS minidb/heap | total growth minidb/heap | index growth minidb/heap | WAL/txn minidb/heap |"
    print "|---|---:|---:|---:|---:|---:|"
    for (k = 1; k <= n; k++) {
        split(order[k], kc, SUBSEP); key = order[k]
        if (!((key, "heap") in tps) || !((key, "minidb") in tps)) continue
        gh = th[key, "heap"] + ih[key, "heap"] - tb[key, "heap"] - ib[key, "heap"]
        gm = th[key, "minidb"] + ih[key, "minidb"] - tb[key, "minidb"] - ib[key, "minidb"]
        xh = ih[key, "heap"] - ib[key, "heap"]; xm = ih[key, "minidb"] - ib[key, "minidb"]
        printf "| %s | %s | %.2f | %s | %s | %.2f |\n", kc[1], kc[2],
            tps[key, "minidb"] / tps[key, "heap"],
            (gh > 0 ? sprintf("%.2f", gm / gh) : "n/a"),
            (xh > 0 ? sprintf("%.2f", xm / xh) : (xm <= 0 ? "0 vs 0" : "n/a")),
            (walx[key, "heap"] > 0 ? walx[key, "minidb"] / walx[key, "heap"] : 0)
    }
}' "$OUT/results.tsv" >"$OUT/summary.md"

echo
cat "$OUT/summary.md"
echo
echo "bloat: done in $(( $(date +%s) - started )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT"
