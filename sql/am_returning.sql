-- What the executor reads of a row it just wrote or is about to replace,
-- beside heap: RETURNING xmin / xmax, and a BEFORE trigger comparing the
-- old and the new row byte for byte (suppress_redundant_updates_trigger).
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;

CREATE FUNCTION check_returning(am text) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
  r record;
BEGIN
  EXECUTE format('CREATE TABLE rt (k int PRIMARY KEY, v text) USING %s', am);
  FOR r IN EXECUTE 'INSERT INTO rt VALUES (1, ''a''), (2, ''b'')
      RETURNING k, xmin = pg_current_xact_id()::xid AS xmin_ok, xmax = 0 AS xmax_ok' LOOP
    RETURN NEXT format('%s insert %s %s %s', am, r.k, r.xmin_ok, r.xmax_ok);
  END LOOP;
  FOR r IN EXECUTE 'UPDATE rt SET v = v || ''!'' WHERE k = 1
      RETURNING k, xmin = pg_current_xact_id()::xid AS xmin_ok, xmax = 0 AS xmax_ok' LOOP
    RETURN NEXT format('%s update %s %s %s', am, r.k, r.xmin_ok, r.xmax_ok);
  END LOOP;
  FOR r IN EXECUTE 'INSERT INTO rt VALUES (2, ''c'') ON CONFLICT (k) DO UPDATE SET v = excluded.v
      RETURNING k, xmin = pg_current_xact_id()::xid AS xmin_ok, xmax = pg_current_xact_id()::xid AS xmax_ok' LOOP
    RETURN NEXT format('%s upsert %s %s %s', am, r.k, r.xmin_ok, r.xmax_ok);
  END LOOP;
  FOR r IN EXECUTE 'DELETE FROM rt
      RETURNING k, xmax = pg_current_xact_id()::xid AS xmax_ok' LOOP
    RETURN NEXT format('%s delete %s %s', am, r.k, r.xmax_ok);
  END LOOP;
  DROP TABLE rt;
END $$;

SELECT * FROM check_returning('heap');
SELECT * FROM check_returning('minidb');

-- A BEFORE UPDATE trigger that suppresses updates changing nothing: it
-- compares the old row the AM hands over with the new one, padding bytes
-- included, so the AM's old row must be heap's bytes exactly.
CREATE TABLE min_updates_heap (f1 text, f2 int, f3 int) USING heap;
CREATE TABLE min_updates_minidb (f1 text, f2 int, f3 int) USING minidb;
INSERT INTO min_updates_heap VALUES ('a', 1, 2), ('b', 2, null);
INSERT INTO min_updates_minidb VALUES ('a', 1, 2), ('b', 2, null);
CREATE TRIGGER z_min_update BEFORE UPDATE ON min_updates_heap
  FOR EACH ROW EXECUTE PROCEDURE suppress_redundant_updates_trigger();
CREATE TRIGGER z_min_update BEFORE UPDATE ON min_updates_minidb
  FOR EACH ROW EXECUTE PROCEDURE suppress_redundant_updates_trigger();
-- dirty the scan's reusable memory first, so stale padding would show
SELECT count(*) FROM (SELECT repeat('x', 100) || f1 FROM min_updates_minidb) s;
\set QUIET false
UPDATE min_updates_heap SET f1 = f1;
UPDATE min_updates_minidb SET f1 = f1;
UPDATE min_updates_heap SET f2 = f2 + 1;
UPDATE min_updates_minidb SET f2 = f2 + 1;
UPDATE min_updates_heap SET f3 = 2 WHERE f3 IS NULL;
UPDATE min_updates_minidb SET f3 = 2 WHERE f3 IS NULL;
\set QUIET true
SELECT * FROM min_updates_heap ORDER BY f1;
SELECT * FROM min_updates_minidb ORDER BY f1;

DROP TABLE min_updates_heap, min_updates_minidb;
DROP FUNCTION check_returning(text);
