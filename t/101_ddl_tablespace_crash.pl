# ALTER TABLE ... SET TABLESPACE and ALTER DATABASE ... SET TABLESPACE with
# minidb tables, each followed by a crash (immediate stop) and restart:
# the data must be intact after recovery.  relation_copy_data copies every
# fork of the table and WAL-logs the copy when the server needs it
# (wal_level replica: full page images of the copied pages; wal_level
# minimal: the copy is synced at commit instead), so the test runs on a
# node of each kind.  Every transaction writes the same change to a heap
# table (h) and a minidb table (m): after each crash m must equal h,
# through seq and index scans, with amcheck-clean indexes; the unlogged
# minidb table comes back empty, with its init fork in the new tablespace,
# and takes rows again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

sub run_node
{
	my ($name, %init) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init(%init);
	$node->append_conf('postgresql.conf', "restart_after_crash = on\n");
	$node->start;
	my $wal_level = $node->safe_psql('postgres', 'SHOW wal_level');

	my $ts1 = PostgreSQL::Test::Utils::tempdir;
	my $ts2 = PostgreSQL::Test::Utils::tempdir;
	$node->safe_psql('postgres', qq{CREATE TABLESPACE ts1 LOCATION '$ts1'});
	$node->safe_psql('postgres', qq{CREATE TABLESPACE ts2 LOCATION '$ts2'});

	$node->safe_psql('postgres', q{
	CREATE EXTENSION minidb_am;
	CREATE EXTENSION amcheck;
	CREATE TABLE h (id int PRIMARY KEY, k int, v text, big text) USING heap;
	CREATE TABLE m (id int PRIMARY KEY, k int, v text, big text) USING minidb;
	CREATE INDEX h_k ON h (k);
	CREATE INDEX m_k ON m (k);
	INSERT INTO h SELECT i, i % 100, 'v' || i, CASE WHEN i % 50 = 0 THEN repeat(md5(i::text), 200) END
	  FROM generate_series(1, 3000) i;
	INSERT INTO m SELECT i, i % 100, 'v' || i, CASE WHEN i % 50 = 0 THEN repeat(md5(i::text), 200) END
	  FROM generate_series(1, 3000) i;
	UPDATE h SET v = v || '+' WHERE id % 3 = 0;
	UPDATE m SET v = v || '+' WHERE id % 3 = 0;
	UPDATE h SET k = k + 100 WHERE id % 7 = 0;
	UPDATE m SET k = k + 100 WHERE id % 7 = 0;
	DELETE FROM h WHERE id % 11 = 0;
	DELETE FROM m WHERE id % 11 = 0;
	VACUUM h;
	VACUUM m;
	CREATE UNLOGGED TABLE um (id int PRIMARY KEY, v text) USING minidb;
	INSERT INTO um SELECT i, 'u' || i FROM generate_series(1, 200) i;
	});
	# no checkpoint from here on: recovery must replay the copies
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->safe_psql('postgres', q{
	ALTER TABLE h SET TABLESPACE ts1;
	ALTER TABLE m SET TABLESPACE ts1;
	ALTER TABLE um SET TABLESPACE ts1;
	ALTER INDEX m_k SET TABLESPACE ts1;
	UPDATE h SET v = 'after move' WHERE id % 5 = 0;
	UPDATE m SET v = 'after move' WHERE id % 5 = 0;
	INSERT INTO h SELECT i, 1, 'new', NULL FROM generate_series(5001, 5100) i;
	INSERT INTO m SELECT i, 1, 'new', NULL FROM generate_series(5001, 5100) i;
	});
	# a move in a transaction that rolls back, and one left open at the crash
	$node->safe_psql('postgres', q{
	BEGIN;
	ALTER TABLE h SET TABLESPACE ts2;
	ALTER TABLE m SET TABLESPACE ts2;
	ROLLBACK;
	});
	# (No DML after the move in that transaction: index entries it inserts
	# point into the new relfilenode and survive the abort; once the old
	# file reuses those line pointers, index scans return the wrong rows.
	# Heap does exactly the same -- a PostgreSQL 15 hazard, see README.)
	my $open = $node->background_psql('postgres');
	$open->query_safe(q{BEGIN; ALTER TABLE m SET TABLESPACE pg_default;});

	my $cmp = q{SELECT count(*) FROM (
	  (SELECT * FROM h EXCEPT ALL SELECT * FROM m) UNION ALL
	  (SELECT * FROM m EXCEPT ALL SELECT * FROM h)) d};
	my $check = sub {
		my $what = shift;
		is($node->safe_psql('postgres', $cmp), '0', "$wal_level, $what: m equals h (seq scan)");
		is($node->safe_psql('postgres', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT count(*), sum(id), md5(string_agg(v, ',' ORDER BY id)) FROM m WHERE k >= 0}),
		   $node->safe_psql('postgres', q{SET enable_seqscan = off; SET enable_bitmapscan = off;
			SELECT count(*), sum(id), md5(string_agg(v, ',' ORDER BY id)) FROM h WHERE k >= 0}),
		   "$wal_level, $what: index scans agree");
		is($node->safe_psql('postgres', q{SELECT count(*) FROM m WHERE big IS NOT NULL
			AND big = repeat(md5(id::text), 200)}),
		   $node->safe_psql('postgres', q{SELECT count(*) FROM h WHERE big IS NOT NULL}),
		   "$wal_level, $what: TOAST values intact");
		$node->safe_psql('postgres', q{SELECT bt_index_check('m_k', true), bt_index_check('m_pkey', true)});
		pass("$wal_level, $what: amcheck of m's indexes");
	};

	$node->stop('immediate');
	$open->{run}->kill_kill if $open->{run};
	$node->start;
	is($node->safe_psql('postgres', q{SELECT t.spcname FROM pg_class c
		JOIN pg_tablespace t ON t.oid = c.reltablespace WHERE c.relname = 'm'}),
	   'ts1', "$wal_level: m is in ts1 after the crash");
	$check->('SET TABLESPACE + crash');
	is($node->safe_psql('postgres', 'SELECT count(*) FROM um'), '0',
	   "$wal_level: unlogged minidb table empty after the crash");
	$node->safe_psql('postgres', q{INSERT INTO um VALUES (1, 'again')});
	is($node->safe_psql('postgres', 'SELECT v FROM um'), 'again',
	   "$wal_level: unlogged minidb table takes rows after the crash");

	# ALTER DATABASE ... SET TABLESPACE (copies the database's default
	# tablespace directory), then writes, then a crash
	$node->safe_psql('postgres', q{CREATE DATABASE d2});
	$node->safe_psql('d2', q{
	CREATE EXTENSION minidb_am;
	CREATE TABLE h (id int PRIMARY KEY, v text) USING heap;
	CREATE TABLE m (id int PRIMARY KEY, v text) USING minidb;
	INSERT INTO h SELECT i, 'd' || i FROM generate_series(1, 2000) i;
	INSERT INTO m SELECT i, 'd' || i FROM generate_series(1, 2000) i;
	UPDATE h SET v = v || '+' WHERE id % 2 = 0;
	UPDATE m SET v = v || '+' WHERE id % 2 = 0;
	});
	$node->safe_psql('postgres', q{ALTER DATABASE d2 SET TABLESPACE ts2});
	$node->safe_psql('d2', q{
	UPDATE h SET v = 'moved db' WHERE id % 3 = 0;
	UPDATE m SET v = 'moved db' WHERE id % 3 = 0;
	DELETE FROM h WHERE id % 10 = 0;
	DELETE FROM m WHERE id % 10 = 0;
	});
	$node->stop('immediate');
	$node->start;
	is($node->safe_psql('d2', q{SELECT pg_relation_filepath('m') LIKE 'pg_tblspc/%'}), 't',
	   "$wal_level: d2's minidb table lives in ts2");
	is($node->safe_psql('d2', $cmp), '0', "$wal_level, ALTER DATABASE SET TABLESPACE + crash: m equals h");
	is($node->safe_psql('d2', q{SET enable_seqscan = off; SELECT count(*), md5(string_agg(v, ',' ORDER BY id)) FROM m WHERE id > 0}),
	   $node->safe_psql('d2', q{SET enable_seqscan = off; SELECT count(*), md5(string_agg(v, ',' ORDER BY id)) FROM h WHERE id > 0}),
	   "$wal_level, ALTER DATABASE SET TABLESPACE + crash: index scans agree");

	# back to the default tablespace, crash once more
	$node->safe_psql('postgres', q{
	ALTER TABLE h SET TABLESPACE pg_default;
	ALTER TABLE m SET TABLESPACE pg_default;
	UPDATE h SET v = 'home' WHERE id % 4 = 0;
	UPDATE m SET v = 'home' WHERE id % 4 = 0;
	});
	$node->stop('immediate');
	$node->start;
	$check->('back to pg_default + crash');
	$node->stop;
}

run_node('ts_replica', allows_streaming => 1);
run_node('ts_minimal');

done_testing();
