# A page whose header frames less free space than its records keep for
# their ends.
#
# Every minidb record keeps room on its page for what ends or locks its row
# (section "Record format V3" of the README): a DELETE, a row lock and the
# end a moving UPDATE writes take that room without asking for it.  When
# pd_upper is damaged downwards (here: set to pd_lower, so that the page
# has no free space while every record still lies inside it), no read
# notices, and until 2026-12-02 such a write failed inside its critical
# section: "PANIC: failed to replace minidb record", the whole server
# restarted, and the next attempt did the same.  Now the write raises
# ERRCODE_DATA_CORRUPTED (XX001) naming the relation and block before it
# changes anything, minidb_verify lists the page, and VACUUM FULL rewrites
# it.  Heap's tuples carry their xmax and ctid in every header, so heap
# needs no room for these writes: the same damage on a heap page goes
# unnoticed by them (what heap's writes do is printed, for comparison).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('page_room');
$node->init(no_data_checksums => 1);	# initdb's default from 18 on
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
autovacuum = off
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minidb_am');

my %file;
foreach my $am ('heap', 'minidb')
{
	$node->safe_psql('postgres', qq{
CREATE TABLE pr_$am (id int PRIMARY KEY, v text) USING $am;
INSERT INTO pr_$am SELECT g, 'x' FROM generate_series(1, 2000) g;
CHECKPOINT;
});
	$file{$am} = $node->data_dir . '/'
	  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('pr_$am')");
}
$node->stop;

# pd_upper := pd_lower on block 0 (page header: pd_lower at byte 12,
# pd_upper at byte 14)
foreach my $am ('heap', 'minidb')
{
	open(my $fh, '+<:raw', $file{$am}) or die "open $file{$am}: $!";
	my $hdr;
	sysread($fh, $hdr, 16) == 16 or die;
	my ($lower, $upper) = unpack('v v', substr($hdr, 12, 4));
	note "$am block 0: pd_lower $lower, pd_upper $upper -> $lower";
	sysseek($fh, 14, 0) or die;
	syswrite($fh, pack('v', $lower)) == 2 or die;
	close($fh);
}
$node->start;

is($node->safe_psql('postgres', 'SELECT count(*) FROM pr_minidb'),
	'2000', 'the damaged page reads as before');

# Each write needs room on block 0 for the row's end (ids 1..200 lie there)
my @writes = (
	[ 'DELETE', 'DELETE FROM pr_minidb WHERE id = 5' ],
	[ 'FOR UPDATE', 'SELECT id FROM pr_minidb WHERE id = 6 FOR UPDATE' ],
	[ 'FOR KEY SHARE', 'SELECT id FROM pr_minidb WHERE id = 7 FOR KEY SHARE' ],
	[ 'key UPDATE (moves the row)', 'UPDATE pr_minidb SET id = -8 WHERE id = 8' ]);
foreach my $w (@writes)
{
	my ($name, $sql) = @$w;
	my ($ret, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	like(
		$err,
		qr/ERROR:  XX001: no room for a change of the record in relation "pr_minidb" at TID \(0,\d+\)/,
		"$name on the damaged page: XX001 naming relation and block");
	my ($hret, $hout, $herr) =
	  $node->psql('postgres', $sql =~ s/pr_minidb/pr_heap/r);
	note "heap's $name: " . ($hret == 0 ? 'done' : $herr);
}

is( $node->safe_psql(
		'postgres', 'SELECT count(*), sum(id) FROM pr_minidb WHERE id <= 10'),
	'10|55',
	'nothing changed: the rows the writes failed on are there');
like(
	$node->safe_psql(
		'postgres',
		"SELECT blkno || ' ' || field || ': ' || msg FROM minidb_verify('pr_minidb')"),
	qr/^0 page: 0 bytes free \(pd_lower \d+, pd_upper \d+\), less than the \d+ its records keep for their ends$/,
	'minidb_verify lists the page');

my $log = slurp_file($node->logfile);
unlike($log, qr/PANIC|TRAP|terminated by signal/, 'no crash in the server log');

# VACUUM FULL rewrites the table: the writes go through
$node->safe_psql('postgres', 'VACUUM FULL pr_minidb');
is( $node->safe_psql(
		'postgres', q{
DELETE FROM pr_minidb WHERE id = 5;
UPDATE pr_minidb SET id = -8 WHERE id = 8;
SELECT count(*) FROM minidb_verify('pr_minidb');
SELECT count(*), sum(id) FROM pr_minidb WHERE id <= 10}),
	"0\n9|34",
	'after VACUUM FULL the writes succeed and minidb_verify finds nothing');

$node->stop;
done_testing();
