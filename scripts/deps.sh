#!/bin/bash
# scripts/deps.sh [--update]
#
# Check that the Debian 12 packages this project needs are installed.  As
# root, install the missing ones (apt-get update first with --update, or
# when a first install attempt fails).  Otherwise print the exact apt-get
# line to run and exit 1.
set -u

PACKAGES="postgresql-15 postgresql-server-dev-15 postgresql-15-pgtap
libtap-parser-sourcehandler-pgtap-perl libipc-run-perl clang
libclang-rt-14-dev gnuplot-nox make gcc libc6-dev"

installed() {
    dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

missing=()
for p in $PACKAGES; do
    installed "$p" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
    echo "deps: all packages present"
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
echo "deps: all packages present"
