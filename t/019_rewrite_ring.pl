# VACUUM FULL and CLUSTER of a minidb table write the new relation through a
# bulk-write ring (BAS_BULKWRITE), as COPY writes, and read the old one in
# block order through a bulk-read ring, as heap's sequential scan of a
# large table does: rewriting a table larger than the rings leaves at most
# a ring's worth of its new pages in shared buffers, and the pages of
# another table that were cached stay cached but for the buffers the rings
# took from the pool when they filled (the clock sweep's victims).  Heap's
# rewrite writes through smgr, bypassing shared buffers, so it is the
# lower bound beside.
#
# Before the rings, every new page of the rewrite took a shared buffer of
# its own: with shared_buffers = 16MB (2048 buffers; a bulk-write ring is
# then 256 of them, an eighth) the 1593-page rewrites left 878 (VACUUM
# FULL) and 775 (CLUSTER) of their pages cached, and the other table kept
# 201 and 0 of its 421 (tests 8, 11 and 12 failed).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('ring');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
shared_buffers = 16MB
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE EXTENSION pg_buffercache;
CREATE FUNCTION cached(r regclass) RETURNS bigint LANGUAGE sql AS $$
  SELECT count(*) FROM pg_buffercache
   WHERE relfilenode = pg_relation_filenode(r)
     AND reldatabase = (SELECT oid FROM pg_database
                         WHERE datname = current_database())
$$;
});

foreach my $am ('heap', 'minidb')
{
	$node->safe_psql('postgres', qq{
CREATE TABLE big_$am (a int, b int) USING $am;
INSERT INTO big_$am SELECT i, i FROM generate_series(1, 360000) i;
CREATE TABLE hot_$am (a int, b text) USING heap;
INSERT INTO hot_$am SELECT i, repeat('x', 150) FROM generate_series(1, 18000) i;
CHECKPOINT;
});
	foreach my $cmd ("VACUUM FULL big_$am",
		"CLUSTER big_$am USING big_${am}_a")
	{
		$node->safe_psql('postgres',
			"CREATE INDEX IF NOT EXISTS big_${am}_a ON big_$am (a)");
		# hot_$am cached whole, then the rewrite
		$node->safe_psql('postgres', "SELECT count(*) FROM hot_$am");
		my $hot_before = $node->safe_psql('postgres', "SELECT cached('hot_$am')");
		$node->safe_psql('postgres', $cmd);
		my ($pages, $big, $hot) = split /\|/, $node->safe_psql('postgres', qq{
SELECT pg_relation_size('big_$am') / 8192, cached('big_$am'), cached('hot_$am')});

		cmp_ok($pages, '>', 1200, "$am, $cmd: the table is larger than the ring");
		cmp_ok($big, '<=', 400,
			"$am, $cmd: at most about a ring of its new pages cached ($big of $pages)");
		# the rings take their buffers from the pool once: 256 + 32
		cmp_ok($hot, '>=', $hot_before - 350,
			"$am, $cmd: the other table stays cached but for the rings' buffers ($hot of $hot_before)");
	}
}

$node->stop;
done_testing();
