# Concurrent writers and row lockers on a few hot rows, heap beside: no
# committed change is lost, no row is duplicated and nothing deadlocks
# (heap's run of the same load never does).  pgbench mixes four
# transactions over 4 parents, each writing a ledger that the end state
# is checked against:
#   fk      UPDATE one parent's counter, INSERT a child of another (its FK
#           check locks that parent FOR KEY SHARE): bench/fk.sh's load
#   locked  SELECT ... FOR NO KEY UPDATE, then UPDATE the counter
#   share   SELECT ... FOR SHARE (several lockers: multixacts)
#   key     UPDATE of an indexed column (minidb moves the row)
#   savepoint  FOR UPDATE, an UPDATE rolled back to a savepoint, another
#           UPDATE
#   upsert  INSERT ... ON CONFLICT DO UPDATE of an existing parent
#   vacuum  VACUUM of the parents (pruning beside the writers)
# Two bugs this found: a lock held alone that a FOR KEY SHARE then joined
# in a multixact read as no lock at all once the joiner committed
# (specs/conc_multixact_member.spec): writers went past it, increments were
# lost and two UPDATEs deadlocked on the tuple lock; and a lock added to a
# moved row whose multixact held the committed mover dropped the row's end
# (specs/conc_lock_keeps_end.spec): the old version came back beside the
# new one, two rows with one primary key.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $seconds = $ENV{MINIDB_STRESS_SECONDS} // 10;

my $node = PostgreSQL::Test::Cluster->new('integrity');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
autovacuum = off
max_connections = 40
});
$node->start;
$node->safe_psql('postgres', 'CREATE EXTENSION minidb_am');

my %files = (
	'fk@3' => q{
\set p1 random(1, 4)
\set p2 random(1, 4)
BEGIN;
UPDATE parent_AM SET hits = hits + 1 WHERE id = :p1;
INSERT INTO child_AM (pid) VALUES (:p2);
COMMIT;
},
	'locked@2' => q{
\set p random(1, 4)
BEGIN;
SELECT hits FROM parent_AM WHERE id = :p FOR NO KEY UPDATE;
UPDATE parent_AM SET hits = hits + 1 WHERE id = :p;
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
UPDATE parent_AM SET hits = hits + 1 WHERE id = :p;
INSERT INTO ledger_AM VALUES ('locked');
COMMIT;
},
	'upsert@1' => q{
\set p random(1, 4)
BEGIN;
INSERT INTO parent_AM (id) VALUES (:p)
  ON CONFLICT (id) DO UPDATE SET hits = parent_AM.hits + 1;
INSERT INTO ledger_AM VALUES ('locked');
COMMIT;
},
	'vacuum@1' => q{
VACUUM parent_AM;
},
	'key@1' => q{
\set p random(1, 4)
BEGIN;
UPDATE parent_AM SET tag = tag + 1 WHERE id = :p;
INSERT INTO ledger_AM VALUES ('key');
COMMIT;
});

foreach my $am ('heap', 'minidb')
{
	$node->safe_psql('postgres', qq{
CREATE TABLE parent_$am (id int PRIMARY KEY, hits bigint NOT NULL DEFAULT 0,
                         tag int NOT NULL DEFAULT 0) USING $am;
CREATE INDEX ON parent_$am (tag);
INSERT INTO parent_$am (id) SELECT generate_series(1, 4);
CREATE TABLE child_$am (id bigserial PRIMARY KEY,
                        pid int NOT NULL REFERENCES parent_$am) USING $am;
CREATE TABLE ledger_$am (what text) USING $am;
});
	my %mine = map { my $f = $_; (my $s = $files{$f}) =~ s/_AM/_$am/g; ("${am}_$f" => $s) }
	  keys %files;
	my $deadlocks_before = $node->safe_psql('postgres',
		"SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'");
	$node->pgbench("-n -c 8 -j 8 -T $seconds", 0,
		[qr{processed: [1-9]}], [qr{^$}], "$am: pgbench ran", \%mine);
	$node->safe_psql('postgres', 'SELECT pg_stat_force_next_flush()');
	sleep 1;
	my $deadlocks = $node->safe_psql('postgres',
		"SELECT deadlocks FROM pg_stat_database WHERE datname = 'postgres'")
	  - $deadlocks_before;
	is($deadlocks, 0, "$am: no deadlocks");
	is( $node->safe_psql('postgres', qq{
SELECT (SELECT sum(hits) FROM parent_$am)
     - (SELECT count(*) FROM child_$am)
     - (SELECT count(*) FROM ledger_$am WHERE what = 'locked')}),
		0, "$am: every committed increment counts once");
	is( $node->safe_psql('postgres', qq{
SELECT (SELECT sum(tag) FROM parent_$am)
     - (SELECT count(*) FROM ledger_$am WHERE what = 'key')}),
		0, "$am: every committed key update counts once");
	is( $node->safe_psql('postgres',
			"SELECT count(*) || ' ' || count(DISTINCT id) FROM parent_$am"),
		'4 4', "$am: each parent once");
	is( $node->safe_psql('postgres', qq{
SET enable_seqscan = off;
SELECT count(*) FROM parent_$am WHERE id BETWEEN 1 AND 4}),
		'4', "$am: each parent once through the index");
}
foreach my $rel ('parent_minidb', 'child_minidb')
{
	is( $node->safe_psql('postgres',
			"SELECT count(*) FROM minidb_verify('$rel', check_indexes => true)"),
		'0', "minidb_verify finds nothing wrong in $rel");
}

$node->stop;
unlike(slurp_file($node->logfile), qr/TRAP:|terminated by signal|PANIC/,
	'no crash in the server log');
done_testing();
