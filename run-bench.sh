#!/bin/bash
# ./run-bench.sh — the main job.
#
# Installs the Debian packages it needs (as root; otherwise prints the
# apt-get line and stops), builds and installs the extension, starts the
# private cluster (scripts/cluster.sh), creates database minidb_bench with
# CREATE EXTENSION minidb_am, and runs bench_main.
#
# bench_main runs the chain-depth suite (bench/chain_depth.sh, README
# section "The chain-depth benchmark"): it prints the seed-style tables and
# writes bench/out/report.txt, bench/out/chain_depth.bench.txt (benchstat)
# and bench/out/chain_depth.png (gnuplot).  Then the scan suite
# (bench/scan.sh, README section "The scan benchmark"; BENCH_SCAN=0 skips
# it): bench/out/scan_report.txt, scan.bench.txt and scan.png.  BENCH_QUICK=1 for a smoke run;
# the full run takes a few minutes on 2 cores.  Everything before it is the
# harness: PGHOST, PGPORT, PGUSER exported, $BENCH_DB holding a fresh
# minidb_am (and dblink, which writes the chains' versions).
#
# The cluster is left running (scripts/cluster.sh psql -d minidb_bench to
# look around, scripts/cluster.sh stop to stop it).
set -u

REPO=$(cd "$(dirname "$0")" && pwd)
cd "$REPO" || exit 1
BENCH_DB=${BENCH_DB:-minidb_bench}

die() { echo "run-bench: $*" >&2; exit 1; }

psql_bench() { psql -X -v ON_ERROR_STOP=1 -d "$BENCH_DB" "$@"; }

machine() {
    echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')," \
         "load $(cut -d' ' -f1-3 /proc/loadavg), $(uname -sr)"
    echo "server:  $(psql_bench -tAc 'SELECT version()')"
}

bench_main() {
    machine
    psql_bench -q -c "CREATE EXTENSION IF NOT EXISTS dblink" || return 1
    bench/chain_depth.sh || return 1
    # the scan suite (README, "The scan benchmark"); BENCH_SCAN=0 skips it
    if [ "${BENCH_SCAN:-1}" != 0 ]; then
        echo
        bench/scan.sh || return 1
    fi
}

scripts/deps.sh || exit 1
echo "run-bench: building"
if ! build_log=$(make COPT=-Werror 2>&1); then
    echo "$build_log" | tail -30
    die "build failed"
fi
if ! make install >/dev/null 2>&1; then
    [ "$(id -u)" -eq 0 ] && die "make install failed"
    die "installing into the system PostgreSQL needs root: sudo make install, then rerun"
fi
scripts/cluster.sh start || die "the private cluster did not start"
eval "$(scripts/cluster.sh env)"
export PGHOST PGPORT PGUSER

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" \
    -c "DROP DATABASE IF EXISTS $BENCH_DB" -c "CREATE DATABASE $BENCH_DB" ||
    die "cannot create database $BENCH_DB"
psql_bench -q -c "CREATE EXTENSION minidb_am" || die "CREATE EXTENSION minidb_am failed"
echo "run-bench: CREATE EXTENSION minidb_am in database $BENCH_DB"
echo

bench_main || die "benchmark failed"
echo
echo "run-bench: done; the cluster keeps running (scripts/cluster.sh stop to stop it)"
