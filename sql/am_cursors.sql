--
-- am_cursors: scrollable cursors over scans that move backward (sequential
-- and TID range), on a heap table and a minidb table.  Physical order
-- differs between the two (heap moves updated rows, minidb keeps their
-- TIDs), so the oracle is each cursor's own forward order: every backward
-- step, jump and change of direction must land where that order says, and
-- the forward order must hold the same rows as heap's.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_cursors;
SET search_path = am_cursors, public;

CREATE TABLE h (id int, v text) USING heap;
CREATE TABLE m (id int, v text) USING minidb;
INSERT INTO h SELECT g, 'v' || g FROM generate_series(1, 1000) g;
INSERT INTO m SELECT g, 'v' || g FROM generate_series(1, 1000) g;
UPDATE h SET v = v || '!' WHERE id % 7 = 0;
UPDATE m SET v = v || '!' WHERE id % 7 = 0;
DELETE FROM h WHERE id % 11 = 0;
DELETE FROM m WHERE id % 11 = 0;

-- check_scroll(q): open q as a scroll cursor; read it forward to the end;
-- then check backward reads, direction changes and jumps against that
-- order.  Returns the number of rows and the problems found (none: '{}').
CREATE FUNCTION check_scroll(q text, OUT nrows int, OUT problems text[])
LANGUAGE plpgsql AS $$
DECLARE
  c refcursor := 'c';
  fwd text[] := '{}';
  r record;
  n int;
  k int;
BEGIN
  problems := '{}';
  OPEN c SCROLL FOR EXECUTE q;
  LOOP
    FETCH NEXT FROM c INTO r;
    EXIT WHEN NOT FOUND;
    fwd := fwd || r::text;
  END LOOP;
  n := coalesce(array_length(fwd, 1), 0);
  nrows := n;
  -- past the end, backward through everything
  FOR i IN REVERSE n .. 1 LOOP
    FETCH PRIOR FROM c INTO r;
    IF NOT FOUND OR r::text <> fwd[i] THEN
      problems := problems || format('backward step to %s', i);
      EXIT;
    END IF;
  END LOOP;
  FETCH PRIOR FROM c INTO r;
  IF FOUND THEN problems := problems || 'row before the first'::text; END IF;
  -- zig-zag: two forward, one back, across page boundaries
  k := 0;
  WHILE k + 2 <= n LOOP
    FETCH NEXT FROM c INTO r;
    IF r::text <> fwd[k + 1] THEN problems := problems || format('zigzag next %s', k + 1); EXIT; END IF;
    FETCH NEXT FROM c INTO r;
    IF r::text <> fwd[k + 2] THEN problems := problems || format('zigzag next %s', k + 2); EXIT; END IF;
    FETCH PRIOR FROM c INTO r;
    IF r::text <> fwd[k + 1] THEN problems := problems || format('zigzag prior %s', k + 1); EXIT; END IF;
    k := k + 1;
  END LOOP;
  -- jumps
  IF n > 0 THEN
    FOREACH k IN ARRAY ARRAY[1, n, (n + 1) / 2, 2, n - 1] LOOP
      CONTINUE WHEN k < 1 OR k > n;
      FETCH ABSOLUTE k FROM c INTO r;
      IF r::text <> fwd[k] THEN problems := problems || format('absolute %s', k); END IF;
    END LOOP;
    FETCH LAST FROM c INTO r;
    IF r::text <> fwd[n] THEN problems := problems || 'last'::text; END IF;
    FETCH FIRST FROM c INTO r;
    IF r::text <> fwd[1] THEN problems := problems || 'first'::text; END IF;
  END IF;
  CLOSE c;
END $$;

SET enable_indexscan = off;
SET enable_bitmapscan = off;
SELECT 'h' AS t, * FROM check_scroll('SELECT id, v FROM h')
UNION ALL
SELECT 'm', * FROM check_scroll('SELECT id, v FROM m');
SELECT 'h' AS t, * FROM check_scroll('SELECT id FROM h WHERE id % 100 = 0')
UNION ALL
SELECT 'm', * FROM check_scroll('SELECT id FROM m WHERE id % 100 = 0');
-- TID range scans (rows per page differ between the AMs: no counts)
SELECT nrows > 0 AS has_rows, problems
  FROM check_scroll('SELECT id FROM h WHERE ctid >= ''(1,0)'' AND ctid < ''(3,0)''');
SELECT nrows > 0 AS has_rows, problems
  FROM check_scroll('SELECT id FROM m WHERE ctid >= ''(1,0)'' AND ctid < ''(3,0)''');
SELECT nrows = 0 AS empty, problems
  FROM check_scroll('SELECT id FROM m WHERE ctid >= ''(900,0)''');
RESET enable_indexscan;
RESET enable_bitmapscan;

-- the rows are the same as heap's
SELECT count(*) FROM ((TABLE h EXCEPT ALL TABLE m) UNION ALL (TABLE m EXCEPT ALL TABLE h)) d;

DROP SCHEMA am_cursors CASCADE;
