/* minidb_am: SQL functions over bare chain records (minidb_chain_funcs.c) */

-- Build a chain from values, newest first: vals[1] becomes version 0.
-- Defaults: xids 1000 for the oldest version, one more for each newer one;
-- cids 0; no hint flags.  flags elements are comma-separated names among
-- committed, aborted, frozen, tombstone, moved; markers take a NULL value.
-- STABLE, not IMMUTABLE: the record's format is minidb.record_format's.
CREATE FUNCTION minidb_chain_build(vals text[],
                                   xids xid[] DEFAULT NULL,
                                   cids cid[] DEFAULT NULL,
                                   flags text[] DEFAULT NULL,
                                   successor tid DEFAULT NULL)
RETURNS bytea
AS 'MODULE_PATHNAME', 'minidb_chain_build'
LANGUAGE C STABLE PARALLEL SAFE;

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
-- It runs as long as asked (bounded: iterations x (versions + bytes / 64)
-- <= 10^9), so only superusers and members of minidb_bench may call it: the
-- function checks, and names the role in its error.
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
-- every role may call them (minidb_chain_walk_timing checks its caller
-- itself).  Said explicitly, so that a reader (and the pgTAP privilege
-- tests) need not rely on the default.
REVOKE ALL ON FUNCTION minidb_chain_build(text[], xid[], cid[], text[], tid) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_chain_decode(bytea, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_chain_check(bytea) FROM PUBLIC;
REVOKE ALL ON FUNCTION minidb_chain_walk_timing(bytea, int, int) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_build(text[], xid[], cid[], text[], tid) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_decode(bytea, text) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_check(bytea) TO PUBLIC;
GRANT EXECUTE ON FUNCTION minidb_chain_walk_timing(bytea, int, int) TO PUBLIC;
