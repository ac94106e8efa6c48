#!/bin/bash
# Randomized differential test, heap vs minidb (see test/diff/diff.sql).
#
#   PGHOST=... PGPORT=... [PGDATABASE=...] [PGUSER=...] test/diff/run.sh [seed ...]
#
# Environment: DIFF_STEPS (default 300) steps per phase.  Default seeds:
# 1 to 8.  Per seed: a fresh pair of tables and DIFF_STEPS random steps,
# VACUUM both, compare, DIFF_STEPS/2 more steps on the vacuumed tables,
# VACUUM, compare.  Prints one line per seed and "minidb_diff: PASS" or
# "minidb_diff: FAIL"; exits 1 on any mismatch or error.  The schema
# minidb_diff is dropped on success and left behind on failure.
set -u
here=$(cd "$(dirname "$0")" && pwd)
seeds=${*:-1 2 3 4 5 6 7 8}
steps=${DIFF_STEPS:-300}
PSQL="psql -X -q -v ON_ERROR_STOP=1"

if ! out=$($PSQL -f "$here/diff.sql" 2>&1); then
  echo "$out"
  echo "minidb_diff: FAIL (setup)"
  exit 1
fi
failed=""
for seed in $seeds; do
  if out=$($PSQL -c "CALL minidb_diff.run($seed, $steps, true)" \
                 -c "VACUUM minidb_diff.dh" -c "VACUUM minidb_diff.dm" \
                 -c "CALL minidb_diff.verify($seed, 'after VACUUM')" \
                 -c "CALL minidb_diff.run($seed + 1000, $steps / 2, false)" \
                 -c "VACUUM minidb_diff.dh" -c "VACUUM minidb_diff.dm" \
                 -c "CALL minidb_diff.verify($seed, 'second phase and VACUUM')" 2>&1); then
    echo "seed $seed: ok  $(echo "$out" | grep -o 'second phase.*' | tail -1)"
  else
    echo "seed $seed: FAILED"
    echo "$out" | sed 's/^/    /'
    failed="$failed $seed"
  fi
done
if [ -n "$failed" ]; then
  echo "minidb_diff: FAIL (seeds:$failed; reproduce with: test/diff/run.sh$failed)"
  exit 1
fi
$PSQL -c "DROP SCHEMA minidb_diff CASCADE" >/dev/null 2>&1
echo "minidb_diff: PASS (seeds: $seeds; $steps + $((steps / 2)) steps each)"
exit 0
