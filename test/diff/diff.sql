--
-- Randomized differential test: heap is the oracle for minidb.
--
-- minidb_diff.run(seed, steps, fresh) applies a seeded random mix of
-- single and multi-row INSERTs (some with TOAST-sized values), UPDATEs of
-- non-indexed columns (in place on minidb), of an indexed column and of
-- the primary key (both move the row on minidb), bulk UPDATEs, DELETEs,
-- subtransactions (PL/pgSQL exception blocks: SAVEPOINT / ROLLBACK TO
-- semantics) and COMMIT / ROLLBACK of the enclosing transaction, identically
-- to dh (heap) and dm (minidb).  After every step it compares dm with dh
-- through a seq scan, an index scan, a bitmap heap scan and an index-only
-- scan (each forced with enable_*, checked once per run with EXPLAIN), and
-- compares the row counts of every statement.  On the first mismatch it
-- raises an ERROR naming seed, step, scan and the last operations.
--
-- What earlier commands of the same transaction see, and what one command
-- sees of itself (the command id class of bugs: cmin, cmax, combo command
-- ids, a version superseded by the current command):
--   - cursor_op: cursor pairs held open across later steps (up to 3; seq,
--     seq + sort, index by id, index by k, index-only, bitmap, FOR UPDATE /
--     NO KEY UPDATE / SHARE / KEY SHARE, one in five WITH HOLD), opened and
--     fetched inside subtransactions too, read forward and backward in
--     parts, UPDATE / DELETE ... WHERE CURRENT OF; every cursor is read to
--     its end before its transaction or subtransaction ends (WITH HOLD
--     ones after COMMIT), and all it returned must match heap's; going
--     backward, each side must return what it returned going forward, in
--     reverse (check_backward);
--   - row_life: one new row's life in a transaction (in-place, moving and
--     toasting UPDATEs, row locks, DELETE and INSERT again, ON CONFLICT,
--     MERGE, parent links, some in a savepoint rolled back) watched by two
--     cursors opened at random points of it;
--   - new_op: writable CTEs (the outer read sees the rows before, or, FOR
--     UPDATE after the CTE ran, skips the rows it updated), UPDATE
--     ... FROM joins matching a row several times, two CTEs updating one
--     row, INSERT ... SELECT from the same table, DELETE / UPDATE ...
--     RETURNING (old values through a self-join), statements under the row
--     triggers' modes (trig_row: change NEW, update or delete other rows or
--     the row being changed, log OLD and NEW), ON CONFLICT DO UPDATE / DO
--     NOTHING (a key twice in a statement, rows the transaction or the
--     statement wrote), MERGE (also from the same table), parent links
--     (the foreign key's checks and actions), row locks on rows the
--     transaction wrote, some taken in a savepoint rolled back.
-- These run through a random scan mode; applyx compares their row counts,
-- the rows they return (sorted) and, for errors caught in a subtransaction
-- per side, the SQLSTATEs.  Even seeds give the tables AFTER row triggers
-- and the foreign key, which make minidb move every updated row; odd
-- seeds leave them out, so that minidb updates in place.  Seeds 3 mod 4
-- run their transactions under REPEATABLE READ; seeds 0 mod 3 end them
-- four times less often (long transactions, cursors held long).
-- Set minidb_diff.echo = on (PGOPTIONS='-c minidb_diff.echo=on') to see
-- every statement as it runs, the failing transaction's included.
--
-- Why PL/pgSQL and not a client script: the generator and the comparisons
-- run in the server, so a few thousand steps with four scans each take
-- seconds; setseed() makes random() deterministic, so a seed reproduces a
-- failure exactly; COMMIT/ROLLBACK inside a procedure and exception blocks
-- give real top-level and subtransaction aborts.  test/diff/run.sh drives
-- it with psql (PGHOST/PGPORT/PGDATABASE from the environment), runs VACUUM
-- between phases, and exits non-zero on a mismatch.
--
CREATE EXTENSION IF NOT EXISTS minidb_am;
DROP SCHEMA IF EXISTS minidb_diff CASCADE;
CREATE SCHEMA minidb_diff;
SET search_path = minidb_diff;

CREATE TABLE log (step int, op text);

-- With minidb_diff.echo = on (say PGOPTIONS='-c minidb_diff.echo=on'),
-- every operation logged is also sent as a NOTICE, which, unlike the log,
-- survives the rollback of a failing run: the whole transaction's
-- statements for a minimal reproduction.
CREATE FUNCTION echo_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE NOTICE 'minidb_diff step %: %', NEW.step, NEW.op;
  RETURN NULL;
END $$;
CREATE TRIGGER echo AFTER INSERT ON log FOR EACH ROW
  WHEN (current_setting('minidb_diff.echo', true) = 'on') EXECUTE FUNCTION echo_log();

-- what the row triggers saw (mode 'log'), per table
CREATE TABLE tlog (tbl text, what text);

-- The row triggers of both tables.  They do something only while the
-- setting minidb_diff.trig names a mode (applyx sets it around one
-- statement, the same on both sides; the WHEN clause keeps every other
-- statement from calling them), and not for the statements they run
-- themselves.  Every mode is deterministic per row, so that the order in
-- which a statement visits its rows (which differs between heap and
-- minidb) cannot change the outcome:
--   log          record OLD and NEW of every BEFORE and AFTER trigger in tlog
--                (an AFTER trigger gets OLD fetched again by its TID)
--   set          BEFORE INSERT/UPDATE changes NEW: n, k (moves the row on
--                minidb) and pad (toasted when it was not, else NULL)
--   self_update  BEFORE UPDATE/DELETE updates the row being updated or deleted
--                (heap: 27000, "tuple to be updated was already modified
--                by an operation triggered by the current command")
--   self_delete  BEFORE UPDATE deletes the row being updated (likewise)
--   other        BEFORE and AFTER triggers update another row (id + 1),
--                AFTER triggers delete a third (id + 2); used only by
--                single-row statements
--   after_self   AFTER INSERT/UPDATE updates the row the statement wrote
CREATE FUNCTION trig_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE m text := current_setting('minidb_diff.trig', true);
        t text := format('%I.%I', TG_TABLE_SCHEMA, TG_TABLE_NAME);
        me int;
        o text;
        nw text;
BEGIN
  IF TG_OP = 'INSERT' THEN me := NEW.id; ELSE me := OLD.id; END IF;
  IF pg_trigger_depth() > 1 THEN
    NULL;
  ELSIF m = 'log' THEN
    IF TG_OP <> 'INSERT' THEN o := (OLD.id, OLD.k, OLD.v, OLD.n, md5(coalesce(OLD.pad, '-')))::text; END IF;
    IF TG_OP <> 'DELETE' THEN nw := (NEW.id, NEW.k, NEW.v, NEW.n, md5(coalesce(NEW.pad, '-')))::text; END IF;
    INSERT INTO minidb_diff.tlog VALUES (TG_TABLE_NAME,
      format('%s %s %s old=%s new=%s', TG_WHEN, TG_OP, me, o, nw));
  ELSIF m = 'set' AND TG_WHEN = 'BEFORE' AND TG_OP IN ('INSERT', 'UPDATE') THEN
    NEW.n := coalesce(NEW.n, 0) + 100;
    NEW.k := NEW.k + 1;
    IF NEW.pad IS NULL OR length(NEW.pad) < 2000 THEN
      NEW.pad := (SELECT string_agg(md5(me::text || i), '') FROM generate_series(1, 70) i);
    ELSE
      NEW.pad := NULL;
    END IF;
  ELSIF m = 'self_update' AND TG_WHEN = 'BEFORE' AND TG_OP IN ('UPDATE', 'DELETE') THEN
    EXECUTE format('UPDATE %s SET n = coalesce(n, 0) + 1 WHERE id = $1', t) USING me;
  ELSIF m = 'self_delete' AND TG_WHEN = 'BEFORE' AND TG_OP = 'UPDATE' THEN
    EXECUTE format('DELETE FROM %s WHERE id = $1', t) USING me;
  ELSIF m = 'other' THEN
    EXECUTE format('UPDATE %s SET n = coalesce(n, 0) + 1, k = k + 1 WHERE id = $1', t) USING me + 1;
    IF TG_WHEN = 'AFTER' THEN
      EXECUTE format('DELETE FROM %s WHERE id = $1', t) USING me + 2;
    END IF;
  ELSIF m = 'after_self' AND TG_WHEN = 'AFTER' AND TG_OP IN ('INSERT', 'UPDATE') THEN
    EXECUTE format('UPDATE %s SET n = coalesce(n, 0) + 1, pad = CASE WHEN pad IS NULL THEN v END WHERE id = $1', t)
      USING NEW.id;
  END IF;
  IF TG_OP = 'DELETE' THEN RETURN OLD; END IF;
  RETURN NEW;
END $$;

-- The tables, with BEFORE row triggers and AFTER DELETE ones; with
-- after_triggers, also AFTER INSERT and UPDATE row triggers and a foreign
-- key from p to id (the parent row, in the same table: its checks lock
-- rows the transaction wrote, FOR KEY SHARE, and its actions update rows
-- an earlier command wrote).  Only with after_triggers off does minidb
-- update rows in place: AFTER INSERT and UPDATE row triggers, the foreign
-- key's check triggers among them, fetch rows by TID, so that each version
-- needs one of its own (minidb_modify.c, triggers_need_own_tids).
CREATE FUNCTION fresh_tables(after_triggers bool) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t text; w text; o text;
BEGIN
  DROP TABLE IF EXISTS minidb_diff.dh, minidb_diff.dm;
  CREATE TABLE minidb_diff.dh (id int PRIMARY KEY, k int NOT NULL, v text, n int, pad text, p int)
    USING heap WITH (autovacuum_enabled = off);
  CREATE TABLE minidb_diff.dm (id int PRIMARY KEY, k int NOT NULL, v text, n int, pad text, p int)
    USING minidb WITH (autovacuum_enabled = off);
  CREATE INDEX dh_k ON minidb_diff.dh (k);
  CREATE INDEX dm_k ON minidb_diff.dm (k);
  FOREACH t IN ARRAY ARRAY['dh', 'dm'] LOOP
    IF after_triggers THEN
      EXECUTE format('ALTER TABLE minidb_diff.%I ADD FOREIGN KEY (p) REFERENCES minidb_diff.%I
                        ON UPDATE CASCADE ON DELETE SET NULL', t, t);
    END IF;
    FOREACH w IN ARRAY ARRAY['BEFORE', 'AFTER'] LOOP
      FOREACH o IN ARRAY ARRAY['INSERT', 'UPDATE', 'DELETE'] LOOP
        CONTINUE WHEN w = 'AFTER' AND o <> 'DELETE' AND NOT after_triggers;
        EXECUTE format($f$CREATE TRIGGER %I %s %s ON minidb_diff.%I FOR EACH ROW
                          WHEN (current_setting('minidb_diff.trig', true) <> '')
                          EXECUTE FUNCTION minidb_diff.trig_row()$f$,
                       lower(left(w, 1) || left(o, 1)), w, o, t);
      END LOOP;
    END LOOP;
  END LOOP;
  TRUNCATE minidb_diff.log, minidb_diff.tlog;
END $$;

-- the scan modes: enable_* settings, the query, the plan node that proves it
CREATE FUNCTION set_mode(mode text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('enable_seqscan', CASE WHEN mode = 'seq' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_indexscan', CASE WHEN mode IN ('index', 'ios') THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_indexonlyscan', CASE WHEN mode = 'ios' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_bitmapscan', CASE WHEN mode = 'bitmap' THEN 'on' ELSE 'off' END, true);
  PERFORM set_config('enable_tidscan', 'off', true);
  PERFORM set_config('max_parallel_workers_per_gather', '0', true);
  -- a plan made of a disabled node costs more than jit_above_cost: no JIT
  -- compiling of a statement over a hundred rows
  PERFORM set_config('jit', 'off', true);
END $$;

CREATE FUNCTION mode_query(mode text, tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE mode
    WHEN 'seq'    THEN format('SELECT x::text AS r FROM minidb_diff.%I x', tbl)
    WHEN 'index'  THEN format('SELECT x::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648', tbl)
    WHEN 'bitmap' THEN format('SELECT x::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648', tbl)
    WHEN 'ios'    THEN format('SELECT k::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648', tbl)
  END
$$;

-- The cursors' kinds: their scan mode and query.  An ordered kind returns
-- its rows in one order on both sides (by id, or by k with nothing but k),
-- so every FETCH compares the rows as they come and it may scroll; an
-- unordered one (seq, idxk, bitmap) returns them in each table's own order,
-- so a FETCH compares only how many rows came, and the rows are compared
-- as a multiset when the cursor is finished.  The lock kinds are FOR
-- UPDATE, NO KEY UPDATE, SHARE and KEY SHARE cursors (no SCROLL, no HOLD).
CREATE FUNCTION cursor_mode(kind text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT CASE WHEN kind IN ('seq', 'seqsort') THEN 'seq' WHEN kind = 'ios' THEN 'ios'
              WHEN kind = 'bitmap' THEN 'bitmap' ELSE 'index' END
$$;

CREATE FUNCTION cursor_ordered(kind text) RETURNS bool LANGUAGE sql IMMUTABLE AS $$
  SELECT kind NOT IN ('seq', 'idxk', 'bitmap')
$$;

CREATE FUNCTION cursor_query(kind text, tbl text) RETURNS text LANGUAGE sql IMMUTABLE AS $$
  SELECT format(CASE kind
    WHEN 'seq'     THEN 'SELECT x::text AS r FROM minidb_diff.%I x'
    WHEN 'seqsort' THEN 'SELECT x::text AS r FROM minidb_diff.%I x ORDER BY id'
    WHEN 'idx'     THEN 'SELECT x::text AS r FROM minidb_diff.%I x WHERE id > -2147483648 ORDER BY id'
    WHEN 'idxk'    THEN 'SELECT x::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648'
    WHEN 'ios'     THEN 'SELECT k::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648 ORDER BY k'
    WHEN 'bitmap'  THEN 'SELECT x::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648'
    ELSE 'SELECT x::text AS r FROM minidb_diff.%I x WHERE id > -2147483648 ORDER BY id FOR '
         || CASE kind WHEN 'upd' THEN 'UPDATE' WHEN 'nku' THEN 'NO KEY UPDATE'
                      WHEN 'sh' THEN 'SHARE' ELSE 'KEY SHARE' END
  END, tbl)
$$;

CREATE FUNCTION check_plans() RETURNS void LANGUAGE plpgsql AS $$
DECLARE mode text; want text; plan text; line text; kind text;
BEGIN
  FOREACH kind IN ARRAY ARRAY['seq', 'seqsort', 'idx', 'idxk', 'ios', 'bitmap', 'upd'] LOOP
    PERFORM minidb_diff.set_mode(minidb_diff.cursor_mode(kind));
    want := CASE WHEN kind LIKE 'seq%' THEN 'Seq Scan on dm' WHEN kind IN ('idx', 'upd') THEN 'Index Scan using dm_pkey'
                 WHEN kind = 'idxk' THEN 'Index Scan using dm_k' WHEN kind = 'ios' THEN 'Index Only Scan using dm_k'
                 ELSE 'Bitmap Heap Scan on dm' END;
    plan := '';
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || minidb_diff.cursor_query(kind, 'dm') LOOP
      plan := plan || line || E'\n';
    END LOOP;
    IF position(want IN plan) = 0 OR (minidb_diff.cursor_ordered(kind) AND kind <> 'seqsort'
                                       AND position('Sort' IN plan) > 0) THEN
      RAISE EXCEPTION 'minidb_diff: could not force the % cursor''s scan; plan was:%', kind, E'\n' || plan;
    END IF;
  END LOOP;
  FOREACH mode IN ARRAY ARRAY['seq', 'index', 'bitmap', 'ios'] LOOP
    PERFORM minidb_diff.set_mode(mode);
    want := CASE mode WHEN 'seq' THEN 'Seq Scan on dm' WHEN 'index' THEN 'Index Scan using dm_k'
                      WHEN 'bitmap' THEN 'Bitmap Heap Scan on dm' ELSE 'Index Only Scan using dm_k' END;
    plan := '';
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || minidb_diff.mode_query(mode, 'dm') LOOP
      plan := plan || line || E'\n';
    END LOOP;
    IF position(want IN plan) = 0 THEN
      RAISE EXCEPTION 'minidb_diff: could not force % scan; plan was:%', mode, E'\n' || plan;
    END IF;
  END LOOP;
END $$;

-- compare dm with dh through every scan mode
CREATE FUNCTION compare(seed int, step int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE mode text; hsum text; msum text; hn bigint; mn bigint; detail text; ops text;
        hrows text[]; mrows text[];
BEGIN
  FOREACH mode IN ARRAY ARRAY['seq', 'index', 'bitmap', 'ios'] LOOP
    PERFORM minidb_diff.set_mode('seq');
    EXECUTE format('SELECT count(*), md5(coalesce(string_agg(r, ''|'' ORDER BY r), '''')) FROM (%s) s',
                   minidb_diff.mode_query(mode, 'dh')) INTO hn, hsum;
    PERFORM minidb_diff.set_mode(mode);
    EXECUTE format('SELECT count(*), md5(coalesce(string_agg(r, ''|'' ORDER BY r), '''')) FROM (%s) s',
                   minidb_diff.mode_query(mode, 'dm')) INTO mn, msum;
    IF hn <> mn OR hsum <> msum THEN
      -- the rows each side returned, each read through its own scan mode
      EXECUTE format('SELECT array_agg(r) FROM (%s) s', minidb_diff.mode_query(mode, 'dm')) INTO mrows;
      PERFORM minidb_diff.set_mode('seq');
      EXECUTE format('SELECT array_agg(r) FROM (%s) s', minidb_diff.mode_query(mode, 'dh')) INTO hrows;
      SELECT string_agg(d, E'\n') INTO detail FROM (SELECT d FROM (
          (SELECT 'heap only:   ' || r AS d FROM unnest(hrows) r
           EXCEPT ALL SELECT 'heap only:   ' || r FROM unnest(mrows) r)
          UNION ALL
          (SELECT 'minidb only: ' || r FROM unnest(mrows) r
           EXCEPT ALL SELECT 'minidb only: ' || r FROM unnest(hrows) r)) u
        ORDER BY d LIMIT 10) l;
      SELECT string_agg(format('  step %s: %s', l.step, l.op), E'\n' ORDER BY l.step DESC)
        INTO ops FROM (SELECT * FROM minidb_diff.log ORDER BY step DESC LIMIT 8) l;
      RAISE EXCEPTION 'minidb_diff MISMATCH seed % step % scan %: heap % rows, minidb % rows',
        seed, step, mode, hn, mn
        USING DETAIL = coalesce(left(detail, 2000), '(same rows, different order or duplicates)'),
              HINT = E'last operations, newest first:\n' || coalesce(ops, '');
    END IF;
  END LOOP;
  PERFORM minidb_diff.set_mode('seq');
END $$;

-- run one statement on both tables; their row counts must agree
CREATE FUNCTION apply2(seed int, step int, sql text, a1 anyelement, a2 int DEFAULT NULL)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE hn bigint; mn bigint;
BEGIN
  INSERT INTO minidb_diff.log VALUES (step, format('%s [$1=%s, $2=%s]', sql, left(a1::text, 40), a2));
  EXECUTE replace(sql, '@T', 'minidb_diff.dh') USING a1, a2;
  GET DIAGNOSTICS hn = ROW_COUNT;
  EXECUTE replace(sql, '@T', 'minidb_diff.dm') USING a1, a2;
  GET DIAGNOSTICS mn = ROW_COUNT;
  IF hn <> mn THEN
    RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: "%" affected % rows on heap, % on minidb',
      seed, step, sql, hn, mn;
  END IF;
END $$;

CREATE FUNCTION rand_int(lo int, hi int) RETURNS int LANGUAGE sql VOLATILE AS
  'SELECT lo + floor(random() * (hi - lo + 1))::int';

-- an id present in dh (deterministic given dh's contents), or a miss
CREATE FUNCTION some_id() RETURNS int LANGUAGE plpgsql VOLATILE AS $$
DECLARE total bigint; r int;
BEGIN
  SELECT count(*) INTO total FROM minidb_diff.dh;
  IF total = 0 OR random() < 0.05 THEN RETURN -1; END IF;
  SELECT id INTO r FROM minidb_diff.dh ORDER BY id OFFSET floor(random() * total)::int LIMIT 1;
  RETURN r;
END $$;

CREATE FUNCTION some_text() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE r float8 := random();
BEGIN
  IF r < 0.05 THEN      -- big enough to be toasted
    RETURN (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 200));
  ELSIF r < 0.15 THEN
    RETURN NULL;
  ELSE
    RETURN md5(random()::text);
  END IF;
END $$;

-- the last operations of the log, newest first, for a mismatch's HINT
CREATE FUNCTION last_ops() RETURNS text LANGUAGE sql AS $$
  SELECT E'last operations, newest first:\n'
         || coalesce(string_agg(format('  step %s: %s', l.step, left(l.op, 400)), E'\n' ORDER BY l.step DESC, l.ord DESC), '')
  FROM (SELECT *, row_number() OVER () AS ord FROM minidb_diff.log) l
  WHERE l.ord > (SELECT count(*) FROM minidb_diff.log) - 10
$$;

-- run one statement with its parameters; with want_rows, the rows it
-- returns (a query, or DML with RETURNING), as text, sorted
CREATE FUNCTION exec1(q text, a1 anyelement, a2 int, a3 int[], want_rows bool,
                      OUT cnt bigint, OUT res text) LANGUAGE plpgsql AS $$
DECLARE rec record; arr text[] := '{}';
BEGIN
  IF want_rows THEN
    FOR rec IN EXECUTE q USING a1, a2, a3 LOOP
      arr := arr || rec::text;
    END LOOP;
    cnt := cardinality(arr);
    SELECT string_agg(x, E'\n' ORDER BY x) INTO res FROM unnest(arr) x;
  ELSE
    EXECUTE q USING a1, a2, a3;
    GET DIAGNOSTICS cnt = ROW_COUNT;
  END IF;
END $$;

-- Run one statement on both tables (@T names the table, @S the side: h for
-- heap, m for minidb, as in a cursor's name), through the scan mode given
-- and with the row triggers in mode trig.  The row counts must agree; with
-- want_rows, so must the rows returned (sorted: the order is each table's
-- own); in trigger mode log, so must what the triggers saw.  With catch,
-- each side runs in a subtransaction of its own, and an error must be
-- the same SQLSTATE on both sides (the subtransaction rolls back what the
-- statement did, on both sides).  Returns the row count, -1 after an error.
CREATE FUNCTION applyx(seed int, step int, sql text, a1 anyelement, a2 int DEFAULT NULL,
                       a3 int[] DEFAULT NULL, want_rows bool DEFAULT false, catch bool DEFAULT false,
                       mode text DEFAULT 'seq', trig text DEFAULT '')
RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE side text; q text; c bigint; r text; st text; msg text;
        hn bigint; mn bigint; hres text; mres text; hst text := ''; mst text := '';
        hmsg text; mmsg text; hlog text; mlog text;
BEGIN
  INSERT INTO minidb_diff.log VALUES (step, format('%s [$1=%s, $2=%s, $3=%s; %s scan%s%s%s]',
    sql, left(a1::text, 40), a2, a3, mode, CASE WHEN trig <> '' THEN ', triggers ' || trig END,
    CASE WHEN want_rows THEN ', rows compared' END, CASE WHEN catch THEN ', errors caught' END));
  FOREACH side IN ARRAY ARRAY['h', 'm'] LOOP
    q := replace(replace(sql, '@T', 'minidb_diff.d' || side), '@S', side);
    c := NULL; r := NULL; st := ''; msg := NULL;
    PERFORM set_config('minidb_diff.trig', trig, true);
    PERFORM minidb_diff.set_mode(mode);
    IF catch THEN
      BEGIN
        SELECT e.cnt, e.res INTO c, r FROM minidb_diff.exec1(q, a1, a2, a3, want_rows) e;
      EXCEPTION WHEN OTHERS THEN
        st := SQLSTATE; msg := SQLERRM;
      END;
    ELSE
      SELECT e.cnt, e.res INTO c, r FROM minidb_diff.exec1(q, a1, a2, a3, want_rows) e;
    END IF;
    PERFORM set_config('minidb_diff.trig', '', true);
    PERFORM minidb_diff.set_mode('seq');
    IF side = 'h' THEN hn := c; hres := r; hst := st; hmsg := msg;
    ELSE mn := c; mres := r; mst := st; mmsg := msg;
    END IF;
  END LOOP;
  IF hst <> mst THEN
    RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: "%" ended differently: heap %, minidb %',
      seed, step, sql, coalesce(nullif(hst, '') || ' ' || hmsg, 'no error'), coalesce(nullif(mst, '') || ' ' || mmsg, 'no error')
      USING HINT = minidb_diff.last_ops();
  END IF;
  IF hst <> '' THEN
    INSERT INTO minidb_diff.log VALUES (step, format('  -> both failed: %s %s', hst, hmsg));
  END IF;
  IF hst = '' AND (hn <> mn OR hres IS DISTINCT FROM mres) THEN
    RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: "%" affected % rows on heap, % on minidb%',
      seed, step, sql, hn, mn, CASE WHEN hn = mn THEN ' (different rows returned)' END
      USING DETAIL = format(E'heap returned:\n%s\nminidb returned:\n%s', left(hres, 1500), left(mres, 1500)),
            HINT = minidb_diff.last_ops();
  END IF;
  IF trig = 'log' THEN
    SELECT string_agg(what, E'\n' ORDER BY what) INTO hlog FROM minidb_diff.tlog WHERE tbl = 'dh';
    SELECT string_agg(what, E'\n' ORDER BY what) INTO mlog FROM minidb_diff.tlog WHERE tbl = 'dm';
    DELETE FROM minidb_diff.tlog;
    IF hlog IS DISTINCT FROM mlog THEN
      RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: "%": the row triggers saw different rows', seed, step, sql
        USING DETAIL = format(E'heap''s triggers:\n%s\nminidb''s triggers:\n%s', left(hlog, 1500), left(mlog, 1500)),
              HINT = minidb_diff.last_ops();
    END IF;
  END IF;
  RETURN CASE WHEN hst = '' THEN hn ELSE -1 END;
END $$;

-- one random data-changing operation (no transaction control)
CREATE FUNCTION one_op(seed int, step int, INOUT next_id int) LANGUAGE plpgsql AS $$
DECLARE r float8 := random(); id1 int; cnt int;
BEGIN
  IF r < 0.22 THEN                                   -- INSERT, 1 to 3 rows
    cnt := minidb_diff.rand_int(1, 3);
    PERFORM minidb_diff.apply2(seed, step,
      'INSERT INTO @T SELECT $2 + i, ($2 + i) % 97, md5(($2 + i)::text), i, $1 FROM generate_series(0, '
        || (cnt - 1) || ') i',
      minidb_diff.some_text(), next_id);
    next_id := next_id + cnt;
  ELSIF r < 0.40 THEN                                -- UPDATE non-indexed column(s) of one row
    id1 := minidb_diff.some_id();
    IF random() < 0.5 THEN
      PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET v = $1, n = coalesce(n, 0) + 1 WHERE id = $2',
                               md5(random()::text), id1);
    ELSE
      PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET pad = $1 WHERE id = $2', minidb_diff.some_text(), id1);
    END IF;
  ELSIF r < 0.50 THEN                                -- UPDATE the indexed column k
    id1 := minidb_diff.some_id();
    PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET k = $1, n = coalesce(n, 0) + 1 WHERE id = $2',
                             minidb_diff.rand_int(0, 120), id1);
  ELSIF r < 0.55 THEN                                -- UPDATE the primary key
    id1 := minidb_diff.some_id();
    PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET id = $1 WHERE id = $2', next_id, id1);
    next_id := next_id + 1;
  ELSIF r < 0.62 THEN                                -- bulk UPDATE, non-key or key
    IF random() < 0.5 THEN
      PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET n = coalesce(n, 0) + 1 WHERE k % 11 = $1',
                               minidb_diff.rand_int(0, 10));
    ELSE
      PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET k = k + 1 WHERE k % 13 = $1',
                               minidb_diff.rand_int(0, 12));
    END IF;
  ELSIF r < 0.72 THEN                                -- DELETE one row or a few
    IF random() < 0.7 THEN
      PERFORM minidb_diff.apply2(seed, step, 'DELETE FROM @T WHERE id = $1', minidb_diff.some_id());
    ELSE
      PERFORM minidb_diff.apply2(seed, step, 'DELETE FROM @T WHERE k = $1', minidb_diff.rand_int(0, 120));
    END IF;
  ELSIF r < 0.80 THEN                                -- the same row several times in a row
    id1 := minidb_diff.some_id();
    PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET n = coalesce(n, 0) + 1 WHERE id = $1', id1);
    PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET v = $1 WHERE id = $2', md5(random()::text), id1);
    IF random() < 0.3 THEN
      PERFORM minidb_diff.apply2(seed, step, 'UPDATE @T SET k = k + 1 WHERE id = $1', id1);
    END IF;
    IF random() < 0.2 THEN
      PERFORM minidb_diff.apply2(seed, step, 'DELETE FROM @T WHERE id = $1', id1);
    END IF;
  ELSE                                               -- a point lookup through the index
    cnt := minidb_diff.rand_int(0, 120);
    PERFORM minidb_diff.set_mode('index');
    IF (SELECT array_agg(x::text ORDER BY id) FROM minidb_diff.dm x WHERE k = cnt) IS DISTINCT FROM
       (SELECT array_agg(x::text ORDER BY id) FROM minidb_diff.dh x WHERE k = cnt) THEN
      RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: index lookup k = % differs', seed, step, cnt;
    END IF;
    PERFORM minidb_diff.set_mode('seq');
  END IF;
END $$;

-- like some_text(), but toasted three times out of ten (2240 bytes that do
-- not compress: stored out of line, and cheaper to compare than
-- some_text()'s), and 800 bytes, not toasted, two times out of ten (a
-- record holding a few such versions fills much of a page)
CREATE FUNCTION big_text() RETURNS text LANGUAGE plpgsql VOLATILE AS $$
DECLARE r float8 := random();
BEGIN
  IF r < 0.3 THEN
    RETURN (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 70));
  ELSIF r < 0.5 THEN
    RETURN (SELECT string_agg(md5(random()::text), '') FROM generate_series(1, 25));
  END IF;
  RETURN minidb_diff.some_text();
END $$;

-- 2 to 4 ids: present ones, new ones (from next_id), a repeated one now and then
CREATE FUNCTION some_ids(next_id int) RETURNS int[] LANGUAGE plpgsql VOLATILE AS $$
DECLARE a int[] := '{}'; i int;
BEGIN
  FOR i IN 1 .. minidb_diff.rand_int(2, 4) LOOP
    IF random() < 0.6 THEN a := a || minidb_diff.some_id(); ELSE a := a || (next_id + i); END IF;
  END LOOP;
  IF random() < 0.2 THEN a := a || a[1]; END IF;
  RETURN a;
END $$;

-- One random operation of the kinds whose outcome depends on what one
-- command sees of the earlier ones of its transaction, or of itself:
-- writable CTEs, UPDATE ... FROM a join matching a row more than once,
-- INSERT ... SELECT from the same table, DELETE and UPDATE ... RETURNING,
-- statements under the row triggers' modes, INSERT ... ON CONFLICT,
-- MERGE, and row locks (FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE)
-- on rows the transaction wrote, some in a subtransaction rolled back.
-- Each runs through a random scan mode, half of them with errors caught
-- (SQLSTATEs compared); the rows they return are compared.
CREATE FUNCTION new_op(seed int, step int, INOUT next_id int) LANGUAGE plpgsql AS $$
DECLARE r float8 := random(); id1 int; cnt bigint; ids int[]; lk text; m2 text;
        mode text := (ARRAY['seq', 'seq', 'index', 'bitmap'])[minidb_diff.rand_int(1, 4)];
        catch bool := random() < 0.5;
        -- trigger modes for statements of many rows, and for one row
        trig text := CASE WHEN random() < 0.15
                          THEN (ARRAY['log', 'set', 'after_self', 'self_update'])[minidb_diff.rand_int(1, 4)]
                          ELSE '' END;
        trig1 text := (ARRAY['log', 'set', 'after_self', 'self_update', 'self_delete', 'other', 'other', 'log'])
                        [minidb_diff.rand_int(1, 8)];
BEGIN
  catch := catch OR trig IN ('self_update', 'set', 'after_self');
  IF r < 0.04 THEN                       -- writable CTE: the outer read sees the rows before the UPDATE
    PERFORM minidb_diff.applyx(seed, step,
      'WITH u AS (UPDATE @T SET n = coalesce(n, 0) + 1, k = k + $2 % 2,
                    pad = CASE WHEN id % 3 = 0 THEN $1 ELSE pad END
                  WHERE k % 7 = $2 % 7 RETURNING id, k, n, md5(coalesce(pad, ''-'')) AS p)
       SELECT t.id, t.k, t.n, md5(coalesce(t.pad, ''-'')), u.k, u.n, u.p FROM @T t JOIN u USING (id)',
      minidb_diff.big_text(), minidb_diff.rand_int(0, 100), NULL, true, catch, mode, trig);
  ELSIF r < 0.07 THEN                    -- ... before the DELETE
    PERFORM minidb_diff.applyx(seed, step,
      'WITH d AS (DELETE FROM @T WHERE k % 11 = $2 RETURNING id, n)
       SELECT t.id, t.n, d.n, (SELECT count(*) FROM @T) FROM @T t JOIN d USING (id)',
      ''::text, minidb_diff.rand_int(0, 10), NULL, true, catch, mode, trig);
  ELSIF r < 0.09 THEN                    -- ... before the INSERT
    PERFORM minidb_diff.applyx(seed, step,
      'WITH i AS (INSERT INTO @T SELECT $2 + g, ($2 + g) % 97, $1, g, NULL FROM generate_series(0, 2) g RETURNING id)
       SELECT (SELECT count(*) FROM @T), (SELECT count(*) FROM i), (SELECT count(*) FROM @T WHERE id IN (SELECT id FROM i))',
      md5(random()::text), next_id, NULL, true, catch, mode, trig);
    next_id := next_id + 3;
  ELSIF r < 0.105 THEN                   -- the outer read locks rows the CTE updated first (an
                                         -- InitPlan runs it): heap skips those, locks the others
    PERFORM minidb_diff.applyx(seed, step,
      'WITH u AS (UPDATE @T SET n = coalesce(n, 0) + 1, k = k + $2 % 2 WHERE k % 7 = $2 % 7 RETURNING id)
       SELECT t.id, t.k, t.n FROM @T t WHERE t.k % 7 IN ($2 % 7, ($2 + 1) % 7) AND (SELECT count(*) FROM u) >= 0
       FOR ' || (ARRAY['UPDATE', 'NO KEY UPDATE', 'SHARE', 'KEY SHARE'])[minidb_diff.rand_int(1, 4)],
      ''::text, minidb_diff.rand_int(0, 100), NULL, true, catch, mode, trig);
  ELSIF r < 0.11 THEN                    -- two CTEs update the same row: heap updates it once
    PERFORM minidb_diff.applyx(seed, step,
      'WITH a AS (UPDATE @T SET n = coalesce(n, 0) + 1 WHERE id = $2 RETURNING id),
            b AS (UPDATE @T SET n = coalesce(n, 0) + 1 WHERE id = $2 RETURNING id)
       SELECT (SELECT count(*) FROM a) + (SELECT count(*) FROM b), (SELECT n FROM @T WHERE id = $2)',
      ''::text, minidb_diff.some_id(), NULL, true, catch, mode, trig);
  ELSIF r < 0.14 THEN                    -- UPDATE ... FROM: a join matching the row 3 times
    PERFORM minidb_diff.applyx(seed, step,
      'UPDATE @T t SET n = coalesce(t.n, 0) + 1, pad = $1 FROM (VALUES (1), (2), (3)) s(d) WHERE t.id = $2
       RETURNING t.id, t.k, t.n, md5(coalesce(t.pad, ''-''))',
      minidb_diff.big_text(), minidb_diff.some_id(), NULL, true, catch, mode, trig);
  ELSIF r < 0.16 THEN                    -- ... a self-join on k, moving every row it updates
    PERFORM minidb_diff.applyx(seed, step,
      'UPDATE @T t SET k = t.k + 1, n = coalesce(t.n, 0) + 1 FROM @T s WHERE s.k = t.k AND t.k % 23 = $2
       RETURNING t.id, t.k, t.n',
      ''::text, minidb_diff.rand_int(0, 22), NULL, true, catch, mode, trig);
  ELSIF r < 0.18 THEN                    -- ... a self-join matching the row and its neighbour, toasting
    PERFORM minidb_diff.applyx(seed, step,
      'UPDATE @T t SET pad = $1 FROM @T s WHERE s.id IN (t.id, t.id + 1) AND t.k % 17 = $2
       RETURNING t.id, md5(coalesce(t.pad, ''-''))',
      minidb_diff.big_text(), minidb_diff.rand_int(0, 16), NULL, true, catch, mode, trig);
  ELSIF r < 0.20 THEN                    -- INSERT ... SELECT from the same table (toasted values copied)
    cnt := minidb_diff.applyx(seed, step,
      'INSERT INTO @T SELECT $2 + row_number() OVER (ORDER BY id), k, v, n, pad FROM @T WHERE k % 29 = $1
       RETURNING id, k, md5(coalesce(pad, ''-''))',
      minidb_diff.rand_int(0, 28), next_id, NULL, true, catch, mode, trig);
    next_id := next_id + 1 + greatest(cnt, 0);
  ELSIF r < 0.22 THEN                    -- DELETE ... RETURNING
    PERFORM minidb_diff.applyx(seed, step, 'DELETE FROM @T WHERE k % 19 = $2 RETURNING *',
      ''::text, minidb_diff.rand_int(0, 18), NULL, true, catch, mode, trig);
  ELSIF r < 0.24 THEN                    -- UPDATE ... RETURNING old (a self-join) and new values
    PERFORM minidb_diff.applyx(seed, step,
      'UPDATE @T t SET n = coalesce(t.n, 0) + 1, k = t.k + $2 % 3
       FROM (SELECT id, k, n FROM @T WHERE k % 11 = $2 % 11) o WHERE o.id = t.id
       RETURNING o.id, o.k, o.n, t.k, t.n',
      ''::text, minidb_diff.rand_int(0, 100), NULL, true, catch, mode, trig);
  ELSIF r < 0.42 THEN                    -- one row, under a trigger mode
    r := random();
    id1 := minidb_diff.some_id();
    IF r < 0.25 THEN
      PERFORM minidb_diff.applyx(seed, step,
        'UPDATE @T SET v = $1, n = coalesce(n, 0) + 1 WHERE id = $2 RETURNING id, k, v, n, md5(coalesce(pad, ''-''))',
        md5(random()::text), id1, NULL, true, true, mode, trig1);
    ELSIF r < 0.5 THEN
      PERFORM minidb_diff.applyx(seed, step,
        'UPDATE @T SET k = k + 1, pad = $1 WHERE id = $2 RETURNING id, k, v, n, md5(coalesce(pad, ''-''))',
        minidb_diff.big_text(), id1, NULL, true, true, mode, trig1);
    ELSIF r < 0.65 THEN
      PERFORM minidb_diff.applyx(seed, step, 'DELETE FROM @T WHERE id = $2 RETURNING id, n',
        ''::text, id1, NULL, true, true, mode, trig1);
    ELSIF r < 0.85 THEN
      PERFORM minidb_diff.applyx(seed, step,
        'INSERT INTO @T VALUES ($2, $2 % 97, ''ins'', 0, $1) RETURNING id, k, n, md5(coalesce(pad, ''-''))',
        minidb_diff.big_text(), next_id, NULL, true, true, mode, trig1);
      next_id := next_id + 1;
    ELSE
      PERFORM minidb_diff.applyx(seed, step, 'UPDATE @T SET id = $3[1] WHERE id = $2',
        ''::text, id1, ARRAY[next_id], false, true, mode, trig1);
      next_id := next_id + 1;
    END IF;
  ELSIF r < 0.50 THEN                    -- ON CONFLICT DO UPDATE, one row (present or new)
    IF random() < 0.3 THEN id1 := next_id; next_id := next_id + 1; ELSE id1 := minidb_diff.some_id(); END IF;
    PERFORM minidb_diff.applyx(seed, step,
      'INSERT INTO @T AS t VALUES ($2, $2 % 97, ''ups'', 0, $1) ON CONFLICT (id) DO UPDATE
         SET n = coalesce(t.n, 0) + 1, pad = EXCLUDED.pad, k = CASE WHEN t.n % 2 = 0 THEN t.k + 1 ELSE t.k END
       RETURNING t.id, t.k, t.n, md5(coalesce(t.pad, ''-''))',
      minidb_diff.big_text(), id1, NULL, true, true, mode, CASE WHEN random() < 0.2 THEN trig1 ELSE trig END);
  ELSIF r < 0.56 THEN                    -- ... several rows, maybe one twice (heap: 21000)
    ids := minidb_diff.some_ids(next_id);
    next_id := next_id + 5;
    PERFORM minidb_diff.applyx(seed, step,
      'INSERT INTO @T AS t SELECT x, x % 97, ''ups'', 0, $1 FROM unnest($3) x ON CONFLICT (id) DO UPDATE
         SET n = coalesce(t.n, 0) + 1, v = EXCLUDED.v || t.id, k = t.k + 1
         WHERE t.n IS NULL OR t.n % 5 <> 4
       RETURNING t.id, t.k, t.v, t.n',
      minidb_diff.big_text(), NULL, ids, true, true, mode, trig);
  ELSIF r < 0.60 THEN                    -- ON CONFLICT DO NOTHING (a repeated id proposes the same row)
    ids := minidb_diff.some_ids(next_id);
    next_id := next_id + 5;
    PERFORM minidb_diff.applyx(seed, step,
      'INSERT INTO @T SELECT x, x % 97, ''dn'', 0, $1 FROM unnest($3) x ON CONFLICT DO NOTHING RETURNING id, k',
      minidb_diff.big_text(), NULL, ids, true, catch, mode, trig);
  ELSIF r < 0.63 THEN                    -- INSERT, then ON CONFLICT on the row just inserted
    id1 := next_id; next_id := next_id + 1;
    PERFORM minidb_diff.applyx(seed, step, 'INSERT INTO @T VALUES ($2, $2 % 97, ''new'', 0, $1)',
      minidb_diff.big_text(), id1, NULL, false, catch, mode, trig);
    PERFORM minidb_diff.applyx(seed, step,
      'INSERT INTO @T AS t VALUES ($2, 0, ''again'', 0, $1) ON CONFLICT (id) DO UPDATE
         SET k = t.k + 1, pad = EXCLUDED.pad, n = coalesce(t.n, 0) + 1 RETURNING t.id, t.k, t.v, t.n',
      minidb_diff.big_text(), id1, NULL, true, catch, mode, trig);
  ELSIF r < 0.70 THEN                    -- MERGE: matched delete / update (moving or toasting), insert
    ids := minidb_diff.some_ids(next_id);
    next_id := next_id + 5;
    PERFORM minidb_diff.applyx(seed, step,
      'MERGE INTO @T t USING (SELECT x AS id, x % 4 AS op FROM unnest($3) x) s ON t.id = s.id
       WHEN MATCHED AND s.op = 0 THEN DELETE
       WHEN MATCHED AND s.op = 1 THEN UPDATE SET k = t.k + 1, n = coalesce(t.n, 0) + 1
       WHEN MATCHED THEN UPDATE SET pad = $1, n = coalesce(t.n, 0) + 1
       WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.id % 97, ''merge'', 0, $1)',
      minidb_diff.big_text(), NULL, ids, false, true, mode, trig);
  ELSIF r < 0.74 THEN                    -- MERGE from the same table
    PERFORM minidb_diff.applyx(seed, step,
      'MERGE INTO @T t USING (SELECT id, k FROM @T WHERE k % 13 = $2 AND id + 1 < $3[1]) s ON t.id = s.id + 1
       WHEN MATCHED AND t.k % 2 = 0 THEN UPDATE SET n = coalesce(t.n, 0) + s.k, k = t.k + 1
       WHEN MATCHED THEN DELETE
       WHEN NOT MATCHED THEN INSERT VALUES (s.id + 1, s.k, ''merge2'', 0, NULL)',
      ''::text, minidb_diff.rand_int(0, 12), ARRAY[next_id], false, true, mode, trig);
  ELSIF r < 0.77 THEN                    -- point a row at a parent (itself, a neighbour, any, or none: 23503)
    id1 := minidb_diff.some_id();
    r := random();
    PERFORM minidb_diff.applyx(seed, step, 'UPDATE @T SET p = $3[1], n = coalesce(n, 0) + 1 WHERE id = $2 RETURNING id, p, n',
      ''::text, id1, ARRAY[CASE WHEN r < 0.3 THEN id1 WHEN r < 0.6 THEN id1 - 1 ELSE minidb_diff.some_id() END],
      true, true, mode, trig);
  ELSIF r < 0.80 THEN                    -- lock rows of one k class, then maybe change them
    lk := (ARRAY['UPDATE', 'NO KEY UPDATE', 'SHARE', 'KEY SHARE'])[minidb_diff.rand_int(1, 4)];
    cnt := minidb_diff.rand_int(0, 12);
    PERFORM minidb_diff.applyx(seed, step, 'SELECT id, k, n FROM @T WHERE k % 13 = $2 FOR ' || lk,
      ''::text, cnt::int, NULL, true, catch, mode);
    IF random() < 0.5 THEN
      PERFORM minidb_diff.applyx(seed, step,
        'UPDATE @T SET n = coalesce(n, 0) + 1, k = k + (id % 2) WHERE k % 13 = $2 RETURNING id, k, n',
        ''::text, cnt::int, NULL, true, catch, mode, trig);
    END IF;
  ELSE                                   -- lock one row, in a subtransaction rolled back half the time
    id1 := minidb_diff.some_id();
    lk := (ARRAY['UPDATE', 'NO KEY UPDATE', 'SHARE', 'KEY SHARE'])[minidb_diff.rand_int(1, 4)];
    m2 := (ARRAY['UPDATE', 'NO KEY UPDATE', 'SHARE', 'KEY SHARE', 'UPDATE NOWAIT', 'SHARE SKIP LOCKED'])
            [minidb_diff.rand_int(1, 6)];
    BEGIN
      INSERT INTO minidb_diff.log VALUES (step, 'SAVEPOINT (lock)');
      PERFORM minidb_diff.applyx(seed, step, 'SELECT id, k, n FROM @T WHERE id = $2 FOR ' || lk,
        ''::text, id1, NULL, true, false, mode);
      IF random() < 0.5 THEN
        PERFORM minidb_diff.applyx(seed, step,
          'UPDATE @T SET n = coalesce(n, 0) + 1, pad = $1 WHERE id = $2 RETURNING id, n',
          minidb_diff.big_text(), id1, NULL, true, catch, mode);
      END IF;
      IF random() < 0.5 THEN RAISE EXCEPTION 'minidb_diff_rollback' USING ERRCODE = 'P0099'; END IF;
    EXCEPTION WHEN SQLSTATE 'P0099' THEN
      INSERT INTO minidb_diff.log VALUES (step, 'ROLLBACK TO SAVEPOINT (lock)');
    END;
    PERFORM minidb_diff.applyx(seed, step, 'SELECT id, k, n FROM @T WHERE id = $2 FOR ' || m2,
      ''::text, id1, NULL, true, catch, mode);
    r := random();
    IF r < 0.4 THEN
      PERFORM minidb_diff.applyx(seed, step, 'UPDATE @T SET k = k + 1 WHERE id = $2 RETURNING id, k',
        ''::text, id1, NULL, true, catch, mode, trig);
    ELSIF r < 0.6 THEN
      PERFORM minidb_diff.applyx(seed, step, 'DELETE FROM @T WHERE id = $2 RETURNING id',
        ''::text, id1, NULL, true, catch, mode, trig);
    ELSIF r < 0.8 THEN
      PERFORM minidb_diff.applyx(seed, step, 'UPDATE @T SET v = $1 WHERE id = $2 RETURNING id, v',
        md5(random()::text), id1, NULL, true, catch, mode, trig);
    END IF;
  END IF;
END $$;

-- Cursors held across later statements of their transaction.  A cursor is
-- a pair, h<no> on dh and m<no> on dm, opened with the same query through
-- the same scan; run() keeps its description "no:kind:depth:hold" (depth:
-- the subtransaction level it belongs to, -1 once a WITH HOLD cursor's
-- transaction committed) and, for an unordered kind, the rows fetched so
-- far from each side.
CREATE FUNCTION open_cursor(name text, kind text, tbl text, hold bool) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE c refcursor := name; q text := minidb_diff.cursor_query(kind, tbl);
BEGIN
  PERFORM minidb_diff.set_mode(minidb_diff.cursor_mode(kind));
  IF hold THEN
    EXECUTE format('DECLARE %I %s CURSOR WITH HOLD FOR %s', name,
                   CASE WHEN kind IN ('upd', 'nku', 'sh', 'ksh') THEN 'NO SCROLL' ELSE 'SCROLL' END, q);
  ELSIF kind IN ('upd', 'nku', 'sh', 'ksh') THEN
    OPEN c NO SCROLL FOR EXECUTE q;
  ELSE
    OPEN c SCROLL FOR EXECUTE q;
  END IF;
  PERFORM minidb_diff.set_mode('seq');
END $$;

-- up to n rows (all with n < 0) from a cursor, forward or backward
CREATE FUNCTION fetch_rows(name text, forward bool, n int) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE c refcursor := name; t text; got text[] := '{}';
BEGIN
  WHILE n < 0 OR cardinality(got) < n LOOP
    IF forward THEN FETCH NEXT FROM c INTO t; ELSE FETCH PRIOR FROM c INTO t; END IF;
    EXIT WHEN NOT FOUND;
    got := got || t;
  END LOOP;
  RETURN got;
END $$;

CREATE FUNCTION sorted(a text[]) RETURNS text[] LANGUAGE sql IMMUTABLE AS
  'SELECT coalesce(array_agg(x ORDER BY x), ''{}'') FROM unnest(a) x';

-- FETCH from both sides of cursor meta and compare; returns the rows the
-- heap side returned (an ordered cursor's rows are compared as they are;
-- an unordered one's only by count, its callers keep them)
CREATE FUNCTION fetch_both(seed int, step int, meta text, forward bool, n int,
                           OUT hrows text[], OUT mrows text[]) LANGUAGE plpgsql AS $$
DECLARE no text := split_part(meta, ':', 1); kind text := split_part(meta, ':', 2);
BEGIN
  INSERT INTO minidb_diff.log VALUES (step, format('FETCH %s %s FROM cursor %s (%s)',
    CASE WHEN forward THEN 'FORWARD' ELSE 'BACKWARD' END, CASE WHEN n < 0 THEN 'ALL' ELSE n::text END, no, meta));
  hrows := minidb_diff.fetch_rows('h' || no, forward, n);
  mrows := minidb_diff.fetch_rows('m' || no, forward, n);
  IF cardinality(hrows) <> cardinality(mrows)
     OR (minidb_diff.cursor_ordered(kind) AND hrows <> mrows) THEN
    RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: cursor % (%) fetched % rows on heap, % on minidb',
      seed, step, no, meta, cardinality(hrows), cardinality(mrows)
      USING DETAIL = format(E'heap:\n%s\nminidb:\n%s', left(array_to_string(hrows, E'\n'), 1500),
                            left(array_to_string(mrows, E'\n'), 1500)),
            HINT = minidb_diff.last_ops();
  END IF;
END $$;

-- fetch the rest of a cursor on both sides, compare everything it returned
-- going forward (acc_h, acc_m: the rows fetched before, for an unordered
-- kind), and close it
CREATE FUNCTION finish_cursor(seed int, step int, meta text, acc_h text, acc_m text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE no text := split_part(meta, ':', 1); hrows text[]; mrows text[];
BEGIN
  SELECT f.hrows, f.mrows INTO hrows, mrows FROM minidb_diff.fetch_both(seed, step, meta, true, -1) f;
  hrows := minidb_diff.sorted(string_to_array(acc_h, E'\n') || hrows);
  mrows := minidb_diff.sorted(string_to_array(acc_m, E'\n') || mrows);
  IF hrows <> mrows THEN
    RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: cursor % (%) returned different rows in all',
      seed, step, no, meta
      USING DETAIL = format(E'heap only:\n%s\nminidb only:\n%s',
              left(array_to_string(ARRAY(SELECT unnest(hrows) EXCEPT ALL SELECT unnest(mrows)), E'\n'), 1500),
              left(array_to_string(ARRAY(SELECT unnest(mrows) EXCEPT ALL SELECT unnest(hrows)), E'\n'), 1500)),
            HINT = minidb_diff.last_ops();
  END IF;
  EXECUTE format('CLOSE %I', 'h' || no);
  EXECUTE format('CLOSE %I', 'm' || no);
  INSERT INTO minidb_diff.log VALUES (step, format('CLOSE cursor %s', no));
END $$;

-- A backward FETCH of an unordered cursor returns what that side returned
-- going forward (acc, in order), in reverse: from the row before the last
-- one returned, or from that one when the cursor had run past the end.
CREATE FUNCTION check_backward(seed int, step int, meta text, side text, acc text, got text[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE a text[] := string_to_array(acc, E'\n'); j int; m int := cardinality(got);
BEGIN
  j := coalesce(cardinality(a), 0);
  IF got = ARRAY(SELECT a[x] FROM generate_series(j - 1, j - m, -1) x)
     OR got = ARRAY(SELECT a[x] FROM generate_series(j, j - m + 1, -1) x) THEN
    RETURN;
  END IF;
  RAISE EXCEPTION 'minidb_diff MISMATCH seed % step %: cursor % on % went back over rows it had not returned going forward',
    seed, step, meta, side
    USING DETAIL = format(E'forward, in order (rows cut to 60 characters):\n%s\nbackward:\n%s',
                          array_to_string(ARRAY(SELECT left(x, 60) FROM unnest(a) x), E'\n'),
                          array_to_string(ARRAY(SELECT left(x, 60) FROM unnest(got) x), E'\n')),
          HINT = minidb_diff.last_ops();
END $$;

-- Finish every cursor at depth >= min_depth (but keep the WITH HOLD ones
-- when keep_hold); used before COMMIT (the WITH HOLD ones stay, at depth
-- -1), before ROLLBACK, before a subtransaction is rolled back (its
-- cursors go with it) and at the end of a run.
CREATE PROCEDURE finish_cursors(seed int, step int, min_depth int, keep_hold bool,
                                INOUT cur text[], INOUT acc_h text[], INOUT acc_m text[])
LANGUAGE plpgsql AS $$
DECLARE i int; ncur text[] := '{}'; nh text[] := '{}'; nm text[] := '{}'; d int; meta text;
BEGIN
  FOR i IN 1 .. coalesce(cardinality(cur), 0) LOOP
    meta := cur[i];
    d := split_part(meta, ':', 3)::int;
    IF d >= min_depth AND NOT (keep_hold AND split_part(meta, ':', 4) = 'true') THEN
      PERFORM minidb_diff.finish_cursor(seed, step, meta, acc_h[i], acc_m[i]);
    ELSE
      ncur := ncur || meta; nh := nh || acc_h[i]; nm := nm || acc_m[i];
    END IF;
  END LOOP;
  cur := ncur; acc_h := nh; acc_m := nm;
END $$;

-- the cursors of subtransaction level >= from now belong to level to
-- (it committed into its parent, or, with to = -1, its transaction did)
CREATE FUNCTION cursors_to_level(cur text[], from_depth int, to_depth int) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
  SELECT coalesce(array_agg(CASE WHEN split_part(m, ':', 3)::int >= from_depth
                                 THEN format('%s:%s:%s:%s', split_part(m, ':', 1), split_part(m, ':', 2),
                                             to_depth, split_part(m, ':', 4))
                                 ELSE m END ORDER BY i), '{}')
  FROM unnest(cur) WITH ORDINALITY u(m, i)
$$;

-- One cursor operation: open a cursor pair (at most 3 open), or fetch
-- from one: forward n rows, backward n rows (scrollable ones), or the
-- rest, after which it is closed; after a forward fetch that returned a
-- row, sometimes UPDATE or DELETE ... WHERE CURRENT OF it.
CREATE PROCEDURE cursor_op(seed int, step int, depth int, INOUT cno int,
                           INOUT cur text[], INOUT acc_h text[], INOUT acc_m text[])
LANGUAGE plpgsql AS $$
DECLARE kind text; hold bool; i int; meta text; no text; hrows text[]; mrows text[]; n int;
        back int; r float8;
BEGIN
  IF cardinality(cur) < 3 AND (cardinality(cur) = 0 OR random() < 0.35) THEN
    cno := cno + 1;
    kind := (ARRAY['seq', 'seqsort', 'idx', 'idxk', 'ios', 'bitmap', 'upd', 'nku', 'sh', 'ksh', 'idx', 'seq'])
              [minidb_diff.rand_int(1, 12)];
    hold := kind NOT IN ('upd', 'nku', 'sh', 'ksh') AND random() < 0.2;
    meta := format('%s:%s:%s:%s', cno, kind, depth, hold);
    INSERT INTO minidb_diff.log VALUES (step, format('OPEN cursor %s (%s)', cno, meta));
    PERFORM minidb_diff.open_cursor('h' || cno, kind, 'dh', hold);
    PERFORM minidb_diff.open_cursor('m' || cno, kind, 'dm', hold);
    cur := cur || meta; acc_h := acc_h || ''::text; acc_m := acc_m || ''::text;
    -- a first FETCH right away, now and then: the scan then starts before the changes
    IF random() < 0.3 THEN
      SELECT f.hrows, f.mrows INTO hrows, mrows
        FROM minidb_diff.fetch_both(seed, step, meta, true, minidb_diff.rand_int(1, 5)) f;
      IF NOT minidb_diff.cursor_ordered(kind) THEN
        acc_h[cardinality(cur)] := array_to_string(hrows, E'\n');
        acc_m[cardinality(cur)] := array_to_string(mrows, E'\n');
      END IF;
    END IF;
    RETURN;
  END IF;
  i := minidb_diff.rand_int(1, cardinality(cur));
  meta := cur[i]; no := split_part(meta, ':', 1); kind := split_part(meta, ':', 2);
  hold := split_part(meta, ':', 4) = 'true';
  r := random();
  IF r < 0.35 THEN
    PERFORM minidb_diff.finish_cursor(seed, step, meta, acc_h[i], acc_m[i]);
    cur := cur[:i - 1] || cur[i + 1:]; acc_h := acc_h[:i - 1] || acc_h[i + 1:]; acc_m := acc_m[:i - 1] || acc_m[i + 1:];
  ELSIF r < 0.55 AND kind IN ('seqsort', 'idx', 'ios', 'seq') THEN
    -- backward; an unordered cursor's rows so fetched are compared by
    -- count only, and it moves back to where it was (MOVE ABSOLUTE: the
    -- number of rows it returned going forward)
    n := minidb_diff.rand_int(1, 8);
    SELECT f.hrows, f.mrows INTO hrows, mrows FROM minidb_diff.fetch_both(seed, step, meta, false, n) f;
    IF NOT minidb_diff.cursor_ordered(kind) THEN
      -- each side must go back over the rows it returned, in reverse (from
      -- the last one returned, or past the end from the one before it)
      PERFORM minidb_diff.check_backward(seed, step, meta, 'heap', acc_h[i], hrows);
      PERFORM minidb_diff.check_backward(seed, step, meta, 'minidb', acc_m[i], mrows);
      back := cardinality(string_to_array(acc_h[i], E'\n'));
      INSERT INTO minidb_diff.log VALUES (step, format('MOVE ABSOLUTE %s IN cursor %s', back, no));
      EXECUTE format('MOVE ABSOLUTE %s IN %I', back, 'h' || no);
      EXECUTE format('MOVE ABSOLUTE %s IN %I', back, 'm' || no);
    END IF;
  ELSE
    n := minidb_diff.rand_int(1, 15);
    SELECT f.hrows, f.mrows INTO hrows, mrows FROM minidb_diff.fetch_both(seed, step, meta, true, n) f;
    IF NOT minidb_diff.cursor_ordered(kind) THEN
      acc_h[i] := concat_ws(E'\n', nullif(acc_h[i], ''), nullif(array_to_string(hrows, E'\n'), ''));
      acc_m[i] := concat_ws(E'\n', nullif(acc_m[i], ''), nullif(array_to_string(mrows, E'\n'), ''));
    END IF;
    IF cardinality(hrows) > 0 AND NOT hold AND kind IN ('idx', 'upd', 'nku', 'sh', 'ksh')
       AND random() < 0.5 THEN
      r := random();
      PERFORM minidb_diff.applyx(seed, step,
        CASE WHEN r < 0.4 THEN 'UPDATE @T SET n = coalesce(n, 0) + 1 WHERE CURRENT OF @S' || no
             WHEN r < 0.6 THEN 'UPDATE @T SET k = k + 1, pad = $1 WHERE CURRENT OF @S' || no
             WHEN r < 0.8 THEN 'DELETE FROM @T WHERE CURRENT OF @S' || no
             ELSE 'UPDATE @T SET v = $1 WHERE CURRENT OF @S' || no || ' RETURNING id, k, v, n' END,
        minidb_diff.big_text(), NULL, NULL, r >= 0.8, true);
    END IF;
  END IF;
END $$;

-- A row's life in one transaction, watched by cursors: INSERT a new row
-- (toasted or not), then 3 to 6 statements on it (in place, moving,
-- toasting UPDATEs, row locks, DELETE and INSERT again, ON CONFLICT, MERGE,
-- some in a subtransaction rolled back half the time), with two cursors
-- opened at random points of that life (the first before the INSERT now
-- and then) and read to the end afterwards: each must see the row as it
-- was when it was opened.
CREATE FUNCTION row_life(seed int, step int, INOUT next_id int) LANGUAGE plpgsql AS $$
DECLARE id1 int := next_id; nstmt int := minidb_diff.rand_int(3, 6); i int; r float8;
        opens int[] := ARRAY[minidb_diff.rand_int(0, nstmt), minidb_diff.rand_int(1, nstmt)];
        metas text[] := '{}'; meta text; kind text; sql text; nm int := 0;
        mode text := (ARRAY['seq', 'index', 'bitmap'])[minidb_diff.rand_int(1, 3)];
        sub bool; q text;
BEGIN
  next_id := next_id + 1;
  FOR i IN 0 .. nstmt LOOP
    WHILE nm < 2 AND opens[nm + 1] = i LOOP
      nm := nm + 1;
      kind := (ARRAY['seq', 'seqsort', 'idx', 'idxk', 'ios', 'bitmap', 'upd', 'sh'])[minidb_diff.rand_int(1, 8)];
      meta := format('r%s_%s:%s:0:false', step, nm, kind);
      INSERT INTO minidb_diff.log VALUES (step, format('OPEN cursor %s', meta));
      PERFORM minidb_diff.open_cursor('hr' || step || '_' || nm, kind, 'dh', false);
      PERFORM minidb_diff.open_cursor('mr' || step || '_' || nm, kind, 'dm', false);
      metas := metas || meta;
    END LOOP;
    EXIT WHEN i = nstmt;
    IF i = 0 THEN
      sql := 'INSERT INTO @T VALUES ($2, $2 % 97, ''life'', 0, $1) RETURNING id, k, md5(coalesce(pad, ''-''))';
    ELSE
      r := random();
      sql := CASE
        WHEN r < 0.15 THEN 'UPDATE @T SET n = coalesce(n, 0) + 1 WHERE id = $2 RETURNING id, n'
        WHEN r < 0.24 THEN 'UPDATE @T SET k = k + 1 WHERE id = $2 RETURNING id, k'
        WHEN r < 0.30 THEN 'UPDATE @T SET k = k - 1, n = coalesce(n, 0) + 1 WHERE id = $2 RETURNING id, k'
        WHEN r < 0.42 THEN 'UPDATE @T SET pad = $1 WHERE id = $2 RETURNING id, md5(coalesce(pad, ''-''))'
        WHEN r < 0.52 THEN 'UPDATE @T SET k = k + 1, pad = $1 WHERE id = $2 RETURNING id, k, md5(coalesce(pad, ''-''))'
        WHEN r < 0.58 THEN 'SELECT id, k, n FROM @T WHERE id = $2 FOR '
                           || (ARRAY['UPDATE', 'NO KEY UPDATE', 'SHARE', 'KEY SHARE'])[minidb_diff.rand_int(1, 4)]
        WHEN r < 0.61 THEN 'UPDATE @T SET p = $2 WHERE id IN ($2, $2 - 1) RETURNING id, p'
        WHEN r < 0.64 THEN 'INSERT INTO @T VALUES (-$2, 3, ''child'', 0, NULL, $2)
                            ON CONFLICT (id) DO UPDATE SET p = EXCLUDED.p RETURNING id, p'
        WHEN r < 0.70 THEN 'DELETE FROM @T WHERE id = $2 RETURNING id, k, n'
        WHEN r < 0.76 THEN 'INSERT INTO @T VALUES ($2, 7, ''again'', 0, $1) ON CONFLICT DO NOTHING RETURNING id, k'
        WHEN r < 0.88 THEN 'INSERT INTO @T AS t VALUES ($2, 0, ''ups'', 0, $1) ON CONFLICT (id) DO UPDATE
                              SET n = coalesce(t.n, 0) + 1, k = t.k + (t.n % 2), pad = EXCLUDED.pad
                            RETURNING t.id, t.k, t.n, md5(coalesce(t.pad, ''-''))'
        ELSE 'MERGE INTO @T t USING (VALUES ($2)) s(id) ON t.id = s.id
              WHEN MATCHED AND t.n % 3 = 2 THEN DELETE
              WHEN MATCHED THEN UPDATE SET n = coalesce(t.n, 0) + 1, k = t.k + 1, pad = $1
              WHEN NOT MATCHED THEN INSERT VALUES (s.id, 5, ''merged'', 0, $1)' END;
    END IF;
    sub := i > 0 AND random() < 0.3;
    BEGIN
      IF sub THEN INSERT INTO minidb_diff.log VALUES (step, 'SAVEPOINT (row life)'); END IF;
      -- (the parent must exist: 23503 otherwise)
      PERFORM minidb_diff.applyx(seed, step, sql, minidb_diff.big_text(), id1, NULL,
                                 position('MERGE' IN sql) = 0, sql LIKE '%SET p =%' OR sql LIKE '%child%', mode,
                                 CASE WHEN random() < 0.15 THEN 'log' ELSE '' END);
      -- now and then a first FETCH in the middle: the scan is under way
      IF cardinality(metas) > 0 AND random() < 0.2 THEN
        meta := metas[minidb_diff.rand_int(1, cardinality(metas))];
        IF minidb_diff.cursor_ordered(split_part(meta, ':', 2)) THEN
          PERFORM minidb_diff.fetch_both(seed, step, meta, true, minidb_diff.rand_int(1, 5));
        END IF;
      END IF;
      IF sub AND random() < 0.5 THEN RAISE EXCEPTION 'minidb_diff_rollback' USING ERRCODE = 'P0099'; END IF;
    EXCEPTION WHEN SQLSTATE 'P0099' THEN
      INSERT INTO minidb_diff.log VALUES (step, 'ROLLBACK TO SAVEPOINT (row life)');
    END;
  END LOOP;
  FOREACH meta IN ARRAY metas LOOP
    PERFORM minidb_diff.finish_cursor(seed, step, meta, '', '');
  END LOOP;
END $$;

-- one random step's operation: a cursor operation, a row's life, one of
-- new_op's or one of one_op's
CREATE PROCEDURE step_op(seed int, step int, depth int, INOUT next_id int, INOUT cno int,
                         INOUT cur text[], INOUT acc_h text[], INOUT acc_m text[])
LANGUAGE plpgsql AS $$
DECLARE r float8 := random();
BEGIN
  IF r < 0.15 THEN
    CALL minidb_diff.cursor_op(seed, step, depth, cno, cur, acc_h, acc_m);
  ELSIF r < 0.22 THEN
    next_id := minidb_diff.row_life(seed, step, next_id);
  ELSIF r < 0.55 THEN
    next_id := minidb_diff.new_op(seed, step, next_id);
  ELSE
    next_id := minidb_diff.one_op(seed, step, next_id);
  END IF;
END $$;

CREATE PROCEDURE run(seed int, steps int, fresh bool) LANGUAGE plpgsql AS $$
DECLARE step int; r float8; next_id int; depth int;
        cno int := 0; cur text[] := '{}'; acc_h text[] := '{}'; acc_m text[] := '{}';
        -- one seed in three ends its transactions four times less often:
        -- long transactions, many versions of a row of one transaction,
        -- cursors held across many statements
        tx_end float8 := CASE WHEN seed % 3 = 0 THEN 0.25 ELSE 1 END;
BEGIN
  IF fresh THEN
    -- even seeds: AFTER triggers and the foreign key; odd ones: in-place updates
    PERFORM minidb_diff.fresh_tables(seed % 2 = 0);
    COMMIT;
  END IF;
  -- one seed in four runs its transactions (from the next one on) under
  -- REPEATABLE READ: every statement and cursor then reads the
  -- transaction's snapshot, at its own command id
  IF seed % 4 = 3 THEN
    PERFORM set_config('default_transaction_isolation', 'repeatable read', false);
    COMMIT;
  END IF;
  PERFORM setseed(((seed * 7919) % 100000) / 100000.0 - 0.5);
  SELECT coalesce(max(id), 0) + 1 INTO next_id FROM minidb_diff.dh;
  next_id := greatest(next_id, 1) + 1000000 * (NOT fresh)::int;
  PERFORM minidb_diff.check_plans();
  FOR step IN 1..steps LOOP
    r := random();
    IF r < 0.05 * tx_end THEN
      -- the cursors die at COMMIT, but for the WITH HOLD ones: read them to
      -- the end now (the WITH HOLD ones are read to the end by COMMIT)
      CALL minidb_diff.finish_cursors(seed, step, 0, true, cur, acc_h, acc_m);
      cur := minidb_diff.cursors_to_level(cur, 0, -1);
      INSERT INTO minidb_diff.log VALUES (step, 'COMMIT');
      COMMIT;
    ELSIF r < 0.08 * tx_end THEN
      CALL minidb_diff.finish_cursors(seed, step, 0, false, cur, acc_h, acc_m);
      -- the log lives in the same transaction: keep a note of the rollback
      ROLLBACK;
      INSERT INTO minidb_diff.log VALUES (step, 'ROLLBACK (earlier steps since the last COMMIT undone)');
    ELSIF r < 0.16 THEN
      -- a subtransaction of 1 to 3 operations, possibly nested, rolled
      -- back half of the time; the cursors opened in it are read to the
      -- end before it rolls back (they go with it), the older ones stay
      BEGIN
        INSERT INTO minidb_diff.log VALUES (step, 'SAVEPOINT');
        CALL minidb_diff.step_op(seed, step, 1, next_id, cno, cur, acc_h, acc_m);
        BEGIN
          IF random() < 0.5 THEN
            CALL minidb_diff.step_op(seed, step, 2, next_id, cno, cur, acc_h, acc_m);
            PERFORM minidb_diff.compare(seed, step);
            IF random() < 0.5 THEN
              CALL minidb_diff.finish_cursors(seed, step, 2, false, cur, acc_h, acc_m);
              RAISE EXCEPTION 'minidb_diff_rollback' USING ERRCODE = 'P0099';
            END IF;
          END IF;
          cur := minidb_diff.cursors_to_level(cur, 2, 1);
        EXCEPTION WHEN SQLSTATE 'P0099' THEN NULL;
        END;
        CALL minidb_diff.step_op(seed, step, 1, next_id, cno, cur, acc_h, acc_m);
        PERFORM minidb_diff.compare(seed, step);
        IF random() < 0.5 THEN
          CALL minidb_diff.finish_cursors(seed, step, 1, false, cur, acc_h, acc_m);
          RAISE EXCEPTION 'minidb_diff_rollback' USING ERRCODE = 'P0099';
        END IF;
        cur := minidb_diff.cursors_to_level(cur, 1, 0);
      EXCEPTION WHEN SQLSTATE 'P0099' THEN
        INSERT INTO minidb_diff.log VALUES (step, 'ROLLBACK TO SAVEPOINT');
      END;
    ELSE
      CALL minidb_diff.step_op(seed, step, 0, next_id, cno, cur, acc_h, acc_m);
    END IF;
    PERFORM minidb_diff.compare(seed, step);
  END LOOP;
  CALL minidb_diff.finish_cursors(seed, steps + 1, -1, false, cur, acc_h, acc_m);
  COMMIT;
  PERFORM minidb_diff.compare(seed, steps + 1);
END $$;

CREATE PROCEDURE verify(seed int, what text) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM minidb_diff.compare(seed, -1);
  RAISE NOTICE 'minidb_diff seed %: % ok (% rows)', seed, what, (SELECT count(*) FROM minidb_diff.dm);
END $$;
