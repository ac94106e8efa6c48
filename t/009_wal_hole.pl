# A delta must log every byte of the new page that lay in the OLD page's
# free-space hole.  With the library preloaded, an in-place UPDATE that
# prunes its record shrinks it with PageIndexTupleOverwrite, which leaves
# the record's old bytes in the hole of the primary's page; the full-page
# image of that page (the first change after a checkpoint) restores the
# hole as zeros.  A later insert on the page, logged as a delta, used to
# compare its new record with those stale bytes and leave out the words
# that matched: crash recovery then put zeros there and the row read back
# wrong.  Generic WAL's own delta (GenericXLogFinish) always logs what lay
# outside the old page's valid range; minidb_wal.c now does the same.
#
# The sequence, in both WAL modes: a row whose record holds several long
# versions (an open snapshot keeps them); the snapshot ends; CHECKPOINT; an
# in-place UPDATE that prunes the record so it shrinks; an INSERT of a
# similar row on that page; immediate stop; read the rows.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

foreach my $preload (1, 0)
{
	my $mode = $preload ? 'preloaded' : 'generic WAL';
	my $node = PostgreSQL::Test::Cluster->new("hole_$preload");
	$node->init;
	$node->append_conf('postgresql.conf', qq{
autovacuum = off
full_page_writes = on
});
	$node->append_conf('postgresql.conf',
		"shared_preload_libraries = 'minidb_am'")
	  if $preload;
	$node->start;
	$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE TABLE hole (id int, v text) USING minidb;
INSERT INTO hole VALUES (1, repeat('x', 1000));
});

	# versions kept by an open snapshot
	my $reader = $node->background_psql('postgres');
	$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
	$reader->query_safe('SELECT count(*) FROM hole');
	$node->safe_psql('postgres',
		"UPDATE hole SET v = repeat('x', 1000) WHERE id = 1") for 1 .. 4;
	my $depth = $node->safe_psql('postgres',
		q{SELECT count(*) FROM minidb_chain('hole', '(0,1)')});
	is($depth, '5', "$mode: the record holds 5 versions");
	$reader->query_safe('COMMIT');
	$reader->quit;

	$node->safe_psql('postgres', 'CHECKPOINT');
	my $len_before = $node->safe_psql('postgres',
		q{SELECT sum(len) FROM minidb_chain('hole', '(0,1)')});
	# the in-place UPDATE prunes the versions nobody needs: the record shrinks
	$node->safe_psql('postgres',
		"UPDATE hole SET v = repeat('x', 1000) WHERE id = 1");
	my $len_after = $node->safe_psql('postgres',
		q{SELECT sum(len) FROM minidb_chain('hole', '(0,1)')});
	cmp_ok($len_after, '<', $len_before,
		"$mode: the update shrank the record ($len_before -> $len_after bytes)");
	# a similar row, in the space the record gave back
	$node->safe_psql('postgres',
		"INSERT INTO hole VALUES (2, repeat('x', 1000))");
	is($node->safe_psql('postgres',
			q{SELECT ctid FROM hole WHERE id = 2}),
		'(0,2)', "$mode: the new row is on the same page");

	$node->stop('immediate');
	$node->start;
	my ($ret, $out, $err) = $node->psql('postgres', q{
		SELECT id, v = repeat('x', 1000), length(v) FROM hole ORDER BY id});
	is($ret, 0, "$mode: the rows can be read after crash recovery")
	  or diag($err);
	is($out, "1|t|1000\n2|t|1000",
		"$mode: both rows are intact after crash recovery");
	$node->stop;
}

done_testing();
