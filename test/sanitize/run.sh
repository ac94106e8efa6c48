#!/bin/bash
# test/sanitize/run.sh [WORKDIR]  -- the pg_regress (sql/) and isolation
# (specs/) suites against an AddressSanitizer + UBSan build of minidb_am,
# with a streaming standby replaying all of their WAL under the sanitizers.
#
#   1. copies the checkout to WORKDIR/tree and builds it there with
#      SANITIZE_CFLAGS (below), so the checkout's own objects, and the
#      minidb_am.so that "make install" put into the server, are untouched;
#   2. copies the server found by PG_CONFIG (bin, pkglibdir, share) to
#      WORKDIR/pg, keeping its layout: PostgreSQL finds its share and lib
#      folders relative to the postgres binary, so the copy is a complete
#      server of its own, and the sanitized library is installed into it;
#   3. initdb, and starts that server with the sanitizer runtime preloaded
#      (LD_PRELOAD: the postgres binary is not instrumented, only
#      minidb_am.so is) and minidb_am in shared_preload_libraries; then a
#      streaming standby of it (pg_basebackup), started the same way, whose
#      startup process replays everything the suites write (minidb's redo
#      of its compact records included) -- not in valgrind mode;
#   4. the self-test: a separate module (minidb_sanitize_plant.c) makes one
#      heap overflow, one stack overflow and one misaligned load, each of
#      which must be reported -- so a clean run is known to have been able
#      to report something;
#   5. runs "make regresscheck" and "make isolationcheck" against the
#      primary, waits for the standby to replay up to the primary's last
#      WAL position, stops both, and collects the sanitizer reports: the
#      files under WORKDIR/cluster/san/ (log_path: one file per process
#      that reported) and the lines of the server logs that tell of one (a
#      sanitizer message, a process killed by a signal).
#
# Output: pg_regress's lines, every report in full, then one verdict line
# per test, "sanitize NAME ... ok" or "sanitize NAME ... FAILED (reason)":
#   selftest_heap, selftest_stack, selftest_align   the planted errors were
#                           reported (the only reports that pass)
#   NAME                    each sql/ and specs/ test: pg_regress passed it
#                           and no backend of it reported (a backend is
#                           matched to its test by pid, through the
#                           application_name of its log_connections line,
#                           which pg_regress sets to pg_regress/NAME and
#                           isolation/NAME)
#   standby_replay          the standby replayed all the WAL and none of
#                           its processes reported
#   (unattributed)          a report from a process of no test (autovacuum,
#                           a dblink session, ...): printed only then
# Exit status 0 only when every verdict is ok.
#
# Environment:
#   PG_CONFIG               the server to copy and build against (pg_config)
#   MINIDB_SANITIZE_PORT    the primary's port (default: the first free one
#                           after MINIDB_PORT when that is set, else from
#                           5433); the standby's is the next free one
#   SANITIZE_REGRESS        the sql/ tests to run (default: all)
#   SANITIZE_ISOLATION      the specs/ tests to run (default: all)
#   SANITIZE_STANDBY        0: no standby (default 1; always 0 for valgrind)
#   SANITIZE_MODE           asan (default), or valgrind: a plain -O1 build,
#                           the postmaster under valgrind memcheck with
#                           --trace-children and PostgreSQL's suppressions
#                           (slow: use with a subset)
#   SANITIZE_CC             compiler (asan: clang, see below; valgrind: the
#                           server's)
#   KEEP_WORK=1             keep WORKDIR when everything passed
#
# Needs clang and libclang-rt-14-dev (scripts/deps.sh), gcc for the
# preloaded shim, valgrind only for valgrind mode.  As root (CI), the
# servers and the tests run as the postgres user, and WORKDIR is given to
# postgres.
set -u

REPO=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$REPO/test/sanitize
PG_CONFIG=${PG_CONFIG:-pg_config}
MODE=${SANITIZE_MODE:-asan}
STANDBY=${SANITIZE_STANDBY:-1}
[ "$MODE" = valgrind ] && STANDBY=0
# -DMINIDB_CHECK_FAST_PATH: the readers' shortcuts also run the way they
# stand in for and raise an error where the two disagree (see chain.c and
# rows_order_by_age in minidb_scan.c)
SANITIZE_CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -O1 -g -DMINIDB_CHECK_FAST_PATH"

WORK=${1:-}
[ -n "$WORK" ] || WORK=$(mktemp -d /tmp/minidb_am-sanitize.XXXXXX)
WORK=$(mkdir -p "$WORK" && cd "$WORK" && pwd) || exit 1
chmod 755 "$WORK"
TREE=$WORK/tree
PGCOPY=$WORK/pg
CDIR=$WORK/cluster
SAN=$CDIR/san
LOG=$WORK/logs
DATA=$CDIR/data
SDATA=$CDIR/standby
SLOG=$CDIR/server.log
STLOG=$CDIR/standby.log

is_root() { [ "$(id -u)" -eq 0 ]; }
as_pg() {
    if is_root; then
        (cd / && runuser -u postgres -- "$@")
    else
        "$@"
    fi
}
die() { echo "sanitize: $*" >&2; exit 1; }
say() { echo "sanitize: $*"; }

rm -rf "$TREE" "$PGCOPY" "$CDIR" "$LOG"
mkdir -p "$TREE" "$PGCOPY" "$CDIR" "$SAN" "$LOG"

# ------------------------------------------------------------ the build
say "building the checkout in $TREE (mode $MODE)"
tar -C "$REPO" --exclude=./.git --exclude=./.cluster --exclude=./test/fuzz/work \
    --exclude='*.o' --exclude='*.so' --exclude='*.bc' --exclude=./results \
    --exclude=./output_iso --exclude=./tmp_check -cf - . | tar -C "$TREE" -xf - ||
    die "cannot copy the checkout"
# The compiler is clang, although the server is built with gcc (same C
# ABI): clang's ASan runtime carries UBSan in it, so there is one runtime
# to preload, which reads ASAN_OPTIONS and UBSAN_OPTIONS when it starts and
# writes every report, of either kind, to the one log_path.  gcc's
# libubsan is a second runtime: it reads its options only at the first
# report, from /proc/self/environ, which by then holds the postmaster's ps
# display (PostgreSQL overwrites its environment area for it), and its
# log_path is ignored (libasan's copy of the common runtime answers the
# call that sets it); its reports came out on stderr without a pid, and
# with exit(1) instead of abort().
# The flags are the server's (pg_config --cflags) minus gcc-only ones and
# the optimization level, then SANITIZE_CFLAGS.
case $MODE in
asan)
    CC_SAN=${SANITIZE_CC:-clang}
    cflags=
    for f in $($PG_CONFIG --cflags); do
        case $f in
        -fexcess-precision=*|-Wno-format-truncation|-Wno-stringop-truncation|\
        -Wcast-function-type|-Wimplicit-fallthrough=*|-O[0-9s]) ;;
        *) cflags="$cflags $f" ;;
        esac
    done
    # (-Wno-ignored-attributes: clang does not know gnu_printf)
    MAKEVARS=(CC="$CC_SAN" CFLAGS="$cflags -Wno-ignored-attributes $SANITIZE_CFLAGS")
    RUNTIME=$($CC_SAN -print-file-name=libclang_rt.asan-x86_64.so)
    [ -e "$RUNTIME" ] || die "no ASan runtime ($RUNTIME): install libclang-rt-14-dev"
    ;;
valgrind)
    # the server's compiler and flags, -O1 for exact line numbers
    CC_SAN=${SANITIZE_CC:-$($PG_CONFIG --cc)}
    MAKEVARS=(CC="$CC_SAN" COPT="-O1 -g -fno-omit-frame-pointer")
    command -v valgrind >/dev/null || die "valgrind is not installed"
    ;;
*)
    die "SANITIZE_MODE must be asan or valgrind"
    ;;
esac
# with_llvm=no: no bitcode (JIT is off in this cluster, and bitcode would
# not be instrumented anyway)
MAKEVARS+=(PG_CONFIG="$PG_CONFIG" with_llvm=no)
if ! make -C "$TREE" "${MAKEVARS[@]}" >"$LOG/build.log" 2>&1; then
    tail -30 "$LOG/build.log"
    die "build failed (see $LOG/build.log)"
fi
# the self-test module, same flags
if ! make -C "$TREE/test/sanitize" "${MAKEVARS[@]}" >"$LOG/build_plant.log" 2>&1; then
    tail -30 "$LOG/build_plant.log"
    die "self-test module build failed (see $LOG/build_plant.log)"
fi

# ------------------------------------------------------------ the server copy
BINDIR=$($PG_CONFIG --bindir)
PKGLIBDIR=$($PG_CONFIG --pkglibdir)
SHAREDIR=$($PG_CONFIG --sharedir)
# The longest common folder of bindir, pkglibdir and sharedir: PostgreSQL
# relocates share and pkglib by their paths relative to it
prefix=$BINDIR
while [ "${SHAREDIR#"$prefix"/}" = "$SHAREDIR" ] || [ "${PKGLIBDIR#"$prefix"/}" = "$PKGLIBDIR" ]; do
    prefix=$(dirname "$prefix")
    [ "$prefix" = / ] && prefix= && break
done
for d in "$BINDIR" "$PKGLIBDIR" "$SHAREDIR"; do
    rel=${d#"$prefix"/}
    [ -d "$PGCOPY/$rel" ] && continue
    mkdir -p "$(dirname "$PGCOPY/$rel")"
    cp -a "$d" "$PGCOPY/$rel" || die "cannot copy $d"
done
CBIN=$PGCOPY/${BINDIR#"$prefix"/}
CLIB=$PGCOPY/${PKGLIBDIR#"$prefix"/}
CSHARE=$PGCOPY/${SHAREDIR#"$prefix"/}
# Stage "make install" and take the library and the extension's files
# (whatever the Makefile installs) from it
STAGE=$WORK/stage
rm -rf "$STAGE"
if ! make -C "$TREE" "${MAKEVARS[@]}" DESTDIR="$STAGE" install >"$LOG/install.log" 2>&1; then
    tail -20 "$LOG/install.log"
    die "staged install failed (see $LOG/install.log)"
fi
cp "$STAGE$PKGLIBDIR"/minidb_am.so "$CLIB/" || die "no minidb_am.so staged"
cp "$STAGE$SHAREDIR"/extension/* "$CSHARE/extension/" || die "no extension files staged"
cp "$TREE/test/sanitize/minidb_sanitize_plant.so" "$CLIB/" || die "no self-test module"
rm -rf "$STAGE"
# preloaded after the runtime: a plain shared library, not instrumented
if [ "$MODE" = asan ] && ! gcc -O1 -g -shared -fPIC -Wall -Wextra -Werror \
        -o "$WORK/asan_init_first.so" "$HERE/asan_init_first.c" -ldl >"$LOG/shim.log" 2>&1; then
    cat "$LOG/shim.log"
    die "cannot build asan_init_first.so"
fi
# the copy really is the server that loads the library (relocation worked)
[ "$("$CBIN/pg_config" --pkglibdir)" = "$CLIB" ] ||
    die "the server copy does not relocate: $("$CBIN/pg_config" --pkglibdir) != $CLIB"

is_root && chown -R postgres "$WORK"

# ------------------------------------------------------------ the servers
port_free() {
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
        return 1
    fi
    [ ! -e "/tmp/.s.PGSQL.$1.lock" ] && [ ! -e "$CDIR/.s.PGSQL.$1.lock" ]
}
first_free_port() {    # first_free_port FROM
    local p
    for p in $(seq "$1" $(($1 + 100))); do
        port_free "$p" && echo "$p" && return 0
    done
    return 1
}
if [ -n "${MINIDB_SANITIZE_PORT:-}" ]; then
    PORT=$MINIDB_SANITIZE_PORT
    port_free "$PORT" || die "port $PORT is in use"
else
    from=5433
    [ -n "${MINIDB_PORT:-}" ] && from=$((MINIDB_PORT + 1))
    PORT=$(first_free_port $from) || die "no free port from $from"
fi
SPORT=$(first_free_port $((PORT + 1))) || die "no free port for the standby"

as_pg "$CBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --no-locale \
    --no-sync >"$LOG/initdb.log" 2>&1 || { cat "$LOG/initdb.log"; die "initdb failed"; }
cat >>"$DATA/postgresql.conf" <<CONF

# test/sanitize/run.sh
listen_addresses = ''
unix_socket_directories = '$CDIR'
port = $PORT
fsync = off
synchronous_commit = off
full_page_writes = off
max_prepared_transactions = 10
shared_preload_libraries = 'minidb_am'
# JIT-compiled expressions would not be instrumented
jit = off
# pid -> test (application_name) for the reports
log_connections = on
log_min_messages = warning
log_line_prefix = '%m [%p] %q%a '
CONF

# The sanitizer runtime.  detect_leaks=0: PostgreSQL frees by memory
# context and at exit, not chunk by chunk.  abort_on_error: a report kills
# the process with SIGABRT, which the postmaster logs.
# allocator_may_return_null: malloc failing returns NULL, as PostgreSQL
# expects (it raises "out of memory"), rather than a report.
# quarantine_size_mb: every backend keeps its own; 256 MB is the default.
# One runtime: UBSan's reports go to the same log_path, asan.PID.
# No suppressions are needed (see the README, "Sanitizers").
ASAN_OPTS="detect_leaks=0:abort_on_error=1:halt_on_error=1:allocator_may_return_null=1"
ASAN_OPTS="$ASAN_OPTS:quarantine_size_mb=64:log_path=$SAN/asan"
UBSAN_OPTS="print_stacktrace=1:halt_on_error=1:abort_on_error=1"

start_server() {    # start_server DATADIR LOGFILE PORT
    case $MODE in
    asan)
        # the runtime, then asan_init_first.so (see there: without it the
        # server hangs at startup)
        as_pg env LD_PRELOAD="$RUNTIME $WORK/asan_init_first.so" ASAN_OPTIONS="$ASAN_OPTS" \
            UBSAN_OPTIONS="$UBSAN_OPTS" \
            "$CBIN/pg_ctl" -D "$1" -l "$2" -w -t 120 start >>"$LOG/pg_ctl.log" 2>&1
        ;;
    valgrind)
        # memcheck over the postmaster and every process it forks, with
        # PostgreSQL's own suppressions (src/tools/valgrind.supp)
        as_pg bash -c "cd '$CDIR' && exec valgrind --quiet --trace-children=yes \
            --track-origins=yes --read-var-info=yes --num-callers=30 \
            --leak-check=no --error-exitcode=0 \
            --suppressions='$HERE/valgrind.supp' --log-file='$SAN/valgrind.%p' \
            '$CBIN/postgres' -D '$1' >>'$2' 2>&1 </dev/null &"
        local i
        for i in $(seq 1 300); do
            as_pg "$CBIN/pg_isready" -q -h "$CDIR" -p "$3" && return 0
            sleep 1
        done
        return 1
        ;;
    esac
}
stop_servers() {
    [ -f "$SDATA/postmaster.pid" ] &&
        as_pg "$CBIN/pg_ctl" -D "$SDATA" -m fast -w -t 300 stop >/dev/null 2>&1
    as_pg "$CBIN/pg_ctl" -D "$DATA" -m fast -w -t 300 stop >/dev/null 2>&1
}
trap stop_servers EXIT
psql_at() {    # psql_at PORT ARGS...
    local port=$1
    shift
    as_pg env PGHOST="$CDIR" PGPORT="$port" PGUSER=postgres "$CBIN/psql" -X -q -A -t "$@"
}

say "server copy $PGCOPY, cluster $CDIR, port $PORT"
if ! start_server "$DATA" "$SLOG" "$PORT"; then
    tail -30 "$SLOG" 2>/dev/null
    cat "$SAN"/* 2>/dev/null | head -60
    die "server did not start"
fi
if [ "$STANDBY" = 1 ]; then
    say "standby on port $SPORT (replays the suites' WAL)"
    as_pg "$CBIN/pg_basebackup" -h "$CDIR" -p "$PORT" -U postgres -D "$SDATA" -R \
        -X stream --checkpoint=fast >"$LOG/basebackup.log" 2>&1 ||
        { cat "$LOG/basebackup.log"; die "pg_basebackup failed"; }
    printf '\n# the standby\nport = %s\nhot_standby = on\n' "$SPORT" >>"$SDATA/postgresql.conf"
    if ! start_server "$SDATA" "$STLOG" "$SPORT"; then
        tail -30 "$STLOG" 2>/dev/null
        die "standby did not start"
    fi
fi

# ------------------------------------------------------------ the self-test
# Each planted error must kill its backend with a report (checked below);
# the postmaster restarts the others, and the suites start once it is back.
case $MODE in
asan) SELFTESTS="heap:1 stack:8 align:1" ;;
valgrind) SELFTESTS="heap:1" ;;   # memcheck sees neither of the others
esac
say "self-test: planted errors ($SELFTESTS)"
for st in $SELFTESTS; do
    kind=${st%%:*} n=${st#*:}
    as_pg env PGAPPNAME="sanitize_selftest/$kind" PGHOST="$CDIR" PGPORT="$PORT" \
        PGUSER=postgres "$CBIN/psql" -X -q -d postgres \
        -c "CREATE FUNCTION pg_temp.sanitize_plant(text, int) RETURNS int
              AS '\$libdir/minidb_sanitize_plant' LANGUAGE C STRICT" \
        -c "SELECT 'harmless', pg_temp.sanitize_plant('$kind', 0)" \
        -c "SELECT pg_temp.sanitize_plant('$kind', $n)" >>"$LOG/selftest.log" 2>&1
    sleep 2     # the postmaster notices the crash and restarts
    for i in $(seq 1 120); do
        as_pg "$CBIN/pg_isready" -q -h "$CDIR" -p "$PORT" -d postgres && break
        sleep 1
    done
done

# ------------------------------------------------------------ the suites
run_suite() {    # run_suite TARGET VAR LIST
    local target=$1 var=$2 list=$3 args=()
    [ -n "$list" ] && args=("$var=$list")
    as_pg env PGHOST="$CDIR" PGPORT="$PORT" PGUSER=postgres \
        make -C "$TREE" PG_CONFIG="$PG_CONFIG" "$target" "${args[@]}" \
        >"$LOG/$target.log" 2>&1
}
# pg_regress's result lines: "test x ... ok" / "... FAILED" (15),
# "ok N - x" / "not ok N + x" (16 and later: TAP, "-" serial, "+" parallel)
REGRESS_OK='\.\.\. +ok|^ok +[0-9]+ +[-+] '
REGRESS_LINE='\.\.\. |^(not )?ok +[0-9]+ +[-+] '
say "pg_regress (sql/)"
run_suite regresscheck REGRESS "${SANITIZE_REGRESS:-}"
grep -E "$REGRESS_LINE" "$LOG/regresscheck.log"
say "isolation (specs/)"
run_suite isolationcheck ISOLATION "${SANITIZE_ISOLATION:-}"
grep -E "$REGRESS_LINE" "$LOG/isolationcheck.log"

# ------------------------------------------------------------ the standby
REPLAYED=
if [ "$STANDBY" = 1 ]; then
    lsn=$(psql_at "$PORT" -d postgres -c "SELECT pg_current_wal_lsn()")
    say "standby: waiting for replay up to $lsn"
    for i in $(seq 1 300); do
        r=$(psql_at "$SPORT" -d postgres -c \
            "SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn" 2>/dev/null)
        [ "$r" = t ] && REPLAYED=$lsn && break
        sleep 1
    done
fi

stop_servers
trap - EXIT
[ "$MODE" = valgrind ] && sleep 5   # valgrind writes its last logs on exit

# ------------------------------------------------------------ the reports
# One file per process that reported: asan.PID (ASan and UBSan), or, in
# valgrind mode, valgrind.PID for every process (--quiet: empty unless an
# error was found).  In valgrind mode an error counts (and is kept in
# valgrind.PID.ours) when it is ours: a frame of ours among the first three
# of the stack where it happened (not for "Syscall param", whose stack is
# the server's write), or in the stack that allocated the uninitialised
# bytes.  The server's own errors do not count: it is stripped, so the
# function names in its suppressions do not match its static functions,
# and it writes its known padding bytes (WAL records, the relcache init
# file) from uninitialised memory.
reports=()
for f in "$SAN"/*; do
    case $f in *.ours) continue ;; esac
    [ -s "$f" ] || continue
    if [ "$MODE" = valgrind ]; then
        awk 'function flush() { if (ours) printf "%s", blk; blk = ""; ours = 0; n = 0; origin = 0 }
             /^--[0-9]+-- / { next }
             /^==[0-9]+== $/ { flush(); next }
             { if (blk == "") syscall = /Syscall param/; blk = blk $0 "\n" }
             /^==[0-9]+== +(at|by) / { n++ }
             /^==[0-9]+== +(Uninitialised value was created|Address )/ { origin = 1 }
             /minidb_am\.so|minidb_sanitize_plant|minidb_[a-z_]*\.c:|chain\.c:|btree_view\.c:|bench\.c:/ {
                 if (origin || (!syscall && n <= 3)) ours = 1
             }
             END { flush() }' "$f" >"$f.ours"
        [ -s "$f.ours" ] && reports+=("$f.ours")
    else
        reports+=("$f")
    fi
done

# What a process belongs to: the standby (its pid is in the standby's
# log), or a test, by the application_name of its connection line
# (pg_regress/NAME, isolation/NAME, sanitize_selftest/KIND)
owner_of_pid() {
    if [ -f "$STLOG" ] && grep -qE "\[$1\] " "$STLOG"; then
        echo standby_replay
        return
    fi
    grep -E "\[$1\] " "$SLOG" |
        grep -oE 'application_name=(pg_regress|isolation|sanitize_selftest)/[A-Za-z0-9_]+' |
        head -1 | sed -E 's/^application_name=//; s/^(pg_regress|isolation)\///'
}

declare -A BAD SELF
unattributed=0
for f in "${reports[@]}"; do
    pid=${f%.ours}
    pid=${pid##*.}
    t=$(owner_of_pid "$pid")
    if [ "${t#sanitize_selftest/}" != "$t" ]; then
        # an expected report: its first line only
        SELF[${t#sanitize_selftest/}]+="$(grep -m1 -E 'ERROR: AddressSanitizer|runtime error|Invalid read' "$f") "
        continue
    fi
    echo
    echo "======== sanitizer report $f (pid $pid, ${t:-no test}) ========"
    head -c 30000 "$f"
    if [ -n "$t" ]; then
        BAD[$t]="${BAD[$t]:+${BAD[$t]}, }$(basename "$f")"
    else
        unattributed=$((unattributed + 1))
    fi
done
# A process killed by a signal without a report file (say, a SIGSEGV the
# runtime missed), or a report on stderr: the server logs' lines
selftest_pids=" $(grep -hE 'connection authorized: .*application_name=sanitize_selftest/' "$SLOG" |
    grep -oE '\[[0-9]+\]' | tr -d '[]' | tr '\n' ' ')"
for lf in "$SLOG" "$STLOG"; do
    [ -f "$lf" ] || continue
    lines=$(grep -nE 'terminated by signal|runtime error:|AddressSanitizer|UndefinedBehaviorSanitizer|==[0-9]+==ERROR' "$lf")
    while read -r pid; do
        case $selftest_pids in *" $pid "*) lines=$(echo "$lines" | grep -vE "PID $pid\)") ;; esac
    done < <(echo "$lines" | grep -oE '\(PID [0-9]+\)' | grep -oE '[0-9]+')
    [ -n "$lines" ] || continue
    echo
    echo "======== $lf ========"
    echo "$lines"
    while read -r pid; do
        [ -e "$SAN/asan.$pid" ] || [ -e "$SAN/valgrind.$pid" ] && continue
        t=$(owner_of_pid "$pid")
        [ "$lf" = "$STLOG" ] && t=standby_replay
        if [ -n "$t" ]; then
            BAD[$t]="${BAD[$t]:+${BAD[$t]}, }pid $pid killed"
        else
            unattributed=$((unattributed + 1))
        fi
    done < <(echo "$lines" | grep -oE '\(PID [0-9]+\) was terminated by signal' | grep -oE '[0-9]+')
    if echo "$lines" | grep -qE 'runtime error:|Sanitizer|==ERROR'; then
        unattributed=$((unattributed + 1))   # a report outside the files
    fi
done

# ------------------------------------------------------------ verdicts
echo
echo "======== verdicts ========"
failed=0 passed=0
verdict() {    # verdict NAME ok|REASON
    if [ "$2" = ok ]; then
        echo "sanitize $1 ... ok${3:+ ($3)}"
        passed=$((passed + 1))
    else
        echo "sanitize $1 ... FAILED ($2)"
        failed=$((failed + 1))
    fi
}
for st in $SELFTESTS; do
    kind=${st%%:*}
    if [ -n "${SELF[$kind]:-}" ]; then
        verdict "selftest_$kind" ok "caught: ${SELF[$kind]% }"
    else
        verdict "selftest_$kind" "the planted error was not reported; see $LOG/selftest.log"
    fi
done
ntests=0
while read -r line; do
    name=$(echo "$line" | sed -E -e 's/^(not )?ok +[0-9]+ +[-+] +([A-Za-z0-9_]+).*/\2/' \
        -e 's/^(test |     )? *([A-Za-z0-9_]+) +\.\.\..*/\2/')
    v=ok
    echo "$line" | grep -qE "$REGRESS_OK" || v="pg_regress"
    if [ -n "${BAD[$name]:-}" ]; then
        v="sanitizer: ${BAD[$name]}"
        unset "BAD[$name]"
    fi
    verdict "$name" "$v"
    ntests=$((ntests + 1))
done < <(grep -hE "$REGRESS_LINE" "$LOG/regresscheck.log" "$LOG/isolationcheck.log")
if [ "$STANDBY" = 1 ]; then
    if [ -n "${BAD[standby_replay]:-}" ]; then
        verdict standby_replay "sanitizer: ${BAD[standby_replay]}"
    elif [ -z "$REPLAYED" ]; then
        verdict standby_replay "did not replay up to the primary's last WAL position; see $STLOG"
    else
        verdict standby_replay ok "replayed up to $REPLAYED"
    fi
    unset "BAD[standby_replay]"
fi
# reports of tests that pg_regress did not list (should not happen)
for t in "${!BAD[@]}"; do
    verdict "$t" "sanitizer: ${BAD[$t]}"
done
if [ "$unattributed" -gt 0 ]; then
    verdict "(unattributed)" "$unattributed report(s) or crash(es) from processes of no test"
fi
if [ "$ntests" -eq 0 ]; then
    verdict "(runner)" "no test ran; see $LOG"
fi
say "$passed passed, $failed failed (mode $MODE; logs: $WORK)"
if [ "$failed" -eq 0 ] && [ "${KEEP_WORK:-0}" != 1 ]; then
    rm -rf "$WORK"
fi
[ "$failed" -eq 0 ]
