#!/bin/bash
# scripts/cluster.sh start|stop|status|env|psql [ARGS]|destroy
#
# A private, throwaway PostgreSQL 15 cluster for the demo and the tests.
#
#   start     initdb (first time) and start it; prints where it runs
#   stop      stop it (the data stays for the next start)
#   status    exit 0 when running, 3 when not
#   env       print "export PGHOST=... PGPORT=... PGUSER=postgres"; use as
#             eval "$(scripts/cluster.sh env)"
#   psql      run psql against it with the remaining arguments
#   destroy   stop it and remove its folder
#
# Where: $MINIDB_CLUSTER_DIR, default .cluster/ in the checkout (gitignored).
# When root runs this and the postgres user cannot reach the checkout (say
# it lives under /root), the default moves to /tmp/minidb_am-cluster-<hash
# of the checkout path>, so that every command finds the same cluster.
# Port: $MINIDB_PORT, else the port used last time if still free, else the
# first free one from 5433.  The server listens on 127.0.0.1 and on a unix
# socket in the cluster folder.
#
# PostgreSQL refuses to run as root: as root, the server runs as postgres.
# The extension itself is installed into the system PostgreSQL with
# "make install" (as root); start warns when it is not.
set -u

REPO=$(cd "$(dirname "$0")/.." && pwd)
PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$($PG_CONFIG --bindir)
SHAREDIR=$($PG_CONFIG --sharedir)

is_root() { [ "$(id -u)" -eq 0 ]; }

# Run a command as the cluster's owner (from /, which postgres can enter)
as_owner() {
    if is_root; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}

die() { echo "cluster: $*" >&2; exit 1; }

choose_dir() {
    if [ -n "${MINIDB_CLUSTER_DIR:-}" ]; then
        DIR=$MINIDB_CLUSTER_DIR
    else
        DIR=$REPO/.cluster
        if is_root && ! runuser -u postgres -- test -x "$REPO"; then
            DIR=/tmp/minidb_am-cluster-$(printf '%s' "$REPO" | md5sum | cut -c1-10)
        fi
    fi
    DATA=$DIR/data
    SOCKDIR=$DIR
    # unix socket paths are limited to 107 bytes
    if [ ${#SOCKDIR} -gt 80 ]; then
        SOCKDIR=/tmp/minidb_am-sock-$(printf '%s' "$DIR" | md5sum | cut -c1-10)
    fi
}

port_free() {
    # something answers on the port: not free
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
        return 1
    fi
    [ ! -e "/tmp/.s.PGSQL.$1.lock" ] && [ ! -e "$SOCKDIR/.s.PGSQL.$1.lock" ]
}

choose_port() {
    if [ -n "${MINIDB_PORT:-}" ]; then
        PORT=$MINIDB_PORT
        return
    fi
    if [ -f "$DIR/port" ] && port_free "$(cat "$DIR/port")"; then
        PORT=$(cat "$DIR/port")
        return
    fi
    for PORT in $(seq 5433 5533); do
        port_free "$PORT" && return
    done
    die "no free port between 5433 and 5533"
}

running() {
    [ -f "$DATA/PG_VERSION" ] && as_owner "$BINDIR/pg_ctl" -D "$DATA" status >/dev/null 2>&1
}

current_port() {
    if [ -f "$DIR/port" ]; then cat "$DIR/port"; else echo "${MINIDB_PORT:-5433}"; fi
}

do_init() {
    mkdir -p "$DIR" "$SOCKDIR" || die "cannot create $DIR"
    if is_root; then
        chown postgres:postgres "$DIR" "$SOCKDIR"
    fi
    chmod 700 "$DIR"
    [ "$SOCKDIR" = "$DIR" ] || chmod 755 "$SOCKDIR"
    if ! as_owner test -w "$DIR"; then
        die "$(whoami) runs the server but cannot write $DIR; set MINIDB_CLUSTER_DIR"
    fi
    [ -f "$DATA/PG_VERSION" ] && return
    echo "cluster: initdb $DATA"
    as_owner "$BINDIR/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 \
        --no-locale --no-sync >"$DIR/initdb.log" 2>&1 ||
        { cat "$DIR/initdb.log" >&2; die "initdb failed"; }
    cat >>"$DATA/postgresql.conf" <<CONF

# minidb_am private cluster (scripts/cluster.sh)
listen_addresses = '127.0.0.1'
fsync = off
synchronous_commit = off
full_page_writes = off
max_prepared_transactions = 10
# preloaded, minidb logs in-place prepends and moving UPDATEs as its own
# compact WAL records (minidb_xlog.c); without it, as generic WAL
shared_preload_libraries = 'minidb_am'
log_min_messages = warning
log_line_prefix = '%m [%p] %q%a '
CONF
}

do_start() {
    if running; then
        echo "cluster: already running on port $(current_port), socket $SOCKDIR, data $DATA"
        return 0
    fi
    do_init
    choose_port
    echo "$PORT" >"$DIR/port"
    is_root && chown postgres:postgres "$DIR/port"
    as_owner "$BINDIR/pg_ctl" -D "$DATA" -l "$DIR/server.log" -w -t 60 \
        -o "-p $PORT -k $SOCKDIR" start >/dev/null ||
        { tail -20 "$DIR/server.log" >&2; die "server did not start"; }
    echo "cluster: running on port $PORT, socket $SOCKDIR, data $DATA"
    if [ ! -f "$SHAREDIR/extension/minidb_am.control" ]; then
        echo "cluster: note: minidb_am is not installed yet; run make install (as root)" >&2
    fi
}

do_stop() {
    if running; then
        as_owner "$BINDIR/pg_ctl" -D "$DATA" -m fast -w stop >/dev/null && echo "cluster: stopped"
    else
        echo "cluster: not running"
    fi
}

cmd=${1:-}
[ $# -gt 0 ] && shift
choose_dir
case $cmd in
start)
    do_start
    ;;
stop)
    do_stop
    ;;
status)
    if running; then
        echo "cluster: running on port $(current_port), socket $SOCKDIR, data $DATA"
        exit 0
    fi
    echo "cluster: not running (data $DATA)"
    exit 3
    ;;
env)
    echo "export PGHOST=$SOCKDIR PGPORT=$(current_port) PGUSER=postgres"
    ;;
psql)
    running || die "not running; run $0 start"
    PGHOST=$SOCKDIR PGPORT=$(current_port) PGUSER=postgres exec "$BINDIR/psql" "$@"
    ;;
destroy)
    do_stop
    rm -rf "$DIR"
    [ "$SOCKDIR" = "$DIR" ] || rm -rf "$SOCKDIR"
    echo "cluster: removed $DIR"
    ;;
*)
    echo "usage: $0 start|stop|status|env|psql [ARGS]|destroy" >&2
    exit 2
    ;;
esac
