# Backends racing for a relation's new page, heap beside: no committed row
# is lost and no insert hangs.
#
# The bug (found by t/017, which lost one committed child row in about a
# hundred runs): the backend that grew the relation locked the new page
# only after the page could be seen.  A backend without a target block
# (its first insert into the table, or after a relcache invalidation)
# tries the relation's last page; when it locked the new page first, it
# initialized it and added its record, and the grower then initialized
# the page again over it.  The row was gone from the table while its
# index entries stayed, naming the line pointer the grower's row took.
# The same race could also hang both backends: the one that took the page
# held its buffer lock while it waited for the relation extension lock,
# which the grower held while it waited for that buffer lock.  The grower
# now takes the page locked (RBM_ZERO_AND_LOCK), as heap's hio.c does.
#
# Each round has 8 new backends insert 4 rows each at once into a table
# still empty (rows of 3000 bytes stored plain: two to a page, so that
# the relation grows on every other insert); every row must then be found
# by a sequential scan.  Before the fix this lost rows in about 3 rounds of
# 40 on a 2-core machine, so 100 rounds miss it with a probability well
# below one in a thousand.
use strict;
use warnings;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $rounds = $ENV{MINIDB_EXTEND_ROUNDS} // 100;

my $node = PostgreSQL::Test::Cluster->new('extend');
$node->init;
$node->append_conf('postgresql.conf', qq{
shared_preload_libraries = 'minidb_am'
autovacuum = off
max_connections = 20
log_statement = none
});
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE FUNCTION rows_in(t text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
  EXECUTE format('SELECT count(*) FROM %I', t) INTO n;
  RETURN n;
END $$;
});

my $script = "$PostgreSQL::Test::Utils::tmp_check/extend_insert.sql";
open(my $fh, '>', $script) or die "could not write $script: $!";
print $fh "INSERT INTO :t DEFAULT VALUES;\n";
close($fh);

# heap, the oracle, needs fewer rounds: it shows the count is right
foreach my $run (['heap', 20], ['minidb', $rounds])
{
	my ($am, $n) = @$run;
	my $failed = 0;

	# every round's table made beforehand, each empty until its round
	$node->safe_psql('postgres', qq{
SELECT format('CREATE TABLE grow_${am}_%s (id bigserial PRIMARY KEY,
                 pad text DEFAULT repeat(''x'', 3000)) USING $am;
               ALTER TABLE grow_${am}_%s ALTER pad SET STORAGE PLAIN', i, i)
FROM generate_series(1, $n) i \\gexec});
	foreach my $round (1 .. $n)
	{
		my ($out, $err) = ('', '');
		my $ok = eval {
			IPC::Run::run(
				[
					'pgbench', '-n', '-c', '8', '-j', '8', '-t', '4',
					'-D', "t=grow_${am}_$round", '-f', $script,
					'-h', $node->host, '-p', $node->port, 'postgres'
				],
				'>', \$out, '2>', \$err,
				IPC::Run::timeout(60));
		};
		next if defined $ok && $ok;
		# a hang (the backends wait on buffer locks, which no signal
		# interrupts: stop the server to release them) or an error
		$failed++;
		diag("$am, round $round: pgbench failed: " . ($@ || $err));
		$node->stop('immediate');
		$node->start;
	}
	is($failed, 0, "$am: every round's inserts finish without error");
	is( $node->safe_psql('postgres', qq{
SET enable_indexscan = off;
SET enable_indexonlyscan = off;
SET enable_bitmapscan = off;
SELECT coalesce(string_agg(format('round %s: %s of 32 rows', i, c), '; '), '')
FROM (SELECT i, rows_in(format('grow_${am}_%s', i)) AS c
      FROM generate_series(1, $n) i) r
WHERE c <> 32}),
		'', "$am: every committed row of every round is found");
}

$node->stop;
unlike(slurp_file($node->logfile), qr/TRAP:|terminated by signal|PANIC/,
	'no crash in the server log');
done_testing();
