# Concurrent writers and row lockers on a few hot rows, heap beside: no
# committed change is lost, no row is duplicated and minidb's run never
# deadlocks (heap's deadlocks, if any, are noted, not failed: heap is the
# oracle here, not the subject), under READ COMMITTED, REPEATABLE READ and
# SERIALIZABLE (pgbench retries serialization failures there).  pgbench
# mixes these transactions over 4 parents, each writing a ledger that the
# end state is checked against:
#   fk      UPDATE one parent's counter, INSERT a child of another (its FK
#           check locks that parent FOR KEY SHARE): bench/fk.sh's load
#   locked  SELECT ... FOR NO KEY UPDATE, then UPDATE the counter
#   share   SELECT ... FOR SHARE (several lockers: multixacts)
#   key     UPDATE of an indexed column (minidb moves the row)
#   savepoint  FOR UPDATE, an UPDATE rolled back to a savepoint, another
#           UPDATE
#   upsert  INSERT ... ON CONFLICT DO UPDATE of an existing parent
#   vacuum  VACUUM (TRUNCATE false) of the parents (pruning beside the
#           writers; heap's truncation waits up to 5 s for its lock)
# Bugs this found: a lock held alone that a FOR KEY SHARE then joined
# in a multixact read as no lock at all once the joiner committed
# (specs/conc_multixact_member.spec): writers went past it, increments were
# lost and two UPDATEs deadlocked on the tuple lock; and a lock added to a
# moved row whose multixact held the committed mover dropped the row's end
# (specs/conc_lock_keeps_end.spec): the old version came back beside the
# new one, two rows with one primary key.  A third, once in about a
# hundred runs: two backends raced for the child table's first page, and
# the one that had grown the table initialized the page over the row the
# other had just added there (t/018_extend_race.pl); the sum of the
# transaction IDs below named the transaction whose child row was gone.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;

my $seconds = $ENV{MINIDB_STRESS_SECONDS} // 8;

# The deadlocks in the server log after byte $offset, each as its
# statement and detail
sub deadlocks_since
{
	my ($node, $offset) = @_;
	my $log = substr(slurp_file($node->logfile), $offset);
	my @found;
	while ($log =~ /ERROR:  deadlock detected\n(.*?)STATEMENT:  ([^\n]*)/sg)
	{
		push @found, "$2 ($1)";
	}
	return @found;
}

# Each increment adds its transaction's ID, which the child or ledger row
# written beside it records, so that a sum that does not match names the
# transaction (or the sum of the transactions) whose increment is
# unaccounted for: a rolled-back increment kept, an increment counted
# twice (positive) or a committed one lost (negative).  Say what is known
# of it: its child and ledger rows, its lines in the server log (the
# prefix carries the xid) and, for minidb, the parents' versions.
sub explain_increment
{
	my ($node, $t, $extra, $offset) = @_;
	my $xid = abs($extra);
	diag("$t: increments minus recorded transactions = $extra");
	diag($node->safe_psql('postgres', qq{
SELECT 'child rows of xid $xid: ' || (SELECT count(*) FROM child_$t WHERE x = $xid)
    || ', ledger rows: ' || (SELECT count(*) FROM ledger_$t WHERE x = $xid)}));
	diag("parents: " . $node->safe_psql('postgres',
		"SELECT string_agg(ctid || ' id ' || id || ' hits ' || hits, '; ') FROM parent_$t"));
	if ($t =~ /^minidb/)
	{
		diag($node->safe_psql('postgres', qq{
SELECT p.id || ' ' || p.ctid || ': ' || string_agg(c.position || ' ' || c.xmin || ' '
       || c.flags, ', ' ORDER BY c.position)
FROM parent_$t p, minidb_chain('parent_$t', p.ctid) c GROUP BY p.id, p.ctid}));
	}
	my $log = substr(slurp_file($node->logfile), $offset);
	diag("log: $_") foreach grep { / $xid (?:\[|LOG|ERROR|STATEMENT|DETAIL)/ } split /\n/, $log;
}

# pgbench for heap's run.  Heap is the oracle here, not the subject, and
# PostgreSQL 18.6's heap once aborted a client of the SERIALIZABLE run in
# CI (commit 8b3ca72) with its own error "new multixact has more than one
# updating member", which PostgreSQL raises when a caller asks for a
# multixact with two updaters (minidb's runs of the same test passed).
# That error alone
# is noted and the run counts: the end-state checks below still hold for
# whatever heap committed, since the aborted transaction rolled back.
# Any other error, or no transaction processed, fails as for minidb.
sub heap_pgbench
{
	my ($node, $opts, $name, $files) = @_;
	my @cmd = ('pgbench', split(/\s+/, $opts),
		$node->_pgbench_make_files($files));
	my ($out, $err);
	{
		local %ENV = $node->_get_env();
		IPC::Run::run(\@cmd, '>', \$out, '2>', \$err);
	}
	my $heaps_own = qr/new multixact has more than one updating member/;
	my @other = grep { /\S/ && !/$heaps_own/ && !/Run was aborted/ }
	  split /\n/, $err;
	like($out, qr{processed: [1-9]}, "$name: transactions processed");
	if ($err =~ $heaps_own && !@other)
	{
		diag("$name: heap's own error, tolerated: $_")
		  foreach grep { /$heaps_own/ } split /\n/, $err;
		pass("$name: no error but heap's own multixact error");
	}
	else
	{
		is($err, '', "$name: no error");
	}
	return;
}

my $node = PostgreSQL::Test::Cluster->new('integrity');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
autovacuum = off
max_connections = 40
log_line_prefix = '%m [%p] %x '
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minidb_am');

my %files = (
	'fk@3' => q{
\set p1 random(1, 4)
\set p2 random(1, 4)
BEGIN;
UPDATE parent_AM SET hits = hits + txid_current() WHERE id = :p1;
INSERT INTO child_AM (pid) VALUES (:p2);
COMMIT;
},
	'locked@2' => q{
\set p random(1, 4)
BEGIN;
SELECT hits FROM parent_AM WHERE id = :p FOR NO KEY UPDATE;
UPDATE parent_AM SET hits = hits + txid_current() WHERE id = :p;
INSERT INTO ledger_AM VALUES ('locked');
COMMIT;
},
	'share@1' => q{
\set p random(1, 4)
BEGIN;
SELECT hits FROM parent_AM WHERE id = :p FOR SHARE;
SELECT count(*) FROM child_AM WHERE pid = :p AND id < 0;
COMMIT;
},
	'savepoint@1' => q{
\set p random(1, 4)
BEGIN;
SELECT hits FROM parent_AM WHERE id = :p FOR UPDATE;
SAVEPOINT s;
UPDATE parent_AM SET hits = hits + 100 WHERE id = :p;
ROLLBACK TO s;
UPDATE parent_AM SET hits = hits + txid_current() WHERE id = :p;
INSERT INTO ledger_AM VALUES ('locked');
COMMIT;
},
	'upsert@1' => q{
\set p random(1, 4)
BEGIN;
INSERT INTO parent_AM (id) VALUES (:p)
  ON CONFLICT (id) DO UPDATE SET hits = parent_AM.hits + txid_current();
INSERT INTO ledger_AM VALUES ('locked');
COMMIT;
},
	'vacuum@1' => q{
VACUUM (TRUNCATE false) parent_AM;
},
	'key@1' => q{
\set p random(1, 4)
BEGIN;
UPDATE parent_AM SET tag = tag + 1 WHERE id = :p;
INSERT INTO ledger_AM VALUES ('key');
COMMIT;
});

# SERIALIZABLE only: write skew.  A doctor goes off call only while at
# least two are on; SSI must keep at least one on call at every moment
# (heap's oracle), which the watcher checks as it goes.
my %serializable_files = (
	'offcall@2' => q{
\set d random(1, 5)
BEGIN;
SELECT count(*) AS n FROM doctors_AM WHERE on_call \gset
\if :n >= 2
UPDATE doctors_AM SET on_call = false WHERE id = :d;
\endif
COMMIT;
},
	'oncall@1' => q{
\set d random(1, 5)
UPDATE doctors_AM SET on_call = true WHERE id = :d;
},
	'watch@1' => q{
SELECT count(*) AS m FROM doctors_AM WHERE on_call \gset
\if :m = 0
INSERT INTO ledger_AM VALUES ('nobody on call');
\endif
});

my @levels = ('read committed', 'repeatable read', 'serializable');
foreach my $l (0 .. $#levels)
{
	my $level = $levels[$l];

	foreach my $am ('heap', 'minidb')
	{
		my $t = "${am}_$l";
		$node->safe_psql('postgres', qq{
CREATE TABLE parent_$t (id int PRIMARY KEY, hits bigint NOT NULL DEFAULT 0,
                        tag int NOT NULL DEFAULT 0) USING $am;
CREATE INDEX ON parent_$t (tag);
INSERT INTO parent_$t (id) SELECT generate_series(1, 4);
CREATE TABLE child_$t (id bigserial PRIMARY KEY,
                       pid int NOT NULL REFERENCES parent_$t,
                       x bigint NOT NULL DEFAULT txid_current()) USING $am;
CREATE TABLE ledger_$t (what text,
                        x bigint NOT NULL DEFAULT txid_current()) USING $am;
CREATE TABLE doctors_$t (id int PRIMARY KEY, on_call bool NOT NULL) USING $am;
INSERT INTO doctors_$t SELECT i, true FROM generate_series(1, 5) i;
});
		my %all = %files;
		%all = (%all, %serializable_files) if $level eq 'serializable';
		my %mine =
		  map { my $f = $_; (my $s = $all{$f}) =~ s/_AM/_$t/g; ("${t}_$f" => $s) }
		  keys %all;
		my $log_offset = -s $node->logfile;

		# serialization failures (not READ COMMITTED) are retried
		(my $opt = $level) =~ s/ /\\ /g;
		local $ENV{PGOPTIONS} = "-c default_transaction_isolation=$opt";
		my $retries = $l > 0 ? '--max-tries=1000' : '';
		if ($am eq 'heap')
		{
			heap_pgbench($node, "-n -c 8 -j 8 -T $seconds $retries",
				"$am, $level: pgbench ran", \%mine);
		}
		else
		{
			$node->pgbench("-n -c 8 -j 8 -T $seconds $retries", 0,
				[qr{processed: [1-9]}], [qr{^$}], "$am, $level: pgbench ran",
				\%mine);
		}

		# A backend writes its deadlock error to the log before its client
		# hears of it, so the log holds this run's once pgbench is done, and
		# no other run's.  (pg_stat_database's counter is flushed when a
		# backend exits, which can be after the next run has begun.)
		my @deadlocks = deadlocks_since($node, $log_offset);
		if ($am eq 'heap')
		{
			# heap is the oracle, not the subject: its own locking does
			# deadlock now and then under this load (seen under REPEATABLE
			# READ: SELECT ... FOR UPDATE of a parent against an FK check's
			# FOR KEY SHARE of it, each waiting for the other's transaction)
			note("heap, $level: deadlock: $_") foreach @deadlocks;
		}
		else
		{
			is(scalar(@deadlocks), 0, "$am, $level: no deadlocks");
			diag("deadlock: $_") foreach @deadlocks;
		}
		my $extra = $node->safe_psql('postgres', qq{
SELECT (SELECT sum(hits) FROM parent_$t)
     - (SELECT coalesce(sum(x), 0) FROM child_$t)
     - (SELECT coalesce(sum(x), 0) FROM ledger_$t WHERE what = 'locked')});
		is($extra, 0, "$am, $level: every committed increment counts once");
		explain_increment($node, $t, $extra, $log_offset) if $extra ne '0';
		is( $node->safe_psql('postgres', qq{
SELECT (SELECT sum(tag) FROM parent_$t)
     - (SELECT count(*) FROM ledger_$t WHERE what = 'key')}),
			0, "$am, $level: every committed key update counts once");
		is( $node->safe_psql('postgres',
				"SELECT count(*) || ' ' || count(DISTINCT id) FROM parent_$t"),
			'4 4', "$am, $level: each parent once");
		is( $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SELECT count(*) FROM parent_$t WHERE id BETWEEN 1 AND 4}),
			'4', "$am, $level: each parent once through the index");
		next unless $level eq 'serializable';
		is( $node->safe_psql('postgres', qq{
SELECT (SELECT count(*) FROM ledger_$t WHERE what = 'nobody on call')
     + CASE WHEN (SELECT count(*) FROM doctors_$t WHERE on_call) = 0
            THEN 1 ELSE 0 END}),
			0, "$am, $level: somebody always on call (no write skew)");
	}
	foreach my $rel ("parent_minidb_$l", "child_minidb_$l")
	{
		is( $node->safe_psql('postgres',
				"SELECT count(*) FROM minidb_verify('$rel', check_indexes => true)"),
			'0', "$level: minidb_verify finds nothing wrong in $rel");
	}
}
$node->stop;
unlike(slurp_file($node->logfile), qr/TRAP:|terminated by signal|PANIC/,
	'no crash in the server log');
done_testing();
