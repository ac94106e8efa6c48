# Hot standby: a query on the standby whose snapshot still needs versions
# that the primary pruned must be cancelled by the replay of the pruning
# (a recovery conflict), never answer from a chain that lost its version.
# With the library preloaded, minidb's records that remove versions
# (PREPEND and MOVE with their pruning plan, PRUNE; minidb_xlog.c) carry
# the xid that made the pruned versions invisible, as heap's pruning
# records carry snapshotConflictHorizon.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('hs_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
autovacuum = off
});
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE TABLE m (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO m SELECT i, 'old' FROM generate_series(1, 100) i;
});
$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('hs_standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->append_conf('postgresql.conf', qq{
hot_standby_feedback = off
max_standby_streaming_delay = 0
});
$standby->start;
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

# a standby reader with a snapshot from before the updates
my $reader = $standby->background_psql('postgres', on_error_stop => 0);
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($reader->query_safe(q{SELECT count(*) FROM m WHERE v = 'old'}), '100',
	'standby reader sees the old rows');

# the primary updates every row in place twice; the second update prunes
# the 'old' versions as it prepends (no VACUUM, so no visibility-map record
# with a conflict horizon of its own: the conflict must come from minidb's)
my $lsn0 = $primary->lsn('insert');
$primary->safe_psql('postgres', q{UPDATE m SET v = 'new'});
$primary->safe_psql('postgres', q{UPDATE m SET v = 'newer'});
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

my $lsn1 = $primary->lsn('flush');
my $wal = $primary->safe_psql('postgres', qq{
	CREATE EXTENSION pg_walinspect;
	SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
	 WHERE resource_manager = 'minidb' AND description LIKE '%horizon%'});
cmp_ok($wal, '>', 0, "the primary's pruning records carry horizons ($wal)");

# the reader either still sees its 100 old rows or was cancelled (an idle
# transaction's session is terminated); it must never see fewer
my $out = eval { $reader->query(q{SELECT count(*) FROM m WHERE v = 'old'}) };
my $err = $@ || $reader->{stderr} || '';
ok(defined $out && $out eq '100' || $err ne '',
	'standby reader: its rows or a recovery conflict, never fewer rows');
my $log = slurp_file($standby->logfile);
like($log, qr/conflict with recovery/,
	'the replay of the pruning cancelled the reader (standby log)');
eval { $reader->quit };

is($standby->safe_psql('postgres', q{SELECT count(*) FROM m WHERE v = 'newer'}),
	'100', 'a new standby query sees the newest rows');
$standby->stop;
$primary->stop;
done_testing();
