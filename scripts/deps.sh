#!/bin/bash
# scripts/deps.sh [--update]
#
# Check that the Debian packages this project needs are installed, for the
# PostgreSQL major version it builds against.  As root, install the missing
# ones (apt-get update first with --update, or when a first install attempt
# fails).  Otherwise print the exact apt-get line to run and exit 1.
#
# The major version comes from $PG_CONFIG (default pg_config) --version;
# when that does not run yet (a fresh machine), from a PG_CONFIG path of
# the form .../postgresql/NN/bin/pg_config, else from the Debian release
# (bookworm 15, trixie 17, forky and sid 18).  MINIDB_PG_MAJOR overrides.
#
# Packages: postgresql-NN, postgresql-server-dev-NN, postgresql-NN-pgtap,
# libtap-parser-sourcehandler-pgtap-perl, libipc-run-perl, clang, the
# clang runtime (libclang-rt-14-dev where the release has it, Debian 12's
# clang being 14; else libclang-rt-dev, the default clang's), gnuplot-nox,
# make, gcc, libc6-dev.
set -u

PG_CONFIG=${PG_CONFIG:-pg_config}

pg_major() {
    local v
    if [ -n "${MINIDB_PG_MAJOR:-}" ]; then
        echo "$MINIDB_PG_MAJOR"
        return
    fi
    v=$("$PG_CONFIG" --version 2>/dev/null | sed -n 's/^PostgreSQL \([0-9][0-9]*\).*/\1/p')
    if [ -z "$v" ]; then
        v=$(printf '%s\n' "$PG_CONFIG" | sed -n 's|.*/postgresql/\([0-9][0-9]*\)/bin/pg_config$|\1|p')
    fi
    if [ -z "$v" ]; then
        case $(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}") in
        trixie) v=17 ;;
        forky | sid) v=18 ;;
        *) v=15 ;;
        esac
    fi
    echo "$v"
}

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# Whether apt can install the package (it has a candidate version)
available() {
    apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [^(]'
}

clang_rt() {
    if installed libclang-rt-14-dev || available libclang-rt-14-dev; then
        echo libclang-rt-14-dev
    else
        echo libclang-rt-dev
    fi
}

MAJOR=$(pg_major)
case $MAJOR in
'' | *[!0-9]*)
    echo "deps: cannot tell the PostgreSQL major version ($PG_CONFIG --version: '$MAJOR')"
    exit 1
    ;;
esac
PACKAGES="postgresql-$MAJOR postgresql-server-dev-$MAJOR postgresql-$MAJOR-pgtap
libtap-parser-sourcehandler-pgtap-perl libipc-run-perl clang
$(clang_rt) gnuplot-nox make gcc libc6-dev"

missing=()
for p in $PACKAGES; do
    installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all packages present (PostgreSQL $MAJOR)"
    exit 0
fi

line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: missing Debian packages: ${missing[*]}"
    echo "deps: run as root:"
    echo "    apt-get update && $line"
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
echo "deps: installing ${missing[*]}"
if [ "${1:-}" = "--update" ]; then
    apt-get update -q || exit 1
fi
if ! apt-get install -y -q --no-install-recommends "${missing[@]}"; then
    echo "deps: install failed; retrying after apt-get update"
    apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}" || exit 1
fi
for p in "${missing[@]}"; do
    installed "$p" || { echo "deps: $p still missing"; exit 1; }
done
echo "deps: all packages present (PostgreSQL $MAJOR)"
