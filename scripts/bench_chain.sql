-- run-bench.sh at the foundation stage: one chain decoded through both
-- walkers, then both walkers timed on chains of growing depth.
\set QUIET 1
\pset pager off
\pset footer off

\echo '== A five-version chain: UPDATE, UPDATE, an aborted UPDATE, DELETE (newest first)'
SELECT minidb_chain_build(
	ARRAY[NULL, 'balance=70', 'balance=999', 'balance=80', 'balance=100'],
	xids => '{1005,1004,1003,1002,1001}',
	cids => '{0,1,0,0,0}',
	flags => ARRAY['tombstone', 'committed', 'aborted', 'committed', 'committed,frozen']) AS chain \gset

SELECT length(:'chain'::bytea) AS record_bytes, (minidb_chain_check(:'chain')).valid;

\echo '-- reference walker (validates, then copies every version):'
SELECT * FROM minidb_chain_decode(:'chain', 'reference');
\echo '-- fast walker (header fields in place, tail checked):'
SELECT * FROM minidb_chain_decode(:'chain', 'fast');

\echo '== Walker timings: ns per read of the version at "position" (median and minimum'
\echo '   over 10 ABBA-alternated rounds in this backend; -1 = no version visible)'
WITH chains(depth) AS (VALUES (1), (10), (100), (1000)),
built AS (
	SELECT depth, minidb_chain_build(ARRAY(SELECT 'value ' || g FROM generate_series(depth, 1, -1) g)) AS c
	FROM chains
),
cuts AS (
	SELECT depth, c, 'head' AS reads, 0 AS pos FROM built
	UNION ALL
	SELECT depth, c, 'oldest', depth - 1 FROM built
),
timed AS (
	SELECT depth, reads, t.*
	FROM cuts, minidb_chain_walk_timing(c, CASE WHEN depth >= 1000 THEN 20000 ELSE 200000 END, pos) t
)
SELECT r.depth AS versions, r.reads AS visible, r.position,
	   round(r.ns_per_op::numeric, 1) AS reference_ns,
	   round(f.ns_per_op::numeric, 1) AS fast_ns,
	   round((r.ns_per_op / f.ns_per_op)::numeric, 2) AS ref_over_fast
FROM timed r JOIN timed f USING (depth, reads)
WHERE r.walker = 'reference' AND f.walker = 'fast'
ORDER BY r.depth, r.reads DESC;
