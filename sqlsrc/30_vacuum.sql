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
