
/* Introspection of a minidb table's records */

CREATE FUNCTION minidb_chain(rel regclass, t tid)
RETURNS TABLE("position" int, xmin xid, cid cid, flags text, len int,
              visible bool)
AS 'MODULE_PATHNAME', 'minidb_chain'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION minidb_chain(regclass, tid) IS
'one row per version of the record at a TID, newest first (table owner or superuser)';

CREATE FUNCTION minidb_row_locks(rel regclass)
RETURNS TABLE(locked_row tid, locker xid, multi bool, xids xid[],
              modes text[], pids int[])
AS 'MODULE_PATHNAME', 'minidb_row_locks'
LANGUAGE C STRICT VOLATILE;
COMMENT ON FUNCTION minidb_row_locks(regclass) IS
'rows held by running transactions, with their holders'' xids, modes and pids, as pgrowlocks shows them (needs SELECT on the table)';
