# Logical decoding of minidb tables, heap as the oracle.
#
# With the library preloaded and wal_level = logical, every row change of
# a minidb table logs a LOGICAL record that minidb's rm_decode turns into
# heap-shaped changes (minidb_logical.c).  The same workload runs on heap
# tables and on minidb tables of the same shape; test_decoding's output
# for the minidb tables, table names aside, must be exactly heap's:
# INSERT, multi-row INSERT, UPDATE in place, moving UPDATE (an indexed
# column), key UPDATE (old key), DELETE, COPY (multi_insert), TOAST values
# (inserted by INSERT and COPY, unchanged by an UPDATE, changed, deleted),
# REPLICA IDENTITY FULL and NOTHING, a table without a key, ON CONFLICT
# DO NOTHING / DO UPDATE, savepoints rolled back and released, an aborted
# transaction, an UPDATE that moves a row to another partition, TRUNCATE,
# and a streamed large transaction (logical_decoding_work_mem) through
# pg_logical_slot_get_changes with streaming.
#
# A streaming standby with wal_consistency_checking = all replays the
# LOGICAL records (which change no page) with everything else.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('decoding');
$node->init(allows_streaming => 'logical');
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
wal_consistency_checking = all
autovacuum = off
logical_decoding_work_mem = '64kB'
});
$node->start;
$node->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('decoding_standby');
$standby->init_from_backup($node, 'b', has_streaming => 1);
$standby->start;

my $schema = q{
CREATE TABLE t_AM (id int PRIMARY KEY, k int, v text, big text) USING AM;
CREATE INDEX ON t_AM (k);
CREATE TABLE full_AM (id int PRIMARY KEY, v text, big text) USING AM;
ALTER TABLE full_AM REPLICA IDENTITY FULL;
CREATE TABLE nothing_AM (id int PRIMARY KEY, v text) USING AM;
ALTER TABLE nothing_AM REPLICA IDENTITY NOTHING;
CREATE TABLE nokey_AM (a int, b text) USING AM;
CREATE TABLE part_AM (id int PRIMARY KEY, v text) PARTITION BY RANGE (id);
CREATE TABLE part_AM_1 PARTITION OF part_AM FOR VALUES FROM (0) TO (100) USING AM;
CREATE TABLE part_AM_2 PARTITION OF part_AM FOR VALUES FROM (100) TO (200) USING AM;
CREATE TABLE trunc_AM (id int) USING AM;
};

# Statements, each a transaction of its own unless grouped
my @workload = (
	q{INSERT INTO t_AM VALUES (1, 1, 'a', NULL)},
	q{INSERT INTO t_AM VALUES (2, 2, 'b', NULL), (3, 3, 'c', NULL), (4, 4, 'd', NULL)},
	q{UPDATE t_AM SET v = 'a2' WHERE id = 1},                  # in place
	q{UPDATE t_AM SET k = 20 WHERE id = 2},                    # moving
	q{UPDATE t_AM SET id = 30 WHERE id = 3},                   # key: old key
	q{DELETE FROM t_AM WHERE id = 4},
	qq{COPY t_AM FROM stdin;\n5\t5\te\t\\N\n6\t6\tf\t\\N\n\\.\n},
	# TOAST: a value of ~40 kB that does not compress
	q{INSERT INTO t_AM SELECT 7, 7, 'g', string_agg(md5(g::text), '') FROM generate_series(1, 1200) g},
	q{UPDATE t_AM SET v = 'g2' WHERE id = 7},                  # unchanged TOAST
	q{UPDATE t_AM SET big = big || 'x' WHERE id = 7},          # changed TOAST
	q{UPDATE t_AM SET k = 70 WHERE id = 7},                    # moved, TOAST kept
	q{DELETE FROM t_AM WHERE id = 7},
	# COPY of several TOASTed rows: chunks of all rows, then the rows
	q{INSERT INTO t_AM SELECT 100 + i, i, 'copy', NULL FROM generate_series(1, 3) i},
	q{CREATE TEMP TABLE src AS SELECT 200 + i AS id, i AS k, 'c' AS v, (SELECT string_agg(md5((g * i)::text), '') FROM generate_series(1, 300) g) AS big FROM generate_series(1, 4) i; COPY (SELECT * FROM src) TO '/tmp/minidb_014_AM.copy'; COPY t_AM FROM '/tmp/minidb_014_AM.copy'},
	# replica identity FULL, with a TOAST value in the old row
	q{INSERT INTO full_AM SELECT 1, 'f', string_agg(md5(g::text), '') FROM generate_series(1, 300) g},
	q{UPDATE full_AM SET v = 'f2' WHERE id = 1},
	q{DELETE FROM full_AM WHERE id = 1},
	q{INSERT INTO nothing_AM VALUES (1, 'n'); UPDATE nothing_AM SET v = 'n2'; UPDATE nothing_AM SET id = 2; DELETE FROM nothing_AM},
	q{INSERT INTO nokey_AM VALUES (1, 'x'), (2, 'y'); UPDATE nokey_AM SET b = 'z' WHERE a = 1; DELETE FROM nokey_AM WHERE a = 2},
	# ON CONFLICT
	q{INSERT INTO t_AM VALUES (1, 1, 'dup', NULL) ON CONFLICT (id) DO NOTHING},
	q{INSERT INTO t_AM VALUES (8, 8, 'new', NULL) ON CONFLICT (id) DO NOTHING},
	q{INSERT INTO t_AM VALUES (8, 8, 'upd', NULL), (9, 9, 'ins', NULL) ON CONFLICT (id) DO UPDATE SET v = excluded.v},
	q{INSERT INTO t_AM SELECT 10, 10, 'spec', string_agg(md5(g::text), '') FROM generate_series(1, 300) g ON CONFLICT (id) DO NOTHING},
	# subtransactions and an abort
	q{BEGIN; INSERT INTO t_AM VALUES (11, 11, 'kept', NULL); SAVEPOINT s; INSERT INTO t_AM VALUES (12, 12, 'gone', NULL); UPDATE t_AM SET v = 'gone' WHERE id = 11; ROLLBACK TO s; SAVEPOINT r; UPDATE t_AM SET v = 'sub' WHERE id = 11; RELEASE r; DELETE FROM t_AM WHERE id = 1; COMMIT},
	q{BEGIN; INSERT INTO t_AM VALUES (13, 13, 'aborted', NULL); UPDATE t_AM SET v = 'aborted' WHERE id = 2; ROLLBACK},
	# partitions: a row moves from one to the other
	q{INSERT INTO part_AM VALUES (1, 'p'), (150, 'q')},
	q{UPDATE part_AM SET id = 101 WHERE id = 1},
	q{UPDATE part_AM SET v = 'q2' WHERE id = 150},
	q{INSERT INTO trunc_AM VALUES (1); TRUNCATE trunc_AM},
	# a transaction past logical_decoding_work_mem (spilled to disk)
	q{INSERT INTO t_AM SELECT 1000 + i, i, repeat('s', 100), NULL FROM generate_series(1, 2000) i; DELETE FROM t_AM WHERE id > 1500; UPDATE t_AM SET v = 'spilled' WHERE id > 1000},
);

sub run_workload
{
	my ($am) = @_;
	foreach my $stmt (@workload)
	{
		(my $sql = $stmt) =~ s/_AM\b/_$am/g;
		$sql =~ s/_AM_/_${am}_/g;
		my ($ret, $out, $err) = $node->psql('postgres', $sql);
		die "$am: $sql: $err" if $err =~ /ERROR/;
	}
}

sub changes
{
	my ($slot, @opts) = @_;
	my $o = join('', map { ", '$_'" } ('include-xids', '0', 'skip-empty-xacts', '1', @opts));
	return $node->safe_psql('postgres',
		"SELECT data FROM pg_logical_slot_get_changes('$slot', NULL, NULL$o)");
}

$node->safe_psql('postgres', 'CREATE EXTENSION minidb_am');
foreach my $am ('heap', 'minidb')
{
	(my $s = $schema) =~ s/\bAM\b/$am/g;
	$s =~ s/_AM\b/_$am/g;
	$s =~ s/_AM_/_${am}_/g;
	$node->safe_psql('postgres', $s);
}
$node->safe_psql('postgres',
	"SELECT pg_create_logical_replication_slot('s', 'test_decoding')");

run_workload('heap');
my $heap = changes('s');
run_workload('minidb');
my $minidb = changes('s');

like($heap, qr/table public\.t_heap: UPDATE: old-key: id\[integer\]:3/,
	'heap decodes its changes (the oracle is not empty)');
like($minidb, qr/table public\.t_minidb: INSERT: id\[integer\]:1 k\[integer\]:1 v\[text\]:'a'/,
	'minidb INSERTs are decoded');
(my $renamed = $minidb) =~ s/_minidb\b/_heap/g;
$renamed =~ s/_minidb_/_heap_/g;
is($renamed, $heap,
	'test_decoding prints exactly what it prints for heap (INSERT, UPDATE in place and moved, key UPDATE, DELETE, COPY, TOAST, replica identities, ON CONFLICT, savepoints, abort, partitions, TRUNCATE, spilled transaction)');
if ($renamed ne $heap)
{
	my @h = split /\n/, $heap;
	my @m = split /\n/, $renamed;
	for my $i (0 .. ($#h > $#m ? $#h : $#m))
	{
		my ($a, $b) = ($h[$i] // '<none>', $m[$i] // '<none>');
		next if $a eq $b;
		diag("line $i:\n heap:   " . substr($a, 0, 300) . "\n minidb: " . substr($b, 0, 300));
		last;
	}
}

# Streaming of an in-progress transaction (test_decoding's stream-changes):
# the same number of streamed changes for both AMs
$node->safe_psql('postgres',
	"SELECT pg_create_logical_replication_slot('st', 'test_decoding')");
my %streamed;
foreach my $am ('heap', 'minidb')
{
	$node->safe_psql('postgres',
		"INSERT INTO t_$am SELECT 5000 + i, i, repeat('t', 200), NULL FROM generate_series(1, 1500) i");
	my $out = changes('st', 'stream-changes', '1');
	$streamed{$am} = () = $out =~ /streaming change for transaction/g;
}
ok($streamed{minidb} > 0 && $streamed{minidb} == $streamed{heap},
	"a large transaction is streamed as heap's is ($streamed{minidb} changes, heap $streamed{heap})");

# The decoded rows are the table's rows: replay the INSERT/UPDATE/DELETE
# lines of a fresh slot over a run of random changes and compare.
$node->safe_psql('postgres', q{
CREATE TABLE r (id int PRIMARY KEY, k int, v text) USING minidb;
CREATE INDEX ON r (k);
SELECT pg_create_logical_replication_slot('r', 'test_decoding');
INSERT INTO r SELECT i, i, 'r' || i FROM generate_series(1, 300) i;
});
$node->safe_psql('postgres', q{
SELECT setseed(0.14);
DO $$
DECLARE x int;
BEGIN
  FOR i IN 1..600 LOOP
    x := 1 + floor(random() * 400)::int;
    CASE floor(random() * 4)::int
      WHEN 0 THEN UPDATE r SET v = 'u' || i WHERE id = x;
      WHEN 1 THEN UPDATE r SET k = k + 1000 WHERE id = x;
      WHEN 2 THEN DELETE FROM r WHERE id = x;
      ELSE INSERT INTO r VALUES (x, x, 'i' || i) ON CONFLICT (id) DO UPDATE SET v = 'c' || i;
    END CASE;
  END LOOP;
END $$;
});
my %rows;
foreach my $line (split /\n/, changes('r'))
{
	next unless $line =~ /^table public\.r: (INSERT|UPDATE|DELETE): (.*)$/;
	my ($op, $rest) = ($1, $2);
	if ($op eq 'DELETE')
	{
		$rest =~ /id\[integer\]:(\d+)/ or die "no key in $line";
		delete $rows{$1};
		next;
	}
	$rest =~ s/^old-key: id\[integer\]:(\d+) new-tuple: // and delete $rows{$1};
	$rest =~ /^id\[integer\]:(\d+) k\[integer\]:(-?\d+) v\[text\]:'([^']*)'$/
	  or die "unexpected $line";
	$rows{$1} = "$1|$2|$3";
}
my $decoded = join("\n", map { $rows{$_} } sort { $a <=> $b } keys %rows);
is($decoded, $node->safe_psql('postgres', 'SELECT id, k, v FROM r ORDER BY id'),
	'the decoded changes, applied in order, give the table');

# The standby replayed all of it (LOGICAL records included) and agrees
$node->wait_for_catchup($standby, 'replay', $node->lsn('insert'));
is($standby->safe_psql('postgres', 'SELECT count(*), sum(id), sum(k) FROM t_minidb'),
	$node->safe_psql('postgres', 'SELECT count(*), sum(id), sum(k) FROM t_minidb'),
	'the standby (wal_consistency_checking = all) has the same rows');
unlike(slurp_file($standby->logfile), qr/inconsistent page found|PANIC/,
	'no inconsistent page on the standby');

unlink("/tmp/minidb_014_$_.copy") foreach ('heap', 'minidb');
$standby->stop;
$node->stop;
done_testing();
