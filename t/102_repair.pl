# A damaged record, found and removed (issue 15, item 3).
#
# Two records of a minidb table get their record header damaged on disk
# (a V3 header bit set without its field, with the server stopped; no data checksums).
# Then, as a DBA meets it: sequential scans, pg_dump and DELETE ... WHERE
# ctid of the record fail with XX001; pg_amcheck says nothing (it checks
# heap tables only); minidb_verify lists both records; VACUUM leaves them
# alone and names their TIDs in its VERBOSE report; minidb_force_kill
# makes them dead without reading them; the rest of the table reads and
# dumps, also after a crash (the change is WAL-logged), and restores;
# VACUUM then removes the dead records and their index entries (an
# index-only scan on all-visible pages counts the live rows exactly).
# A second table gets a line pointer pointing past its page and a page
# whose special area is not minidb's: minidb_verify reports both, and
# minidb_force_kill kills the record behind the bad line pointer too.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $node = PostgreSQL::Test::Cluster->new('repair');
$node->init(no_data_checksums => 1);	# initdb's default from 18 on
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE EXTENSION amcheck;
CREATE TABLE t (id int PRIMARY KEY, v text) USING minidb
  WITH (autovacuum_enabled = off);
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 500) g;
UPDATE t SET v = v || ' again' WHERE id % 7 = 0;
VACUUM t;
CREATE TABLE u (id int, v text) USING minidb WITH (autovacuum_enabled = off);
INSERT INTO u SELECT g, 'u ' || g FROM generate_series(1, 300) g;
});
my @victims = map {
	$node->safe_psql('postgres', "SELECT ctid FROM t WHERE id = $_")
} (5, 450);
my $path = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('t')});
my $upath = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('u')});
$node->stop;

# u: line pointer 3 of page 0 points past the page's end (lp_off 8184,
# lp_len unchanged); page 1's magic number is zeroed
open(my $ufh, '+<:raw', $upath) or die "open $upath: $!";
my $ulp;
sysseek($ufh, 24 + 2 * 4, 0) or die;
sysread($ufh, $ulp, 4) == 4 or die;
$ulp = (unpack('V', $ulp) & ~0x7fff) | 8184;
sysseek($ufh, 24 + 2 * 4, 0) or die;
syswrite($ufh, pack('V', $ulp), 4) == 4 or die;
sysseek($ufh, 8192 + 8184, 0) or die;
syswrite($ufh, pack('v', 0), 2) == 2 or die;
close($ufh);

# the record's xinfo (byte 1 of a V3 record) := a lock-only bit without
# the xmax field it describes
open(my $fh, '+<:raw', $path) or die "open $path: $!";
for my $tid (@victims)
{
	my ($blk, $off) = $tid =~ /^\((\d+),(\d+)\)$/ or die "bad TID $tid";
	my $lp;
	sysseek($fh, $blk * 8192 + 24 + ($off - 1) * 4, 0) or die;
	sysread($fh, $lp, 4) == 4 or die;
	my $lp_off = unpack('V', $lp) & 0x7fff;
	sysseek($fh, $blk * 8192 + $lp_off + 1, 0) or die;
	syswrite($fh, pack('C', 0x02), 1) == 1 or die;
}
close($fh);
$node->start;
my $victims = join(', ', @victims);
note "damaged records at $victims";

my ($ret, $out, $err);

# What fails
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nSELECT count(*) FROM t");
like($err, qr/ERROR:  XX001: corrupted minidb record in relation "t" at TID \Q$victims[0]\E/,
	'a sequential scan fails with XX001 naming the record');
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nDELETE FROM t WHERE ctid = '$victims[0]'");
like($err, qr/ERROR:  XX001: corrupted minidb record/, 'so does DELETE ... WHERE ctid of that record');
my $dump = PostgreSQL::Test::Utils::tempdir . '/t.sql';
$ret = PostgreSQL::Test::Utils::system_log('pg_dump', '-t', 't', '-f', $dump,
	$node->connstr('postgres'));
isnt($ret, 0, 'pg_dump fails');

# pg_amcheck checks heap tables and their btree indexes only
my ($stdout, $stderr);
my $amcheck_ok = IPC::Run::run(['pg_amcheck', '-v', '-d', 'postgres', '-p', $node->port,
		'-h', $node->host], '>', \$stdout, '2>', \$stderr);
ok($amcheck_ok && $stderr !~ /public\.t\b/,
	'pg_amcheck reports nothing and does not look at the minidb table');

# What finds them
is($node->safe_psql('postgres',
		q{SELECT string_agg(format('(%s,%s) %s %s', blkno, offnum, coalesce(version::text, 'header'), field), '; ' ORDER BY blkno, offnum) FROM minidb_verify('t')}),
	"$victims[0] header r3_xinfo; $victims[1] header r3_xinfo",
	'minidb_verify lists both records and the field at fault');
is($node->safe_psql('postgres',
		q{SELECT string_agg(format('(%s,%s) %s', blkno, coalesce(offnum, 0), field), '; ' ORDER BY blkno, offnum) FROM minidb_verify('u')}),
	'(0,3) line pointer; (1,0) page',
	'minidb_verify reports a line pointer outside its page and a foreign page');
is($node->safe_psql('postgres', q{SELECT minidb_force_kill('u', ARRAY['(0,3)']::tid[])}),
	'1', 'minidb_force_kill kills the record behind the bad line pointer');
is($node->safe_psql('postgres', q{SELECT count(*) FROM minidb_verify('u')}),
	'1', 'only the foreign page is left');
($ret, $out, $err) = $node->psql('postgres', 'VACUUM (VERBOSE) t');
is($ret, 0, 'VACUUM runs');
like($err, qr/damaged records left alone: 2, at \Q$victims\E \(minidb_force_kill makes them dead\)/,
	'VACUUM VERBOSE names the damaged records');

# The repair
$node->safe_psql('postgres', 'CHECKPOINT');
is($node->safe_psql('postgres',
		"SELECT minidb_force_kill('t', ARRAY['$victims[1]', '$victims[0]']::tid[])"),
	'2', 'minidb_force_kill kills both');
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t'),
	'498|124795', 'the rest of the table reads');
is($node->safe_psql('postgres', q{SELECT count(*) FROM minidb_verify('t', true, true)}),
	'0', 'minidb_verify finds nothing now');

# WAL-logged: an immediate stop after the checkpoint keeps the change
$node->stop('immediate');
$node->start;
is($node->safe_psql('postgres', 'SELECT count(*), sum(id) FROM t'),
	'498|124795', 'the kill survives crash recovery');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM t WHERE id IN (5, 450, 6)}), '1',
	'index scans find no row at the killed TIDs');

$ret = PostgreSQL::Test::Utils::system_log('pg_dump', '-t', 't', '-f', $dump,
	$node->connstr('postgres'));
is($ret, 0, 'pg_dump succeeds');
$node->safe_psql('postgres', 'CREATE DATABASE restored');
$node->safe_psql('restored', 'CREATE EXTENSION minidb_am');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', $dump, '-d',
		$node->connstr('restored') ], 'the dump restores');
is($node->safe_psql('restored', 'SELECT count(*), sum(id) FROM t'),
	'498|124795', 'restored table has the rest of the rows');

# VACUUM finishes the job
($ret, $out, $err) = $node->psql('postgres', 'VACUUM (VERBOSE) t');
like($err, qr/minidb records: 498 live, 0 dead found, 2 removed/,
	'VACUUM removes the two dead records');
unlike($err, qr/damaged/, 'and finds nothing damaged');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT count(id) FROM t WHERE id > 0}) =~ /Index Only Scan/ ? 1 : 0,
	1, 'an index-only scan counts the rows');
is($node->safe_psql('postgres', q{
SET enable_seqscan = off; SET enable_bitmapscan = off;
SELECT count(id) FROM t WHERE id > 0}), '498',
	'the killed records\' index entries are gone');
is($node->safe_psql('postgres', q{SELECT bt_index_check('t_pkey', true)}), '',
	'the index passes amcheck');

$node->stop;
done_testing();
