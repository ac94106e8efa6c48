/* minidb_am: finding and removing damaged records (minidb_repair.c) */

-- Every damaged record of a minidb table, as amcheck's verify_heapam lists
-- heap's (which refuses minidb tables): the record's TID, the version at
-- fault (NULL: the record header), the field and what is wrong.  Also
-- pages that are not minidb pages (offset 0) and line pointers that point
-- outside their page.  Table owner or superuser.
CREATE FUNCTION minidb_check(rel regclass)
RETURNS TABLE(ctid tid, version int, field text, detail text)
AS 'MODULE_PATHNAME', 'minidb_check'
LANGUAGE C STRICT VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION minidb_check(regclass) IS
'every damaged record (and foreign page) of a minidb table, with the version and field at fault, as verify_heapam lists heap''s (table owner or superuser)';

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
