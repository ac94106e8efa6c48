#!/bin/bash
# Randomized differential test, heap vs minidb (see test/diff/diff.sql).
#
#   PGHOST=... PGPORT=... [PGDATABASE=...] [PGUSER=...] test/diff/run.sh [seed ...]
#
# Environment: DIFF_STEPS (default 300) steps per phase.  Default seeds:
# 1 to 8.  Per seed: a fresh pair of tables and DIFF_STEPS random steps,
# VACUUM both, compare.  Then a second session opens a REPEATABLE READ
# snapshot and records what it sees of both tables; the second phase
# (DIFF_STEPS/2 more steps in two halves, each followed by VACUUM) runs
# while that old snapshot is held, so VACUUM must keep every version it
# still needs; the old session then reads both tables again, through a
# sequential and an index scan, and must see exactly what it saw before.
# After it ends, VACUUM must bring every minidb chain back to one version,
# and the tables are compared once more.  Prints one line per seed and
# "minidb_diff: PASS" or "minidb_diff: FAIL"; exits 1 on any mismatch or
# error.  The schema minidb_diff is dropped on success and left behind on
# failure.
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
# What a session sees of both tables: a digest through a sequential scan and
# one through the primary-key index, per table
DIGEST="SELECT string_agg(d, ' ') FROM (
  SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x.id), '')) AS d FROM minidb_diff.dh x
  UNION ALL SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x.id), '')) FROM minidb_diff.dm x) s"
DIGEST_IDX="SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
  SELECT string_agg(d, ' ') FROM (
  SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x.id), '')) AS d FROM minidb_diff.dh x WHERE id > -2147483648
  UNION ALL SELECT md5(coalesce(string_agg(x::text, ',' ORDER BY x.id), '')) FROM minidb_diff.dm x WHERE id > -2147483648) s;
  RESET enable_seqscan; RESET enable_bitmapscan; RESET enable_indexonlyscan"

# old_session CMD: run CMD in the coprocess OLD and print its output
old_session() {
  printf '%s;\n\\echo __done__\n' "$1" >&"${OLD[1]}"
  local line
  while IFS= read -r line <&"${OLD[0]}"; do
    [ "$line" = "__done__" ] && break
    echo "$line"
  done
}

# one_seed SEED: the whole run for one seed; non-zero on any failure
one_seed() {
  local seed=$1 before now seen seen_idx depth
  $PSQL -c "CALL minidb_diff.run($seed, $steps, true)" \
        -c "VACUUM minidb_diff.dh" -c "VACUUM minidb_diff.dm" \
        -c "CALL minidb_diff.verify($seed, 'after VACUUM')" || return 1

  coproc OLD { $PSQL -A -t 2>&1; }
  old_session "BEGIN ISOLATION LEVEL REPEATABLE READ" >/dev/null
  before=$(old_session "$DIGEST")
  [ "${before%% *}" = "${before##* }" ] ||
    { echo "old snapshot: heap and minidb differ before phase 2: $before"; return 1; }

  $PSQL -c "CALL minidb_diff.run($seed + 1000, $steps / 4, false)" \
        -c "VACUUM minidb_diff.dh" -c "VACUUM minidb_diff.dm" \
        -c "CALL minidb_diff.run($seed + 2000, $steps / 4, false)" \
        -c "VACUUM minidb_diff.dh" -c "VACUUM minidb_diff.dm" \
        -c "CALL minidb_diff.verify($seed, 'second phase with an old snapshot held')" || return 1

  # the tables did change, so the old session below must be reading old versions
  now=$($PSQL -A -t -c "$DIGEST")
  [ "$now" != "$before" ] ||
    { echo "phase 2 changed nothing: the old-snapshot check would prove nothing"; return 1; }

  seen=$(old_session "$DIGEST")
  seen_idx=$(old_session "$DIGEST_IDX")   # (no pipe: coproc fds stay in this shell)
  seen_idx=$(echo "$seen_idx" | grep -v '^$' | tail -1)
  old_session "COMMIT" >/dev/null
  printf '\\q\n' >&"${OLD[1]}"
  wait "$OLD_PID" 2>/dev/null
  [ "$seen" = "$before" ] ||
    { echo "old snapshot, seq scan: saw '$before', now '$seen'"; return 1; }
  [ "$seen_idx" = "$before" ] ||
    { echo "old snapshot, index scan: saw '$before', now '$seen_idx'"; return 1; }

  $PSQL -c "VACUUM minidb_diff.dh" -c "VACUUM minidb_diff.dm" \
        -c "CALL minidb_diff.verify($seed, 'second phase and VACUUM')" || return 1
  depth=$($PSQL -A -t -c "SELECT coalesce(depth_max, 0) FROM minidb_stats('minidb_diff.dm')")
  [ "$depth" -le 1 ] ||
    { echo "after the old snapshot ended, VACUUM left chains $depth versions deep"; return 1; }
  echo "old snapshot kept its view; chains back to depth $depth"
}

failed=""
for seed in $seeds; do
  if out=$(one_seed "$seed" 2>&1); then
    echo "seed $seed: ok  $(echo "$out" | grep -o 'second phase and VACUUM.*' | tail -1); $(echo "$out" | tail -1)"
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
echo "minidb_diff: PASS (seeds: $seeds; $steps + $((steps / 2)) steps each, the second half under an old snapshot)"
exit 0
