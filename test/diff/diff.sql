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

CREATE FUNCTION fresh_tables() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  DROP TABLE IF EXISTS minidb_diff.dh, minidb_diff.dm;
  CREATE TABLE minidb_diff.dh (id int PRIMARY KEY, k int NOT NULL, v text, n int, pad text)
    USING heap WITH (autovacuum_enabled = off);
  CREATE TABLE minidb_diff.dm (id int PRIMARY KEY, k int NOT NULL, v text, n int, pad text)
    USING minidb WITH (autovacuum_enabled = off);
  CREATE INDEX dh_k ON minidb_diff.dh (k);
  CREATE INDEX dm_k ON minidb_diff.dm (k);
  TRUNCATE minidb_diff.log;
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
END $$;

CREATE FUNCTION mode_query(mode text, tbl text) RETURNS text LANGUAGE sql AS $$
  SELECT CASE mode
    WHEN 'seq'    THEN format('SELECT x::text AS r FROM minidb_diff.%I x', tbl)
    WHEN 'index'  THEN format('SELECT x::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648', tbl)
    WHEN 'bitmap' THEN format('SELECT x::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648', tbl)
    WHEN 'ios'    THEN format('SELECT k::text AS r FROM minidb_diff.%I x WHERE k >= -2147483648', tbl)
  END
$$;

CREATE FUNCTION check_plans() RETURNS void LANGUAGE plpgsql AS $$
DECLARE mode text; want text; plan text; line text;
BEGIN
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

CREATE PROCEDURE run(seed int, steps int, fresh bool) LANGUAGE plpgsql AS $$
DECLARE step int; r float8; next_id int; depth int;
BEGIN
  IF fresh THEN
    PERFORM minidb_diff.fresh_tables();
    COMMIT;
  END IF;
  PERFORM setseed(((seed * 7919) % 100000) / 100000.0 - 0.5);
  SELECT coalesce(max(id), 0) + 1 INTO next_id FROM minidb_diff.dh;
  next_id := greatest(next_id, 1) + 1000000 * (NOT fresh)::int;
  PERFORM minidb_diff.check_plans();
  FOR step IN 1..steps LOOP
    r := random();
    IF r < 0.05 THEN
      INSERT INTO minidb_diff.log VALUES (step, 'COMMIT');
      COMMIT;
    ELSIF r < 0.08 THEN
      -- the log lives in the same transaction: keep a note of the rollback
      ROLLBACK;
      INSERT INTO minidb_diff.log VALUES (step, 'ROLLBACK (earlier steps since the last COMMIT undone)');
    ELSIF r < 0.16 THEN
      -- a subtransaction of 1 to 3 operations, possibly nested, rolled
      -- back half of the time
      BEGIN
        INSERT INTO minidb_diff.log VALUES (step, 'SAVEPOINT');
        next_id := minidb_diff.one_op(seed, step, next_id);
        BEGIN
          IF random() < 0.5 THEN
            next_id := minidb_diff.one_op(seed, step, next_id);
            PERFORM minidb_diff.compare(seed, step);
            IF random() < 0.5 THEN RAISE EXCEPTION 'minidb_diff_rollback' USING ERRCODE = 'P0099'; END IF;
          END IF;
        EXCEPTION WHEN SQLSTATE 'P0099' THEN NULL;
        END;
        next_id := minidb_diff.one_op(seed, step, next_id);
        PERFORM minidb_diff.compare(seed, step);
        IF random() < 0.5 THEN RAISE EXCEPTION 'minidb_diff_rollback' USING ERRCODE = 'P0099'; END IF;
      EXCEPTION WHEN SQLSTATE 'P0099' THEN
        INSERT INTO minidb_diff.log VALUES (step, 'ROLLBACK TO SAVEPOINT');
      END;
    ELSE
      next_id := minidb_diff.one_op(seed, step, next_id);
    END IF;
    PERFORM minidb_diff.compare(seed, step);
  END LOOP;
  COMMIT;
  PERFORM minidb_diff.compare(seed, steps + 1);
END $$;

CREATE PROCEDURE verify(seed int, what text) LANGUAGE plpgsql AS $$
BEGIN
  PERFORM minidb_diff.compare(seed, -1);
  RAISE NOTICE 'minidb_diff seed %: % ok (% rows)', seed, what, (SELECT count(*) FROM minidb_diff.dm);
END $$;
