#!/bin/bash
# bench/wal_by_type.sh: WAL per pgbench transaction, by record type, heap
# beside (a benchmark, not a test; README section "WAL").
#
# It runs its own throwaway cluster (the settings under test need
# restarts): initdb into a temporary folder, port MINIDB_PORT (5433),
# listening on its unix socket only.  For each full_page_writes setting
# (off, on) and each server mode:
#
#   heap            heap tables, minidb_am preloaded (as for minidb)
#   minidb          minidb tables, minidb_am preloaded: minidb's records
#   minidb_generic  minidb tables, minidb_am not preloaded: generic WAL
#
# one run:
#   1. a fresh database; pgbench -i -s $SCALE with
#      default_table_access_method set to the mode's AM (PG15's pgbench
#      has no --table-access-method), VACUUM ANALYZE, CHECKPOINT;
#   2. the WAL insert position, then pgbench's built-in tpcb-like at a
#      steady rate: pgbench -n -c $CLIENTS -j $CLIENTS --rate $RATE
#      -T $SECONDS (autovacuum on, as on a real server: its WAL counts);
#   3. the WAL insert position again, a CHECKPOINT (which flushes WAL;
#      pg_walinspect reads only flushed WAL), then pg_walinspect's
#      pg_get_wal_stats(start, end, per_record => true): for every record
#      type its count, record bytes (without full-page images) and
#      full-page-image bytes.
#
# A CHECKPOINT just before the run means that with full_page_writes = on
# the first change to each page after it logs the page's image, for heap
# and minidb alike; checkpoint_timeout and max_wal_size are raised so that
# no other checkpoint starts during the run.
#
# Output ($OUT, bench/out/wal by default): stats.tsv (mode, fpw, record
# type, count, record bytes, FPI bytes, transactions), runs.tsv (mode,
# fpw, transactions, WAL bytes between the two positions), summary.md
# (the tables for the README) and the pgbench outputs.
#
# Knobs: PG_CONFIG, MINIDB_PORT, WAL_SCALE (10), WAL_RATE (100),
# WAL_SECONDS (60), WAL_CLIENTS (2), WAL_MODES ("heap minidb
# minidb_generic"), WAL_FPW ("off on"), WAL_OUT.  Run as root, the server
# runs as the postgres user.  minidb_am must be installed (make install).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$("$PG_CONFIG" --bindir) || exit 1
PORT=${MINIDB_PORT:-5433}
SCALE=${WAL_SCALE:-10}
RATE=${WAL_RATE:-100}
SECS=${WAL_SECONDS:-60}
CLIENTS=${WAL_CLIENTS:-2}
MODES=${WAL_MODES:-heap minidb minidb_generic}
FPWS=${WAL_FPW:-off on}
OUT=${WAL_OUT:-$REPO/bench/out/wal}

die() { echo "wal_by_type: $*" >&2; exit 1; }
as_pg() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

mkdir -p "$OUT" || die "cannot create $OUT"
DIR=$(mktemp -d /tmp/minidb_wal.XXXXXX) || die "mktemp failed"
[ "$(id -u)" -eq 0 ] && chown postgres "$DIR"
DATA=$DIR/data
export PGHOST=$DIR PGPORT=$PORT PGUSER=postgres PATH=$BINDIR:$PATH
cleanup() {
    as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
    rm -rf "$DIR"
}
trap cleanup EXIT

q() {    # q DB SQL: values, unaligned
    as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
        "$BINDIR/psql" -X -A -t -q -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

as_pg "$BINDIR/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 \
    --no-locale --no-sync >"$OUT/initdb.log" 2>&1 || die "initdb failed: $OUT/initdb.log"
cat >>"$DATA/postgresql.conf" <<CONF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$DIR'
fsync = off
max_wal_size = '8GB'
wal_keep_size = '8GB'
checkpoint_timeout = '1h'
log_min_messages = warning
CONF

printf 'mode\tfpw\trecord_type\tcount\trecord_bytes\tfpi_bytes\ttransactions\n' >"$OUT/stats.tsv"
printf 'mode\tfpw\ttransactions\twal_bytes\n' >"$OUT/runs.tsv"

for fpw in $FPWS; do
    for mode in $MODES; do
        case $mode in
            heap) am=heap; preload="minidb_am" ;;
            minidb) am=minidb; preload="minidb_am" ;;
            minidb_generic) am=minidb; preload="" ;;
            *) die "unknown mode $mode" ;;
        esac
        as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1
        cat >"$DATA/postgresql.auto.conf" <<CONF
shared_preload_libraries = '$preload'
full_page_writes = $fpw
CONF
        as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w start >/dev/null ||
            die "server did not start: $(tail -5 "$DIR/server.log")"
        q postgres "DROP DATABASE IF EXISTS walbench" >/dev/null
        q postgres "CREATE DATABASE walbench" >/dev/null
        q walbench "CREATE EXTENSION minidb_am; CREATE EXTENSION pg_walinspect" >/dev/null ||
            die "cannot create the extensions"
        echo "wal_by_type: $mode, full_page_writes = $fpw: pgbench -i -s $SCALE"
        as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
            PGOPTIONS="-c default_table_access_method=$am" \
            "$BINDIR/pgbench" -i -q -s "$SCALE" walbench >"$OUT/init_${mode}_$fpw.log" 2>&1 ||
            die "pgbench -i failed: $OUT/init_${mode}_$fpw.log"
        [ "$(q walbench "SELECT a.amname FROM pg_class c JOIN pg_am a ON a.oid = c.relam WHERE c.relname = 'pgbench_accounts'")" = "$am" ] ||
            die "pgbench_accounts is not a $am table"
        q walbench "VACUUM ANALYZE" >/dev/null
        q walbench "CHECKPOINT" >/dev/null
        start=$(q walbench "SELECT pg_current_wal_insert_lsn()")
        echo "wal_by_type: $mode, full_page_writes = $fpw: pgbench --rate $RATE -T $SECS -c $CLIENTS"
        as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
            "$BINDIR/pgbench" -n -c "$CLIENTS" -j "$CLIENTS" --rate "$RATE" -T "$SECS" \
            walbench >"$OUT/run_${mode}_$fpw.log" 2>&1 ||
            die "pgbench failed: $OUT/run_${mode}_$fpw.log"
        end=$(q walbench "SELECT pg_current_wal_insert_lsn()")
        q walbench "CHECKPOINT" >/dev/null
        txns=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$OUT/run_${mode}_$fpw.log")
        [ -n "$txns" ] && [ "$txns" -gt 0 ] || die "no transactions in $OUT/run_${mode}_$fpw.log"
        bytes=$(q walbench "SELECT pg_wal_lsn_diff('$end', '$start')")
        printf '%s\t%s\t%s\t%s\n' "$mode" "$fpw" "$txns" "$bytes" >>"$OUT/runs.tsv"
        q walbench "SELECT '$mode', '$fpw', \"resource_manager/record_type\", count,
                           record_size, fpi_size, $txns
                    FROM pg_get_wal_stats('$start', '$end', true) WHERE count > 0" |
            tr '|' '\t' >>"$OUT/stats.tsv"
        echo "wal_by_type: $mode, full_page_writes = $fpw: $txns transactions, $bytes bytes of WAL"
    done
done
as_pg "$BINDIR/pg_ctl" -D "$DATA" -m fast stop >/dev/null 2>&1

# The tables, computed by the server's own SQL from the two files
as_pg "$BINDIR/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w start >/dev/null || die "restart failed"
{
    echo "CREATE TEMP TABLE s (mode text, fpw text, rt text, count bigint, rec bigint, fpi bigint, txns bigint);"
    echo "CREATE TEMP TABLE r (mode text, fpw text, txns bigint, bytes bigint);"
    echo "COPY s FROM STDIN WITH (FORMAT csv, DELIMITER E'\\t', HEADER true);"
    cat "$OUT/stats.tsv"
    echo '\.'
    echo "COPY r FROM STDIN WITH (FORMAT csv, DELIMITER E'\\t', HEADER true);"
    cat "$OUT/runs.tsv"
    echo '\.'
    cat <<'SQL'
\pset footer off
\echo '### WAL per transaction (bytes)'
\echo
SELECT r.mode, r.fpw AS full_page_writes, r.txns AS transactions,
       round(r.bytes::numeric / r.txns) AS wal_per_txn,
       round(sum(s.rec)::numeric / r.txns) AS records_per_txn,
       round(sum(s.fpi)::numeric / r.txns) AS fpi_per_txn,
       round((r.bytes::numeric / r.txns) /
             (SELECT h.bytes::numeric / h.txns FROM r h
              WHERE h.mode = 'heap' AND h.fpw = r.fpw), 2) AS vs_heap
FROM r JOIN s USING (mode, fpw)
GROUP BY r.mode, r.fpw, r.txns, r.bytes
ORDER BY r.fpw, r.mode;
\echo
\echo '### Bytes per transaction by record type, full_page_writes = off (record bytes; FPI bytes are 0)'
\echo
SELECT rt AS record_type,
       coalesce(max(round(rec::numeric / txns, 1)) FILTER (WHERE mode = 'heap'), 0) AS heap,
       coalesce(max(round(rec::numeric / txns, 1)) FILTER (WHERE mode = 'minidb'), 0) AS minidb,
       coalesce(max(round(rec::numeric / txns, 1)) FILTER (WHERE mode = 'minidb_generic'), 0) AS minidb_generic,
       coalesce(max(round(count::numeric / txns, 2)) FILTER (WHERE mode = 'heap'), 0) AS heap_records,
       coalesce(max(round(count::numeric / txns, 2)) FILTER (WHERE mode = 'minidb'), 0) AS minidb_records
FROM s WHERE fpw = 'off'
GROUP BY rt
HAVING max(rec::numeric / txns) >= 0.5
ORDER BY max(rec::numeric / txns) DESC;
\echo
\echo '### Bytes per transaction by record type, full_page_writes = on (record + FPI bytes)'
\echo
SELECT rt AS record_type,
       coalesce(max(round((rec + fpi)::numeric / txns, 1)) FILTER (WHERE mode = 'heap'), 0) AS heap,
       coalesce(max(round((rec + fpi)::numeric / txns, 1)) FILTER (WHERE mode = 'minidb'), 0) AS minidb,
       coalesce(max(round((rec + fpi)::numeric / txns, 1)) FILTER (WHERE mode = 'minidb_generic'), 0) AS minidb_generic,
       coalesce(max(round(fpi::numeric / txns, 1)) FILTER (WHERE mode = 'heap'), 0) AS heap_fpi,
       coalesce(max(round(fpi::numeric / txns, 1)) FILTER (WHERE mode = 'minidb'), 0) AS minidb_fpi
FROM s WHERE fpw = 'on'
GROUP BY rt
HAVING max((rec + fpi)::numeric / txns) >= 0.5
ORDER BY max((rec + fpi)::numeric / txns) DESC;
SQL
} | as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
    "$BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -P format=aligned >"$OUT/summary.md" 2>&1 ||
    { cat "$OUT/summary.md"; die "the summary failed"; }
cat "$OUT/summary.md"
