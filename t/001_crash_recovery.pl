# Crash recovery of minidb tables.
#
# Every transaction of the workload writes the same change to a heap table
# (h) and a minidb table (m), so whatever committed before a crash is in
# both and whatever did not is in neither: after recovery m must equal h,
# through seq, index and bitmap scans, and its indexes must pass amcheck.
#
# Phase A: a backend running a write loop (in-place updates, key updates,
#          deletes, inserts, TOAST values, rollbacks; one COMMIT per
#          iteration, a CHECKPOINT in the middle) is killed with SIGKILL;
#          the postmaster resets and runs crash recovery.
# Phase B: a transaction is left open (uncommitted updates, inserts and
#          deletes) and the server is stopped in immediate mode.
# Phase C: the recovered tables take more writes, VACUUM, another immediate
#          stop, and still agree.
# An unlogged minidb table comes back empty after the crash.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
# 004 runs this file again with the library preloaded (compact WAL records)
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'")
  if $ENV{MINIDB_TAP_PRELOAD};
$node->append_conf('postgresql.conf', qq{
restart_after_crash = on
lock_timeout = '60s'
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE EXTENSION amcheck;
CREATE TABLE h (id int PRIMARY KEY, k int NOT NULL, v text, n int, big text) USING heap;
CREATE TABLE m (id int PRIMARY KEY, k int NOT NULL, v text, n int, big text) USING minidb;
CREATE INDEX h_k ON h (k);
CREATE INDEX m_k ON m (k);
INSERT INTO h SELECT i, i % 100, 'v' || i, 0, NULL FROM generate_series(1, 2000) i;
INSERT INTO m SELECT i, i % 100, 'v' || i, 0, NULL FROM generate_series(1, 2000) i;
CREATE UNLOGGED TABLE um (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO um SELECT i, 'u' || i FROM generate_series(1, 100) i;

CREATE TABLE progress (iterations int);
INSERT INTO progress VALUES (0);

-- the write loop: one transaction per iteration, applied to h and m alike
CREATE PROCEDURE workload(iters int) LANGUAGE plpgsql AS $$
DECLARE i int; r float8; x int; bigval text;
BEGIN
  PERFORM setseed(0.42);
  FOR i IN 1..iters LOOP
    r := random();
    x := 1 + floor(random() * 2000)::int;
    IF r < 0.40 THEN            -- in-place update (no indexed column)
      UPDATE h SET v = 'u' || i, n = n + 1 WHERE id IN (x, x + 1, x + 2);
      UPDATE m SET v = 'u' || i, n = n + 1 WHERE id IN (x, x + 1, x + 2);
    ELSIF r < 0.55 THEN         -- update of an indexed column: the row moves
      UPDATE h SET k = (k + 7) % 100, n = n + 1 WHERE id = x;
      UPDATE m SET k = (k + 7) % 100, n = n + 1 WHERE id = x;
    ELSIF r < 0.65 THEN         -- delete and re-insert
      DELETE FROM h WHERE id = x;
      DELETE FROM m WHERE id = x;
      INSERT INTO h VALUES (x, x % 100, 'reborn ' || i, i, NULL);
      INSERT INTO m VALUES (x, x % 100, 'reborn ' || i, i, NULL);
    ELSIF r < 0.70 THEN         -- a TOAST value
      bigval := (SELECT string_agg(md5(i::text || ':' || g), '') FROM generate_series(1, 4000) g);
      UPDATE h SET big = bigval WHERE id = x;
      UPDATE m SET big = bigval WHERE id = x;
    ELSIF r < 0.80 THEN         -- a bigger statement
      UPDATE h SET n = n + 1 WHERE k = x % 100;
      UPDATE m SET n = n + 1 WHERE k = x % 100;
    ELSIF r < 0.90 THEN         -- work that is rolled back
      UPDATE h SET v = 'rolled back' WHERE id BETWEEN x AND x + 20;
      UPDATE m SET v = 'rolled back' WHERE id BETWEEN x AND x + 20;
      INSERT INTO h VALUES (-i, 0, 'rolled back', 0, NULL);
      INSERT INTO m VALUES (-i, 0, 'rolled back', 0, NULL);
      ROLLBACK;
      CONTINUE;
    ELSE                        -- several updates of one row in one transaction
      UPDATE h SET n = n + 1 WHERE id = x;
      UPDATE m SET n = n + 1 WHERE id = x;
      UPDATE h SET n = n + 1, v = 'twice' WHERE id = x;
      UPDATE m SET n = n + 1, v = 'twice' WHERE id = x;
    END IF;
    UPDATE progress SET iterations = i;
    COMMIT;
  END LOOP;
END $$;
});

# m must equal h through each scan; returns nothing, runs tests
sub compare_tables
{
	my ($node, $what) = @_;
	my %modes = (
		seq    => 'SET enable_indexscan = off; SET enable_bitmapscan = off;',
		index  => 'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_indexonlyscan = off;',
		bitmap => 'SET enable_seqscan = off; SET enable_indexscan = off;');
	foreach my $mode (sort keys %modes)
	{
		my $q = $modes{$mode} . q{
		  SELECT count(*) FROM (
		    (SELECT * FROM h WHERE k >= 0 EXCEPT ALL SELECT * FROM m WHERE k >= 0)
		    UNION ALL
		    (SELECT * FROM m WHERE k >= 0 EXCEPT ALL SELECT * FROM h WHERE k >= 0)) d;};
		is($node->safe_psql('postgres', $q), '0', "$what: m equals h ($mode scan)");
	}
	is( $node->safe_psql('postgres',
			'SELECT (SELECT count(*) FROM h) = (SELECT count(*) FROM m)'),
		't', "$what: same row count");
	is( $node->safe_psql('postgres', q{
		SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM generate_series(1, 2000) x
		 WHERE (SELECT v FROM h WHERE id = x) IS DISTINCT FROM (SELECT v FROM m WHERE id = x)}),
		'0', "$what: every primary-key lookup agrees");
	my $amcheck = $node->psql('postgres', q{
		SELECT bt_index_check('m_pkey', true), bt_index_check('m_k', true)});
	is($amcheck, 0, "$what: amcheck heapallindexed on m's indexes");
}

compare_tables($node, 'before any crash');

# ---- Phase A: SIGKILL a backend in the middle of the write loop ----
my $bg = $node->background_psql('postgres', on_error_stop => 0);
my $pid = $bg->query_safe('SELECT pg_backend_pid()');
$bg->query_until(qr/started/, "\\echo started\nCALL workload(1000000);\n");

# let it run, checkpoint in the middle, let it run some more
$node->poll_query_until('postgres',
	'SELECT iterations >= 300 FROM progress') or die "workload does not progress";
$node->safe_psql('postgres', 'CHECKPOINT');
$node->poll_query_until('postgres',
	'SELECT iterations >= 800 FROM progress') or die "workload does not progress";
my $before_kill = $node->safe_psql('postgres', 'SELECT iterations FROM progress');
note "killing backend $pid after $before_kill committed iterations";
kill 'KILL', $pid;
eval { $bg->quit; };

# the postmaster notices, kills everybody, and runs crash recovery
$node->poll_query_until('postgres', 'SELECT 1', '1')
  or die "server did not come back after the crash";
like(slurp_file($node->logfile), qr/all server processes terminated; reinitializing/,
	'crash restart happened');
my $after = $node->safe_psql('postgres', 'SELECT iterations FROM progress');
cmp_ok($after, '>=', $before_kill, "committed iterations survived ($after)");
compare_tables($node, 'after SIGKILL of a writer');
is($node->safe_psql('postgres', q{SELECT count(*) FROM m WHERE v = 'rolled back' OR id < 0}),
	'0', 'no rolled-back change visible after SIGKILL');
is($node->safe_psql('postgres', 'SELECT count(*) FROM um'), '0',
	'unlogged minidb table is empty after crash');
$node->safe_psql('postgres', q{INSERT INTO um VALUES (1, 'again')});
is($node->safe_psql('postgres', 'SELECT v FROM um'), 'again', 'unlogged table usable after crash');

# ---- Phase B: an open transaction at an immediate shutdown ----
my $open = $node->background_psql('postgres');
$open->query_safe(q{
BEGIN;
UPDATE h SET v = 'uncommitted' WHERE id % 3 = 0;
UPDATE m SET v = 'uncommitted' WHERE id % 3 = 0;
UPDATE h SET k = (k + 1) % 100 WHERE id % 5 = 0;
UPDATE m SET k = (k + 1) % 100 WHERE id % 5 = 0;
DELETE FROM h WHERE id % 7 = 0;
DELETE FROM m WHERE id % 7 = 0;
INSERT INTO h SELECT i, 1, 'uncommitted', 0, NULL FROM generate_series(100001, 100500) i;
INSERT INTO m SELECT i, 1, 'uncommitted', 0, NULL FROM generate_series(100001, 100500) i;
});
# make sure the uncommitted changes reach the WAL and some pages the disk
$node->safe_psql('postgres', 'CHECKPOINT');
my $committed = $node->safe_psql('postgres', q{
  -- rows the open transaction did not touch (it holds locks on those)
  UPDATE h SET n = n + 1000 WHERE id % 3 = 1 AND id % 5 <> 0 AND id % 7 <> 0;
  UPDATE m SET n = n + 1000 WHERE id % 3 = 1 AND id % 5 <> 0 AND id % 7 <> 0;
  SELECT count(*) FROM m WHERE n >= 1000});
$node->stop('immediate');
eval { $open->quit; };
$node->start;
compare_tables($node, 'after immediate stop with an open transaction');
is($node->safe_psql('postgres',
		q{SELECT count(*) FROM m WHERE v = 'uncommitted' OR id > 100000}),
	'0', 'nothing uncommitted visible');
is($node->safe_psql('postgres', 'SELECT count(*) FROM m WHERE n >= 1000'),
	$committed, 'change committed just before the stop is there');
is($node->safe_psql('postgres', q{
	SET enable_seqscan = off; SET enable_bitmapscan = off;
	SELECT count(*) FROM m WHERE id > 100000}), '0',
	'no uncommitted insert reachable through the primary key');

# ---- Phase C: more writes on the recovered tables, VACUUM, crash again ----
$node->safe_psql('postgres', q{
UPDATE h SET v = v || '+', n = n + 1;
UPDATE m SET v = v || '+', n = n + 1;
UPDATE h SET k = (k + 3) % 100 WHERE id % 4 = 0;
UPDATE m SET k = (k + 3) % 100 WHERE id % 4 = 0;
DELETE FROM h WHERE id % 9 = 0;
DELETE FROM m WHERE id % 9 = 0;
VACUUM h;
VACUUM m;
INSERT INTO h SELECT i, i % 100, 'late', 0, NULL FROM generate_series(3001, 3500) i;
INSERT INTO m SELECT i, i % 100, 'late', 0, NULL FROM generate_series(3001, 3500) i;
UPDATE h SET v = 'late update' WHERE id % 10 = 1;
UPDATE m SET v = 'late update' WHERE id % 10 = 1;
});
compare_tables($node, 'after writes and VACUUM on recovered tables');
$node->stop('immediate');
$node->start;
compare_tables($node, 'after a second immediate stop');

$node->stop;
done_testing();
