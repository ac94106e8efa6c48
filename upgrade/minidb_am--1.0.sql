/* minidb_am: the table access method itself */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION minidb_am" to load this file. \quit

CREATE FUNCTION minidb_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE ACCESS METHOD minidb TYPE TABLE HANDLER minidb_tableam_handler;
COMMENT ON ACCESS METHOD minidb IS 'inline version chains: one record per row, newest version first';

/* Introspection of a minidb table's records */

CREATE FUNCTION minidb_chain(rel regclass, t tid)
RETURNS TABLE("position" int, xmin xid, cid cid, flags text, len int,
              visible bool)
AS 'MODULE_PATHNAME', 'minidb_chain'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION minidb_chain(regclass, tid) IS
'one row per version of the record at a TID, newest first (table owner or superuser)';
/* minidb_am: SQL functions over bare chain records (minidb_chain_funcs.c) */

-- Build a chain from values, newest first: vals[1] becomes version 0.
-- Defaults: xids 1000 for the oldest version, one more for each newer one;
-- cids 0; no hint flags.  flags elements are comma-separated names among
-- committed, aborted, frozen, tombstone, moved; markers take a NULL value.
CREATE FUNCTION minidb_chain_build(vals text[],
                                   xids xid[] DEFAULT NULL,
                                   cids cid[] DEFAULT NULL,
                                   flags text[] DEFAULT NULL,
                                   successor tid DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'minidb_chain_build'
LANGUAGE C IMMUTABLE PARALLEL SAFE;

COMMENT ON FUNCTION minidb_chain_build(text[], xid[], cid[], text[], tid) IS
'build a minidb chain record (bytea) from values, newest first';

-- Decode a chain through the reference walker (decode everything, copy) or
-- the fast walker (header fields only, in place, tail checked).
CREATE FUNCTION minidb_chain_decode(chain bytea, walker text DEFAULT 'fast')
RETURNS TABLE("position" int, xmin xid, cid cid, flags text, natts int,
              len int, value text)
AS 'MODULE_PATHNAME', 'minidb_chain_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minidb_chain_decode(bytea, text) IS
'decode a minidb chain record through the ''reference'' or ''fast'' walker';

-- Validate without raising an error: where and what is wrong, if anything.
CREATE FUNCTION minidb_chain_check(chain bytea,
                                   OUT valid bool, OUT version int,
                                   OUT field text, OUT detail text)
RETURNS record
AS 'MODULE_PATHNAME', 'minidb_chain_check'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION minidb_chain_check(bytea) IS
'validate a minidb chain record: valid, or the version and field at fault';

-- Time both walkers finding the version at visible_position (default: the
-- oldest; -1: none visible).  Rounds alternate ABBA; median and minimum ns.
CREATE FUNCTION minidb_chain_walk_timing(chain bytea,
                                         iterations int DEFAULT 100000,
                                         visible_position int DEFAULT NULL)
RETURNS TABLE(walker text, "position" int, versions int, iterations int,
              ns_per_op float8, ns_min float8)
AS 'MODULE_PATHNAME', 'minidb_chain_walk_timing'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION minidb_chain_walk_timing(bytea, int, int) IS
'time the reference and fast walkers on one chain record (ns per read)';

-- These functions read only the bytes they are given, never a table, so
-- every role may call them.  Said explicitly, so that a reader (and the
-- pgTAP privilege tests) need not rely on the default.
REVOKE ALL ON FUNCTION minidb_chain_build(text[], xid[], cid[], text[], tid) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_chain_decode(bytea, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_chain_check(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_chain_walk_timing(bytea, int, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_build(text[], xid[], cid[], text[], tid) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_decode(bytea, text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_check(bytea) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_walk_timing(bytea, int, int) TO PUBLIC;
/* minidb_am: the chain-depth benchmark suite (bench.c) */

-- Who may run the benchmarks: superusers, and members of minidb_bench.
-- Roles are cluster-wide and outlive the extension, so create it only once.
DO $$
BEGIN
	IF NOT EXISTS (SELECT FROM pg_catalog.pg_roles WHERE rolname = 'minidb_bench') THEN
		CREATE ROLE minidb_bench NOLOGIN;
		COMMENT ON ROLE minidb_bench IS
			'may run the minidb_am benchmark functions (minidb_bench_*)';
	END IF;
END $$;

-- The chains are written through dblink (CREATE EXTENSION dblink first),
-- one committed transaction per version, while this session's snapshot
-- holds the removal horizon; see bench.c.  The functions are SECURITY
-- DEFINER (their owner, the superuser who created the extension, may
-- connect through dblink without a password) with a fixed search_path;
-- every statement they send is built from validated arguments.

-- ns, bytes and allocations per fetch by TID (table_index_fetch_tuple),
-- for each depth, reader and minidb read path, and heap's HOT chain.
-- format: the minidb records' format (minidb.record_format: v1, v2).
CREATE FUNCTION minidb_bench_chain_depth(
    depths int[] DEFAULT '{1,60}',
    iterations int DEFAULT 200000,
    paths text[] DEFAULT '{copy_eager,copy_lazy,view_lazy}',
    include_heap bool DEFAULT true,
    format text DEFAULT 'v2')
RETURNS TABLE(table_am text, depth int, reader text, path text,
              iterations int, ns_per_op float8, bytes_per_op float8,
              allocs_per_op float8)
AS 'MODULE_PATHNAME', 'minidb_bench_chain_depth'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) IS
'time fetches by TID of a row whose chain has each depth, newest and oldest reader, per read path and beside heap (superuser or minidb_bench)';

-- The row each of those fetches returns: every path must agree.
CREATE FUNCTION minidb_bench_chain_rows(
    depths int[] DEFAULT '{1,60}',
    paths text[] DEFAULT '{copy_eager,copy_lazy,view_lazy}',
    include_heap bool DEFAULT true,
    format text DEFAULT 'v2')
RETURNS TABLE(table_am text, depth int, reader text, path text,
              versions int, row_tid tid, id int, v text, row_xmin xid)
AS 'MODULE_PATHNAME', 'minidb_bench_chain_rows'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) IS
'the row each read path (and heap) returns from chains of each depth, for each reader (superuser or minidb_bench)';

-- Copy into an existing buffer, versus palloc 1 kB and copy.
CREATE FUNCTION minidb_bench_copy_vs_alloc(
    bytes int DEFAULT 897,
    iterations int DEFAULT 1000000)
RETURNS TABLE(operation text, bytes int, alloc_bytes int, iterations int,
              ns_per_op float8, vs_copy float8)
AS 'MODULE_PATHNAME', 'minidb_bench_copy_vs_alloc'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_copy_vs_alloc(int, int) IS
'ns per op: copy into an existing buffer, palloc+copy (reset every 1000), palloc+copy+pfree (superuser or minidb_bench)';

-- A against B (read paths or heap), ABBA over pairs.  One row per pair,
-- then a summary row (pair IS NULL): medians, quartiles of B/A, verdict.
-- a_format, b_format: the record format of each side's minidb chain
-- (v1, v2), e.g. ('view_lazy', 'view_lazy', 60, 'newest', a_format => 'v1',
-- b_format => 'v2') compares the two formats on one read path.
CREATE FUNCTION minidb_bench_ab(
    a text, b text, depth int, reader text,
    pairs int DEFAULT 10,
    iterations int DEFAULT 100000,
    a_format text DEFAULT 'v2',
    b_format text DEFAULT 'v2')
RETURNS TABLE(pair int, a_ns float8, b_ns float8, ratio float8,
              ratio_q1 float8, ratio_q3 float8, verdict text)
AS 'MODULE_PATHNAME', 'minidb_bench_ab'
LANGUAGE C VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp;

COMMENT ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) IS
'paired ABBA comparison of two read paths or heap: per-pair B/A, then median, IQR and verdict (superuser or minidb_bench)';

REVOKE ALL ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_bench_copy_vs_alloc(int, int) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_bench_chain_depth(int[], int, text[], bool, text) TO minidb_bench;
GRANT EXECUTE ON FUNCTION minidb_bench_chain_rows(int[], text[], bool, text) TO minidb_bench;
GRANT EXECUTE ON FUNCTION minidb_bench_copy_vs_alloc(int, int) TO minidb_bench;
GRANT EXECUTE ON FUNCTION minidb_bench_ab(text, text, int, text, int, int, text, text) TO minidb_bench;
/* minidb_am: VACUUM observability (minidb_stats.c) */

-- Chain statistics of one minidb table, against the current removal
-- horizon: what VACUUM could remove now (dead_versions) and what it must
-- keep (live_versions), how deep chains are, and free space.
CREATE FUNCTION minidb_stats(rel regclass,
                             OUT records bigint,
                             OUT live_versions bigint,
                             OUT dead_versions bigint,
                             OUT chain_bytes bigint,
                             OUT depth_max int,
                             OUT depth_p50 float8,
                             OUT depth_p99 float8,
                             OUT pages bigint,
                             OUT free_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'minidb_stats'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION minidb_stats(regclass) IS
'records, live and dead versions, chain bytes, chain depth (max, p50, p99), pages and free bytes of a minidb table (table owner or superuser)';

-- What holds the removal horizon back: every backend with a snapshot or
-- a transaction id, prepared transaction, replication slot and standby
-- (hot_standby_feedback) that keeps an xmin, oldest first.  The oldest
-- row is the one to end for VACUUM to shorten chains again.  Details of
-- other users' sessions need pg_read_all_stats, as in pg_stat_activity.
CREATE FUNCTION minidb_horizon()
RETURNS TABLE(holder text, pid int, name text, xmin xid, xmin_age int,
              state text, since timestamptz, detail text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT * FROM (
    SELECT 'backend'::text AS holder, a.pid,
           coalesce(nullif(a.application_name, ''), a.usename::text, a.backend_type) AS name,
           CASE WHEN a.backend_xid IS NOT NULL AND
                     (a.backend_xmin IS NULL OR age(a.backend_xid) > age(a.backend_xmin))
                THEN a.backend_xid ELSE a.backend_xmin END AS xmin,
           greatest(age(a.backend_xid), age(a.backend_xmin)) AS xmin_age,
           a.state, coalesce(a.xact_start, a.query_start) AS since,
           CASE WHEN a.pid = pg_backend_pid() THEN '(this session) ' ELSE '' END
             || coalesce(a.query, '') AS detail
      FROM pg_stat_activity a
     WHERE a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL
    UNION ALL
    SELECT 'prepared transaction', NULL, p.gid, p.transaction, age(p.transaction),
           'prepared', p.prepared,
           format('owner %s, database %s', p.owner, p.database)
      FROM pg_prepared_xacts p
    UNION ALL
    SELECT 'replication slot', s.active_pid, s.slot_name, s.xmin, age(s.xmin),
           CASE WHEN s.active THEN 'active' ELSE 'inactive' END, NULL,
           format('%s slot, database %s', s.slot_type, coalesce(s.database::text, '-'))
      FROM pg_replication_slots s
     WHERE s.xmin IS NOT NULL
    UNION ALL
    SELECT 'replication slot (catalog_xmin)', s.active_pid, s.slot_name,
           s.catalog_xmin, age(s.catalog_xmin),
           CASE WHEN s.active THEN 'active' ELSE 'inactive' END, NULL,
           format('%s slot, database %s (holds catalog tables only)',
                  s.slot_type, coalesce(s.database::text, '-'))
      FROM pg_replication_slots s
     WHERE s.catalog_xmin IS NOT NULL
    UNION ALL
    SELECT 'standby feedback', r.pid, r.application_name, r.backend_xmin,
           age(r.backend_xmin), r.state, r.backend_start,
           format('client %s, hot_standby_feedback', coalesce(host(r.client_addr), 'local'))
      FROM pg_stat_replication r
     WHERE r.backend_xmin IS NOT NULL
  ) h
  ORDER BY xmin_age DESC NULLS LAST, pid
$$;

COMMENT ON FUNCTION minidb_horizon() IS
'what holds the removal horizon back (backends, prepared transactions, replication slots, standby feedback), oldest first';
