--
-- security: issue 11, items 1, 5, 6 and 7.
--
--  1. The benchmark's writer session (a superuser dblink connection) runs
--     no code of the caller: a database owner in minidb_bench who sets the
--     database's search_path to a schema holding a domain named "text" (and
--     an operator "=") whose check would make them superuser, and its role
--     to theirs, gains nothing; the database name reaches the connection
--     string quoted; a cancelled benchmark leaves no superuser connection
--     (which the caller could use through dblink), no scratch schema and no
--     lock behind; leftovers of dead backends are dropped at the next call,
--     a schema of that name owned by somebody else never.
--  5. minidb_stats() sets hint bits only through minidb_set_hint: a page it
--     hints is marked dirty (MarkBufferDirtyHint).
--  6. Long calls stop on statement_timeout within a second or two, and the
--     calls are bounded.
--  7. minidb.read_path is superuser-only; the extension refuses a role
--     named minidb_bench that it did not create; minidb_chain() and
--     minidb_stats() check ownership before they lock; minidb_chain_build is
--     STABLE (its result follows minidb.record_format); every function's
--     bad arguments raise clear errors.
--
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS minidb_am;
CREATE EXTENSION IF NOT EXISTS pageinspect;
CREATE EXTENSION IF NOT EXISTS pg_buffercache;
\set regress_db :DBNAME
\set attackdb 'regress_minidb x'' options=''-crole=regress_minidb_attacker'' \\'
DROP DATABASE IF EXISTS :"attackdb";
DROP DATABASE IF EXISTS regress_minidb_fresh;
DROP ROLE IF EXISTS regress_minidb_attacker;
DROP ROLE IF EXISTS regress_minidb_nobody;
RESET client_min_messages;

-- SQLSTATE and message (and hint), not the context, of a failing statement
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN others OR query_canceled THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN hint <> '' THEN ' [' || hint || ']' ELSE '' END;
END $$;

CREATE ROLE regress_minidb_attacker IN ROLE minidb_bench;
CREATE ROLE regress_minidb_nobody;

-- ---------------------------------------------------------------------
-- 1. The attack: a database owner in minidb_bench
-- ---------------------------------------------------------------------
-- The name (:attackdb) would inject connection options if it were not
-- quoted.
CREATE DATABASE :"attackdb" OWNER regress_minidb_attacker;
-- (psql takes a name with "=" for a connection string: give it one)
SELECT format('host=''%s'' port=''%s'' user=''%s'' dbname=''%s''', :'HOST', :'PORT', :'USER',
			  replace(replace(:'attackdb', '\', '\\'), '''', '\''')) AS attack_conninfo \gset
\c :"attack_conninfo"
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN others OR query_canceled THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN hint <> '' THEN ' [' || hint || ']' ELSE '' END;
END $$;
CREATE EXTENSION dblink;
CREATE EXTENSION minidb_am;

SET ROLE regress_minidb_attacker;
CREATE SCHEMA evil;
CREATE TABLE evil.log (who name, was_superuser bool);
-- records who runs it; once run as a superuser, makes the attacker one
CREATE FUNCTION evil.pwn() RETURNS bool LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO evil.log
	SELECT current_user, rolsuper FROM pg_catalog.pg_roles
	 WHERE rolname = current_user;
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
		EXECUTE 'ALTER ROLE regress_minidb_attacker SUPERUSER';
	END IF;
	RETURN true;
END $$;
CREATE DOMAIN evil.text AS pg_catalog.text CHECK (evil.pwn());
CREATE DOMAIN evil.int4 AS pg_catalog.int4 CHECK (evil.pwn());
CREATE FUNCTION evil.eq(pg_catalog.int4, pg_catalog.int4) RETURNS bool
	LANGUAGE sql AS 'SELECT evil.pwn() AND $1 OPERATOR(pg_catalog.=) $2';
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4,
						FUNCTION = evil.eq);
SELECT current_database() AS db \gset
-- the trap is armed: with that search_path, text and = are the attacker's
SET search_path = evil, pg_catalog, public;
SELECT 'probe'::text AS probe, 1 = 1 AS probe_eq;
RESET search_path;
SELECT who, was_superuser FROM evil.log;
DELETE FROM evil.log;

-- the attack of the issue: the database's search_path leads to the trap
ALTER DATABASE :"db" SET search_path = evil, pg_catalog, public;
SELECT table_am, depth, reader, path, v
  FROM minidb_bench_chain_rows('{2}', '{view_lazy}') ORDER BY 1, 3;
RESET ROLE;
-- the function never ran, as the superuser or as anybody
SELECT count(*) AS trap_fired, count(*) FILTER (WHERE was_superuser) AS as_superuser
  FROM evil.log;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_minidb_attacker';

-- and with the database's role set to the attacker's too (the writer would
-- run as the attacker, in a session whose session user is a superuser),
-- through every benchmark function that writes through the writer
SET ROLE regress_minidb_attacker;
ALTER DATABASE :"db" SET role = regress_minidb_attacker;
SELECT table_am, depth, reader, path, v
  FROM minidb_bench_chain_rows('{2}', '{view_lazy}') ORDER BY 1, 3;
SELECT count(*) AS cells FROM minidb_bench_chain_depth('{1,3}', 5);
SELECT count(*) AS pairs FROM minidb_bench_ab('heap', 'view_lazy', 2, 'oldest', 2, 5);
RESET ROLE;
SELECT count(*) AS trap_fired FROM evil.log;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_minidb_attacker';

-- A cancelled benchmark: stops within a second or two, leaves no writer
-- connection that the caller could use (it is a superuser session) and no
-- scratch schema
SET ROLE regress_minidb_attacker;
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '1s';
SET client_min_messages = warning;	-- its progress NOTICEs depend on timing
SELECT pg_temp.try($$SELECT count(*) FROM minidb_bench_chain_depth('{1}', 100000000)$$) AS cancelled;
RESET statement_timeout;
RESET client_min_messages;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '3 s' AS stopped_in_time;
SELECT coalesce(array_length(dblink_get_connections(), 1), 0) AS open_connections;
-- (dblink's words since 16: "password or GSSAPI delegated credentials required")
SELECT replace(pg_temp.try(format('SELECT dblink_exec(%L, %L)', 'minidb_bench_' || pg_backend_pid(),
								  'ALTER ROLE regress_minidb_attacker SUPERUSER')),
			   'password or GSSAPI delegated credentials required',
			   'password is required') AS reuse_writer;
RESET ROLE;
SELECT count(*) AS scratch_schemas FROM pg_namespace WHERE nspname LIKE 'minidb\_bench\_%';
SELECT count(*) AS advisory_locks FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid();
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_minidb_attacker';

-- cancelled while the writer is still building the chains
SET ROLE regress_minidb_attacker;
SET statement_timeout = '200ms';
SET client_min_messages = warning;	-- its progress NOTICE depends on timing
SELECT pg_temp.try($$SELECT count(*) FROM minidb_bench_chain_rows(ARRAY(SELECT generate_series(150, 200)))$$) AS cancelled;
RESET statement_timeout;
RESET client_min_messages;
SELECT coalesce(array_length(dblink_get_connections(), 1), 0) AS open_connections;
RESET ROLE;
SELECT count(*) AS scratch_schemas FROM pg_namespace WHERE nspname LIKE 'minidb\_bench\_%';

-- A dblink connection of the writer's name that is already open (to
-- another database, here) is closed and replaced, never written through
SELECT dblink_connect('minidb_bench_' || pg_backend_pid(),
	format('host=%s port=%s dbname=postgres',
		   coalesce(nullif(split_part(current_setting('unix_socket_directories'), ',', 1), ''), '127.0.0.1'),
		   current_setting('port')));
SET ROLE regress_minidb_attacker;
SELECT count(*) AS rows FROM minidb_bench_chain_rows('{1}', '{view_lazy}', false);
SELECT coalesce(array_length(dblink_get_connections(), 1), 0) AS open_connections;
RESET ROLE;

-- Leftovers: a scratch schema of a backend that is gone is dropped by the
-- next call; one owned by somebody else is never touched, and a schema of
-- this backend's name owned by somebody else stops the call
CREATE SCHEMA minidb_bench_999999999;
CREATE TABLE minidb_bench_999999999.t (id int);
CREATE SCHEMA minidb_bench_999999998 AUTHORIZATION regress_minidb_attacker;
SET ROLE regress_minidb_attacker;
SELECT count(*) AS copy_rows FROM minidb_bench_chain_rows('{1}', '{view_lazy}', false);
RESET ROLE;
SELECT nspname FROM pg_namespace WHERE nspname LIKE 'minidb\_bench\_%' ORDER BY 1;
SELECT format('minidb_bench_%s', pg_backend_pid()) AS own_schema \gset
CREATE SCHEMA :"own_schema" AUTHORIZATION regress_minidb_attacker;
SET ROLE regress_minidb_attacker;
SELECT regexp_replace(pg_temp.try($$SELECT count(*) FROM minidb_bench_chain_rows('{1}', '{view_lazy}', false)$$),
					  'minidb_bench_[0-9]+', 'minidb_bench_PID') AS foreign_schema;
RESET ROLE;
SELECT count(*) AS still_there FROM pg_namespace WHERE nspname = :'own_schema';
DROP SCHEMA :"own_schema";
DROP SCHEMA minidb_bench_999999998;

-- A writer that cannot connect: the error says what the connection needs
-- (the database is closed to new connections by a session elsewhere)
SELECT dblink_connect('regress_admin',
	format('host=%s port=%s dbname=%s',
		   coalesce(nullif(split_part(current_setting('unix_socket_directories'), ',', 1), ''), '127.0.0.1'),
		   current_setting('port'), :'regress_db'));
SELECT dblink_exec('regress_admin', format('ALTER DATABASE %I WITH ALLOW_CONNECTIONS false', :'db'));
SELECT regexp_replace(regexp_replace(pg_temp.try($$SELECT count(*) FROM minidb_bench_chain_rows('{1}')$$),
									 'through .* \(port [0-9]+\)', 'through SOCKET (port PORT)'),
					  'database "[^"]*"', 'database DB', 'g') AS cannot_connect;
SELECT dblink_exec('regress_admin', format('ALTER DATABASE %I WITH ALLOW_CONNECTIONS true', :'db'));
SELECT dblink_disconnect('regress_admin');
SELECT count(*) AS scratch_schemas FROM pg_namespace WHERE nspname LIKE 'minidb\_bench\_%';

ALTER DATABASE :"db" RESET ALL;
\c :"regress_db"
DROP DATABASE :"attackdb";
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN others OR query_canceled THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN hint <> '' THEN ' [' || hint || ']' ELSE '' END;
END $$;

-- ---------------------------------------------------------------------
-- Who may call the benchmarks and minidb_chain_walk_timing: superusers and
-- members of minidb_bench; anybody else is told which role to get
-- ---------------------------------------------------------------------
SET ROLE regress_minidb_nobody;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 10)$$) AS chain_depth;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_rows('{1}')$$) AS chain_rows;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(10, 10)$$) AS copy_vs_alloc;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest')$$) AS ab;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 10)$$) AS walk_timing;
-- the chain functions that only read the bytes given stay open to all
SELECT valid FROM minidb_chain_check(minidb_chain_build('{a,b}'));
RESET ROLE;
SET ROLE regress_minidb_attacker;
SELECT walker, versions, iterations FROM minidb_chain_walk_timing(minidb_chain_build('{a,b}'), 10);
RESET ROLE;

-- ---------------------------------------------------------------------
-- 6. Bounded, interruptible: minidb_chain_walk_timing
-- ---------------------------------------------------------------------
SELECT minidb_chain_build(ARRAY(SELECT 'v' || g FROM generate_series(1, 1000) g)) AS deep \gset
SELECT regexp_replace(pg_temp.try(format('SELECT * FROM minidb_chain_walk_timing(%L, 1000000)', :'deep')),
					  'at most [0-9]+ iterations for a chain of 1000 versions and [0-9]+ bytes',
					  'at most N iterations for a chain of 1000 versions and M bytes') AS over_budget;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 100000001)$$) AS too_many;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 9)$$) AS too_few;
-- at the budget a call takes half a minute; statement_timeout stops it
SELECT clock_timestamp() AS t0 \gset
SET statement_timeout = '500ms';
SELECT pg_temp.try(format('SELECT * FROM minidb_chain_walk_timing(%L, 700000)', :'deep')) AS cancelled;
RESET statement_timeout;
SELECT clock_timestamp() - :'t0'::timestamptz < interval '2 s' AS stopped_in_time;
-- the benchmarks' bounds
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1,2,3}', 100000000)$$) AS too_many_fetches;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_chain_depth('{1}', 100000001)$$) AS too_many_iterations;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_ab('heap', 'view_lazy', 1, 'newest', 1000, 100000000)$$) AS too_many_pairs;
SELECT pg_temp.try($$SELECT * FROM minidb_bench_copy_vs_alloc(1048576, 1000000)$$) AS too_many_bytes;
-- minidb_chain_build is bounded too (every prepend moves the record)
SELECT pg_temp.try($$SELECT minidb_chain_build(ARRAY(SELECT repeat(chr(64 + g), 40000) FROM generate_series(1, 2) g))$$) AS v3_too_long;
SET minidb.record_format = v2;
SELECT pg_temp.try($$SELECT minidb_chain_build(ARRAY(SELECT repeat('x', 40000) FROM generate_series(1, 2)))$$) AS v2_too_long;
SET minidb.record_format = v1;
SELECT pg_temp.try($$SELECT minidb_chain_build(ARRAY(SELECT 'x' FROM generate_series(1, 32767)))$$) AS v1_too_long;
SELECT pg_temp.try($$SELECT minidb_chain_build(ARRAY(SELECT 'x' FROM generate_series(1, 32768)))$$) AS too_many_versions;
RESET minidb.record_format;

-- ---------------------------------------------------------------------
-- 7. minidb.read_path is superuser-only
-- ---------------------------------------------------------------------
SET ROLE regress_minidb_nobody;
SELECT pg_temp.try($$SET minidb.read_path = copy_eager$$) AS set_read_path;
SELECT current_setting('minidb.read_path') AS read_path;
RESET ROLE;
SET minidb.read_path = copy_eager;
SELECT current_setting('minidb.read_path') AS read_path;
RESET minidb.read_path;

-- minidb_chain_build follows minidb.record_format, also in a cached plan
SELECT provolatile FROM pg_proc WHERE proname = 'minidb_chain_build';
SET minidb.record_format = v1;
PREPARE build AS SELECT get_byte(minidb_chain_build('{a}'), 0) AS record_format;
EXECUTE build;
SET minidb.record_format = v2;
EXECUTE build;
DEALLOCATE build;
RESET minidb.record_format;

-- ---------------------------------------------------------------------
-- 7. Ownership is checked before the table is locked: a non-owner is
-- refused at once, even while somebody holds an exclusive lock
-- ---------------------------------------------------------------------
CREATE SCHEMA sec;
CREATE TABLE sec.locked (id int) USING minidb;
INSERT INTO sec.locked VALUES (1);
GRANT USAGE ON SCHEMA sec TO regress_minidb_nobody;
GRANT SELECT ON sec.locked TO regress_minidb_nobody;
SELECT dblink_connect('regress_locker',
	format('host=%s port=%s dbname=%s',
		   coalesce(nullif(split_part(current_setting('unix_socket_directories'), ',', 1), ''), '127.0.0.1'),
		   current_setting('port'), quote_literal(current_database())));
SELECT dblink_exec('regress_locker', 'BEGIN');
SELECT dblink_exec('regress_locker', 'LOCK TABLE sec.locked IN ACCESS EXCLUSIVE MODE');
SET ROLE regress_minidb_nobody;
SET lock_timeout = '2s';
SELECT pg_temp.try($$SELECT * FROM minidb_stats('sec.locked')$$) AS stats_not_owner;
SELECT pg_temp.try($$SELECT * FROM minidb_chain('sec.locked', '(0,1)')$$) AS chain_not_owner;
RESET lock_timeout;
RESET ROLE;
SELECT dblink_exec('regress_locker', 'COMMIT');
SELECT dblink_disconnect('regress_locker');
-- the owner may
ALTER TABLE sec.locked OWNER TO regress_minidb_nobody;
SET ROLE regress_minidb_nobody;
SELECT records FROM minidb_stats('sec.locked');
SELECT count(*) FROM minidb_chain('sec.locked', '(0,1)');
RESET ROLE;

-- ---------------------------------------------------------------------
-- 5. minidb_stats sets hint bits through minidb_set_hint: the page it
-- hints is marked dirty (before, the bit went into the shared page and
-- the buffer stayed clean)
-- ---------------------------------------------------------------------
-- the record at (0,1) as the page holds it (get_raw_page copies the page)
CREATE FUNCTION pg_temp.raw_flags(rel regclass) RETURNS text LANGUAGE sql AS $$
	SELECT flags FROM (
		SELECT get_raw_page(rel::text, 0) AS p) page,
		LATERAL (SELECT get_byte(p, 24) | (get_byte(p, 25) << 8) |
						(get_byte(p, 26) << 16) | (get_byte(p, 27) << 24) AS lp) l,
		LATERAL minidb_chain_decode(substring(p FROM (lp & 32767) + 1 FOR (lp >> 17) & 32767))
$$;
CREATE FUNCTION pg_temp.dirty(rel regclass) RETURNS bool LANGUAGE sql AS $$
	SELECT isdirty FROM pg_buffercache
	 WHERE relfilenode = pg_relation_filenode(rel) AND relforknumber = 0
	   AND relblocknumber = 0
	   AND reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())
$$;
CREATE TABLE sec.hints (id int, v text) USING minidb WITH (autovacuum_enabled = off);
SET synchronous_commit = on;
INSERT INTO sec.hints VALUES (1, 'a');
RESET synchronous_commit;
-- everything flushed (also the commits that share the INSERT's clog LSN
-- group), every buffer clean
CHECKPOINT;
SELECT pg_temp.raw_flags('sec.hints') AS flags_before, pg_temp.dirty('sec.hints') AS dirty_before;
SELECT records, live_versions FROM minidb_stats('sec.hints');
-- a hint bit set means a dirty buffer (MarkBufferDirtyHint); without the
-- preloaded library no reader sets one (README "WAL"), and the buffer
-- stays clean
SELECT pg_temp.raw_flags('sec.hints') LIKE '%committed%' = pg_temp.dirty('sec.hints')
       AS hint_means_dirty;

-- ---------------------------------------------------------------------
-- 7. The extension uses a role named minidb_bench only if it made it
-- ---------------------------------------------------------------------
SELECT shobj_description(oid, 'pg_authid') AS marker FROM pg_roles WHERE rolname = 'minidb_bench';
ALTER ROLE minidb_bench RENAME TO regress_minidb_bench_saved;
CREATE ROLE minidb_bench;
CREATE DATABASE regress_minidb_fresh;
\c regress_minidb_fresh
-- somebody else's role: refused (its CONTEXT, which names the script's
-- statement from 18 on, is left out)
\set SHOW_CONTEXT never
CREATE EXTENSION minidb_am;
\set SHOW_CONTEXT errors
SELECT count(*) AS installed FROM pg_extension WHERE extname = 'minidb_am';
-- marked by an administrator who means it for the benchmarks: used
COMMENT ON ROLE minidb_bench IS 'may run the minidb_am benchmark functions (minidb_bench_*)';
CREATE EXTENSION minidb_am;
DROP EXTENSION minidb_am;
DROP ROLE minidb_bench;
-- none: created, marked
CREATE EXTENSION minidb_am;
SELECT rolcanlogin, shobj_description(oid, 'pg_authid') AS marker FROM pg_roles WHERE rolname = 'minidb_bench';
-- DROP EXTENSION leaves it (roles are cluster-wide, other databases may
-- use it); dropping it by hand works once no database has the extension
DROP EXTENSION minidb_am;
DROP ROLE minidb_bench;
\c :"regress_db"
ALTER ROLE regress_minidb_bench_saved RENAME TO minidb_bench;
DROP DATABASE regress_minidb_fresh;
CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
	hint text;
BEGIN
	EXECUTE q;
	RETURN 'ok';
EXCEPTION WHEN others OR query_canceled THEN
	GET STACKED DIAGNOSTICS hint = PG_EXCEPTION_HINT;
	RETURN SQLSTATE || ': ' || SQLERRM ||
		CASE WHEN hint <> '' THEN ' [' || hint || ']' ELSE '' END;
END $$;

-- ---------------------------------------------------------------------
-- Every relation-taking function: wrong kinds, missing relations, NULLs,
-- TIDs that name no record; never a crash, always a clear SQLSTATE
-- ---------------------------------------------------------------------
CREATE TABLE sec.m (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO sec.m SELECT g, 'v' || g FROM generate_series(1, 5) g;
DELETE FROM sec.m WHERE id = 5;
\getenv abs_srcdir PG_ABS_SRCDIR
\set quiesce_file :abs_srcdir '/sql/include/quiesce.sql'
\i :quiesce_file
SELECT pg_temp.quiesce();
VACUUM sec.m;
CREATE TABLE sec.empty (id int) USING minidb;
CREATE TABLE sec.h (id int) USING heap;
CREATE VIEW sec.v AS SELECT * FROM sec.m;
CREATE SEQUENCE sec.s;
CREATE TABLE sec.p (id int) PARTITION BY RANGE (id);
CREATE MATERIALIZED VIEW sec.mvh USING heap AS SELECT 1 AS a;
CREATE MATERIALIZED VIEW sec.mvm USING minidb AS SELECT 1 AS a;
CREATE TYPE sec.ct AS (a int);
SELECT reltoastrelid::regclass::text AS toast FROM pg_class WHERE oid = 'sec.m'::regclass \gset
SELECT k AS kind,
       regexp_replace(pg_temp.try(format('SELECT * FROM minidb_stats(%s)', r)), 'pg_toast_[0-9]+', 'pg_toast_N') AS minidb_stats,
       regexp_replace(pg_temp.try(format('SELECT * FROM minidb_chain(%s, ''(0,1)'')', r)), 'pg_toast_[0-9]+', 'pg_toast_N') AS minidb_chain
  FROM (VALUES ('minidb table', quote_literal('sec.m')),
               ('minidb matview', quote_literal('sec.mvm')),
               ('heap table', quote_literal('sec.h')),
               ('heap matview', quote_literal('sec.mvh')),
               ('index', quote_literal('sec.m_pkey')),
               ('view', quote_literal('sec.v')),
               ('sequence', quote_literal('sec.s')),
               ('partitioned table', quote_literal('sec.p')),
               ('composite type', quote_literal('sec.ct')),
               ('toast table', quote_literal(:'toast')),
               ('catalog', quote_literal('pg_class')),
               ('no such OID', '4294967295::oid::regclass'),
               ('NULL', 'NULL')) AS t(k, r);
SELECT t AS tid, pg_temp.try(format('SELECT * FROM minidb_chain(%L, %L)', 'sec.m', t)) AS minidb_chain
  FROM (VALUES ('(0,1)'), ('(0,0)'), ('(0,5)'), ('(0,6)'), ('(0,65535)'), ('(1,1)'),
               ('(4294967295,65535)')) AS v(t);
SELECT pg_temp.try($$SELECT * FROM minidb_chain('sec.empty', '(0,1)')$$) AS empty_table;
SELECT count(*) AS null_tid FROM minidb_chain('sec.m', NULL);
SELECT records, pages FROM minidb_stats('sec.empty');
-- the chain functions
SELECT pg_temp.try($$SELECT * FROM minidb_chain_decode('\x')$$) AS decode_empty;
SELECT count(*) AS decode_null_walker FROM minidb_chain_decode(minidb_chain_build('{a}'), NULL);
SELECT valid IS NULL AS check_null FROM minidb_chain_check(NULL);
SELECT pg_temp.try($$SELECT minidb_chain_build('{a}', xids => '{0}')$$) AS build_xid_0;
SELECT pg_temp.try($$SELECT minidb_chain_build('{a}', cids => '{NULL}')$$) AS build_null_cid;
SELECT pg_temp.try($$SELECT minidb_chain_build('{{a},{b}}')$$) AS build_2d;
SELECT pg_temp.try($$SELECT minidb_chain_build('{a}', flags => '{"committed,aborted"}')$$) AS build_both_hints;
SELECT pg_temp.try($$SELECT minidb_chain_build('{NULL}', flags => '{moved}', successor => '(0,0)')$$) AS build_moved_nowhere;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 10, 1)$$) AS timing_position;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(minidb_chain_build('{a}'), 10, -2)$$) AS timing_position_low;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing(NULL, 10)$$) AS timing_null;
SELECT pg_temp.try($$SELECT * FROM minidb_chain_walk_timing('\x01', 10)$$) AS timing_damaged;

SET client_min_messages = warning;
DROP SCHEMA sec CASCADE;
DROP ROLE regress_minidb_attacker;
DROP ROLE regress_minidb_nobody;
RESET client_min_messages;
