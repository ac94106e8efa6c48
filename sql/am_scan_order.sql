--
-- am_scan_order: the order a sequential scan returns a minidb table's rows
-- in, beside heap.  Without ORDER BY the order is unspecified, but users,
-- cursors and PostgreSQL's own tests read it: minidb returns a page's rows
-- in the order heap would hold them (see rows_order_by_age in
-- minidb_scan.c).  Each query runs on a heap table h and a minidb table m
-- holding the same rows after the same statements; array_agg without ORDER
-- BY keeps the scan order.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS minidb_am;
RESET client_min_messages;
CREATE SCHEMA am_scan_order;
SET search_path = am_scan_order, public;
SET enable_indexscan = off;
SET enable_bitmapscan = off;

-- 1. A scrollable cursor rewound after a DELETE ... WHERE CURRENT OF of a
-- row the same transaction inserted: the deleted row's cid becomes a
-- combo command id, which must not move it (heap's FETCH ABSOLUTE 1 gives
-- the first row again, and the second DELETE removes it).
CREATE TABLE h (id int, v text) USING heap;
CREATE TABLE m (id int, v text) USING minidb;
BEGIN;
INSERT INTO h SELECT g, 'p' || g FROM generate_series(1, 9) g;
INSERT INTO m SELECT g, 'p' || g FROM generate_series(1, 9) g;
DECLARE ch SCROLL CURSOR FOR SELECT * FROM h;
DECLARE cm SCROLL CURSOR FOR SELECT * FROM m;
FETCH ABSOLUTE 8 FROM ch;
FETCH ABSOLUTE 8 FROM cm;
DELETE FROM h WHERE CURRENT OF ch RETURNING *;
DELETE FROM m WHERE CURRENT OF cm RETURNING *;
FETCH ABSOLUTE 1 FROM ch;
FETCH ABSOLUTE 1 FROM cm;
DELETE FROM h WHERE CURRENT OF ch RETURNING *;
DELETE FROM m WHERE CURRENT OF cm RETURNING *;
SELECT array_agg(id) AS h_rows FROM h;
SELECT array_agg(id) AS m_rows FROM m;
ROLLBACK;

-- 2. One UPDATE of every row, after earlier UPDATEs reordered them: heap
-- writes the new versions in the order its scan met the rows, so the
-- rows written by one command follow their previous versions' order.
CREATE TABLE h2 (a int, b int, c text) USING heap;
CREATE TABLE m2 (a int, b int, c text) USING minidb;
INSERT INTO h2 VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z'), (4, 40, 'w');
INSERT INTO m2 VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z'), (4, 40, 'w');
UPDATE h2 SET b = b + 1 WHERE a = 1;
UPDATE m2 SET b = b + 1 WHERE a = 1;
UPDATE h2 SET b = b + 1 WHERE a = 3;
UPDATE m2 SET b = b + 1 WHERE a = 3;
UPDATE h2 SET c = c || '!';
UPDATE m2 SET c = c || '!';
SELECT array_agg(a) AS h2_rows FROM h2;
SELECT array_agg(a) AS m2_rows FROM m2;
-- the first row a constraint check meets is the one its error names
ALTER TABLE h2 ADD CONSTRAINT small CHECK (b < 100) NOT VALID;
ALTER TABLE m2 ADD CONSTRAINT small CHECK (b < 100) NOT VALID;
UPDATE h2 SET b = b + 1000;
UPDATE m2 SET b = b + 1000;

-- (Not covered: one UPDATE that keeps one row in place and moves another,
-- when an indexed column changes.  The moved row's new record cannot tell
-- it was an UPDATE's, and comes first among the command's rows; heap keeps
-- scan order.  PostgreSQL's foreign_key test shows it, accepted as order.)

-- 3. CLUSTER: with a sequential scan and a sort (no index scan allowed)
-- rows of equal keys come out of the sort in heap's order; and the rows
-- stay in the order CLUSTER wrote them, also those the transaction itself
-- wrote before (not frozen).
CREATE TABLE h3 (id serial, k int) USING heap;
CREATE TABLE m3 (id serial, k int) USING minidb;
INSERT INTO h3 (k) SELECT g % 50 FROM generate_series(1, 500) g;
INSERT INTO m3 (k) SELECT g % 50 FROM generate_series(1, 500) g;
INSERT INTO h3 (k) VALUES (NULL), (NULL), (7), (7);
INSERT INTO m3 (k) VALUES (NULL), (NULL), (7), (7);
CREATE INDEX h3_k ON h3 (k);
CREATE INDEX m3_k ON m3 (k);
BEGIN;
SET LOCAL enable_indexscan = off;
CLUSTER h3 USING h3_k;
CLUSTER m3 USING m3_k;
SELECT array_agg(id) AS h3_head FROM (SELECT id FROM h3 ORDER BY ctid LIMIT 12) s;
SELECT array_agg(id) AS m3_head FROM (SELECT id FROM m3 ORDER BY ctid LIMIT 12) s;
SELECT array_agg(id) AS h3_tail FROM (SELECT id FROM h3 ORDER BY ctid DESC LIMIT 6) s;
SELECT array_agg(id) AS m3_tail FROM (SELECT id FROM m3 ORDER BY ctid DESC LIMIT 6) s;
ROLLBACK;
CREATE TABLE h4 (k int PRIMARY KEY) USING heap;
CREATE TABLE m4 (k int PRIMARY KEY) USING minidb;
INSERT INTO h4 VALUES (10), (20), (30), (40), (50);
INSERT INTO m4 VALUES (10), (20), (30), (40), (50);
BEGIN;
UPDATE h4 SET k = 100 WHERE k = 10;
UPDATE m4 SET k = 100 WHERE k = 10;
UPDATE h4 SET k = 35 WHERE k = 40;
UPDATE m4 SET k = 35 WHERE k = 40;
SELECT array_agg(k) AS h4_before FROM h4;
SELECT array_agg(k) AS m4_before FROM m4;
CLUSTER h4 USING h4_pkey;
CLUSTER m4 USING m4_pkey;
SELECT array_agg(k) AS h4_after FROM h4;
SELECT array_agg(k) AS m4_after FROM m4;
COMMIT;
SELECT array_agg(k) AS h4_committed FROM h4;
SELECT array_agg(k) AS m4_committed FROM m4;

-- 4. Rows of one age keep one stored age (rows_add_age): a page whose
-- first rows share an age and whose later rows are older must still be
-- ordered, the shared age given to every earlier row.  Rows 1 and 2 are
-- updated in place by one command, row 3 keeps the INSERT's age: heap
-- gives 3, 1, 2; then a row inserted and row 3 updated: 1, 2, 4, 3.
CREATE TABLE h5 (a int, b int) USING heap;
CREATE TABLE m5 (a int, b int) USING minidb;
INSERT INTO h5 VALUES (1, 0), (2, 0), (3, 0);
INSERT INTO m5 VALUES (1, 0), (2, 0), (3, 0);
UPDATE h5 SET b = 1 WHERE a <= 2;
UPDATE m5 SET b = 1 WHERE a <= 2;
SELECT array_agg(a) AS h5_rows FROM h5;
SELECT array_agg(a) AS m5_rows FROM m5;
INSERT INTO h5 VALUES (4, 0);
INSERT INTO m5 VALUES (4, 0);
UPDATE h5 SET b = 2 WHERE a = 3;
UPDATE m5 SET b = 2 WHERE a = 3;
SELECT array_agg(a) AS h5_rows FROM h5;
SELECT array_agg(a) AS m5_rows FROM m5;

-- 5. A record that grew in place and was moved within its page now starts
-- above the next line pointer's record: the scan's folded page check
-- (records starting in descending order) gives way to the whole check,
-- which passes; every row reads back as heap's.
CREATE TABLE h6 (a int, t text) USING heap;
CREATE TABLE m6 (a int, t text) USING minidb;
INSERT INTO h6 SELECT g, 'x' FROM generate_series(1, 20) g;
INSERT INTO m6 SELECT g, 'x' FROM generate_series(1, 20) g;
UPDATE h6 SET t = repeat('y', 300) WHERE a = 2;
UPDATE m6 SET t = repeat('y', 300) WHERE a = 2;
SELECT count(*), sum(a), sum(length(t)) FROM h6;
SELECT count(*), sum(a), sum(length(t)) FROM m6;
SELECT count(*) = 20 AS all_in_block_0 FROM m6 WHERE ctid < '(1,0)';
SELECT array_agg(a) AS h6_rows FROM h6;
SELECT array_agg(a) AS m6_rows FROM m6;

-- 6. Forty rows each updated twice in place, one transaction an UPDATE,
-- in a shuffled order: heap appends each new version, so its scan gives
-- the rows in the order of their last update; minidb sorts the page's
-- rows by their versions' ages.  Commits are flushed, so the first scan
-- sets the hint bits and the second reads the hinted newest versions of
-- these two-version records without the walker (plain_version,
-- newest_seen): both give heap's order.  Then one UPDATE of every row
-- writes versions of one age, ordered by the versions before them (read
-- from the record by the walker, then by minidb_v3_older_header).
SET synchronous_commit = on;
CREATE PROCEDURE shuffled_updates(t regclass) LANGUAGE plpgsql AS $$
BEGIN
	FOR i IN 1..80 LOOP
		EXECUTE format('UPDATE %s SET b = b + 1 WHERE a = %s', t,
					   (i * 17) % 40 + 1);
		COMMIT;
	END LOOP;
END $$;
CREATE TABLE h7 (a int, b int, pad text) USING heap;
CREATE TABLE m7 (a int, b int, pad text) USING minidb;
INSERT INTO h7 SELECT g, 0 FROM generate_series(1, 40) g;
INSERT INTO m7 SELECT g, 0 FROM generate_series(1, 40) g;
CALL shuffled_updates('h7');
CALL shuffled_updates('m7');
SELECT array_agg(a) AS h7_rows FROM h7;
SELECT (SELECT array_agg(a) FROM m7) = (SELECT array_agg(a) FROM h7)
	AS m7_first_scan_as_heap;
SELECT (SELECT array_agg(a) FROM m7) = (SELECT array_agg(a) FROM h7)
	AS m7_hinted_scan_as_heap;
SELECT count(*) AS m7_records_of_several_versions
	FROM m7, LATERAL (SELECT count(*) AS n FROM minidb_chain('m7', m7.ctid)) c
	WHERE c.n >= 2;
UPDATE h7 SET b = b + 1;
UPDATE m7 SET b = b + 1;
SELECT (SELECT array_agg(a) FROM m7) = (SELECT array_agg(a) FROM h7)
	AS m7_one_command_as_heap;
SELECT (SELECT array_agg(a) FROM m7) = (SELECT array_agg(a) FROM h7)
	AS m7_one_command_hinted_as_heap;
RESET synchronous_commit;

-- A scrollable cursor that goes back retraces the rows it gave, though
-- the transaction deleted or moved, after the rows were given, a row of
-- another transaction's whose version the page's order placed by its cmin
-- (the cmax is then stored there, as heap stores t_cid): a page read
-- again comes out in the order it came out in before.  Heap beside.
CREATE FUNCTION fetch_ids(c refcursor, n int, back bool) RETURNS int[]
LANGUAGE plpgsql AS $$
DECLARE r int; ids int[] := '{}';
BEGIN
	FOR i IN 1..n LOOP
		IF back THEN FETCH PRIOR FROM c INTO r; ELSE FETCH NEXT FROM c INTO r; END IF;
		EXIT WHEN NOT FOUND;
		ids := ids || r;
	END LOOP;
	RETURN ids;
END $$;
CREATE PROCEDURE retraces(t text, change text, INOUT r text)
LANGUAGE plpgsql AS $$
DECLARE c refcursor := 'scroll_' || t; fwd int[]; back int[]; again int[];
BEGIN
	PERFORM set_config('client_min_messages', 'warning', true);
	EXECUTE format('DROP TABLE IF EXISTS %I', t);
	EXECUTE format('CREATE TABLE %I (id int PRIMARY KEY, n int, pad text) USING %s',
				   t, CASE WHEN t LIKE 'm%' THEN 'minidb' ELSE 'heap' END);
	EXECUTE format('INSERT INTO %I SELECT g, 0, repeat(''x'', 1000) FROM generate_series(1, 10) g', t);
	EXECUTE format('UPDATE %I SET n = 1 WHERE id = 1', t);
	COMMIT;
	OPEN c SCROLL FOR EXECUTE format('SELECT id FROM %I', t);
	fwd := fetch_ids(c, 9, false);
	EXECUTE format(change, t);
	back := fetch_ids(c, 9, true);
	MOVE ABSOLUTE 0 FROM c;
	again := fetch_ids(c, 10, false);
	CLOSE c;
	ROLLBACK;
	r := format('%s: back %s, again %s',
		CASE WHEN array_length(fwd, 1) = 9 THEN 'nine' ELSE 'short' END,
		CASE WHEN back = (SELECT array_agg(x ORDER BY o DESC) FROM unnest(fwd[1:8]) WITH ORDINALITY u(x, o))
			 THEN 'retraced' ELSE 'differs: ' || fwd::text || ' / ' || back::text END,
		CASE WHEN again[1:9] = fwd THEN 'same' ELSE 'differs: ' || again::text END);
END $$;
CREATE PROCEDURE show_retraces() LANGUAGE plpgsql AS $$
DECLARE t text; change text; r text;
BEGIN
	FOREACH change IN ARRAY ARRAY['DELETE FROM %I WHERE id = 1',
								  'UPDATE %I SET id = -1 WHERE id = 1',
								  'UPDATE %I SET n = 2 WHERE id = 1'] LOOP
		FOREACH t IN ARRAY ARRAY['h8', 'm8'] LOOP
			CALL retraces(t, change, r);
			RAISE NOTICE '% %: %', t, split_part(change, ' ', 1) ||
				CASE WHEN change LIKE '%id = -1%' THEN ' (moves)' ELSE '' END, r;
		END LOOP;
	END LOOP;
END $$;
CALL show_retraces();

DROP SCHEMA am_scan_order CASCADE;
