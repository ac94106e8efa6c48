#!/bin/bash
# scripts/pgchroot.sh VERSION [make|run [--] CMD [ARG...]|shell|path|destroy]
#
# A Debian chroot holding PostgreSQL VERSION (17 or 18) and everything the
# test suites need, so that minidb_am can be built and tested against a
# server the host (Debian 12, PostgreSQL 15) does not ship.
#
#   make      (the default) make the chroot, or reuse it when it is complete
#   run       make or reuse it, copy this checkout into it (/minidb_am), mount
#             /proc and a tmpfs on /dev/shm, run CMD there as root from
#             /minidb_am, then end what CMD left running in the chroot and
#             unmount (also on failure or interrupt); exits with CMD's status.
#             Example: scripts/pgchroot.sh 17 run -- ./run-tests.sh
#   shell     run with an interactive bash
#   path      print where the chroot lives
#   destroy   remove it
#
# VERSION  suite            (the Debian suite that ships that server)
#   17     trixie           postgresql-17 (Debian 13)
#   18     forky            postgresql-18 (testing; its Release files may be
#                           expired on the mirror, so Check-Valid-Until is off)
#
# Made with mmdebstrap --variant=apt --mode=root (the mmdebstrap package is
# installed on the host when missing) from the Debian mirror the host's apt
# uses.  An essential hook writes create_main_cluster = false to
# /etc/postgresql-common/createcluster.conf before the server package
# installs, so no cluster is created in the chroot.  The chroot is built in
# a ".new" folder and moved into place with a marker file
# (.minidb_am-chroot) recording what it holds; a chroot without the marker,
# or whose marker records another package list, suite or mirror, is a
# half-made or stale one and is rebuilt.  One lock per chroot serializes
# make and run (a second caller waits).
#
# The chroot shares the host's network and process ids: a server started in
# it must use a port nobody else uses (MINIDB_PORT).  CMD gets a clean
# environment: PATH, HOME, LANG=C.UTF-8, PG_CONFIG (the chroot's), plus CI,
# KEEP_WORK, FUZZ_SECONDS, PLANT_SECONDS, DIFF_STEPS, ISORANDOM_SEED,
# ISORANDOM_SPECS, TERM and every
# MINIDB_* variable of the caller.
#
# Environment:
#   MINIDB_CHROOT_BASE    where chroots live (/var/cache/minidb_am-chroot);
#                         VERSION's is $MINIDB_CHROOT_BASE/pgVERSION
#   MINIDB_CHROOT_SUITE   another suite (e.g. sid for 18)
#   MINIDB_DEBIAN_MIRROR  another mirror (default: the host apt's)
#
# Needs root (mmdebstrap --mode=root, chroot, mount).
set -u

die() { echo "pgchroot: $*" >&2; exit 1; }
usage() {
    echo "usage: $0 VERSION [make|run [--] CMD [ARG...]|shell|path|destroy]   (VERSION: 17 or 18)" >&2
    exit 2
}

REPO=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${1:-}
[ $# -gt 0 ] && shift
CMD=${1:-make}
[ $# -gt 0 ] && shift

case $VERSION in
17) SUITE=${MINIDB_CHROOT_SUITE:-trixie} ;;
18) SUITE=${MINIDB_CHROOT_SUITE:-forky} ;;
*) usage ;;
esac

BASE=${MINIDB_CHROOT_BASE:-/var/cache/minidb_am-chroot}
ROOT=$BASE/pg$VERSION
MARKER=.minidb_am-chroot
PACKAGES="postgresql-$VERSION,postgresql-server-dev-$VERSION,postgresql-$VERSION-pgtap,\
libtap-parser-sourcehandler-pgtap-perl,libipc-run-perl,make,gcc,libc6-dev,clang,\
libclang-rt-dev,gnuplot-nox"
APTOPTS=()
case $SUITE in
bookworm | trixie) ;;
*) APTOPTS=(--aptopt='Acquire::Check-Valid-Until "false"') ;;
esac

# The mirror of the host's apt: the first non-security URI of
# /etc/apt/sources.list.d/*.sources, else of /etc/apt/sources.list
host_mirror() {
    local uri
    uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
        sed -n 's/^URIs:[[:space:]]*//p' | tr ' ' '\n' | grep -v -- '-security' | grep . | head -1)
    if [ -z "$uri" ]; then
        uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -n 's/^deb[[:space:]]\+\(\[[^]]*\][[:space:]]\+\)\?\([^[:space:]]\+\).*/\2/p' |
            grep -v -- '-security' | head -1)
    fi
    echo "${uri:-http://deb.debian.org/debian}"
}
MIRROR=${MINIDB_DEBIAN_MIRROR:-$(host_mirror)}

marker_text() {
    printf 'version %s\nsuite %s\nmirror %s\npackages %s\n' "$VERSION" "$SUITE" "$MIRROR" "$PACKAGES"
}

complete() {
    [ -f "$ROOT/$MARKER" ] &&
        [ "$(grep -v '^made ' "$ROOT/$MARKER")" = "$(marker_text)" ] &&
        [ -x "$ROOT/usr/lib/postgresql/$VERSION/bin/pg_config" ]
}

# Mount points below DIR, deepest first
mounts_under() {
    awk -v d="$1" '$2 == d || index($2, d "/") == 1 { print $2 }' /proc/self/mounts | sort -r
}

# Remove a chroot folder; refuses while anything is mounted inside it
remove_tree() {
    local dir=$1 m
    [ -e "$dir" ] || return 0
    for m in $(mounts_under "$dir"); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    [ -z "$(mounts_under "$dir")" ] || die "still mounted under $dir; not removing it"
    rm -rf --one-file-system "$dir"
}

need_root() {
    [ "$(id -u)" -eq 0 ] || die "must run as root (mmdebstrap --mode=root, chroot, mount)"
}

ensure_mmdebstrap() {
    command -v mmdebstrap >/dev/null 2>&1 && return 0
    echo "pgchroot: installing mmdebstrap on the host"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends mmdebstrap ||
        { apt-get update -q && DEBIAN_FRONTEND=noninteractive \
            apt-get install -y -q --no-install-recommends mmdebstrap; } ||
        die "cannot install mmdebstrap"
}

do_make() {
    if complete; then
        echo "pgchroot: reusing $ROOT (PostgreSQL $VERSION, $SUITE)"
        return 0
    fi
    ensure_mmdebstrap
    if [ -e "$ROOT" ]; then
        echo "pgchroot: $ROOT is incomplete or stale; rebuilding it"
        remove_tree "$ROOT"
    fi
    local new=$ROOT.new start=$SECONDS log=$BASE/pg$VERSION.make.log
    remove_tree "$new"
    echo "pgchroot: making $ROOT: PostgreSQL $VERSION from $SUITE, $MIRROR (log: $log)"
    # shellcheck disable=SC2016  # $1 is the hook's argument (the chroot)
    if ! mmdebstrap --variant=apt --mode=root --format=directory \
        "${APTOPTS[@]}" --include="$PACKAGES" \
        --essential-hook='mkdir -p "$1/etc/postgresql-common" && echo "create_main_cluster = false" > "$1/etc/postgresql-common/createcluster.conf"' \
        "$SUITE" "$new" "deb $MIRROR $SUITE main" >"$log" 2>&1; then
        tail -20 "$log" >&2
        remove_tree "$new"
        die "mmdebstrap failed for PostgreSQL $VERSION ($SUITE); see $log"
    fi
    [ -x "$new/usr/lib/postgresql/$VERSION/bin/pg_config" ] ||
        { remove_tree "$new"; die "the chroot has no PostgreSQL $VERSION pg_config"; }
    grep -qx 'create_main_cluster = false' "$new/etc/postgresql-common/createcluster.conf" ||
        echo "pgchroot: warning: createcluster.conf lost create_main_cluster = false" >&2
    { marker_text; echo "made $(date -u +%FT%TZ) in $((SECONDS - start))s"; } >"$new/$MARKER"
    mv "$new" "$ROOT" || die "cannot move $new to $ROOT"
    echo "pgchroot: made $ROOT in $((SECONDS - start))s, $(du -sh --one-file-system "$ROOT" | cut -f1)"
}

# This checkout's files (tracked and untracked, not ignored) into DIR
copy_checkout() {
    local dst=$1
    remove_tree "$dst"
    mkdir -p "$dst"
    if git -C "$REPO" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
        (cd "$REPO" && git ls-files -z --cached --others --exclude-standard |
            while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
            tar --null -T - -cf -) | tar -C "$dst" -xf -
    else
        tar -C "$REPO" --exclude-vcs --exclude-vcs-ignores --exclude=./.cluster \
            --exclude=./test/fuzz/work --exclude=./bench/out -cf - . |
            tar -C "$dst" -xf -
    fi
}

# pids of the processes whose root is the chroot
chroot_pids() {
    local p r
    for p in /proc/[0-9]*; do
        r=$(readlink "$p/root" 2>/dev/null) || continue
        [ "$r" = "$ROOT" ] && echo "${p#/proc/}"
    done
}

cleanup_run() {
    local pids
    pids=$(chroot_pids)
    if [ -n "$pids" ]; then
        echo "pgchroot: ending what is still running in the chroot: $(echo $pids)" >&2
        kill -TERM $pids 2>/dev/null
        sleep 3
        pids=$(chroot_pids)
        [ -n "$pids" ] && kill -KILL $pids 2>/dev/null
        sleep 1
    fi
    for m in $(mounts_under "$ROOT"); do
        umount "$m" 2>/dev/null || umount -l "$m" || echo "pgchroot: cannot unmount $m" >&2
    done
}

do_run() {
    [ "${1:-}" = "--" ] && shift
    [ $# -gt 0 ] || usage
    do_make || exit 1
    copy_checkout "$ROOT/minidb_am" || die "cannot copy the checkout into $ROOT/minidb_am"
    # We hold the chroot's lock: whatever still runs or is mounted there was
    # left by an earlier run that was killed
    cleanup_run
    rm -rf --one-file-system "$ROOT"/tmp/minidb_am-* # work folders of earlier runs
    trap cleanup_run EXIT
    trap 'exit 130' INT TERM
    mount -t proc proc "$ROOT/proc" || die "cannot mount /proc in the chroot"
    mkdir -p "$ROOT/dev/shm"
    mount -t tmpfs -o mode=1777,size=2g tmpfs "$ROOT/dev/shm" || die "cannot mount /dev/shm in the chroot"
    local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
        HOME=/root LANG=C.UTF-8 "PG_CONFIG=/usr/lib/postgresql/$VERSION/bin/pg_config")
    local v
    for v in CI KEEP_WORK FUZZ_SECONDS PLANT_SECONDS DIFF_STEPS ISORANDOM_SEED ISORANDOM_SPECS \
        TERM $(compgen -e MINIDB_); do
        [ -n "${!v+x}" ] && envs+=("$v=${!v}")
    done
    local chrooted=(chroot "$ROOT" /usr/bin/env -i "${envs[@]}"
        /bin/bash -c 'cd /minidb_am && exec "$@"' pgchroot "$@")
    if [ "$INTERACTIVE" = 1 ]; then
        "${chrooted[@]}"
        return
    fi
    # In the background, so that a TERM or INT to this script is handled at
    # once (the EXIT trap then ends what runs in the chroot); stdin kept
    "${chrooted[@]}" 0<&0 &
    wait $!
}

case $CMD in
path)
    echo "$ROOT"
    exit 0
    ;;
make | run | shell | destroy) need_root ;;
*) usage ;;
esac

mkdir -p "$BASE" || die "cannot create $BASE"
exec 9>"$BASE/pg$VERSION.lock"
if ! flock -n 9; then
    echo "pgchroot: $ROOT is in use; waiting for it"
    flock 9
fi

case $CMD in
make) do_make ;;
run) INTERACTIVE=0 do_run "$@" ;;
shell) INTERACTIVE=1 do_run /bin/bash ;;
destroy)
    remove_tree "$ROOT.new"
    remove_tree "$ROOT"
    rm -f "$BASE/pg$VERSION.make.log"
    echo "pgchroot: removed $ROOT"
    ;;
esac
