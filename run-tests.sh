#!/bin/bash
# ./run-tests.sh — build, install and run every test suite of minidb_am.
#
# Steps: Debian packages (scripts/deps.sh: installs them as root, otherwise
# prints the apt-get line and stops), build with -Werror, the suites that
# need no server (unit, fuzz, planted bug), make install, the private
# cluster (scripts/cluster.sh), then pg_regress, isolation, pgTAP and Perl
# TAP suites against it.
#
# Counting rule for the last line, "N passed, M failed":
#   build            1 (make COPT=-Werror), install 1
#   unit             one per TAP assertion ("ok N" / "not ok N")
#   fuzz, plantedbug 1 each
#   regress          one per sql/*.sql file (pg_regress's "test x ... ok" or
#                    "... FAILED" on 15, "ok N - x" or "not ok N - x" on 16+)
#   isolation        one per specs/*.spec file
#   isoheap          one per spec marked "# oracle: heap", run with heap
#                    tables against the same expected file
#   isorandom        one per spec that test/isolation/random_oracle.pl
#                    generates (ISORANDOM_SEED seeds, ISORANDOM_SPECS each),
#                    minidb's output against heap's; specs whose heap runs
#                    differ are discarded, not counted
#   pgtap            one per assertion in test/pgtap/*.sql
#   tap              one per top-level assertion in t/*.pl
#   pgcore           one per test of PostgreSQL's regression suite (and one
#                    for crashes in the server log), minidb against heap
#   pgisolation      one per spec of PostgreSQL's isolation suite, likewise
#   sanitize         one per verdict line of test/sanitize/run.sh: each
#                    sql/*.sql and specs/*.spec file run against an ASan +
#                    UBSan build, the 3 planted errors of its self-test,
#                    and the standby that replays their WAL
# A suite whose runner fails without reporting a failed test (a crash, a
# plan that came up short) adds one failure.  Exit status: 0 only when
# nothing failed.
#
# Environment: PG_CONFIG (pg_config): the server to build, install and test
# against (its major version picks the Debian packages, its bindir the
# cluster's, pg_regress's, psql's and prove's programs); FUZZ_SECONDS (60),
# PLANT_SECONDS (120), ISORANDOM_SEED (the seed list of isorandom, "1"),
# ISORANDOM_SPECS (its specs per seed, 120), MINIDB_CLUSTER_DIR,
# MINIDB_PORT (see scripts/cluster.sh), MINIDB_SANITIZE_PORT (see
# test/sanitize/run.sh; default: the first free ports after MINIDB_PORT),
# KEEP_WORK=1 keeps the work folder.
# MINIDB_PGSUITE: count (default) runs PostgreSQL's suites (pgcore,
# pgisolation; test/pgsuite/run.sh) and counts them; report runs them and
# shows their results without counting them in the total; skip leaves them
# out (quick local runs).  They use clusters of their own (PGSUITE_PORT, else
# the first free port from 5700), not the private cluster.
#
# The server suites run in a copy of the checkout owned by the postgres user
# (pg_regress and the TAP tests write into the tree and PostgreSQL will not
# run as root), under /tmp/minidb_am-tests.XXXXXX; it is removed on success.
set -u

REPO=$(cd "$(dirname "$0")" && pwd)
cd "$REPO" || exit 1
export FUZZ_SECONDS=${FUZZ_SECONDS:-60}
export PLANT_SECONDS=${PLANT_SECONDS:-120}
# make, scripts/cluster.sh, scripts/deps.sh and heap_oracle.sh read it
export PG_CONFIG=${PG_CONFIG:-pg_config}

SUITES=()
declare -A PASS FAIL NOTE
TOTAL_PASS=0
TOTAL_FAIL=0

is_root() { [ "$(id -u)" -eq 0 ]; }

as_pg() {
    if is_root; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

record() {    # record SUITE PASSED FAILED NOTE
    SUITES+=("$1")
    PASS[$1]=$2
    FAIL[$1]=$3
    NOTE[$1]=${4:-}
    TOTAL_PASS=$((TOTAL_PASS + $2))
    TOTAL_FAIL=$((TOTAL_FAIL + $3))
}

# A suite shown in the summary but left out of the total
record_uncounted() {    # record_uncounted SUITE PASSED FAILED NOTE
    SUITES+=("$1")
    PASS[$1]=$2
    FAIL[$1]=$3
    NOTE[$1]="not counted (MINIDB_PGSUITE=report)${4:+; $4}"
}

summary() {
    echo
    echo "==================== summary ===================="
    printf '%-12s %7s %7s  %s\n' suite passed failed note
    for s in "${SUITES[@]}"; do
        printf '%-12s %7d %7d  %s\n' "$s" "${PASS[$s]}" "${FAIL[$s]}" "${NOTE[$s]}"
    done
    [ -n "${WORK:-}" ] && [ -d "$WORK" ] && echo "logs: $WORK"
    echo "$TOTAL_PASS passed, $TOTAL_FAIL failed"
}

finish() {
    summary
    [ "$TOTAL_FAIL" -eq 0 ]
    exit $?
}

# Count TAP lines of a log: sets P and F
count_tap() {
    P=$(grep -cE '^ok [0-9]+' "$1")
    F=$(grep -cE '^not ok [0-9]+' "$1")
}

# pg_regress's result lines: "test x ... ok" / "... FAILED" (15),
# "ok N - x" / "not ok N + x" (16 and later: TAP, "-" serial, "+" parallel)
REGRESS_OK='\.\.\. +ok|^ok +[0-9]+ +[-+] '
REGRESS_FAILED='\.\.\. +(FAILED|failed)|^not ok +[0-9]+ +[-+] '
REGRESS_LINE='\.\.\. |^(not )?ok +[0-9]+ +[-+] '

# Count pg_regress result lines of a log: sets P and F
count_regress() {
    P=$(grep -cE "$REGRESS_OK" "$1")
    F=$(grep -cE "$REGRESS_FAILED" "$1")
}

# One failure more when the runner failed but no test said so
runner_failed() {    # runner_failed RC
    if [ "$1" -ne 0 ] && [ "$F" -eq 0 ]; then
        F=1
        return 0
    fi
    return 1
}

section() { echo; echo "==== $* ===="; }

WORK=$(mktemp -d /tmp/minidb_am-tests.XXXXXX)
chmod 755 "$WORK"
LOG=$WORK/logs
mkdir -p "$LOG"

# ---------------------------------------------------------------- deps
section "deps"
if ! scripts/deps.sh; then
    record deps 0 1 "missing Debian packages (see above)"
    finish
fi
if ! BINDIR=$("$PG_CONFIG" --bindir); then
    record deps 0 1 "PG_CONFIG=$PG_CONFIG does not run"
    finish
fi
# psql, pg_prove's psql and the server programs of that installation
export PATH="$BINDIR:$PATH"
echo "PostgreSQL: $("$PG_CONFIG" --version) ($PG_CONFIG)"

# ---------------------------------------------------------------- build
section "build (make COPT=-Werror)"
if make COPT=-Werror >"$LOG/build.log" 2>&1; then
    record build 1 0
else
    tail -30 "$LOG/build.log"
    record build 0 1 "see $LOG/build.log"
    finish
fi

# ---------------------------------------------------------------- unit
section "unit (make unittest)"
make unittest COPT=-Werror >"$LOG/unit.log" 2>&1
rc=$?
count_tap "$LOG/unit.log"
grep -E '^not ok|^#' "$LOG/unit.log"
runner_failed $rc && tail -5 "$LOG/unit.log"
record unit "$P" "$F" "chain.c standalone, gcc"

# ---------------------------------------------------------------- fuzz
section "fuzz (make fuzz, ${FUZZ_SECONDS}s)"
if make fuzz COPT=-Werror FUZZ_SECONDS="$FUZZ_SECONDS" >"$LOG/fuzz.log" 2>&1; then
    record fuzz 1 0 "$(grep '^fuzz: ok' "$LOG/fuzz.log" | sed 's/^fuzz: ok, //')"
else
    tail -30 "$LOG/fuzz.log"
    record fuzz 0 1 "see $LOG/fuzz.log and test/fuzz/work/fuzz/artifacts"
fi

# ---------------------------------------------------------------- planted bug
section "plantedbug (make plantedbug, bound ${PLANT_SECONDS}s)"
if make plantedbug COPT=-Werror PLANT_SECONDS="$PLANT_SECONDS" >"$LOG/plantedbug.log" 2>&1; then
    grep '^plantedbug: ok' "$LOG/plantedbug.log"
    record plantedbug 1 0 "$(grep -o 'caught in [0-9.]*s wall' "$LOG/plantedbug.log")"
else
    tail -30 "$LOG/plantedbug.log"
    record plantedbug 0 1 "planted bug not caught, see $LOG/plantedbug.log"
fi

# ---------------------------------------------------------------- install
section "install (make install)"
if make install >"$LOG/install.log" 2>&1; then
    record install 1 0
else
    tail -10 "$LOG/install.log"
    is_root || echo "run-tests: installing needs root: sudo make install"
    record install 0 1 "server suites skipped"
    finish
fi

# ---------------------------------------------------------------- cluster
section "private cluster"
STARTED=0
if ! scripts/cluster.sh status >/dev/null 2>&1; then
    if ! scripts/cluster.sh start; then
        record cluster 0 1 "cluster did not start; server suites skipped"
        finish
    fi
    STARTED=1
else
    scripts/cluster.sh status
fi
stop_cluster() { [ "$STARTED" -eq 1 ] && scripts/cluster.sh stop >/dev/null 2>&1; }
trap stop_cluster EXIT
eval "$(scripts/cluster.sh env)"
export PGHOST PGPORT PGUSER

# The checkout, copied for the postgres user (built objects included)
TREE=$WORK/tree
mkdir -p "$TREE"
tar -C "$REPO" --exclude=./.git --exclude=./.cluster --exclude=./test/fuzz/work \
    -cf - . | tar -C "$TREE" -xf -
is_root && chown -R postgres "$WORK"

# ---------------------------------------------------------------- regress
section "regress (pg_regress, sql/*.sql)"
as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
    make -C "$TREE" regresscheck >"$LOG/regress.log" 2>&1
rc=$?
count_regress "$LOG/regress.log"
grep -E "$REGRESS_LINE" "$LOG/regress.log"
if [ "$F" -gt 0 ] || [ $rc -ne 0 ]; then
    [ -f "$TREE/regression.diffs" ] && head -60 "$TREE/regression.diffs"
    runner_failed $rc && tail -10 "$LOG/regress.log"
fi
record regress "$P" "$F" "$( [ "$F" -gt 0 ] && echo "diffs: $TREE/regression.diffs")"

# ---------------------------------------------------------------- isolation
section "isolation (specs/*.spec)"
if ls specs/*.spec >/dev/null 2>&1; then
    as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
        make -C "$TREE" isolationcheck >"$LOG/isolation.log" 2>&1
    rc=$?
    count_regress "$LOG/isolation.log"
    grep -E "$REGRESS_LINE" "$LOG/isolation.log"
    if [ "$F" -gt 0 ] || [ $rc -ne 0 ]; then
        [ -f "$TREE/output_iso/regression.diffs" ] && head -60 "$TREE/output_iso/regression.diffs"
        runner_failed $rc && tail -10 "$LOG/isolation.log"
    fi
    record isolation "$P" "$F" "$( [ "$F" -gt 0 ] && echo "diffs: $TREE/output_iso/regression.diffs")"
else
    record isolation 0 0 "no specs"
fi

# ---------------------------------------------------------------- heap oracle
section "isoheap (specs marked '# oracle: heap', run USING heap)"
as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" \
    "$TREE/test/isolation/heap_oracle.sh" "$WORK/heap_oracle" >"$LOG/isoheap.log" 2>&1
rc=$?
count_regress "$LOG/isoheap.log"
grep -E "$REGRESS_LINE" "$LOG/isoheap.log"
if [ "$F" -gt 0 ] || [ $rc -ne 0 ]; then
    [ -f "$WORK/heap_oracle/out/regression.diffs" ] && head -60 "$WORK/heap_oracle/out/regression.diffs"
    runner_failed $rc && tail -10 "$LOG/isoheap.log"
fi
record isoheap "$P" "$F" "expected outputs are heap's"

# ---------------------------------------------------------------- random specs, heap as oracle
ISORANDOM_SEED=${ISORANDOM_SEED:-1}
ISORANDOM_SPECS=${ISORANDOM_SPECS:-120}
section "isorandom (test/isolation/random_oracle.pl: seeds $ISORANDOM_SEED, $ISORANDOM_SPECS specs each)"
as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" PG_CONFIG="$PG_CONFIG" PATH="$PATH" \
    ISORANDOM_SEED="$ISORANDOM_SEED" ISORANDOM_SPECS="$ISORANDOM_SPECS" \
    perl "$TREE/test/isolation/random_oracle.pl" "$WORK/isorandom" >"$LOG/isorandom.log" 2>&1
rc=$?
P=$(grep -cE '^isorandom [^ ]+ \.\.\. ok$' "$LOG/isorandom.log")
F=$(grep -cE '^isorandom [^ ]+ \.\.\. FAILED' "$LOG/isorandom.log")
grep -E '^isorandom [^ ]+ \.\.\. (FAILED|discarded)|^isorandom:' "$LOG/isorandom.log"
runner_failed $rc && tail -10 "$LOG/isorandom.log"
record isorandom "$P" "$F" "$(grep -oE '[0-9]+ discarded \([0-9]+s' "$LOG/isorandom.log" | tr -d '(')"

# ---------------------------------------------------------------- differential
section "diff (test/diff/run.sh, heap vs minidb)"
as_pg env PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" PGDATABASE=postgres \
    "$TREE/test/diff/run.sh" >"$LOG/diff.log" 2>&1
rc=$?
grep -E '^seed|^minidb_diff' "$LOG/diff.log"
P=$(grep -c '^seed [0-9]*: ok' "$LOG/diff.log")
F=$(grep -c '^seed [0-9]*: FAILED' "$LOG/diff.log")
runner_failed $rc && tail -20 "$LOG/diff.log"
record diff "$P" "$F" "8 seeds; reproduce: test/diff/run.sh SEED"

# ---------------------------------------------------------------- pgTAP
section "pgtap (pg_prove test/pgtap/*.sql)"
if ls test/pgtap/*.sql >/dev/null 2>&1; then
    DB=minidb_pgtap
    {
        psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "DROP DATABASE IF EXISTS $DB" \
            -c "CREATE DATABASE $DB" &&
        psql -X -q -v ON_ERROR_STOP=1 -d "$DB" -c "CREATE EXTENSION pgtap" \
            -c "CREATE EXTENSION minidb_am"
    } >"$LOG/pgtap.log" 2>&1
    (cd "$TREE" && pg_prove -v --psql-bin "$BINDIR/psql" -d "$DB" test/pgtap/*.sql) >>"$LOG/pgtap.log" 2>&1
    rc=$?
    count_tap "$LOG/pgtap.log"
    grep -E '^not ok|^#|^Result|^Files=|ERROR' "$LOG/pgtap.log"
    runner_failed $rc && tail -15 "$LOG/pgtap.log"
    record pgtap "$P" "$F" "$(ls test/pgtap/*.sql | wc -l) files"
else
    record pgtap 0 0 "no files"
fi

# ---------------------------------------------------------------- Perl TAP
section "tap (t/*.pl)"
if ls t/*.pl >/dev/null 2>&1; then
    as_pg make -C "$TREE" tapcheck PROVE_FLAGS=-v >"$LOG/tap.log" 2>&1
    rc=$?
    count_tap "$LOG/tap.log"
    grep -E '^not ok|^t/|^Result|^Files=|Dubious|Parse errors' "$LOG/tap.log"
    runner_failed $rc && tail -15 "$LOG/tap.log"
    record tap "$P" "$F" "$(ls t/*.pl | wc -l) files; logs in $TREE/tmp_check"
else
    record tap 0 0 "no t/*.pl"
fi

# ---------------------------------------------------------------- sanitizers
section "sanitize (test/sanitize/run.sh: regress + isolation, ASan + UBSan build)"
start=$SECONDS
KEEP_WORK=1 test/sanitize/run.sh "$WORK/sanitize" >"$LOG/sanitize.log" 2>&1
rc=$?
P=$(grep -cE '^sanitize .* \.\.\. ok' "$LOG/sanitize.log")
F=$(grep -cE '^sanitize .* \.\.\. FAILED' "$LOG/sanitize.log")
grep -E '^sanitize: [0-9]+ passed|^sanitize .* \.\.\. FAILED' "$LOG/sanitize.log"
if [ "$F" -gt 0 ]; then
    # the reports (each in full in the log)
    grep -E -A40 '^======== (sanitizer report|/)' "$LOG/sanitize.log" | head -150
fi
runner_failed $rc && tail -20 "$LOG/sanitize.log"
record sanitize "$P" "$F" "$((SECONDS - start))s; log $LOG/sanitize.log"


# ---------------------------------------------------------------- PostgreSQL's suites
# PostgreSQL's own regression (pgcore) and isolation (pgisolation) suites
# with minidb as the default table AM, each test's output compared with
# heap's on the same machine (test/pgsuite/run.sh: own clusters, own port).
MINIDB_PGSUITE=${MINIDB_PGSUITE:-count}
PGSUITE_KEEP=0
case $MINIDB_PGSUITE in
    count | report | skip) ;;
    *)
        echo "run-tests: MINIDB_PGSUITE must be count, report or skip (not $MINIDB_PGSUITE)"
        MINIDB_PGSUITE=count
        ;;
esac
# the private cluster is not needed any more
stop_cluster
STARTED=0
export PGSUITE_OUT=$WORK/pgsuite
for s in core isolation; do
    suite=pg$s
    section "$suite (test/pgsuite/run.sh $s minidb, MINIDB_PGSUITE=$MINIDB_PGSUITE)"
    if [ "$MINIDB_PGSUITE" = skip ]; then
        record "$suite" 0 0 "skipped (MINIDB_PGSUITE=skip)"
        continue
    fi
    # wall-clock bound: each AM's run stops itself after PGSUITE_RUN_TIMEOUT
    # (core 900 s, isolation 1200 s); this catches anything else
    if [ $s = core ]; then limit=${PGSUITE_CORE_LIMIT:-2100}; else limit=${PGSUITE_ISOLATION_LIMIT:-2700}; fi
    start=$(date +%s)
    timeout -k 60 "$limit" test/pgsuite/run.sh $s minidb >"$LOG/$suite.log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    grep -E '^(FAILED|pgsuite: NOTE|pgsuite: sources)' "$LOG/$suite.log"
    sed -n '/^==== .*summary ====$/,$p' "$LOG/$suite.log"
    last=$(tail -1 "$LOG/$suite.log")
    if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
        P=${BASH_REMATCH[1]}
        F=${BASH_REMATCH[2]}
    else
        P=0
        F=0
    fi
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        echo "run-tests: $suite stopped after ${limit}s"
    fi
    runner_failed $rc && tail -10 "$LOG/$suite.log"
    note="${secs}s; diffs: $PGSUITE_OUT/$s-minidb/diffs"
    if [ "$MINIDB_PGSUITE" = report ]; then
        record_uncounted "$suite" "$P" "$F" "$note"
        [ "$F" -gt 0 ] && PGSUITE_KEEP=1
    else
        record "$suite" "$P" "$F" "$note"
    fi
done

if [ "$TOTAL_FAIL" -eq 0 ] && [ "${KEEP_WORK:-0}" != 1 ] && [ "$PGSUITE_KEEP" -eq 0 ]; then
    rm -rf "$WORK"
fi
finish
