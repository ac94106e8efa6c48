# Crash loops: kill -9 under a concurrent write load, again and again.
#
# Each round starts pgbench with four scripts on minidb tables -- transfers
# between accounts (two in-place updates and a history row, one
# transaction), moving updates of an indexed column, an insert and delete
# of one row in one transaction, and an occasional VACUUM -- lets it run
# for a moment, then kills the server with SIGKILL: the postmaster alone
# in odd rounds (its children notice and exit), the whole process group in
# even ones.  The server restarts (crash recovery, with
# wal_consistency_checking = all comparing every replayed page with the
# primary's image), and the invariants are checked:
#
#	- the sum of the balances is what it was at the start;
#	- every balance equals its start plus what the history says it got
#	  and minus what it gave (transfers are atomic across tables);
#	- the insert-and-delete table is empty;
#	- committed history survives (its count never goes down);
#	- sequential, index and bitmap scans count the same rows;
#	- amcheck (heapallindexed) passes on every index;
#	- minidb_stats is sane;
#	- the server log shows no inconsistent page and no crash but ours.
#
# 011 runs this file again with the library preloaded.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

my $preload = $ENV{MINIDB_TAP_PRELOAD} ? 1 : 0;
my $mode = $preload ? 'preloaded' : 'generic WAL';
my $rounds = 10;

my $node = PostgreSQL::Test::Cluster->new('loops');
$node->init;
$node->append_conf('postgresql.conf', qq{
restart_after_crash = off
wal_consistency_checking = all
autovacuum_naptime = 1s
lock_timeout = '60s'
log_min_messages = warning
});
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'")
  if $preload;
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE EXTENSION amcheck;
CREATE TABLE acct (id int PRIMARY KEY, grp int NOT NULL, bal int NOT NULL,
				   note text) USING minidb;
CREATE INDEX acct_grp ON acct (grp);
INSERT INTO acct SELECT i, i % 10, 1000, repeat('n', i % 200)
  FROM generate_series(1, 1000) i;
CREATE TABLE hist (id bigserial PRIMARY KEY, a int NOT NULL, b int NOT NULL,
				   d int NOT NULL) USING minidb;
CREATE INDEX hist_a ON hist (a);
CREATE INDEX hist_b ON hist (b);
CREATE TABLE churn (k int PRIMARY KEY, v text) USING minidb;
});

my $dir = PostgreSQL::Test::Utils::tempdir;
my %scripts = (
	'transfer.sql@10' => q{
\set a random(1, 1000)
\set b random(1, 1000)
\set d random(1, 100)
BEGIN;
UPDATE acct SET bal = bal - :d WHERE id = :a;
UPDATE acct SET bal = bal + :d WHERE id = :b;
INSERT INTO hist (a, b, d) VALUES (:a, :b, :d);
COMMIT;
},
	'move.sql@3' => q{
\set a random(1, 1000)
UPDATE acct SET grp = (grp + 1) % 10, note = note || 'm' WHERE id = :a;
},
	'churn.sql@3' => q{
\set k random(1, 1000000)
BEGIN;
INSERT INTO churn VALUES (:k, repeat('c', 100)) ON CONFLICT DO NOTHING;
DELETE FROM churn WHERE k = :k;
COMMIT;
},
	'vacuum.sql@1' => q{
VACUUM acct;
});
my @files;
foreach my $f (sort keys %scripts)
{
	my ($name, $weight) = split /@/, $f;
	PostgreSQL::Test::Utils::append_to_file("$dir/$name", $scripts{$f});
	push @files, '-f', "$dir/$name\@$weight";
}

sub check_invariants
{
	my ($what) = @_;
	is($node->safe_psql('postgres', 'SELECT sum(bal) FROM acct'), '1000000',
		"$what: the balances sum to what they did");
	is($node->safe_psql('postgres', q{
		SELECT count(*) FROM acct
		 WHERE bal <> 1000
			- coalesce((SELECT sum(d) FROM hist WHERE hist.a = acct.id), 0)
			+ coalesce((SELECT sum(d) FROM hist WHERE hist.b = acct.id), 0)}),
		'0', "$what: every balance matches the history");
	is($node->safe_psql('postgres', 'SELECT count(*) FROM churn'), '0',
		"$what: inserted-and-deleted rows are gone");
	my %counts;
	foreach my $scan (
		[ seq => 'SET enable_indexscan = off; SET enable_bitmapscan = off;' ],
		[ index => 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;' ],
		[ bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;' ])
	{
		my ($name, $set) = @$scan;
		$counts{$name} = $node->safe_psql('postgres', $set . q{
			SELECT (SELECT count(*) FROM acct WHERE grp >= 0) || '/' ||
				   (SELECT count(*) FROM hist WHERE a > 0) || '/' ||
				   (SELECT count(*) FROM churn WHERE k > 0)});
	}
	ok($counts{seq} eq $counts{index} && $counts{seq} eq $counts{bitmap},
		"$what: seq, index and bitmap scans count the same rows ($counts{seq})")
	  or diag(explain \%counts);
	my ($ret, $out, $err) = $node->psql('postgres', q{
		SELECT bt_index_check(c.oid, true) FROM pg_index i
		  JOIN pg_class c ON c.oid = i.indexrelid
		 WHERE i.indrelid IN ('acct'::regclass, 'hist'::regclass, 'churn'::regclass)});
	is($ret, 0, "$what: amcheck with heapallindexed") or diag($err);
	is($node->safe_psql('postgres', q{
		SELECT s.records >= 1000 AND s.live_versions >= 1000
		   AND s.dead_versions >= 0 AND s.depth_max >= 1
		  FROM minidb_stats('acct') s}), 't', "$what: minidb_stats is sane");
	my $log = slurp_file($node->logfile);
	unlike($log, qr/inconsistent page found|PANIC|TRAP|terminated by signal (?!9)/,
		"$what: the log shows no inconsistent page and no crash");
}

check_invariants("$mode, before any crash");

my $history = 0;
foreach my $round (1 .. $rounds)
{
	my $group = $round % 2 == 0;
	my $what = "$mode, round $round (" . ($group ? 'process group' : 'postmaster')
	  . ' killed)';
	my ($out, $err) = ('', '');
	my $load = IPC::Run::start(
		[
			'pgbench', '-n', '-T', '120', '-c', '4', '-j', '2',
			'--max-tries=100', @files,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);

	# let the load commit some transactions (more in later rounds)
	$node->poll_query_until('postgres',
		"SELECT count(*) > $history + 50 * $round FROM hist")
	  or die "the load does not progress: $err";
	usleep(200_000 * ($round % 3));

	my $pid = $node->{_pid};
	kill 'KILL', ($group ? -$pid : $pid);
	$node->{_pid} = undef;
	# restart only when every process of the old server is gone
	foreach (1 .. 600)
	{
		last unless kill 0, -$pid;
		usleep(100_000);
	}
	ok(!kill(0, -$pid), "$what: the old server is gone");
	$load->kill_kill;

	$node->start;
	my $now = $node->safe_psql('postgres', 'SELECT count(*) FROM hist');
	cmp_ok($now, '>=', $history, "$what: committed history survived ($now rows)");
	$history = $now;
	check_invariants($what);
	$node->safe_psql('postgres', 'CHECKPOINT') if $round % 3 == 0;
}

cmp_ok($history, '>', 500, "$mode: the load committed $history transfers");
$node->stop;
done_testing();
