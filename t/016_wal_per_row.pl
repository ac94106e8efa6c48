# WAL per row change, heap beside (README, section "WAL"): with the
# library preloaded, a single-row INSERT is one INSERT record of minidb's
# resource manager and an in-place UPDATE one PREPEND record, each within
# 1.2 times the bytes of heap's record for the same change (Heap INSERT,
# Heap HOT_UPDATE), as pg_walinspect counts them with full_page_writes
# off.  (They used to be a page delta of the whole new record, 1.8 times
# heap's, and a PREPEND carrying the version's full header, 1.3 times.)
# The bytes of bench/wal_by_type.sh's pgbench run come from these two.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('walrow');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
full_page_writes = off
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minidb_am; CREATE EXTENSION pg_walinspect');

# bytes per record of a type between two WAL positions
sub per_record
{
	my ($start, $end, $type) = @_;
	return $node->safe_psql('postgres', qq{
SELECT round(record_size::numeric / count, 1) || ' ' || count
FROM pg_get_wal_stats('$start', '$end', true)
WHERE "resource_manager/record_type" = '$type'});
}

my %bytes;
foreach my $am ('heap', 'minidb')
{
	# pgbench_history's shape, and a pgbench_tellers-like hot table
	$node->safe_psql('postgres', qq{
CREATE TABLE hist_$am (tid int, bid int, aid int, delta int, mtime timestamp, filler char(22)) USING $am;
CREATE TABLE hot_$am (id int PRIMARY KEY, balance int, filler char(84)) USING $am WITH (fillfactor = 50);
INSERT INTO hot_$am SELECT i, 0 FROM generate_series(1, 10) i;
CHECKPOINT;
});
	my $start = $node->lsn('insert');
	$node->safe_psql('postgres', join('', map {
		"INSERT INTO hist_$am VALUES ($_ % 10, 1, $_, $_ * 7 - 3000, '2026-11-30 12:00:00', NULL);\n"
	} 1 .. 500));
	$node->safe_psql('postgres', join('', map {
		"UPDATE hot_$am SET balance = balance + $_ WHERE id = " . (1 + $_ % 10) . ";\n"
	} 1 .. 500));
	my $end = $node->lsn('insert');
	$node->safe_psql('postgres', 'CHECKPOINT');    # flushes the WAL
	my ($ins, $upd) = $am eq 'heap'
	  ? ('Heap/INSERT', 'Heap/HOT_UPDATE')
	  : ('minidb/INSERT', 'minidb/PREPEND');
	$bytes{$am}{insert} = per_record($start, $end, $ins);
	$bytes{$am}{update} = per_record($start, $end, $upd);
	note("$am: $ins $bytes{$am}{insert}, $upd $bytes{$am}{update} (bytes a record, records)");
}

foreach my $op ('insert', 'update')
{
	my ($h, $hn) = split / /, $bytes{heap}{$op} || '0 0';
	my ($m, $mn) = split / /, $bytes{minidb}{$op} || '0 0';
	ok($mn >= 500, "every $op of a minidb row is a record of minidb's resource manager ($mn)");
	ok($h > 0 && $m > 0 && $m <= 1.2 * $h,
		"an $op logs at most 1.2 times heap's bytes (minidb $m, heap $h)");
}

# the rows are what was written (replay is checked by t/008, t/011, t/012)
is($node->safe_psql('postgres',
	'SELECT (SELECT sum(delta) FROM hist_minidb) = (SELECT sum(delta) FROM hist_heap) AND (SELECT sum(balance) FROM hot_minidb) = (SELECT sum(balance) FROM hot_heap)'),
	't', 'both tables hold the same rows');

$node->stop;
done_testing();
