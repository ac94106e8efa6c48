# A physical streaming standby of a primary with minidb tables returns the
# same answers as the primary (seq, index, bitmap and index-only scans,
# TOAST values), after a workload of inserts, in-place updates, key
# updates, deletes, rolled-back changes, VACUUM and CREATE INDEX, replayed
# both from the base backup onwards and incrementally; the promoted standby
# then accepts writes to those tables.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
# 005 runs this file again with the library preloaded (compact WAL records)
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'")
  if $ENV{MINIDB_TAP_PRELOAD};
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE TABLE m (id int PRIMARY KEY, k int, v text, n int, big text) USING minidb;
CREATE INDEX m_k ON m (k);
INSERT INTO m SELECT i, i % 50, 'v' || i, 0, NULL FROM generate_series(1, 1000) i;
});

$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->start;

my @queries = (
	[ 'seq scan', 'SET enable_indexscan = off; SET enable_bitmapscan = off;
	  SELECT id, k, v, n, md5(big), length(big) FROM m ORDER BY id' ],
	[ 'index scan', 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;
	  SELECT id, k, v, n FROM m WHERE k BETWEEN 3 AND 7 ORDER BY k, id' ],
	[ 'primary key lookups', 'SET enable_seqscan = off; SET enable_bitmapscan = off;
	  SELECT x, (SELECT v FROM m WHERE id = x) FROM generate_series(1, 1200, 7) x' ],
	[ 'bitmap scan', 'SET enable_seqscan = off; SET enable_indexscan = off;
	  SELECT id, k, v FROM m WHERE k IN (1, 11, 21) OR id < 30 ORDER BY id' ],
	[ 'index-only scan', 'SET enable_seqscan = off; SET enable_bitmapscan = off;
	  SELECT k, count(*) FROM m WHERE k >= 0 GROUP BY k ORDER BY k' ],
	[ 'aggregates', 'SELECT count(*), sum(n), sum(k), count(big) FROM m' ]);

sub compare_nodes
{
	my ($what, @extra) = @_;
	$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
	foreach my $q (@queries, @extra)
	{
		my ($name, $sql) = @$q;
		my $p = $primary->safe_psql('postgres', $sql);
		my $s = $standby->safe_psql('postgres', $sql);
		is($s, $p, "$what: $name same on standby");
	}
}

# workload after the base backup: the standby replays all of it
my $lsn_before_workload = $primary->lsn('insert');
$primary->safe_psql('postgres', q{
UPDATE m SET v = v || '+', n = n + 1 WHERE id % 2 = 0;          -- in place
UPDATE m SET n = n + 1 WHERE id % 2 = 0;
UPDATE m SET n = n + 1 WHERE id % 2 = 0;
UPDATE m SET k = k + 100 WHERE id % 10 = 3;                      -- moves
DELETE FROM m WHERE id % 10 = 4;
INSERT INTO m SELECT i, i % 50, 'new', 0, NULL FROM generate_series(1001, 1100) i;
UPDATE m SET big = (SELECT string_agg(md5(id::text || g), '') FROM generate_series(1, 3000) g)
 WHERE id IN (5, 15, 25);                                          -- TOAST
BEGIN;
UPDATE m SET v = 'rolled back' WHERE id < 500;
DELETE FROM m WHERE id >= 500;
ROLLBACK;
});
compare_nodes('after workload from backup');
if ($ENV{MINIDB_TAP_PRELOAD})
{
	# the workload really went through minidb's own WAL records
	$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
	my $n = $primary->safe_psql('postgres', qq{
		SELECT count(*) FROM pg_get_wal_records_info('$lsn_before_workload', pg_current_wal_lsn())
		 WHERE resource_manager = 'minidb'});
	cmp_ok($n, '>', 0, "compact minidb WAL records were written ($n)");
}
is($standby->safe_psql('postgres', q{SELECT count(*) FROM m WHERE v = 'rolled back'}),
	'0', 'rolled-back changes invisible on standby');

# more: incremental replay on top, VACUUM (pruning, freezing), a new index
$primary->safe_psql('postgres', q{
UPDATE m SET big = NULL WHERE id = 15;
UPDATE m SET big = big || 'tail' WHERE id = 25;
DELETE FROM m WHERE id = 5;
UPDATE m SET v = 'second round', n = n + 10 WHERE id % 3 = 0;
UPDATE m SET k = k - 100 WHERE k >= 100;
VACUUM m;
UPDATE m SET n = n + 1 WHERE id % 7 = 0;
VACUUM (FREEZE) m;
CREATE INDEX m_v ON m (v);
INSERT INTO m SELECT i, i % 50, 'third', 0, NULL FROM generate_series(1101, 1300) i;
});
compare_nodes('after VACUUM and CREATE INDEX',
	[ 'new index', 'SET enable_seqscan = off; SET enable_bitmapscan = off;
	  SELECT id, n FROM m WHERE v = \'second round\' ORDER BY id' ]);

# a standby query that started before a stream of in-place updates still
# sees a consistent snapshot (repeatable read on the standby)
my $reader = $standby->background_psql('postgres');
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
my $snap = $reader->query_safe('SELECT sum(n) FROM m');
$primary->safe_psql('postgres', 'UPDATE m SET n = n + 1 WHERE id % 2 = 1');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $again = $reader->query('SELECT sum(n) FROM m');
# either the same sum or a recovery-conflict cancellation; never a wrong one
ok($again eq $snap || $reader->{stderr} =~ /conflict with recovery|canceling statement/,
	'standby snapshot stable across replayed in-place updates');
eval { $reader->quit; };
compare_nodes('after odd-row updates');

# promote: the replayed tables take writes
$standby->promote;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die "standby did not promote";
$standby->safe_psql('postgres', q{
UPDATE m SET n = n + 1;
UPDATE m SET k = k + 1 WHERE id % 5 = 0;
DELETE FROM m WHERE id % 11 = 0;
INSERT INTO m VALUES (5000, 1, 'after promote', 0, NULL);
});
is($standby->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT v FROM m WHERE id = 5000}), 'after promote', 'promoted standby accepts writes');
is($standby->safe_psql('postgres', q{
	SELECT (SELECT count(*) FROM m) = (SELECT count(*) FROM m WHERE k >= -1000000)}),
	't', 'promoted standby: seq and index agree');

$standby->stop;
$primary->stop;
done_testing();
