#!/bin/bash
# test/isolation/heap_oracle.sh WORKDIR [--generate]
#
# Heap is the oracle of the isolation specs marked "# oracle: heap": their
# expected output (expected/NAME.out, which `make isolationcheck` compares
# minidb's run against) must be exactly what the same spec prints when its
# tables are heap tables.  This runs every such spec with "USING minidb"
# replaced by "USING heap" (and minidb_row_locks() by pgrowlocks(), the
# function it mirrors) against the server in PGHOST/PGPORT and compares with
# the same expected file.  With --generate it writes heap's output
# into expected/ instead: how the expected files of these specs are made.
#
# Prints pg_regress's "test NAME ... ok|FAILED" lines; exit status non-zero
# when a spec failed.
set -u
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:?usage: heap_oracle.sh WORKDIR [--generate]}
GENERATE=${2:-}
PG_CONFIG=${PG_CONFIG:-pg_config}
ISOLATION=$($PG_CONFIG --pkglibdir)/pgxs/src/test/isolation/pg_isolation_regress

rm -rf "$WORK"
mkdir -p "$WORK/specs" "$WORK/expected" "$WORK/out"
specs=()
for f in "$REPO"/specs/*.spec; do
    grep -q '^# oracle: heap' "$f" || continue
    name=$(basename "$f" .spec)
    sed -e 's/USING minidb/USING heap/g' -e 's/minidb_row_locks(/pgrowlocks(/g' \
        "$f" >"$WORK/specs/$name.spec"
    if [ -f "$REPO/expected/$name.out" ]; then
        cp "$REPO/expected/$name.out" "$WORK/expected/"
    else
        : >"$WORK/expected/$name.out"   # pg_regress needs one to compare
    fi
    specs+=("$name")
done
[ ${#specs[@]} -gt 0 ] || { echo "heap_oracle: no specs marked '# oracle: heap'"; exit 1; }

"$ISOLATION" --inputdir="$WORK" --outputdir="$WORK/out" \
    --bindir="$($PG_CONFIG --bindir)" --dbname=minidb_heap_oracle \
    "${specs[@]}"
rc=$?
if [ "$GENERATE" = --generate ]; then
    for name in "${specs[@]}"; do
        cp "$WORK/out/results/$name.out" "$REPO/expected/$name.out" &&
            echo "heap_oracle: wrote expected/$name.out from heap's run"
    done
    exit 0
fi
exit $rc
