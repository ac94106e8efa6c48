# The project's own pg_regress suite (sql/*.sql) against a primary with
# wal_consistency_checking = all and a streaming standby, with the library
# preloaded (minidb's resource manager) and without (generic WAL): the
# suite must pass as it does on the private cluster, the standby must
# replay all of it without an inconsistent page, and so must crash
# recovery of the primary after an immediate stop.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename;
use Time::HiRes qw(usleep);

my $srcdir = $ENV{TESTDIR} || '.';
my @tests = map { basename($_, '.sql') } sort glob("$srcdir/sql/*.sql");
plan skip_all => 'no sql/*.sql' unless @tests;

# Wait for the standby to replay everything; false if its replay stopped
sub replayed
{
	my ($primary, $standby) = @_;
	my $lsn = $primary->lsn('insert');
	foreach (1 .. 1800)
	{
		return 0
		  if slurp_file($standby->logfile) =~
		  /inconsistent page found|startup process .* (exited|terminated)/;
		return 1
		  if $standby->safe_psql('postgres',
			"SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn") eq 't';
		usleep(100_000);
	}
	return 0;
}

foreach my $preload (1, 0)
{
	my $mode = $preload ? 'preloaded' : 'generic WAL';
	my $primary = PostgreSQL::Test::Cluster->new("regress_primary_$preload");
	# the settings of scripts/cluster.sh, which the expected output assumes:
	# UTF8 without a locale (a caller without LANG would get SQL_ASCII,
	# where the suite's multibyte strings count bytes), and these
	$primary->init(
		allows_streaming => 1,
		extra => [ '--encoding=UTF8', '--no-locale' ]);
	$primary->append_conf('postgresql.conf', qq{
wal_consistency_checking = all
wal_keep_size = '1GB'
checkpoint_timeout = '1h'
fsync = off
synchronous_commit = off
max_prepared_transactions = 10
});
	$primary->append_conf('postgresql.conf',
		"shared_preload_libraries = 'minidb_am'")
	  if $preload;
	$primary->start;
	$primary->backup('bkp');
	my $standby = PostgreSQL::Test::Cluster->new("regress_standby_$preload");
	$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
	$standby->start;

	my $outdir = PostgreSQL::Test::Utils::tempdir;
	# am_rowsize's \copy writes results/am_rowsize.copy relative to psql's
	# working directory, this one, where only a pg_regress run of its own
	# (make regresscheck) would have made results/
	mkdir 'results' unless -d 'results';
	my $passed = run_log(
		[
			$ENV{PG_REGRESS}, '--bindir=', "--inputdir=$srcdir",
			"--outputdir=$outdir", '--host=' . $primary->host,
			'--port=' . $primary->port, '--dbname=contrib_regression', @tests
		]);
	ok($passed, "$mode: pg_regress passes against the primary")
	  or diag(-f "$outdir/regression.diffs" ?
		  slurp_file("$outdir/regression.diffs") : 'no regression.diffs');

	my $ok = replayed($primary, $standby);
	ok($ok, "$mode: the standby replayed the suite");
	my $slog = slurp_file($standby->logfile);
	unlike($slog, qr/inconsistent page found/,
		"$mode: the standby found no inconsistent page")
	  or diag(join("\n", grep { /FATAL|PANIC|CONTEXT/ } split /\n/, $slog));
	if ($ok)
	{
		$standby->stop;
	}
	else
	{
		$standby->_update_pid(-1);
		$standby->stop('immediate') if defined $standby->{_pid};
	}

	# crash recovery replays the suite again, from the backup's checkpoint
	$primary->stop('immediate');
	$primary->start;
	my $plog = slurp_file($primary->logfile);
	unlike($plog, qr/inconsistent page found|PANIC|terminated by signal/,
		"$mode: crash recovery found no inconsistent page");
	$primary->stop;
}

done_testing();
