--
-- am_errors: minidb_chain(rel regclass, t tid) and the errors it raises.
-- try() runs a statement and prints the SQLSTATE it failed with (or 'ok'),
-- so the checks do not depend on the wording of messages; the one message
-- the issue fixes ("... is not a minidb table") is checked by pattern.
-- Chain contents are printed without raw xids.
--
SET client_min_messages = warning;   -- no NOTICE when it already exists
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_errors;
SET search_path = am_errors, public;

CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  RETURN SQLSTATE || CASE WHEN SQLERRM LIKE '%is not a minidb table%'
                          THEN ' (is not a minidb table)' ELSE '' END;
END $$;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file

CREATE TABLE m (id int PRIMARY KEY, k int, v text) USING minidb
  WITH (autovacuum_enabled = off);
CREATE INDEX m_k ON m (k);
CREATE TABLE h (id int PRIMARY KEY, k int, v text) USING heap;
CREATE VIEW mv AS SELECT * FROM m;
CREATE SEQUENCE mseq;
INSERT INTO m SELECT i, i, 'v' || i FROM generate_series(1, 10) i;
INSERT INTO h SELECT i, i, 'v' || i FROM generate_series(1, 10) i;

-- the function's shape
SELECT proname, proisstrict, proretset, pg_get_function_result(oid) AS result
  FROM pg_proc WHERE proname = 'minidb_chain';

-- a freshly inserted row: one committed version, visible
SELECT position, len > 0 AS has_len, visible,
       flags NOT LIKE '%aborted%' AND flags NOT LIKE '%tombstone%'
         AND flags NOT LIKE '%moved%' AS plain
  FROM minidb_chain('m', (SELECT ctid FROM m WHERE id = 1)) ORDER BY position;
SELECT xmin = (SELECT xmin FROM m WHERE id = 1) AS xmin_matches
  FROM minidb_chain('m', (SELECT ctid FROM m WHERE id = 1));

-- NULL arguments: the function is STRICT, so no rows and no error
SELECT count(*) FROM minidb_chain(NULL, '(0,1)');
SELECT count(*) FROM minidb_chain('m', NULL);
SELECT count(*) FROM minidb_chain(NULL, NULL);

-- not a minidb table: a heap table, a view, an index, a sequence
SELECT try($$SELECT * FROM minidb_chain('h', '(0,1)')$$) AS heap_table;
SELECT try($$SELECT * FROM minidb_chain('mv', '(0,1)')$$) AS view;
SELECT try($$SELECT * FROM minidb_chain('m_pkey', '(0,1)')$$) AS index;
SELECT try($$SELECT * FROM minidb_chain('mseq', '(0,1)')$$) AS sequence;
SELECT try($$SELECT * FROM minidb_chain('pg_class', '(0,1)')$$) AS catalog;
-- TIDs that name no record: block past the end, offset past the last line
-- pointer, offset 0 (invalid parameter value)
SELECT try($$SELECT * FROM minidb_chain('m', '(1000,1)')$$) AS block_out_of_range;
SELECT try($$SELECT * FROM minidb_chain('m', '(0,2000)')$$) AS offset_out_of_range;
SELECT try($$SELECT * FROM minidb_chain('m', '(0,0)')$$) AS offset_zero;

-- a few updates in one transaction: the chain grows newest first, the
-- newest version is the visible one and cids count down
BEGIN;
INSERT INTO m VALUES (100, 100, 'a');
UPDATE m SET v = 'b' WHERE id = 100;
UPDATE m SET v = 'c' WHERE id = 100;
UPDATE m SET v = 'd' WHERE id = 100;
SELECT ctid AS tid100 FROM m WHERE id = 100 \gset
SELECT position, visible, cid::text::int - min(cid::text::int) OVER () AS rel_cid,
       xmin = pg_current_xact_id()::xid AS my_xid, len > 0 AS has_len,
       flags LIKE '%committed%' OR flags LIKE '%aborted%' OR flags LIKE '%frozen%' AS hinted
  FROM minidb_chain('m', :'tid100') ORDER BY position;
COMMIT;
-- (committed now; whether older versions are pruned yet is up to the AM)
SELECT count(*) BETWEEN 1 AND 4 AS versions_ok, bool_and(visible = (position = 0)) AS only_head_visible
  FROM minidb_chain('m', :'tid100');
-- an aborted update sits on the chain but is never the visible version
BEGIN;
UPDATE m SET v = 'aborted' WHERE id = 100;
ROLLBACK;
SELECT v FROM m WHERE id = 100;
SELECT count(*) FILTER (WHERE visible) AS visible_versions,
       bool_and(flags NOT LIKE '%aborted%') FILTER (WHERE visible) AS visible_not_aborted
  FROM minidb_chain('m', :'tid100');
-- an indexed column update moves the row: the old record ends in a moved
-- marker, the new record starts a new chain
SELECT ctid AS tid5 FROM m WHERE id = 5 \gset
UPDATE m SET k = 500 WHERE id = 5;
SELECT position, flags LIKE '%moved%' AS moved
  FROM minidb_chain('m', :'tid5') WHERE position = 0;
SELECT count(*) AS versions, bool_and(visible) AS visible
  FROM minidb_chain('m', (SELECT ctid FROM m WHERE id = 5));
-- a deleted row: the head is a tombstone
SELECT ctid AS tid6 FROM m WHERE id = 6 \gset
DELETE FROM m WHERE id = 6;
SELECT position, flags LIKE '%tombstone%' AS tombstone
  FROM minidb_chain('m', :'tid6') WHERE position = 0;
-- once VACUUM removed the dead record, its line pointer is unused
SELECT pg_temp.quiesce();
VACUUM m;
SELECT try(format('SELECT * FROM minidb_chain(%L, %L)', 'm', :'tid6')) AS unused_line_pointer;
-- VACUUM FREEZE leaves one frozen version on an old chain
VACUUM (FREEZE) m;
SELECT count(*) AS versions, bool_and(flags LIKE '%frozen%') AS frozen, bool_and(visible) AS visible
  FROM minidb_chain('m', :'tid100');

-- only the owner or a superuser may look at chains
CREATE ROLE regress_minidb_other;
GRANT USAGE ON SCHEMA am_errors TO regress_minidb_other;
GRANT SELECT ON m TO regress_minidb_other;
SET ROLE regress_minidb_other;
SELECT try($$SELECT * FROM am_errors.m WHERE id = 1$$) AS can_select;
SELECT try($$SELECT * FROM minidb_chain('am_errors.m', '(0,1)')$$) AS chain_as_non_owner;
RESET ROLE;
ALTER TABLE m OWNER TO regress_minidb_other;
SET ROLE regress_minidb_other;
SELECT try($$SELECT * FROM minidb_chain('am_errors.m', '(0,1)')$$) AS chain_as_owner;
RESET ROLE;

SET client_min_messages = warning;
DROP SCHEMA am_errors CASCADE;
DROP ROLE regress_minidb_other;
