#!/bin/bash
# test/pgsuite/run.sh core|isolation heap|minidb [test ...]
#
# PostgreSQL's own regression suite (core: src/test/regress, parallel_schedule)
# or isolation suite (src/test/isolation, isolation_schedule), run against a
# private cluster whose default_table_access_method is heap or minidb.
#
#   run.sh SUITE heap     heap alone; each test is compared with PostgreSQL's
#                         expected output (a sanity check of the set-up)
#   run.sh SUITE minidb   heap first (the baseline, same machine, same
#                         settings), then minidb; each test is compared with
#                         heap's output (results/NAME.out), not with expected/
#
# Naming tests runs only those (core: after test_setup, one at a time, so
# name any other test they build on first).  Each suite file is one test;
# the last line is "N passed, M failed" and the exit status is 0 only when
# nothing failed.  A test passes when its output equals heap's, or when it is
# listed in test/pgsuite/accepted.txt and the check of its reason holds
# (see that file).  Crashes ("terminated by signal"), PANIC and TRAP in the
# server log fail the run ("server-log").
#
# Sources: the test folders of the installed server's source package,
# fetched once with "apt-get source --download-only postgresql-15=VERSION"
# (a deb-src entry for the Debian archive is added when missing; that and
# the first download need root).  When the archive no longer has the
# installed version's source, the newest source of the same major version
# is used and the output says so.  Only src/test/regress and
# src/test/isolation are unpacked, into $PGSUITE_CACHE.  regress.c is built
# into regress.so with PGXS; autoinc.so and refint.so are the installed ones;
# pg_regress and pg_isolation_regress are the installed ones
# ($(pg_config --pkglibdir)/pgxs/src/test/...).
#
# The cluster: initdb (as postgres when run as root) in the output folder,
# unix socket only, shared_preload_libraries = 'minidb_am', CREATE EXTENSION
# minidb_am in template1 and postgres, the test database made from template1
# (pg_regress --use-existing, with the settings pg_regress itself would give
# it).  Core runs group by group of the schedule, isolation spec by spec, so
# that after a crash (the server restarts itself) or a hang (killed, the
# server restarted if need be) the run goes on with the next group or spec.
#
# Watchdogs (environment, seconds unless said otherwise):
#   PGSUITE_STATEMENT_TIMEOUT 120  statement_timeout in postgresql.conf
#   PGSUITE_LOCK_TIMEOUT    60/15  lock_timeout, core/isolation (isolation's
#                                  deadlock specs wait up to 10 s on purpose)
#   PGSUITE_IDLE_TIMEOUT      300  idle_in_transaction_session_timeout
#   PGSUITE_STEP_TIMEOUT       20  PGISOLATIONTIMEOUT (isolationtester cancels
#                                  a step after this, gives up after twice it)
#   PGSUITE_GROUP_TIMEOUT     300  core: one schedule group
#   PGSUITE_SPEC_TIMEOUT       60  isolation: one spec (heap's longest
#                                  takes 4 s)
#   PGSUITE_RUN_TIMEOUT  900/1200  one AM's whole run, core/isolation; the
#                                  tests left are "not run" (failed)
#   PGSUITE_MEM_KB        2097152  ulimit -v of the server (per process), so
#                                  a runaway backend gets "out of memory"
# Other knobs:
#   PG_CONFIG        the server to use (pg_config)
#   PGSUITE_CACHE    unpacked sources (/var/cache/minidb_am-pgsrc)
#   PGSUITE_SRC      use this unpacked PostgreSQL source tree instead
#   PGSUITE_OUT      output folder (/tmp/minidb_am-pgsuite); each run goes to
#                    SUITE-AM/ in it (results/, log/server.log, diffs/)
#   PGSUITE_PORT     port of the private cluster (first free from 5700)
#   PGSUITE_BASELINE an earlier heap run folder (SUITE-heap) to compare with
#                    instead of running heap again
#   PGSUITE_ACCEPTED the accepted-differences list (test/pgsuite/accepted.txt)
#   PGSUITE_KEEP_DATA=1  keep the clusters' data folders (removed otherwise)
#   PGSUITE_SKIP     tests to leave out of the schedule (for heap too), e.g.
#                    "brin brin_multi" while they crash; each is reported
#                    as failed ("skipped")
set -u

HERE=$(cd "$(dirname "$0")" && pwd)

usage() {
    echo "usage: $0 core|isolation heap|minidb [test ...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
SUITE=$1
AM=$2
shift 2
case $SUITE in core | isolation) ;; *) usage ;; esac
case $AM in heap | minidb) ;; *) usage ;; esac
TESTS=("$@")

PG_CONFIG=${PG_CONFIG:-pg_config}
BINDIR=$($PG_CONFIG --bindir) || { echo "pgsuite: $PG_CONFIG not found" >&2; exit 2; }
PKGLIBDIR=$($PG_CONFIG --pkglibdir)
SHAREDIR=$($PG_CONFIG --sharedir)
PGVERSION=$($PG_CONFIG --version)          # PostgreSQL 15.20 (Debian 15.20-0+deb12u1)
MAJOR=$(echo "$PGVERSION" | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')
CACHE=${PGSUITE_CACHE:-/var/cache/minidb_am-pgsrc}
OUTROOT=${PGSUITE_OUT:-/tmp/minidb_am-pgsuite}
ACCEPTED=${PGSUITE_ACCEPTED:-$HERE/accepted.txt}
STATEMENT_TIMEOUT=${PGSUITE_STATEMENT_TIMEOUT:-120}
if [ "$SUITE" = core ]; then
    LOCK_TIMEOUT=${PGSUITE_LOCK_TIMEOUT:-60}
else
    LOCK_TIMEOUT=${PGSUITE_LOCK_TIMEOUT:-15}
fi
IDLE_TIMEOUT=${PGSUITE_IDLE_TIMEOUT:-300}
STEP_TIMEOUT=${PGSUITE_STEP_TIMEOUT:-20}
GROUP_TIMEOUT=${PGSUITE_GROUP_TIMEOUT:-300}
SPEC_TIMEOUT=${PGSUITE_SPEC_TIMEOUT:-60}
if [ "$SUITE" = core ]; then
    RUN_TIMEOUT=${PGSUITE_RUN_TIMEOUT:-900}
else
    RUN_TIMEOUT=${PGSUITE_RUN_TIMEOUT:-1200}
fi
MEM_KB=${PGSUITE_MEM_KB:-2097152}

say() { echo "pgsuite: $*"; }
die() { echo "pgsuite: $*" >&2; exit 2; }
is_root() { [ "$(id -u)" -eq 0 ]; }

# The server, pg_regress and psql run as postgres when we are root
as_owner() {
    if is_root; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

[ -f "$SHAREDIR/extension/minidb_am.control" ] ||
    die "minidb_am is not installed into $($PG_CONFIG --sharedir): run make install (PG_CONFIG=$PG_CONFIG)"
PG_REGRESS=$PKGLIBDIR/pgxs/src/test/regress/pg_regress
PG_ISOLATION_REGRESS=$PKGLIBDIR/pgxs/src/test/isolation/pg_isolation_regress
[ -x "$PG_REGRESS" ] || die "$PG_REGRESS missing (postgresql-server-dev-$MAJOR)"
[ -x "$PG_ISOLATION_REGRESS" ] || die "$PG_ISOLATION_REGRESS missing (postgresql-server-dev-$MAJOR)"

# ---------------------------------------------------------------- sources

# Is there a deb-src entry at all?  (sources.list or deb822 .sources files)
have_deb_src() {
    grep -qsE '^[[:space:]]*deb-src[[:space:]]|^Types:.*deb-src' \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources
}

# Add deb-src entries mirroring the binary ones (same mirror, suites,
# components and keyring) of the Debian archive.
add_deb_src() {
    local f=/etc/apt/sources.list.d/minidb_am-src.sources
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        # deb822: every stanza with Types: deb becomes a deb-src stanza
        sed -E -e '/^#/d' -e 's/^Types:.*/Types: deb-src/' \
            /etc/apt/sources.list.d/debian.sources >"$f"
    elif grep -qsE '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list; then
        f=/etc/apt/sources.list.d/minidb_am-src.list
        grep -E '^[[:space:]]*deb[[:space:]]' /etc/apt/sources.list |
            sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' >"$f"
    else
        die "no Debian archive entry in /etc/apt to derive a deb-src entry from"
    fi
    say "added $f:"
    sed 's/^/    /' "$f"
}

# Sets SRC (the folder holding regress/ and isolation/)
get_sources() {
    if [ -n "${PGSUITE_SRC:-}" ]; then
        SRC=$PGSUITE_SRC/src/test
        [ -f "$SRC/regress/parallel_schedule" ] || die "PGSUITE_SRC=$PGSUITE_SRC has no src/test/regress"
        say "sources: $PGSUITE_SRC (PGSUITE_SRC)"
        return
    fi
    local pkg=postgresql-$MAJOR want
    want=$(echo "$PGVERSION" | sed -nE 's/.*\(Debian ([^)]*)\).*/\1/p')
    [ -n "$want" ] || want=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null)
    [ -n "$want" ] || die "cannot tell the installed version of $pkg"
    local map=$CACHE/for-$want
    if [ -f "$map" ]; then
        local v
        v=$(head -1 "$map")
        if [ -f "$CACHE/$pkg-$v/.complete" ]; then
            SRC=$CACHE/$pkg-$v/src/test
            say "sources: $pkg $v, cached in $CACHE/$pkg-$v$( [ "$v" != "$want" ] && echo " (installed server: $want; its exact source is not in the archive)")"
            return
        fi
    fi
    is_root || die "the test sources are not in $CACHE yet: run this once as root (it adds a deb-src entry and runs apt-get source), or set PGSUITE_SRC to an unpacked PostgreSQL $MAJOR source tree"
    if ! have_deb_src; then
        add_deb_src
        apt-get update -q >/dev/null || die "apt-get update failed"
    elif ! apt-cache showsrc "$pkg" 2>/dev/null | grep -q '^Version:'; then
        apt-get update -q >/dev/null || die "apt-get update failed"
    fi
    command -v bzip2 >/dev/null || apt-get install -y -q --no-install-recommends bzip2 >/dev/null ||
        die "bzip2 (to unpack the source tarball) could not be installed"
    local tmp got=""
    tmp=$(mktemp -d /tmp/minidb_am-pgsrc.XXXXXX)
    chmod 755 "$tmp"
    # the exact version first, then the others of this major, newest first
    local candidates
    candidates=$( { echo "$want"; apt-cache showsrc "$pkg" 2>/dev/null |
        sed -n 's/^Version: //p' | sort -u | grep -vxF "$want" |
        while read -r v; do echo "$v"; done | sort -r -V; } )
    for v in $candidates; do
        say "apt-get source --download-only $pkg=$v"
        if (cd "$tmp" && apt-get source --download-only -q "$pkg=$v") >"$tmp/apt.log" 2>&1; then
            got=$v
            break
        fi
        grep -E '^E:' "$tmp/apt.log" | head -3 | sed 's/^/    /'
    done
    [ -n "$got" ] || { rm -rf "$tmp"; die "no source of $pkg could be downloaded"; }
    [ "$got" != "$want" ] &&
        say "NOTE: the archive has no source of the installed $pkg $want; using $got, the newest source of PostgreSQL $MAJOR it has"
    local orig dest=$CACHE/$pkg-$got
    orig=$(ls "$tmp"/*.orig.tar.* 2>/dev/null | head -1)
    [ -n "$orig" ] || die "no .orig.tar.* in the downloaded source"
    rm -rf "$dest"
    mkdir -p "$dest"
    tar -xf "$orig" -C "$dest" --strip-components=1 --wildcards \
        '*/src/test/regress/*' '*/src/test/isolation/*' ||
        die "could not unpack $orig"
    cp "$tmp"/*.dsc "$dest/"
    touch "$dest/.complete"
    echo "$got" >"$map"
    chmod -R a+rX "$CACHE"
    rm -rf "$tmp"
    SRC=$dest/src/test
    say "sources: $pkg $got, unpacked into $dest (src/test/regress, src/test/isolation)"
}

# regress.so (PGXS, against this server) beside the installed autoinc/refint
build_regress_lib() {
    LIBDIR=$OUTROOT/lib
    rm -rf "$LIBDIR"
    mkdir -p "$LIBDIR"
    cp "$SRC/regress/regress.c" "$LIBDIR/"
    cat >"$LIBDIR/Makefile" <<EOF
MODULES = regress
PG_CONFIG = $PG_CONFIG
PGXS := \$(shell \$(PG_CONFIG) --pgxs)
include \$(PGXS)
EOF
    make -C "$LIBDIR" >"$LIBDIR/build.log" 2>&1 || { cat "$LIBDIR/build.log"; die "regress.so did not build"; }
    for m in autoinc refint; do
        [ -f "$PKGLIBDIR/$m.so" ] || die "$PKGLIBDIR/$m.so missing (postgresql-$MAJOR contrib)"
        ln -sf "$PKGLIBDIR/$m.so" "$LIBDIR/$m.so"
    done
    chmod -R a+rX "$LIBDIR"
}

# ---------------------------------------------------------------- cluster

port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
        return 1
    fi
    ! ls /tmp/.s.PGSQL."$1" /tmp/minidb_am-pgsuite-sock.*/.s.PGSQL."$1" >/dev/null 2>&1
}

choose_port() {
    if [ -n "${PGSUITE_PORT:-}" ]; then
        PORT=$PGSUITE_PORT
        return
    fi
    for PORT in $(seq 5700 5799); do
        port_free "$PORT" && return
    done
    die "no free port in 5700-5799 (set PGSUITE_PORT)"
}

pgctl() { as_owner "$BINDIR/pg_ctl" -D "$DATA" "$@"; }

server_start() {
    # ulimit -v caps every server process's address space
    as_owner bash -c "ulimit -v $MEM_KB && exec '$BINDIR/pg_ctl' -D '$DATA' -l '$SERVERLOG' -w -t 120 start" \
        >>"$RUN/log/pg_ctl.log" 2>&1
}

server_stop() {    # server_stop [MODE]
    [ -n "${DATA:-}" ] && [ -f "$DATA/postmaster.pid" ] || return 0
    pgctl -m "${1:-fast}" -w -t 60 stop >>"$RUN/log/pg_ctl.log" 2>&1 ||
        pgctl -m immediate -w -t 60 stop >>"$RUN/log/pg_ctl.log" 2>&1
}

psql_c() {    # psql_c DB SQL
    as_owner env PGHOST="$SOCK" PGPORT="$PORT" PGUSER=postgres PGOPTIONS='-c client_min_messages=warning' \
        "$BINDIR/psql" -X -q -A -t -v ON_ERROR_STOP=1 -d "$1" -c "$2"
}

wait_ready() {    # up to $1 seconds for the server to accept connections
    local i
    for ((i = 0; i < $1 * 5; i++)); do
        as_owner "$BINDIR/pg_isready" -q -h "$SOCK" -p "$PORT" -d postgres && return 0
        sleep 0.2
    done
    return 1
}

# After a crash the postmaster restarts by itself; make sure it is back,
# else restart it (immediate stop if need be).
ensure_server() {
    wait_ready 60 && return 0
    note "server not accepting connections after 60 s: restarting it"
    server_stop immediate
    server_start && wait_ready 60
}

# After a timeout: end the backends still running for the test database
# (a spinning one that ignores pg_terminate_backend forces a restart)
end_backends() {
    local i n
    psql_c postgres "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                     WHERE datname = '$DB' AND pid <> pg_backend_pid()" >/dev/null 2>&1
    for ((i = 0; i < 50; i++)); do
        n=$(psql_c postgres "SELECT count(*) FROM pg_stat_activity WHERE datname = '$DB'" 2>/dev/null)
        [ "$n" = 0 ] && return 0
        sleep 0.2
    done
    note "backends of $DB did not end within 10 s of pg_terminate_backend: immediate restart of the server"
    server_stop immediate
    server_start
    wait_ready 60
}

# Prepared transactions a test left behind hold their locks for ever
end_prepared() {    # end_prepared WHERE
    local g
    for g in $(psql_c postgres "SELECT gid FROM pg_prepared_xacts" 2>/dev/null); do
        note "$1 left prepared transaction '$g' behind: rolled back"
        psql_c "$DB" "ROLLBACK PREPARED '$g'" >/dev/null 2>&1 ||
            psql_c postgres "ROLLBACK PREPARED '$g'" >/dev/null 2>&1
    done
}

note() { echo "$*" >>"$RUN/notes"; say "$*"; }

cluster_init() {    # cluster_init AM
    DATA=$RUN/data
    SERVERLOG=$RUN/log/server.log
    SOCK=$(mktemp -d /tmp/minidb_am-pgsuite-sock.XXXXXX)
    chmod 755 "$SOCK"
    is_root && chown postgres "$SOCK"
    as_owner "$BINDIR/initdb" -D "$DATA" -U postgres -A trust --no-locale -E UTF8 --no-sync \
        >"$RUN/log/initdb.log" 2>&1 || { cat "$RUN/log/initdb.log"; return 1; }
    cat >>"$DATA/postgresql.conf" <<EOF

# test/pgsuite/run.sh
port = $PORT
listen_addresses = ''
unix_socket_directories = '$SOCK'
shared_preload_libraries = 'minidb_am'
default_table_access_method = '$1'
max_prepared_transactions = 2
fsync = off
log_line_prefix = '%m [%p] %a %e '
log_connections = on
restart_after_crash = on
statement_timeout = '${STATEMENT_TIMEOUT}s'
lock_timeout = '${LOCK_TIMEOUT}s'
idle_in_transaction_session_timeout = '${IDLE_TIMEOUT}s'
EOF
    server_start || { tail -20 "$SERVERLOG"; return 1; }
    wait_ready 60 || return 1
    psql_c template1 "CREATE EXTENSION minidb_am" >/dev/null &&
        psql_c postgres "CREATE EXTENSION minidb_am" >/dev/null || return 1
    create_db
}

# What pg_regress's create_database would do, but from template1 (so the
# extension comes along); the suites' own CREATE DATABASEs use template1
# too, except database.sql's (template0, no tables in it)
create_db() {
    psql_c postgres "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null &&
    psql_c postgres "CREATE DATABASE \"$DB\" TEMPLATE template1" >/dev/null &&
        psql_c postgres "ALTER DATABASE \"$DB\" SET lc_messages TO 'C';
            ALTER DATABASE \"$DB\" SET lc_monetary TO 'C';
            ALTER DATABASE \"$DB\" SET lc_numeric TO 'C';
            ALTER DATABASE \"$DB\" SET lc_time TO 'C';
            ALTER DATABASE \"$DB\" SET bytea_output TO 'hex';
            ALTER DATABASE \"$DB\" SET timezone_abbreviations TO 'Default';" >/dev/null
}

cluster_done() {
    server_stop fast
    [ "${PGSUITE_KEEP_DATA:-0}" = 1 ] || rm -rf "${DATA:?}"
    [ -n "${SOCK:-}" ] && rm -rf "$SOCK"
    SOCK=
    DATA=
}

cleanup() {
    [ -n "${RUN:-}" ] && cluster_done
}
trap cleanup EXIT
trap 'echo "pgsuite: interrupted" >&2; exit 130' INT TERM

# ---------------------------------------------------------------- one run

# crash/PANIC/TRAP lines of the server log after byte offset $1
log_crashes() {
    tail -c +"$(($1 + 1))" "$SERVERLOG" 2>/dev/null |
        grep -E 'LOG: +.*terminated by signal|PANIC: |^TRAP: |FATAL: +out of memory|ERROR: +out of memory' || true
}
log_size() { stat -c %s "$SERVERLOG" 2>/dev/null || echo 0; }

# status.tsv lines: name TAB status TAB detail
#   status: ok | failed | ignored (pg_regress against expected/), hang,
#           noresult, notrun
status() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >>"$RUN/status.tsv"; }

# The schedule as groups, one line each: "name name ..."
schedule_groups() {
    if [ ${#TESTS[@]} -gt 0 ]; then
        if [ "$SUITE" = core ]; then
            [[ " ${TESTS[*]} " == *" test_setup "* ]] || echo test_setup
        fi
        printf '%s\n' "${TESTS[@]}"
    elif [ "$SUITE" = core ]; then
        sed -n 's/^test: *//p' "$SRC/regress/parallel_schedule"
    else
        sed -n 's/^test: *//p' "$SRC/isolation/isolation_schedule" | tr ' ' '\n' | grep -v '^$'
    fi
}

run_am() {    # run_am AM: the whole suite against a fresh cluster
    local am=$1 start now i=0 group rc before crashes t name line
    RUN=$OUTROOT/$SUITE-$am
    rm -rf "$RUN"
    mkdir -p "$RUN/log" "$RUN/sched" "$RUN/out"
    : >"$RUN/status.tsv"
    : >"$RUN/notes"
    : >"$RUN/crashes.tsv"
    is_root && chown -R postgres "$RUN"
    if [ "$SUITE" = core ]; then DB=regression; else DB=isolation_regression; fi
    cluster_init "$am" || { note "cluster for $am did not start"; cluster_done; return 1; }
    say "$SUITE on $am: cluster on port $PORT, data $RUN/data"
    # pg_regress/pg_isolation_regress as the owner, with isolationtester's
    # step watchdog; timeout(1) kills the whole process group
    RUNAS=(env PGISOLATIONTIMEOUT="$STEP_TIMEOUT" PGHOST="$SOCK" PGPORT="$PORT" PGUSER=postgres)
    is_root && RUNAS=(runuser -u postgres -- "${RUNAS[@]}")
    echo "$PGVERSION" >"$RUN/server-version"
    echo "${SRCVERSION:-}" >"$RUN/source-version"
    start=$(date +%s)
    while read -r group; do
        for t in ${PGSUITE_SKIP:-}; do
            if [[ " $group " == *" $t "* ]]; then
                status "$t" skipped "PGSUITE_SKIP"
                group=$(echo " $group " | sed "s/ $t / /; s/^ *//; s/ *$//")
            fi
        done
        [ -n "$group" ] || continue
        i=$((i + 1))
        now=$(date +%s)
        if [ $((now - start)) -ge "$RUN_TIMEOUT" ]; then
            for t in $group; do status "$t" notrun "suite time limit ${RUN_TIMEOUT}s reached"; done
            continue
        fi
        ensure_server || { for t in $group; do status "$t" notrun "server down"; done; continue; }
        before=$(log_size)
        if [ "$SUITE" = core ]; then
            printf 'test: %s\n' "$group" >"$RUN/sched/$i"
            (cd "$RUN" && timeout -k 15 "$GROUP_TIMEOUT" "${RUNAS[@]}" "$PG_REGRESS" --use-existing \
                --inputdir="$SRC/regress" --outputdir="$RUN" --bindir="$BINDIR" \
                --dlpath="$LIBDIR" --max-concurrent-tests=20 --no-locale \
                --host="$SOCK" --port="$PORT" --user=postgres --dbname="$DB" \
                --schedule="$RUN/sched/$i") >"$RUN/out/$i" 2>&1
            rc=$?
            t=$GROUP_TIMEOUT
        else
            (cd "$RUN" && timeout -k 15 "$SPEC_TIMEOUT" "${RUNAS[@]}" "$PG_ISOLATION_REGRESS" --use-existing \
                --inputdir="$SRC/isolation" --outputdir="$RUN" --bindir="$BINDIR" --no-locale \
                --host="$SOCK" --port="$PORT" --user=postgres --dbname="$DB" \
                "$group") >"$RUN/out/$i" 2>&1
            rc=$?
            t=$SPEC_TIMEOUT
        fi
        [ -f "$RUN/regression.diffs" ] && cat "$RUN/regression.diffs" >>"$RUN/regression.diffs.all"
        for name in $group; do
            # pg_regress up to 15: "test NAME ... ok"; from 16 on, TAP:
            # "ok 1 - NAME  12 ms" or "not ok 1 + NAME ..." (+ in a group)
            line=$(grep -E "^(test +| +)${name//./\\.} +\.\.\. " "$RUN/out/$i" | head -1)
            [ -n "$line" ] ||
                line=$(grep -E "^(not )?ok [0-9]+ +[-+] +${name//./\\.}( |$)" "$RUN/out/$i" | head -1)
            if [[ $line =~ \(ignored\) ]]; then
                status "$name" ignored ""
            elif [[ $line =~ \.\.\.\ +ok ]] || [[ $line =~ ^ok\  ]]; then
                status "$name" ok ""
            elif [[ $line =~ \.\.\.\ +FAILED ]]; then
                status "$name" failed "$(echo "$line" | sed -nE 's/.*FAILED *(\(.*\))?.*/\1/p')"
            elif [[ $line =~ ^not\ ok ]]; then
                status "$name" failed ""
            elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
                status "$name" hang "killed after ${t}s"
            else
                status "$name" noresult "pg_regress exit $rc: $(grep -vE '^(test|parallel| +[a-z])' "$RUN/out/$i" | head -2 | tr '\n' ' ')"
            fi
        done
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
            note "${group// /,}: timed out after ${t}s"
            wait_ready 30 && end_backends || ensure_server
        fi
        crashes=$(log_crashes "$before")
        if [ -n "$crashes" ]; then
            echo "$crashes" | while read -r l; do
                printf '%s\t%s\n' "$group" "$l" >>"$RUN/crashes.tsv"
            done
            note "${group// /,}: $(echo "$crashes" | grep -c .) crash/PANIC/TRAP/out-of-memory line(s) in the server log"
            ensure_server
        fi
        end_prepared "${group// /,}"
        # a spec that failed may not have run its teardown: start the next
        # one in a fresh database, so that one failure does not cascade
        if [ "$SUITE" = isolation ] && ! tail -1 "$RUN/status.tsv" | grep -q '	ok	'; then
            ensure_server && create_db || note "could not recreate $DB after $group"
        fi
    done < <(schedule_groups)
    echo $(($(date +%s) - start)) >"$RUN/seconds"
    cluster_done
    is_root && chown -R postgres "$RUN"
    say "$SUITE on $am: $(cat "$RUN/seconds") s"
}

# ---------------------------------------------------------------- main

get_sources
SRCVERSION=$(basename "$(dirname "$(dirname "$SRC")")")
mkdir -p "$OUTROOT"
chmod 755 "$OUTROOT"
[ "$SUITE" = core ] && build_regress_lib
choose_port

if [ "$AM" = minidb ]; then
    if [ -n "${PGSUITE_BASELINE:-}" ]; then
        BASE=$PGSUITE_BASELINE
        [ -f "$BASE/status.tsv" ] || die "PGSUITE_BASELINE=$BASE is not a run folder"
        say "heap baseline: $BASE (PGSUITE_BASELINE)"
    else
        run_am heap
        BASE=$OUTROOT/$SUITE-heap
    fi
    run_am minidb
    RUN=
    perl "$HERE/compare.pl" --suite "$SUITE" --heap "$BASE" --am "$OUTROOT/$SUITE-minidb" \
        --accepted "$ACCEPTED"
else
    run_am heap
    RUN=
    perl "$HERE/compare.pl" --suite "$SUITE" --heap "$OUTROOT/$SUITE-heap"
fi
