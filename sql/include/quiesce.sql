\set quiesce_saved_echo :ECHO
\set ECHO none
--
-- sql/include/quiesce.sql: pg_temp.quiesce(), for the tests whose output
-- depends on what VACUUM (or CLUSTER, VACUUM FULL, a page pruned on
-- access, minidb_stats' count of dead versions) may treat as dead to
-- everyone.  Not a test of its own (pg_regress runs sql/*.sql only); a
-- test includes it with
--
--   \getenv abs_srcdir PG_ABS_SRCDIR
--   \set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
--   \i :quiesce_file
--
-- (pg_regress exports PG_ABS_SRCDIR, its --inputdir), and calls
-- SELECT pg_temp.quiesce(); after the last write that made the dead rows
-- or versions, before the command whose outcome it checks.  The function
-- is the session's own (pg_temp: no clash between tests, gone with the
-- session; a test that reconnects includes it again).  Its lines are not
-- echoed (pg_regress runs psql with -a), so the expected output shows the
-- two lines above only.
--
-- Wait until no other backend of this database holds a snapshot or an xid
-- (an autovacuum worker's ANALYZE of an earlier test's table would keep
-- VACUUM from removing or marking all-visible what this test expects),
-- and push this backend's pending row counts to the statistics first
-- (PostgreSQL 15 flushes them at most once a second, so counts of the
-- writes above could otherwise land after VACUUM's own report).  A
-- snapshot taken after it returns is newer than every write before the
-- call, so it holds nothing back.  Gives up after a minute: false.
-- Two more holders it must not miss, and one stale horizon:
--  - a backend starting up (a connection, an autovacuum or parallel
--    worker) has had a snapshot since the start of InitPostgres, but
--    shows in pg_stat_activity only at its end; from the moment it counts
--    for this database's horizon until then, it holds a lock on the
--    database, which counts here as a snapshot.  Before that moment its
--    start-up takes well under the 0.1 s slept first;
--  - this backend's own horizon (GlobalVisTestFor: pruning on access,
--    minidb_stats; VACUUM computes its own afresh) is recomputed only when
--    its snapshots' xmin moves, which reads alone do not do: one computed
--    while the holder was still there would stay until the next xid.  So
--    the call ends by taking an xid, through a WAL record (a logical
--    message, which nothing decodes here): a transaction that wrote no WAL
--    commits asynchronously whatever synchronous_commit says, and until
--    that commit is flushed heap sets no hint bits for the xids that share
--    its clog LSN group (nor marks their pages all-visible: tools.sql).
CREATE FUNCTION pg_temp.quiesce() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_stat_force_next_flush();
  PERFORM pg_sleep(0.1);
  FOR i IN 1 .. 600 LOOP
    PERFORM pg_stat_clear_snapshot();
    IF NOT EXISTS (SELECT 1 FROM pg_stat_activity
                    WHERE datname = current_database()
                      AND pid <> pg_backend_pid()
                      AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL))
       AND NOT EXISTS (SELECT 1 FROM pg_locks
                        WHERE locktype = 'object'
                          AND classid = 'pg_database'::regclass
                          AND objid = (SELECT oid FROM pg_database
                                        WHERE datname = current_database())
                          AND pid <> pg_backend_pid()) THEN
      PERFORM pg_logical_emit_message(true, 'quiesce', '');
      RETURN true;
    END IF;
    PERFORM pg_sleep(0.1);
  END LOOP;
  RETURN false;
END $$;
\set ECHO :quiesce_saved_echo \unset quiesce_saved_echo
