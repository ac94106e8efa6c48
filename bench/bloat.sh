#!/bin/bash
# bench/bloat.sh: space, in-place updates, TPS and WAL, heap against minidb
# (a benchmark, not a test).  Runs against a server that is already up
# (PGHOST, PGPORT, PGUSER set, e.g. eval "$(scripts/cluster.sh env)");
# minidb_am must be installed (make install).  Measurement rules: DESIGN.md
# (paired runs in ABBA order, median and IQR of the per-pair ratios, heap
# in the same run).
#
# 1. At rest: pgbench -i -s $BLOAT_REST_SCALE, VACUUM, total relation size
#    of the four tables (tables + FSM + VM + indexes); and 100 narrow rows
#    (k int PRIMARY KEY, v int, w text, an index on v): pages, then
#    UPDATE ... SET w = 'y' WHERE k <= 50: rows updated in place (HOT),
#    pages, index entries.
# 2. Cells: for each client count in $BLOAT_CLIENTS, without and with a
#    REPEATABLE READ reader holding its snapshot for the whole run,
#    $BLOAT_PAIRS pairs of runs, heap then minidb or minidb then heap
#    (alternating: ABBA).  A run: pgbench -i -s $BLOAT_SCALE, VACUUM ANALYZE,
#    CHECKPOINT; sizes; [reader]; pgbench tpcb-like -T $BLOAT_SECONDS -c N,
#    sampling the total size every $BLOAT_SAMPLE s; sizes, TPS, WAL bytes
#    per transaction, and n_tup_upd / n_tup_hot_upd of the four tables
#    (the in-place share; minidb counts an update in place as heap counts a
#    HOT one); the reader ends.  Each run's growth per table (total
#    relation size, indexes included) goes to $OUT/runs/TAG.tables.tsv.
# 3. Summary ($OUT/summary.md): at rest; per cell the median and IQR of the
#    per-pair ratios minidb/heap of TPS, of growth (total size after the
#    run minus before; also per transaction) and of WAL per transaction,
#    and each AM's median in-place share; $OUT/size_over_time.png: total
#    size against time for both AMs in the last cell's first pair
#    (gnuplot, bench/bloat_plot.gp).
#
# The issue's setting is 5 pairs of 5 minutes (BLOAT_SECONDS=300), about
# six hours for three client counts; the default runs 60 s.
#
# Knobs: BLOAT_SCALE (10), BLOAT_REST_SCALE (10), BLOAT_SECONDS (60),
# BLOAT_CLIENTS ("1 4 8"), BLOAT_READER ("none held"), BLOAT_PAIRS (5),
# BLOAT_SAMPLE (5), BLOAT_OUT (bench/out/bloat), BLOAT_MINIDB_FILLFACTOR
# (unset: pgbench's default, 100; an experiment's knob: pgbench -i -F for
# minidb's runs only, which leaves room on minidb's pages at the price of
# more pages at rest; heap's runs keep pgbench's default),
# BLOAT_FOREIGN_KEYS (unset; 1: pgbench -i --foreign-keys for both AMs, so
# that every table but pgbench_branches is a referencing one).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
SCALE=${BLOAT_SCALE:-10}
REST_SCALE=${BLOAT_REST_SCALE:-10}
SECONDS_PER_RUN=${BLOAT_SECONDS:-60}
CLIENTS=${BLOAT_CLIENTS:-1 4 8}
READERS=${BLOAT_READER:-none held}
PAIRS=${BLOAT_PAIRS:-5}
SAMPLE=${BLOAT_SAMPLE:-5}
OUT=${BLOAT_OUT:-$REPO/bench/out/bloat}
MINIDB_FILLFACTOR=${BLOAT_MINIDB_FILLFACTOR:-}
FOREIGN_KEYS=${BLOAT_FOREIGN_KEYS:-}
RUNS=$OUT/runs

die() { echo "bloat: $*" >&2; exit 1; }
q() {    # q DB SQL: one value
    psql -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

command -v pgbench >/dev/null || die "pgbench not found"
q postgres "SELECT 1" >/dev/null || die "no server (set PGHOST/PGPORT/PGUSER)"
rm -rf "$RUNS"
mkdir -p "$RUNS" || die "cannot create $RUNS"

for am in heap minidb; do
    if [ "$(q postgres "SELECT count(*) FROM pg_database WHERE datname = 'bloat_$am'")" = 0 ]; then
        q postgres "CREATE DATABASE bloat_$am" >/dev/null || die "cannot create bloat_$am"
    fi
    q "bloat_$am" "CREATE EXTENSION IF NOT EXISTS minidb_am" >/dev/null ||
        die "cannot create extension minidb_am in bloat_$am"
done

TABLES="'pgbench_accounts', 'pgbench_branches', 'pgbench_tellers', 'pgbench_history'"
SIZE_SQL="SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
            FROM pg_class c WHERE c.relname IN ($TABLES)
             AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace"
TABLE_SQL="SELECT c.relname || ' ' || pg_total_relation_size(c.oid)
             FROM pg_class c WHERE c.relname IN ($TABLES)
              AND c.relkind = 'r' AND c.relnamespace = 'public'::regnamespace
            ORDER BY 1"
UPD_SQL="SELECT coalesce(sum(n_tup_upd), 0) || ' ' || coalesce(sum(n_tup_hot_upd), 0)
           FROM pg_stat_user_tables WHERE relname IN ($TABLES)"

init_db() {    # init_db AM SCALE TAG
    local am=$1 scale=$2 tag=$3 db=bloat_$1 ff=()
    [ "$am" = minidb ] && [ -n "$MINIDB_FILLFACTOR" ] && ff=(-F "$MINIDB_FILLFACTOR")
    [ -n "$FOREIGN_KEYS" ] && ff+=(--foreign-keys)
    PGOPTIONS="-c default_table_access_method=$am" \
        pgbench -i -s "$scale" "${ff[@]}" -q -d "$db" >"$RUNS/$tag.init.txt" 2>&1 ||
        die "pgbench -i failed for $tag (see $RUNS/$tag.init.txt)"
    [ "$(q "$db" "SELECT amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
                  WHERE c.relname = 'pgbench_accounts'")" = "$am" ] ||
        die "pgbench_accounts is not a $am table"
    q "$db" "VACUUM ANALYZE" >/dev/null
    q "$db" "CHECKPOINT" >/dev/null
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

sampler() {    # sampler DB FILE: "seconds bytes" every $SAMPLE s, until killed
    local db=$1 file=$2 t0; t0=$(date +%s)
    while :; do
        echo "$(( $(date +%s) - t0 )) $(q "$db" "$SIZE_SQL")" >>"$file"
        sleep "$SAMPLE"
    done
}

run_one() {    # run_one AM CLIENTS READER PAIR
    local am=$1 c=$2 reader=$3 pair=$4 db=bloat_$1
    local tag="c$2.$3.p$4.$1" threads=$(( c < 2 ? c : 2 ))
    init_db "$am" "$SCALE" "$tag"
    local s0; s0=$(q "$db" "$SIZE_SQL")
    q "$db" "$TABLE_SQL" >"$RUNS/$tag.tables0.txt"
    local u0 h0; read -r u0 h0 <<<"$(q "$db" "$UPD_SQL")"
    [ "$reader" = held ] && start_reader "$db"
    local lsn0; lsn0=$(q "$db" "SELECT pg_current_wal_lsn()")
    sampler "$db" "$RUNS/size.$tag.dat" &
    local spid=$!
    pgbench -n -d "$db" -c "$c" -j "$threads" -T "$SECONDS_PER_RUN" -b tpcb-like \
        >"$RUNS/$tag.pgbench.txt" 2>&1 ||
        { kill "$spid"; die "pgbench failed for $tag (see $RUNS/$tag.pgbench.txt)"; }
    kill "$spid"; wait "$spid" 2>/dev/null
    local lsn1; lsn1=$(q "$db" "SELECT pg_current_wal_lsn()")
    local wal; wal=$(q "$db" "SELECT pg_wal_lsn_diff('$lsn1', '$lsn0')::bigint")
    local s1; s1=$(q "$db" "$SIZE_SQL")
    q "$db" "$TABLE_SQL" >"$RUNS/$tag.tables1.txt"
    # per table: name, bytes before, bytes after, growth
    join "$RUNS/$tag.tables0.txt" "$RUNS/$tag.tables1.txt" |
        awk '{ print $1 "\t" $2 "\t" $3 "\t" $3 - $2 }' >"$RUNS/$tag.tables.tsv"
    echo "$SECONDS_PER_RUN $s1" >>"$RUNS/size.$tag.dat"
    q "$db" "SELECT pg_stat_force_next_flush()" >/dev/null
    sleep 1
    local u1 h1; read -r u1 h1 <<<"$(q "$db" "$UPD_SQL")"
    [ "$reader" = held ] && stop_reader "$db"
    local tps txns
    tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$RUNS/$tag.pgbench.txt")
    txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$RUNS/$tag.pgbench.txt")
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$c" "$reader" "$pair" "$am" \
        "$tps" "$txns" "$wal" "$s0" "$s1" "$(( u1 - u0 )) $(( h1 - h0 ))" >>"$OUT/results.tsv"
    printf 'bloat: c=%-2s reader=%-4s pair %s %-6s tps=%-9s size %s -> %s MB  WAL/txn=%s  in place %s of %s updates\n' \
        "$c" "$reader" "$pair" "$am" "$tps" "$(( s0 / 1048576 ))" "$(( s1 / 1048576 ))" \
        "$(( txns > 0 ? wal / txns : 0 ))" "$(( h1 - h0 ))" "$(( u1 - u0 ))"
}

at_rest() {
    local am db
    : >"$OUT/rest.tsv"
    for am in heap minidb; do
        db=bloat_$am
        init_db "$am" "$REST_SCALE" "rest.$am"
        q "$db" "DROP TABLE IF EXISTS narrow" >/dev/null
        q "$db" "CREATE TABLE narrow (k int PRIMARY KEY, v int, w text) USING $am" >/dev/null
        q "$db" "CREATE INDEX ON narrow (v)" >/dev/null
        q "$db" "INSERT INTO narrow SELECT g, g, 'x' FROM generate_series(1, 100) g" >/dev/null
        local p0; p0=$(q "$db" "SELECT pg_relation_size('narrow') / 8192")
        local u0 h0; read -r u0 h0 <<<"$(q "$db" "SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'narrow'")"
        q "$db" "UPDATE narrow SET w = 'y' WHERE k <= 50" >/dev/null
        q "$db" "SELECT pg_stat_force_next_flush()" >/dev/null
        sleep 1
        local u1 h1; read -r u1 h1 <<<"$(q "$db" "SELECT n_tup_upd || ' ' || n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'narrow'")"
        local p1; p1=$(q "$db" "SELECT pg_relation_size('narrow') / 8192")
        local ix; ix=$(q "$db" "SELECT pg_relation_size('narrow_v_idx') / 8192 || '/' || pg_relation_size('narrow_pkey') / 8192")
        printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$am" "$(q "$db" "$SIZE_SQL")" \
            "$(q "$db" "SELECT pg_relation_size('pgbench_accounts') / 8192")" \
            "$p0" "$p1" "$(( h1 - h0 ))/$(( u1 - u0 ))" "$ix" >>"$OUT/rest.tsv"
        q "$db" "DROP TABLE narrow" >/dev/null
    done
}

started=$(date +%s)
echo "bloat: scale $SCALE (at rest $REST_SCALE), $SECONDS_PER_RUN s per run, clients: $CLIENTS, reader: $READERS, $PAIRS pairs"
echo "bloat: machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GB", $2/1048576}' /proc/meminfo); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "bloat: server: $(q postgres "SELECT version()" | cut -d, -f1); shared_buffers $(q postgres "SHOW shared_buffers"), synchronous_commit $(q postgres "SHOW synchronous_commit"), full_page_writes $(q postgres "SHOW full_page_writes"), shared_preload_libraries '$(q postgres "SHOW shared_preload_libraries")'"

at_rest
: >"$OUT/results.tsv"
for c in $CLIENTS; do
    for reader in $READERS; do
        for pair in $(seq 1 "$PAIRS"); do
            if [ $((pair % 2)) = 1 ]; then order="heap minidb"; else order="minidb heap"; fi
            for am in $order; do
                run_one "$am" "$c" "$reader" "$pair"
            done
        done
    done
done

# ---- the summary ----
{
awk -F'\t' '
{ am = $1; total[am] = $2; acc[am] = $3; n0[am] = $4; n1[am] = $5; hot[am] = $6; ix[am] = $7 }
END {
    print "At rest (pgbench -i -s '"$REST_SCALE"', VACUUM; total relation size of the four tables, indexes included):"
    print ""
    print "| | heap | minidb | minidb/heap |"
    print "|---|---:|---:|---:|"
    printf "| total size, MB | %.1f | %.1f | %.3f |\n", total["heap"] / 1048576, total["minidb"] / 1048576, total["minidb"] / total["heap"]
    printf "| pgbench_accounts, pages | %d | %d | %.3f |\n", acc["heap"], acc["minidb"], acc["minidb"] / acc["heap"]
    printf "| 100 narrow rows, pages | %d | %d | |\n", n0["heap"], n0["minidb"]
    printf "| after UPDATE w of 50 rows: in place (HOT) / updated | %s | %s | |\n", hot["heap"], hot["minidb"]
    printf "| ... pages | %d | %d | |\n", n1["heap"], n1["minidb"]
    printf "| ... index pages (v / pkey) | %s | %s | |\n", ix["heap"], ix["minidb"]
    print ""
}' "$OUT/rest.tsv"

awk -F'\t' '
function pct(a, n, p,   i, f, h) {     # a[1..n] sorted; type-7 quantile
    if (n == 0) return "n/a"
    h = (n - 1) * p + 1; i = int(h); f = h - i
    return (i >= n) ? a[n] : a[i] + f * (a[i + 1] - a[i])
}
function sortn(a, n,   i, j, t) { for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t } }
function stat(name, key,   n, i, a) {
    n = cnt[name, key]; for (i = 1; i <= n; i++) a[i] = val[name, key, i]
    sortn(a, n)
    return sprintf("%.2f [%.2f..%.2f]", pct(a, n, 0.5), pct(a, n, 0.25), pct(a, n, 0.75))
}
function add(name, key, x) { val[name, key, ++cnt[name, key]] = x }
{
    c = $1; r = $2; p = $3; am = $4; key = c SUBSEP r
    if (!(key in seen)) { order[++nk] = key; seen[key] = 1 }
    tps[key, p, am] = $5; txn[key, p, am] = $6; wal[key, p, am] = $7
    grow[key, p, am] = $9 - $8; split($10, u, " ")
    if (u[1] > 0) add("share_" am, key, u[2] / u[1])
    pairs[key, p] = 1; np[key] = (p > np[key] ? p : np[key])
}
END {
    print "pgbench tpcb-like, scale '"$SCALE"', '"$SECONDS_PER_RUN"' s per run, '"$PAIRS"' pairs per cell; median [IQR] of the per-pair ratios minidb/heap:"
    print ""
    print "| clients | reader | TPS | growth of total size | growth per transaction | WAL bytes/txn | in-place share heap | in-place share minidb | growth heap MB | growth minidb MB |"
    print "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (k = 1; k <= nk; k++) {
        key = order[k]; split(key, kc, SUBSEP)
        gh = 0; gm = 0; m = 0
        for (p = 1; p <= np[key]; p++) {
            if (!((key, p, "heap") in tps) || !((key, p, "minidb") in tps)) continue
            add("tps", key, tps[key, p, "minidb"] / tps[key, p, "heap"])
            if (grow[key, p, "heap"] > 0) {
                add("grow", key, grow[key, p, "minidb"] / grow[key, p, "heap"])
                add("growtxn", key, (grow[key, p, "minidb"] / txn[key, p, "minidb"]) / (grow[key, p, "heap"] / txn[key, p, "heap"]))
            }
            add("wal", key, (wal[key, p, "minidb"] / txn[key, p, "minidb"]) / (wal[key, p, "heap"] / txn[key, p, "heap"]))
            gh += grow[key, p, "heap"]; gm += grow[key, p, "minidb"]; m++
        }
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f |\n", kc[1], kc[2],
            stat("tps", key), (cnt["grow", key] ? stat("grow", key) : "n/a (heap did not grow)"),
            (cnt["growtxn", key] ? stat("growtxn", key) : "n/a"), stat("wal", key), stat("share_heap", key), stat("share_minidb", key),
            (m ? gh / m / 1048576 : 0), (m ? gm / m / 1048576 : 0)
    }
    print ""
    print "(growth: total relation size after the run minus before, indexes included, mean per run in the last two columns; growth per transaction: each AM'"'"'s growth divided by the transactions it ran, so that an AM that runs more transactions in the same time is not counted larger for it.)"
}' "$OUT/results.tsv"
} >"$OUT/summary.md"

# the plot: the last cell, first pair
last_c=${CLIENTS##* }; last_r=${READERS##* }
hd=$RUNS/size.c$last_c.$last_r.p1.heap.dat; md=$RUNS/size.c$last_c.$last_r.p1.minidb.dat
if command -v gnuplot >/dev/null && [ -s "$hd" ] && [ -s "$md" ]; then
    gnuplot -e "heapfile='$hd'; minidbfile='$md'; outfile='$OUT/size_over_time.png'; subtitle='pgbench tpcb-like, scale $SCALE, $last_c clients, reader $last_r'" \
        "$HERE/bloat_plot.gp" || echo "bloat: gnuplot failed" >&2
fi

echo
cat "$OUT/summary.md"
echo
echo "bloat: done in $(( $(date +%s) - started )) s; load after: $(cut -d' ' -f1-3 /proc/loadavg); results in $OUT"
