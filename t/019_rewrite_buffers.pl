# VACUUM FULL and CLUSTER of a minidb table write the new relation past
# shared buffers, as heap's rewrite does (log_newpage and smgrextend on 15,
# the bulk write API from 17 on), and read the old one in block order
# through a bulk-read ring, as heap's sequential scan of a large table
# does: rewriting a table leaves few of its new pages in shared buffers
# (those the index rebuild's ring read back), and the pages of another
# table that were cached stay cached but for the buffers the rings took
# from the pool when they filled (the clock sweep's victims).  Heap beside.
#
# With shared_buffers = 16MB (2048 buffers) and a 1593-page table: when
# every new page took a shared buffer of its own, the rewrites left 878
# (VACUUM FULL) and 775 (CLUSTER) of them cached and the other table kept
# 201 and 0 of its 421 (tests 8, 11 and 12 failed); through a bulk-write
# ring instead, 279 and 288 (tests 8 and 11 fail); written past shared
# buffers, 65, as heap's 64.
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

		cmp_ok($pages, '>', 1200, "$am, $cmd: the table is larger than the rings");
		cmp_ok($big, '<=', 150,
			"$am, $cmd: few of its new pages cached ($big of $pages)");
		# the rings take their buffers from the pool once: 256 + 32
		cmp_ok($hot, '>=', $hot_before - 350,
			"$am, $cmd: the other table stays cached but for the rings' buffers ($hot of $hot_before)");
	}
}

$node->stop;
done_testing();
