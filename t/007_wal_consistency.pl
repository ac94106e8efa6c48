# Replay produces the primary's pages: wal_consistency_checking = all on a
# primary with a streaming standby, under a TPC-B-like load on minidb
# tables (pgbench with default_table_access_method = minidb) and in-place
# and moving updates, deletes, rollbacks, TOAST, VACUUM, VACUUM FREEZE,
# index builds, CLUSTER and VACUUM FULL.  The standby compares every page
# a WAL record touches with the image the primary logged (masks aside) and
# stops with "inconsistent page found" at the first difference; then the
# primary is stopped in immediate mode and crash recovery checks the same.
#
# Without the library preloaded minidb logs generic WAL, whose mask knows
# nothing of minidb's hint bits: replay must give the same bytes exactly.
# 008 runs this file again with the library preloaded (minidb's resource
# manager, its own records and its rm_mask).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $preload = $ENV{MINIDB_TAP_PRELOAD} ? 1 : 0;
my $mode = $preload ? 'preloaded' : 'generic WAL';

# Wait for the standby to replay everything the primary wrote; give up at
# once if its startup process stopped (an inconsistent page is FATAL)
sub wait_replay
{
	my ($primary, $standby) = @_;
	my $lsn = $primary->lsn('insert');
	foreach (1 .. 1800)
	{
		my $log = slurp_file($standby->logfile);
		if ($log =~ /inconsistent page found|startup process .* (exited|terminated)/)
		{
			fail("the standby replays the primary's WAL");
			diag(join("\n", grep { /FATAL|PANIC|CONTEXT/ } split /\n/, $log));
			$standby->_update_pid(-1);	# it is gone: nothing to stop
			$primary->stop('immediate');
			done_testing();
			exit(1);
		}
		my $done = $standby->safe_psql('postgres',
			"SELECT pg_last_wal_replay_lsn() >= '$lsn'::pg_lsn");
		return if $done eq 't';
		usleep(100_000);
	}
	die "the standby did not catch up";
}

my $primary = PostgreSQL::Test::Cluster->new('wc_primary');
$primary->init(allows_streaming => 1);
$primary->append_conf('postgresql.conf', qq{
wal_consistency_checking = all
wal_keep_size = '1GB'
autovacuum_naptime = 1s
autovacuum_vacuum_scale_factor = 0.01
autovacuum_vacuum_threshold = 10
lock_timeout = '60s'
});
$primary->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'")
  if $preload;
$primary->start;
$primary->safe_psql('postgres', 'CREATE EXTENSION minidb_am');

$primary->backup('bkp');
my $standby = PostgreSQL::Test::Cluster->new('wc_standby');
$standby->init_from_backup($primary, 'bkp', has_streaming => 1);
$standby->start;

# a TPC-B-like load on minidb tables
{
	local $ENV{PGOPTIONS} = '-c default_table_access_method=minidb';
	$primary->command_ok([ 'pgbench', '-i', '-s', '2', '-q', 'postgres' ],
		"$mode: pgbench -i on minidb tables");
	is($primary->safe_psql('postgres', q{
		SELECT count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
		 WHERE c.relname LIKE 'pgbench_%' AND c.relkind = 'r' AND a.amname = 'minidb'}),
		'4', "$mode: the pgbench tables are minidb tables");
	$primary->command_ok(
		[ 'pgbench', '-T', '12', '-c', '2', '-j', '2', '-n', 'postgres' ],
		"$mode: pgbench tpcb-like load");
}

# the standby reads everything: its own hint bits, which replay must mask
# (preloaded) or never see (generic WAL)
wait_replay($primary, $standby);
$standby->safe_psql('postgres', q{
SELECT count(*), sum(abalance) FROM pgbench_accounts;
SELECT sum(tbalance) FROM pgbench_tellers;
SELECT sum(bbalance) FROM pgbench_branches;
SET enable_seqscan = off;
SELECT count(*) FROM pgbench_accounts WHERE aid > 0;
});

# everything else a page goes through
$primary->safe_psql('postgres', q{
CREATE TABLE m (id int PRIMARY KEY, k int, v text, n int, big text) USING minidb;
CREATE INDEX m_k ON m (k);
INSERT INTO m SELECT i, i % 50, 'v' || i, 0, NULL FROM generate_series(1, 3000) i;
UPDATE m SET v = v || '+', n = n + 1 WHERE id % 2 = 0;          -- in place
UPDATE m SET n = n + 1 WHERE id % 2 = 0;
UPDATE m SET k = k + 100 WHERE id % 10 = 3;                      -- moves
DELETE FROM m WHERE id % 10 = 4;
UPDATE m SET big = (SELECT string_agg(md5(id::text || g), '') FROM generate_series(1, 300) g)
 WHERE id % 100 = 5;                                               -- TOAST
BEGIN;
UPDATE m SET v = 'rolled back' WHERE id < 500;
DELETE FROM m WHERE id >= 2500;
INSERT INTO m SELECT i, 1, 'rolled back', 0, NULL FROM generate_series(5001, 5500) i;
ROLLBACK;
SELECT count(*) FROM m;                                            -- hint bits
VACUUM m;
SELECT count(*) FROM m WHERE k >= 0;
UPDATE m SET n = n + 1 WHERE id % 7 = 0;
-- row locks that ended (committed, aborted), then UPDATEs in place: the
-- record's lockers go, and the WAL record says so
SELECT count(*) FROM (SELECT FROM m WHERE id % 17 = 1 FOR KEY SHARE) s;
SELECT count(*) FROM (SELECT FROM m WHERE id % 17 = 2 FOR SHARE) s;
BEGIN;
SELECT count(*) FROM (SELECT FROM m WHERE id % 17 = 3 FOR SHARE) s;
ROLLBACK;
UPDATE m SET n = n + 1 WHERE id % 17 BETWEEN 1 AND 3;
SELECT * FROM m WHERE id = 1 FOR UPDATE;
INSERT INTO m VALUES (1, 1, 'dup', 0, NULL) ON CONFLICT (id) DO UPDATE SET n = m.n + 1;
INSERT INTO m VALUES (9001, 1, 'new', 0, NULL) ON CONFLICT DO NOTHING;
VACUUM (FREEZE) m;
UPDATE m SET n = n + 1 WHERE id % 11 = 0;
VACUUM (FREEZE, DISABLE_PAGE_SKIPPING) m;
CREATE INDEX m_v ON m (v);
CREATE INDEX CONCURRENTLY m_n ON m (n);
CREATE TABLE c (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO c SELECT i, 'c' || i FROM generate_series(1, 1000) i;
UPDATE c SET v = v || '!' WHERE id % 3 = 0;
CLUSTER c USING c_pkey;
DELETE FROM c WHERE id % 2 = 0;
VACUUM FULL c;
VACUUM (FREEZE) pgbench_accounts;
VACUUM pgbench_tellers, pgbench_branches, pgbench_history;
-- V1 and V2 rows whose DELETE, moving UPDATE or lock rolled back, written
-- again in V3: the write prunes the aborted marker, and replay must drop
-- the same one from the WAL record alone (keep[] and TO_V3), not from clog
SET minidb.record_format = v1;
CREATE TABLE leg (id int PRIMARY KEY, k int, v text) USING minidb;
CREATE INDEX leg_k ON leg (k);
INSERT INTO leg SELECT i, i, 'v1' FROM generate_series(1, 90) i;
SET minidb.record_format = v2;
INSERT INTO leg SELECT i, i, 'v2' FROM generate_series(91, 180) i;
BEGIN;
DELETE FROM leg WHERE id % 3 = 0;
UPDATE leg SET k = k + 1000 WHERE id % 3 = 1;
SELECT count(*) FROM (SELECT FROM leg WHERE id % 3 = 2 FOR UPDATE) s;
ROLLBACK;
RESET minidb.record_format;
DELETE FROM leg WHERE id % 9 < 3;
UPDATE leg SET v = v || '+' WHERE id % 9 BETWEEN 3 AND 5;
UPDATE leg SET k = k + 1000 WHERE id % 9 > 5;
CHECKPOINT;
UPDATE m SET v = 'after checkpoint' WHERE id % 13 = 0;
DELETE FROM c WHERE id % 5 = 0;
VACUUM c;
});
{
	local $ENV{PGOPTIONS} = '-c default_table_access_method=minidb';
	$primary->command_ok(
		[ 'pgbench', '-T', '4', '-c', '2', '-j', '2', '-n', 'postgres' ],
		"$mode: pgbench load after VACUUM FREEZE");
}
wait_replay($primary, $standby);
$standby->safe_psql('postgres',
	'SELECT count(*) FROM m; SELECT count(*) FROM c; SELECT count(*) FROM pgbench_accounts');
$primary->safe_psql('postgres', q{
UPDATE m SET n = n + 1 WHERE id % 5 = 0;
UPDATE m SET k = k + 1 WHERE id % 50 = 0;
VACUUM;
});

# the standby replays all of it and answers as the primary does
wait_replay($primary, $standby);
foreach my $q (
	'SELECT sum(abalance), count(*) FROM pgbench_accounts',
	'SELECT sum(tbalance), sum(bbalance) FROM pgbench_tellers t, pgbench_branches b WHERE t.bid = b.bid',
	'SELECT count(*) FROM pgbench_history',
	'SELECT count(*), sum(n), sum(k), md5(string_agg(v, \',\' ORDER BY id)) FROM m',
	'SELECT count(*), md5(string_agg(v, \',\' ORDER BY id)) FROM c',
	'SELECT count(*), sum(k), md5(string_agg(v, \',\' ORDER BY id)) FROM leg')
{
	is($standby->safe_psql('postgres', $q), $primary->safe_psql('postgres', $q),
		"$mode: standby answers as the primary: $q");
}

my $slog = slurp_file($standby->logfile);
unlike($slog, qr/inconsistent page found/,
	"$mode: the standby found no inconsistent page");
unlike($slog, qr/PANIC|TRAP|terminated by signal/,
	"$mode: the standby did not crash");

# crash recovery replays from the last checkpoint with the same checks
$primary->safe_psql('postgres', q{
CHECKPOINT;
UPDATE m SET n = n + 1 WHERE id % 3 = 0;
DELETE FROM m WHERE id % 17 = 0;
INSERT INTO m SELECT i, i % 50, 'late', 0, NULL FROM generate_series(10001, 10500) i;
VACUUM m;
UPDATE pgbench_accounts SET abalance = abalance + 1 WHERE aid % 100 = 0;
});
my $before = $primary->safe_psql('postgres',
	'SELECT count(*), sum(n), sum(k) FROM m');
$primary->stop('immediate');
$primary->start;
is($primary->safe_psql('postgres', 'SELECT count(*), sum(n), sum(k) FROM m'),
	$before, "$mode: crash recovery gives the same rows");
my $plog = slurp_file($primary->logfile);
unlike($plog, qr/inconsistent page found/,
	"$mode: crash recovery found no inconsistent page");
unlike($plog, qr/PANIC|TRAP|terminated by signal/,
	"$mode: no crash on the primary");

$standby->stop;
$primary->stop;
done_testing();
