# Autovacuum's log line for a minidb table is heap's (vacuumlazy.c's
# heap_vacuum_rel): "automatic vacuum of table "db.schema.table": index
# scans: N" and then heap's lines in heap's order -- pages, tuples,
# removable cutoff, new relfrozenxid, index scan, one line per index, I/O
# timings, read and write rates, buffer usage, WAL usage, system usage --
# so that log analyzers (pgBadger) and greps see minidb autovacuums; minidb
# adds lines of its own at the end, each starting with "minidb".
#
# With log_autovacuum_min_duration = 0 a heap table and a minidb table of
# the same shape get the same deletes; each autovacuum's message must
# match heap's format line by line, and the minidb message, numbers masked
# and its own lines left out, must be the heap message.  Runs with and
# without the library preloaded (the report does not depend on it, the
# WAL behind its numbers does).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(usleep);

# The message of the first autovacuum of table $t in the log: the LOG line
# and its continuation lines (stderr logging starts each with a tab)
sub autovacuum_message
{
	my ($node, $t) = @_;
	foreach (1 .. 600)
	{
		my @lines = split /\n/, slurp_file($node->logfile);
		for (my $i = 0; $i < @lines; $i++)
		{
			next
			  unless $lines[$i] =~
			  /LOG:  (automatic vacuum of table "postgres\.public\.\Q$t\E": .*)$/;
			my @msg = ($1);
			push @msg, substr($lines[$i], 1)
			  while ++$i < @lines && $lines[$i] =~ /^\t/;
			return @msg;
		}
		usleep(100_000);
	}
	return ();
}

foreach my $preload (0, 1)
{
	my $mode = $preload ? 'preloaded' : 'not preloaded';
	my $node = PostgreSQL::Test::Cluster->new("av$preload");
	$node->init;
	$node->append_conf('postgresql.conf', qq{
autovacuum_naptime = 1s
log_autovacuum_min_duration = 0
track_io_timing = on
});
	$node->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'")
	  if $preload;
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION minidb_am');
	foreach my $am ('heap', 'minidb')
	{
		$node->safe_psql('postgres', qq{
CREATE TABLE t_$am (a int PRIMARY KEY, b int, c text) USING $am
  WITH (autovacuum_enabled = off);
CREATE INDEX t_${am}_b ON t_$am (b);
INSERT INTO t_$am SELECT i, i, 'row ' || i FROM generate_series(1, 5000) i;
DELETE FROM t_$am WHERE a % 4 = 0;
UPDATE t_$am SET c = 'updated' WHERE a % 7 = 0;
ALTER TABLE t_$am SET (autovacuum_enabled = on,
  autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 100,
  autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 100);
});
	}

	my %msg;
	foreach my $am ('heap', 'minidb')
	{
		my @m = autovacuum_message($node, "t_$am");
		ok(@m > 0, "$mode: autovacuum of the $am table logged \"automatic vacuum of table\"")
		  or next;
		$msg{$am} = \@m;
	}
	next unless $msg{heap} && $msg{minidb};

	# heap's format, line by line (vacuumlazy.c): 15's, with what 16 (the
	# "frozen:" line) and 18 (pages eagerly scanned, the "visibility map:"
	# line, "reads", WAL buffers full) added
	my $vnum = $node->safe_psql('postgres', 'SHOW server_version_num');
	my $eager = $vnum >= 180000 ? ', \d+ eagerly scanned' : '';
	my $reads = $vnum >= 180000 ? 'reads' : 'misses';
	my $walfull = $vnum >= 180000 ? ', \d+ buffers full' : '';
	my @frozen = $vnum >= 160000
	  ? (qr/^frozen: \d+ pages from table \(\d+\.\d\d% of total\) had \d+ tuples frozen$/)
	  : ();
	push @frozen, qr/^visibility map: \d+ pages set all-visible, \d+ pages set all-frozen \(\d+ were all-visible\)$/
	  if $vnum >= 180000;
	my @format = (
		qr/^automatic (aggressive )?vacuum of table "postgres\.public\.t_minidb": index scans: \d+$/,
		qr/^pages: \d+ removed, \d+ remain, \d+ scanned \(\d+\.\d\d% of total\)$eager$/,
		qr/^tuples: \d+ removed, \d+ remain, \d+ are dead but not yet removable$/,
		qr/^removable cutoff: \d+, which was -?\d+ XIDs old when operation ended$/,
		[ qr/^new relfrozenxid: \d+, which is -?\d+ XIDs ahead of previous value$/ ],
		[ qr/^new relminmxid: \d+, which is -?\d+ MXIDs ahead of previous value$/ ],
		@frozen,
		qr/^index scan (not needed|needed|bypassed): \d+ pages from table \(\d+\.\d\d% of total\) (had \d+ dead item identifiers removed|have \d+ dead item identifiers)$/,
		qr/^index "t_minidb_pkey": pages: \d+ in total, \d+ newly deleted, \d+ currently deleted, \d+ reusable$/,
		qr/^index "t_minidb_b": pages: \d+ in total, \d+ newly deleted, \d+ currently deleted, \d+ reusable$/,
		qr/^I\/O timings: read: \d+\.\d{3} ms, write: \d+\.\d{3} ms$/,
		qr/^avg read rate: \d+\.\d{3} MB\/s, avg write rate: \d+\.\d{3} MB\/s$/,
		qr/^buffer usage: \d+ hits, \d+ $reads, \d+ dirtied$/,
		qr/^WAL usage: \d+ records, \d+ full page images, \d+ bytes$walfull$/,
		qr/^system usage: CPU: user: \d+\.\d\d s, system: \d+\.\d\d s, elapsed: \d+\.\d\d s$/,
	);
	# (a line in [ ] may be missing, as heap leaves it out when it has
	# nothing to say)
	my @m = @{ $msg{minidb} };
	my @mismatch;
	my $i = 0;
	foreach my $f (@format)
	{
		my ($re, $optional) = ref($f) eq 'ARRAY' ? ($f->[0], 1) : ($f, 0);
		if (defined $m[$i] && $m[$i] =~ $re)
		{
			$i++;
		}
		elsif (!$optional)
		{
			push @mismatch, "line $i: " . ($m[$i] // '<missing>') . " is not $re";
			$i++;
		}
	}
	ok(!@mismatch, "$mode: the minidb message has heap's lines in heap's order")
	  or diag(join("\n", @mismatch, '', @m));
	ok(@m > $i && !grep({ !/^minidb / } @m[ $i .. $#m ]),
		"$mode: minidb's own lines follow, each starting with \"minidb\"")
	  or diag(join("\n", @m));
	like(join("\n", @m), qr/^minidb records: \d+ live, \d+ dead found, \d+ removed; versions: \d+ pruned, \d+ frozen; row lockers cleared: \d+$/m,
		"$mode: minidb's counts of records and versions are there");

	# numbers masked and minidb's lines left out, the two messages are one
	my $mask = sub {
		my ($am, @l) = @_;
		return join("\n", map { s/t_$am/t_AM/gr =~ s/\d+(\.\d+)?/N/gr } grep { !/^minidb / } @l);
	};
	is($mask->('minidb', @m), $mask->('heap', @{ $msg{heap} }),
		"$mode: masked, the minidb message is heap's");

	my $log = slurp_file($node->logfile);
	my $count = () = $log =~ /automatic vacuum of table "postgres\.public\.t_(heap|minidb)"/g;
	ok($count >= 2, "$mode: a grep for heap's wording finds both tables' autovacuums");
	unlike($log, qr/finished vacuuming minidb table/, "$mode: the old minidb wording is gone");
	$node->stop;
}

done_testing();
