# Hot standby and freezing.  A frozen version is visible to every snapshot,
# so a standby query whose snapshot does not see a version's transaction
# yet must be cancelled before the freezing is replayed: heap's freeze
# records carry that conflict horizon, and minidb's PRUNE record (which
# carries VACUUM's freezing) carries it too -- the newest xmin it froze.
# The visibility map record's cutoff must count heads frozen in the same
# pass: their xmin is what a standby index-only scan would trust.
# With the library preloaded (generic WAL has no place for a horizon: the
# README asks for hot_standby_feedback there).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $primary = PostgreSQL::Test::Cluster->new('fz_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
autovacuum = off
});
$primary->start;
$primary->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE EXTENSION pg_walinspect;
CREATE TABLE f (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO f SELECT i, 'old' FROM generate_series(1, 100) i;
});
$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('fz_standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->append_conf('postgresql.conf', qq{
hot_standby_feedback = off
max_standby_streaming_delay = 0
});
$standby->start;
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));

# a standby reader whose snapshot predates the new rows
my $reader = $standby->background_psql('postgres', on_error_stop => 0);
$reader->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
is($reader->query_safe('SELECT count(*) FROM f'), '100',
	'standby reader sees the 100 old rows');

# new rows, committed after that snapshot, then frozen by VACUUM FREEZE
my $xid = $primary->safe_psql('postgres', q{
	BEGIN;
	INSERT INTO f SELECT i, 'new' FROM generate_series(101, 200) i;
	SELECT txid_current();
	COMMIT;});
my $lsn0 = $primary->lsn('insert');
$primary->safe_psql('postgres', 'VACUUM (FREEZE) f');
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('insert'));
my $lsn1 = $primary->lsn('flush');

is($primary->safe_psql('postgres', q{
	SELECT bool_and(flags LIKE '%frozen%') FROM f, minidb_chain('f', f.ctid)}),
	't', 'the primary froze every version');
my $horizons = $primary->safe_psql('postgres', qq{
	SELECT count(*) FROM pg_get_wal_records_info('$lsn0', '$lsn1')
	 WHERE resource_manager = 'minidb' AND record_type = 'PRUNE'
	   AND description LIKE '%horizon $xid%'});
cmp_ok($horizons, '>', 0,
	"the freezing records carry the inserting xid $xid as their horizon");
my $cutoffs = $primary->safe_psql('postgres', qq{
	SELECT string_agg(description, '; ')
	  FROM pg_get_wal_records_info('$lsn0', '$lsn1')
	 WHERE resource_manager = 'minidb' AND record_type = 'VISIBLE'});
like($cutoffs, qr/cutoff xid $xid/,
	'the visibility map cutoff counts the heads frozen in the same pass');

# the reader keeps its 100 rows or is cancelled; it never sees the new ones
my $out = eval { $reader->query('SELECT count(*) FROM f') };
my $err = $@ || $reader->{stderr} || '';
ok((defined $out && $out eq '100') || $err ne '',
	'standby reader: its 100 rows or a recovery conflict, never the frozen new rows')
  or diag("reader saw: " . ($out // 'nothing'));
like(slurp_file($standby->logfile), qr/conflict with recovery/,
	'the replay of the freezing cancelled the reader (standby log)');
eval { $reader->quit };

is($standby->safe_psql('postgres', 'SELECT count(*) FROM f'), '200',
	'a new standby query sees every row');
$standby->stop;
$primary->stop;
done_testing();
