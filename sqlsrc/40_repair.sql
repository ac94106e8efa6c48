/* minidb_am: finding (minidb_verify.c) and removing (minidb_repair.c) damaged records */

-- amcheck's verify_heapam for minidb tables (verify_heapam refuses them):
-- one row per problem, never stopping at the first: pages, line pointers,
-- record and version headers, the walkers agreeing, transaction IDs and
-- multixacts within their bounds, row lockers, moved markers' successors,
-- attributes; with check_toast every external value some snapshot may
-- still read is fetched; with check_indexes every visible row has its
-- entry in every btree index and every entry names a record.  Superusers,
-- the table's owner and members of pg_stat_scan_tables (checked before
-- the table is locked); AccessShareLock.  Not parallel safe: each page is
-- checked in a subtransaction, so that damage becomes a row.
CREATE FUNCTION minidb_verify(rel regclass,
                              check_toast boolean DEFAULT false,
                              check_indexes boolean DEFAULT false)
RETURNS TABLE(blkno bigint, offnum integer, version integer, field text,
              msg text)
AS 'MODULE_PATHNAME', 'minidb_verify'
LANGUAGE C STRICT VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION minidb_verify(regclass, boolean, boolean) IS
'every problem of a minidb table, as amcheck''s verify_heapam lists heap''s: pages, line pointers, records, versions, transaction IDs, lockers, moved rows, optionally TOAST values and btree index entries (superuser, table owner or pg_stat_scan_tables)';

-- pg_surgery's heap_force_kill for minidb tables: the records at tids
-- become dead (LP_DEAD) without being read, so that a damaged record no
-- longer stops scans and pg_dump; the next VACUUM removes their index
-- entries.  Returns how many records it made dead.  Not STRICT: NULL
-- arguments are errors.  Superusers only.
CREATE FUNCTION minidb_force_kill(rel regclass, tids tid[])
RETURNS int
AS 'MODULE_PATHNAME', 'minidb_force_kill'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION minidb_force_kill(regclass, tid[]) IS
'make the records at these TIDs dead without reading them, as pg_surgery''s heap_force_kill does for heap (superuser)';

REVOKE ALL ON FUNCTION minidb_force_kill(regclass, tid[]) FROM PUBLIC;
