# Damaged pages: single-byte flips, a zeroed page, a truncated file
# (issue 11, "a corruption test").
#
# A minidb table with every kind of record (frozen and not, formats V3,
# V1 and V2 (minidb.record_format), chains several versions deep kept by a prepared transaction that holds
# the horizon, rolled-back versions, moved rows, tombstones, single and
# multixact row lockers, NULLs, TOAST values) is written, checkpointed, and
# the cluster stopped and copied ("pristine").  Then, round after round,
# with the server stopped: the pristine data directory comes back, one byte
# of every page is XORed with a random nonzero value (a seeded PRNG picks
# page, byte and value among the line pointers, record headers (V3: info,
# xinfo, xmax, successor), V2 directories, V3 trailers and version
# headers), the server starts, and
#
#	reads	every page by a TID range scan, every row of it by an index
#			scan (primary key), each in a subtransaction;
#	verify	minidb_verify(c, check_toast, check_indexes);
#	writes	per page, DELETE of some rows and UPDATE of the others; VACUUM;
#	reads	again, by index, against what the same writes give on the
#			pristine table; no id twice in the table.
#
# One flip per page and round: an error names the block whose flip caused
# it.  Every flip must be harmless (the same rows come back) or raise an
# ERROR with SQLSTATE XX001 or XX002 naming relation, block and offset;
# minidb_verify must list every record a read refused.  The one exception
# is a flip of a version's hint bits alone (committed/aborted/frozen; see
# $hint_only below for the flips that change more but whose effect can
# only be the hint's), which nothing can tell from a real hint without
# page checksums (heap's are the same): it may change what reads return,
# and minidb_verify must then report it (it checks hints against the
# commit log).  No round may
# crash the server (no "terminated by signal", PANIC or TRAP in the log).
#
# Then a page is zeroed, and, separately, the file is truncated at a page
# boundary: reads do not crash, errors are XX001, and minidb_verify with
# check_indexes lists the index entries that point into the zeroed page or
# past the end.
#
# The test prints its counts: flips, harmless, detected by reads, detected
# by writes, silent hint-bit flips, found by minidb_verify.
#
# Knobs: MINIDB_CORRUPTION_SEED (default 20261201), MINIDB_CORRUPTION_FLIPS
# (at least this many flips, default 1000), MINIDB_CORRUPTION_VERBOSE=1
# (a line per flip: what it hit, what raised, what minidb_verify listed).
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Copy;
use File::Find;
use File::Spec;
use File::Path qw(rmtree);
use Time::HiRes qw(time stat utime);

my $seed = $ENV{MINIDB_CORRUPTION_SEED} // 20261201;
my $want_flips = $ENV{MINIDB_CORRUPTION_FLIPS} // 1000;
srand($seed);
note "seed $seed";

my $node = PostgreSQL::Test::Cluster->new('corruption');
# small WAL segments: every round copies back the ones the server wrote
$node->init(extra => ['--wal-segsize=1'], no_data_checksums => 1);	# initdb's default from 18 on
$node->append_conf('postgresql.conf', qq{
autovacuum = off
max_prepared_transactions = 5
min_wal_size = 4MB
max_wal_size = 32MB
log_statement = none
statement_timeout = '60s'
jit = off
});
$node->start;

$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
-- fillfactor 60: room on every page for the writes' in-place updates,
-- so that they stay on their page and its damage is theirs
CREATE TABLE c (id int PRIMARY KEY, k int, v text, pad text) USING minidb
  WITH (autovacuum_enabled = off, fillfactor = 60);
CREATE INDEX c_k ON c (k);
ALTER TABLE c ALTER COLUMN pad SET STORAGE EXTERNAL;
-- frozen and all-visible
INSERT INTO c SELECT g, g % 97, 'v' || g,
       CASE WHEN g % 3 = 0 THEN NULL ELSE repeat('p', g % 40) END
  FROM generate_series(1, 4000) g;
VACUUM (FREEZE) c;
-- legacy records: format V1, then V2 (V3 is the default)
SET minidb.record_format = 'v1';
INSERT INTO c SELECT g, g % 97, 'v' || g,
       CASE WHEN g % 4 = 0 THEN NULL ELSE repeat('q', g % 30) END
  FROM generate_series(4001, 5500) g;
SET minidb.record_format = 'v2';
INSERT INTO c SELECT g, g % 97, 'v' || g,
       CASE WHEN g % 4 = 0 THEN NULL ELSE repeat('q', g % 30) END
  FROM generate_series(5501, 7000) g;
RESET minidb.record_format;
-- TOAST values (external, uncompressed)
INSERT INTO c SELECT g, g % 97, 'big' || g, repeat(md5(g::text), 80)
  FROM generate_series(7001, 7040) g;
INSERT INTO c SELECT g, g % 97, 'v' || g, NULL
  FROM generate_series(7041, 10000) g;
});
# the horizon stays here: every version written after it is kept
$node->safe_psql('postgres', q{
BEGIN; SELECT txid_current(); PREPARE TRANSACTION 'hold';
});
# (a write turns a legacy record into the format the setting names: the
# writes to the legacy rows keep theirs)
my $writes_sql = q{
UPDATE c SET v = v || '+' WHERE id % 4 = 0 AND RANGE;
UPDATE c SET v = v || '+' WHERE id % 8 = 0 AND RANGE;
BEGIN; UPDATE c SET v = v || 'x' WHERE id % 16 = 0 AND RANGE; ROLLBACK;
UPDATE c SET v = v || '*' WHERE id % 16 = 0 AND RANGE;
UPDATE c SET k = k + 1000 WHERE id % 10 = 1 AND RANGE;
UPDATE c SET pad = repeat(md5(id::text), 90) WHERE id BETWEEN 7001 AND 7010 AND RANGE;
DELETE FROM c WHERE id % 50 = 7 AND RANGE;
};
for my $f ([ 'v1', 'id BETWEEN 4001 AND 5500' ], [ 'v2', 'id BETWEEN 5501 AND 7000' ],
	[ 'v3', 'id NOT BETWEEN 4001 AND 7000' ])
{
	(my $sql = $writes_sql) =~ s/RANGE/$f->[1]/g;
	$node->safe_psql('postgres', "SET minidb.record_format = '$f->[0]'; $sql");
}
$node->safe_psql('postgres', q{
VACUUM c;
-- row lockers, after VACUUM (which forgets the ended ones): single xids
SELECT count(*) FROM (SELECT 1 FROM c WHERE id % 30 = 2 FOR SHARE) s;
});
# and multixacts: two lockers at once
$node->safe_psql('postgres', q{
BEGIN; SELECT count(*) FROM (SELECT 1 FROM c WHERE id % 30 = 3 FOR KEY SHARE) s;
PREPARE TRANSACTION 'lockers';
});
$node->safe_psql('postgres', q{
SELECT count(*) FROM (SELECT 1 FROM c WHERE id % 30 = 3 FOR SHARE) s;
COMMIT PREPARED 'lockers';
});

# A thousand committed transactions more: a flipped low byte of an xid
# then names one that ran long ago, as it would in any real cluster, not
# one that the round's own writes assign later (a damaged xmax becoming
# the ID of a transaction that a later write aborts would revive an ended
# row, which no check can see while the ID is still unassigned)
$node->safe_psql('postgres', q{
SET synchronous_commit = off;
DO $$ BEGIN FOR i IN 1..1000 LOOP PERFORM txid_current(); COMMIT; END LOOP; END $$;
});

# What the checks run: each returns 'ok <md5>' or 'error <sqlstate> <message> | <detail>'
$node->safe_psql('postgres', q{
CREATE TABLE expect AS SELECT (ctid::text::point)[0]::int AS page,
       (ctid::text::point)[1]::int AS off, id FROM c;
CREATE FUNCTION outcome(st text, msg text, det text) RETURNS text
LANGUAGE sql AS $$ SELECT 'error ' || st || ' ' || msg || ' | ' || coalesce(det, '') $$;
CREATE FUNCTION page_rows(p int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; st text; msg text; det text;
BEGIN
	SELECT md5(coalesce(string_agg(ctid::text || ':' || md5(c::text), ',' ORDER BY ctid), ''))
	  INTO r FROM c
	 WHERE ctid >= format('(%s,0)', p)::tid AND ctid < format('(%s,0)', p + 1)::tid;
	RETURN 'ok ' || r;
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
	RETURN outcome(st, msg, det);
END $$;
CREATE FUNCTION page_index_rows(p int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; st text; msg text; det text;
BEGIN
	SELECT md5(coalesce(string_agg(id::text || ':' || md5(c::text), ',' ORDER BY id), ''))
	  INTO r FROM c WHERE id = ANY (ARRAY(SELECT e.id FROM expect e WHERE e.page = p));
	RETURN 'ok ' || r;
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
	RETURN outcome(st, msg, det);
END $$;
CREATE FUNCTION page_write(p int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; det text;
BEGIN
	-- forget the target block of the last page's UPDATE (a relcache
	-- invalidation), which may be a damaged page
	ALTER TABLE c SET (autovacuum_enabled = off);
	-- the page's own rows: not those an earlier UPDATE moved here.  The
	-- DELETE comes first: a flip that leaves the page less room (pd_upper)
	-- makes the UPDATE move rows that stay on the pristine page, which a
	-- DELETE after it would then no longer find on page p
	DELETE FROM c
	 WHERE ctid >= format('(%s,0)', p)::tid AND ctid < format('(%s,0)', p + 1)::tid
	   AND id = ANY (ARRAY(SELECT e.id FROM expect e WHERE e.page = p))
	   AND id % 5 = 0;
	UPDATE c SET v = v || 'u'
	 WHERE ctid >= format('(%s,0)', p)::tid AND ctid < format('(%s,0)', p + 1)::tid
	   AND id = ANY (ARRAY(SELECT e.id FROM expect e WHERE e.page = p));
	RETURN 'ok';
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
	RETURN outcome(st, msg, det);
END $$;
CREATE FUNCTION page_ids(p int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE r text; st text; msg text; det text;
BEGIN
	SELECT 'ok ' || coalesce(string_agg(id::text, ',' ORDER BY id), '') INTO r FROM c
	 WHERE ctid >= format('(%s,0)', p)::tid AND ctid < format('(%s,0)', p + 1)::tid;
	RETURN r;
EXCEPTION WHEN others THEN
	GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, det = PG_EXCEPTION_DETAIL;
	RETURN outcome(st, msg, det);
END $$;
CHECKPOINT;
});

my $nblocks = $node->safe_psql('postgres',
	q{SELECT pg_relation_size('c') / 8192});
my $path = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('c')});
note "table c: $nblocks pages, "
  . $node->safe_psql('postgres', q{SELECT count(*) FROM c}) . " rows";
# the records of each format (the first byte of each record)
{
	my %fmt;
	for my $p (0 .. $nblocks - 1)
	{
		my $page = read_block($path, $p);
		for my $i (1 .. int((unpack('v', substr($page, 12, 2)) - 24) / 4))
		{
			my ($x, $f) = lp_of($page, $i);
			next unless $f == 1;
			my $b = ord(substr($page, $x, 1));
			$fmt{ $b == 1 || $b == 2 ? "V$b" : ($b & 7) == 3 ? 'V3' : 'other' }++;
		}
	}
	note 'records by format: ' . join(', ', map { "$_ $fmt{$_}" } sort keys %fmt);
	ok($fmt{V1} && $fmt{V2} && $fmt{V3}, 'the table holds records of formats V1, V2 and V3');
}
is($node->safe_psql('postgres', q{SELECT count(*) FROM minidb_verify('c', true, true)}),
	'0', 'minidb_verify finds nothing on the pristine table');

# The checks, as the psql calls of a round run them: page => outcome
sub per_page
{
	my ($func, $settings, $pages) = @_;
	my ($ret, $out, $err) = $node->psql('postgres',
		"$settings SELECT p, $func(p) FROM unnest('{"
		  . join(',', @$pages) . "}'::int[]) p",
		timeout => 600);
	my %r;
	for my $line (split /\n/, $out)
	{
		my ($p, $o) = split /\|/, $line, 2;
		$r{$p} = $o;
	}
	$r{$_} //= "error none psql: $err" for @$pages;
	return \%r;
}
my $settings_tid = 'SET enable_seqscan = off;';
my $settings_idx =
  'SET enable_seqscan = off; SET enable_bitmapscan = off; SET enable_tidscan = off;';
my @all_pages = (0 .. $nblocks - 1);

# What the commit log says of every transaction ID the pristine table may
# name (txid_status: committed, aborted, in progress; too old: none), and
# the next ID; 1 and 2 (bootstrap, frozen) read as committed
my %xid_status = (1 => 'committed', 2 => 'committed');
my $next_xid = $node->safe_psql('postgres',
	q{SELECT txid_snapshot_xmax(txid_current_snapshot())});
for (split /\n/, $node->safe_psql('postgres',
		qq{SELECT x, txid_status(x) FROM generate_series(3, $next_xid - 1) x
		    WHERE txid_status(x) IS NOT NULL}))
{
	my ($x, $st) = split /\|/;
	$xid_status{$x} = $st;
}
note "transaction IDs: next $next_xid; "
  . join(', ', map { my $s = $_; "$s " . scalar(grep { $_ eq $s } values %xid_status) }
	  ('committed', 'aborted', 'in progress'));

# Expected outcomes on the pristine table: reads, then after the writes
my $pristine_reads = per_page('page_rows', $settings_tid, \@all_pages);
my $pristine_index = per_page('page_index_rows', $settings_idx, \@all_pages);
$node->stop;
# Without a free space map, rows that UPDATE moves go to new pages at the
# end, not onto other damaged pages, whose errors would hide this page's
unlink("${path}_fsm") or die "unlink ${path}_fsm: $!";
my $pristine = PostgreSQL::Test::Utils::tempdir . '/pristine';
PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir, $pristine);
PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir, $ENV{MINIDB_CORRUPTION_KEEP})
  if $ENV{MINIDB_CORRUPTION_KEEP};    # for debugging: a copy to start by hand
$node->start;
my $pristine_writes = per_page('page_write', '', \@all_pages);
$node->safe_psql('postgres', 'VACUUM c');
my $pristine_after = per_page('page_index_rows', $settings_idx, \@all_pages);
$node->stop;
is(scalar(grep { !/^ok/ } values %$pristine_reads, values %$pristine_index,
			values %$pristine_writes, values %$pristine_after),
	0, 'every check passes on the pristine table');

# ---------------------------------------------------------------------
# The page layout: every byte worth flipping, with what it is
# ---------------------------------------------------------------------
# names of the bytes of a record header and of a version header
my @rh_name = (('rh_format') x 1, ('rh_flags') x 1, ('rh_nversions') x 2,
	('rh_len') x 4, (map { "rh_locker byte $_" } 0 .. 3), ('rh_lockmode') x 2, ('rh_successor') x 6);
my @vh_name = (('vh_xmin byte 0', 'vh_xmin byte 1', 'vh_xmin byte 2', 'vh_xmin byte 3'),
	('vh_cid byte 0', 'vh_cid byte 1', 'vh_cid byte 2', 'vh_cid byte 3'),
	('vh_flags byte 0', 'vh_flags byte 1'), ('vh_natts byte 0', 'vh_natts byte 1'),
	('vh_len byte 0', 'vh_len byte 1'), 'vh_hoff byte 0', 'vh_reserved byte 0');

# Every byte worth flipping on a page, as regions [start, length, name,
# names of the region's bytes or undef, weight (default: the length)];
# pick_target draws one byte
sub page_targets
{
	my ($page) = @_;
	my @t;
	my ($lower) = unpack('v', substr($page, 12, 2));
	my $nlp = int(($lower - 24) / 4);
	# pd_upper: raised past a record, lowered into a hole that leaves the
	# page less room than its records keep for their ends, or out of
	# frame; drawn as often as 64 bytes of records would be
	push @t, [ 14, 2, 'page header', [ 'pd_upper byte 0', 'pd_upper byte 1' ], 64 ];
	for my $i (1 .. $nlp)
	{
		my $lpo = 24 + ($i - 1) * 4;
		my $lp = unpack('V', substr($page, $lpo, 4));
		push @t, [ $lpo, 4, "line pointer $i", [ map { "byte $_" } 0 .. 3 ] ];
		my ($off, $flags, $len) = ($lp & 0x7fff, ($lp >> 15) & 3, $lp >> 17);
		next unless $flags == 1 && $len >= 16 && $off + $len <= 8192;
		my ($format, undef, $n) = unpack('CCv', substr($page, $off, 4));
		if (($format & 7) == 3 && $format != 1 && $format != 2)
		{
			push @t, @{ v3_targets($page, $i, $off, $len) };
			next;
		}
		next unless $len >= 24;
		push @t, [ $off, 20, "record $i", \@rh_name ];
		my @vers;
		if ($format == 2)
		{
			next if 20 + 2 * $n > $len;
			push @t, [ $off + 20, 2 * $n, "record $i rh_dir", undef ];
			@vers = unpack("v$n", substr($page, $off + 20, 2 * $n));
		}
		else
		{
			my $vo = 24;
			for (1 .. $n)
			{
				last if $vo + 16 > $len;
				push @vers, $vo;
				my $vlen = unpack('v', substr($page, $off + $vo + 12, 2));
				$vo = ($vo + $vlen + 7) & ~7;
			}
		}
		for my $v (0 .. $#vers)
		{
			next if $vers[$v] + 16 > $len;
			push @t, [ $off + $vers[$v], 16, "record $i version $v", \@vh_name ];
		}
	}
	return \@t;
}

# A V3 record (chain.h): info, xinfo, [xmax], [successor], versions of a
# 12-byte header each at 4-aligned offsets, [trailer: uint16 end[n], n]
my @v3vh_name = (('vh_xmin byte 0', 'vh_xmin byte 1', 'vh_xmin byte 2', 'vh_xmin byte 3'),
	('vh_cid byte 0', 'vh_cid byte 1', 'vh_cid byte 2', 'vh_cid byte 3'),
	('vh_flags byte 0', 'vh_flags byte 1'), ('vh_natts byte 0', 'vh_natts byte 1'));
sub v3_targets
{
	my ($page, $i, $off, $len) = @_;
	my ($info) = unpack('C', substr($page, $off, 1));
	my @hname = ('info', 'xinfo');
	push @hname, map { "xmax byte $_" } 0 .. 3 if $info & 0x08;
	push @hname, map { "successor byte $_" } 0 .. 5 if $info & 0x10;
	my @t = ([ $off, scalar @hname, "record $i", \@hname ]);
	my $start0 = (scalar(@hname) + 3) & ~3;
	my @vers = ($start0);
	if ($info & 0x20)
	{
		return \@t if $len % 2;
		my $n = unpack('v', substr($page, $off + $len - 2, 2));
		return \@t if $n < 2 || $start0 + 12 * $n + 2 * ($n + 1) > $len;
		push @t, [ $off + $len - 2 * ($n + 1), 2 * ($n + 1), "record $i trailer", undef ];
		my @end = unpack("v$n", substr($page, $off + $len - 2 * ($n + 1), 2 * $n));
		push @vers, map { ($end[$_] + 3) & ~3 } 0 .. $n - 2;
	}
	for my $v (0 .. $#vers)
	{
		next if $vers[$v] + 12 > $len;
		push @t, [ $off + $vers[$v], 12, "record $i version $v", \@v3vh_name ];
	}
	return \@t;
}

# one byte of the regions, uniformly: [position, what]
sub pick_target
{
	my ($regions) = @_;
	my $total = 0;
	$total += $_->[4] // $_->[1] for @$regions;
	return undef unless $total;
	my $r = int(rand($total));
	for my $g (@$regions)
	{
		my $weight = $g->[4] // $g->[1];
		if ($r < $weight)
		{
			$r = int(rand($g->[1])) if defined $g->[4];
			return [ $g->[0] + $r, $g->[3] ? "$g->[2] $g->[3][$r]" : $g->[2] ];
		}
		$r -= $weight;
	}
	die "pick_target";
}

# Would XORing byte $byte (what: $what) of $page with $x turn a transaction
# ID into one whose outcome depends on how IDs were numbered?  That is:
# into an ID assigned to a transaction of another status than the one it
# named (committed, aborted, in progress: a version's creator or a row's
# end renamed so comes or goes as it would in heap, and no read can tell,
# see the targeted check "a row's end renamed"), or into one the round's
# own writes will assign (refused by a read before, taken for that
# transaction after; a round assigns a few hundred, 4,096 are kept clear).
# Multixacts are left alone (numbered alike on every version).
sub xid_flip_undecidable
{
	my ($page, $byte, $what, $x) = @_;
	my ($k, $start, $multi);
	if ($what =~ /(vh_xmin|xmax|rh_locker) byte (\d)$/)
	{
		$k = $2;
		$start = $byte - $k;
		$multi = $1 eq 'xmax' ? ord(substr($page, $start - 1, 1)) & 0x01
		  : $1 eq 'rh_locker' ? ord(substr($page, $start - 7, 1)) & 0x01
		  : 0;
	}
	return 0 if !defined $k || $multi;
	my $old = unpack('V', substr($page, $start, 4));
	my $new = $old ^ ($x << (8 * $k));
	return 1 if $new >= $next_xid && $new < $next_xid + 4096;
	my ($so, $sn) = ($xid_status{$old}, $xid_status{$new});
	return defined $so && defined $sn && $so ne $sn;
}

sub log_has_crash
{
	my ($from) = @_;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile);
	$log = substr($log, $from);
	my @bad = $log =~ /^.*(?:terminated by signal|PANIC|TRAP:).*$/mg;
	return join("\n", @bad);
}

# The pristine data directory back: only the files the server changed
# (size or modification time differ; copies get the pristine time), and
# without the files it added.  Times are compared to the nanosecond
# (Time::HiRes's stat and utime): in whole seconds, a file the server
# rewrote at the same size within the second the pristine copy was made
# stayed as the server left it (once a catalog file beside pg_class, whose
# own file was restored shorter: the next start read past its end).
sub restore_pristine
{
	my $data = $node->data_dir;
	my %keep;
	find(
		{
			no_chdir => 1,
			wanted => sub {
				my $rel = File::Spec->abs2rel($File::Find::name, $pristine);
				my $dst = "$data/$rel";
				$keep{$rel} = 1;
				if (-d $File::Find::name)
				{
					mkdir $dst, 0700 unless -d $dst;
					return;
				}
				my @src = stat($File::Find::name);
				my @cur = stat($dst);
				return if @cur && $cur[7] == $src[7] && $cur[9] == $src[9];
				copy($File::Find::name, $dst) or die "copy $rel: $!";
				chmod 0600, $dst;
				utime($src[8], $src[9], $dst);
			}
		},
		$pristine);
	finddepth(
		{
			no_chdir => 1,
			wanted => sub {
				my $rel = File::Spec->abs2rel($File::Find::name, $data);
				return if $rel eq '.' || $keep{$rel};
				if (-d $File::Find::name) { rmdir $File::Find::name }
				else { unlink $File::Find::name }
			}
		},
		$data);
}

# Does an error name relation c, a block and an offset, with XX001/XX002?
sub error_block
{
	my ($o) = @_;
	return undef unless $o =~ /^error (XX001|XX002) /;
	return undef unless $o =~ /relation "c"/;
	return [ $1, $2 ] if $o =~ /\bTID \((\d+),(\d+)\)/;
	return [ $1, 0 ] if $o =~ /\bpage (\d+) of relation "c" is damaged/;
	return undef;
}

# Does an error name a block of c's file?  PostgreSQL's own check of a
# page header read from disk (PageIsVerifiedExtended: a flipped pd_upper
# out of frame) names the file, not the relation, and no offset.
sub error_block_of_file
{
	my ($o) = @_;
	my ($file) = $path =~ m{/(base/\d+/\d+)$};
	return undef unless $o =~ /^error XX001 /;
	# (18 quotes the file name)
	return [ $1, 0 ] if $o =~ /\binvalid page in block (\d+) of relation "?\Q$file\E\b/;
	return undef;
}

# ---------------------------------------------------------------------
# Targeted damage, one of each kind the random rounds may or may not
# hit, on pages of their own: what reads raise, what minidb_verify says
# ---------------------------------------------------------------------
sub read_block
{
	my ($file, $p) = @_;
	open(my $fh, '<:raw', $file) or die "open $file: $!";
	my $page;
	sysseek($fh, $p * 8192, 0) or die;
	sysread($fh, $page, 8192) == 8192 or die;
	close($fh);
	return $page;
}

sub write_bytes
{
	my ($file, $pos, $bytes) = @_;
	open(my $fh, '+<:raw', $file) or die "open $file: $!";
	sysseek($fh, $pos, 0) or die;
	syswrite($fh, $bytes) == length($bytes) or die;
	close($fh);
}

sub lp_of
{
	my ($page, $i) = @_;
	my $lp = unpack('V', substr($page, 24 + ($i - 1) * 4, 4));
	return ($lp & 0x7fff, ($lp >> 15) & 3, $lp >> 17);
}

# offset of version 0 of the record at lp_off $off
sub version0
{
	my ($page, $off) = @_;
	my ($format) = unpack('C', substr($page, $off, 1));
	return unpack('v', substr($page, $off + 20, 2)) if $format == 2;
	return 24 if $format == 1;
	# V3: after info, xinfo, [xmax], [successor], 4-aligned
	return (2 + ($format & 0x08 ? 4 : 0) + ($format & 0x10 ? 6 : 0) + 3) & ~3;
}

{
	restore_pristine();
	$node->start;
	# 9008 gets an external value: its UPDATEs lock it for the TOAST work
	$node->safe_psql('postgres',
		q{UPDATE c SET pad = repeat(md5(id::text), 90) WHERE id = 9008});
	my $next = $node->safe_psql('postgres', 'SELECT txid_current()');
	my %tid = map {
		my ($b, $o) = $node->safe_psql('postgres', "SELECT ctid FROM c WHERE id = $_")
		  =~ /\((\d+),(\d+)\)/;
		$_ => [ $b, $o ];
	} (4005, 7305, 7205, 4292, 8012, 7505, 7805, 9008, 9504);
	# a row a later transaction made, for a moved row's successor to name
	my ($sb, $so) = $node->safe_psql('postgres',
		q{INSERT INTO c VALUES (20002, 1, 'later', NULL) RETURNING ctid})
	  =~ /\((\d+),(\d+)\)/;
	my $toast = $node->data_dir . '/' . $node->safe_psql('postgres',
		q{SELECT pg_relation_filepath(reltoastrelid) FROM pg_class WHERE oid = 'c'::regclass});
	my @toast_pages = split /\n/, $node->safe_psql('postgres',
		q{SELECT DISTINCT (ctid::text::point)[0]::int FROM c WHERE id BETWEEN 7001 AND 7040});
	$node->stop;
	my %page = map { $tid{$_}[0] => 1 } keys %tid;
	is(scalar(keys %page), scalar(keys %tid), 'the targets lie on pages of their own');
	# (and not on those of the TOAST rows 7001..7040, whose reads must fail
	# for their TOAST page only)
	is(scalar(grep { $page{$_} } @toast_pages), 0, 'nor on the pages of the TOAST rows');

	# 4005: its line pointer's flags say "unused", its offset and length stay
	my ($b, $o) = @{ $tid{4005} };
	my $lpw = unpack('V', substr(read_block($path, $b), 24 + ($o - 1) * 4, 4));
	write_bytes($path, $b * 8192 + 24 + ($o - 1) * 4, pack('V', $lpw & ~(3 << 15)));
	# 7305: its line pointer is a copy of its neighbour's, a record as long
	($b, $o) = @{ $tid{7305} };
	my $page = read_block($path, $b);
	my ($off, undef, $len) = lp_of($page, $o);
	my ($twin) = grep { my ($x, $f, $l) = lp_of($page, $_); $_ != $o && $f == 1 && $l == $len }
	  1 .. int((unpack('v', substr($page, 12, 2)) - 24) / 4);
	ok(defined $twin, 'a record of the same length on the page of 7305');
	write_bytes($path, $b * 8192 + 24 + ($o - 1) * 4,
		substr($page, 24 + ($twin - 1) * 4, 4));
	# 7205: the newest version's xmin lies a million transactions ahead
	($b, $o) = @{ $tid{7205} };
	$page = read_block($path, $b);
	($off) = lp_of($page, $o);
	write_bytes($path, $b * 8192 + $off + version0($page, $off),
		pack('V', $next + 1_000_000));
	# 7805: a V3 version's natts, 4 -> 110: its data offset follows from
	# natts (the null bitmap's length), which validation cannot tell
	($b, $o) = @{ $tid{7805} };
	$page = read_block($path, $b);
	($off) = lp_of($page, $o);
	is(unpack('v', substr($page, $off + version0($page, $off) + 10, 2)), 4,
		'row 7805 is a V3 version of 4 attributes');
	write_bytes($path, $b * 8192 + $off + version0($page, $off) + 10, pack('v', 110));
	# 9008: a middle version's natts (version 3 of the V3 record): a read
	# of the newest version need not pass it, but a write rewrites every
	# version from a copy of the page, where damage has no TID
	($b, $o) = @{ $tid{9008} };
	$page = read_block($path, $b);
	my ($off9, undef, $len9) = lp_of($page, $o);
	my ($v3) = grep { $_->[2] eq "record $o version 3" }
	  @{ v3_targets($page, $o, $off9, $len9) };
	ok($v3 && grep({ $_->[2] eq "record $o version 4" } @{ v3_targets($page, $o, $off9, $len9) }),
		'row 9008 is a V3 record of five versions or more');
	write_bytes($path, $b * 8192 + $v3->[0] + 10, pack("v", 49924)) if $v3;
	# 9504: version 2's xmin lies a million ahead, its hints cleared: no
	# read of the newest version passes it, nor does a writer's look at
	# the row's two newest (minidb_row_heads), but the DELETE's pruning
	# asks about it, in the image of the page it changes (generic WAL)
	($b, $o) = @{ $tid{9504} };
	$page = read_block($path, $b);
	my ($off95, undef, $len95) = lp_of($page, $o);
	my ($v95) = grep { $_->[2] eq "record $o version 2" }
	  @{ v3_targets($page, $o, $off95, $len95) };
	ok($v95 && grep({ $_->[2] eq "record $o version 3" } @{ v3_targets($page, $o, $off95, $len95) }),
		'row 9504 is a V3 record of four versions or more');
	if ($v95)
	{
		write_bytes($path, $b * 8192 + $v95->[0], pack('V', $next + 1_000_000));
		write_bytes($path, $b * 8192 + $v95->[0] + 8,
			pack('C', unpack('C', substr($page, $v95->[0] + 8, 1)) & ~0x07));
	}
	# 4292: a row locked FOR SHARE; its locker lies a million ahead
	my ($lb, $lo) = @{ $tid{4292} };
	$page = read_block($path, $lb);
	($off) = lp_of($page, $lo);
	is(unpack('v', substr($page, $off + 12, 2)), 2, 'row 4292 is locked FOR SHARE');
	write_bytes($path, $lb * 8192 + $off + 8, pack('V', $next + 1_000_000));
	# 8012: the same, a V3 record (a lock-only xmax, 2 bytes in)
	my ($l3b, $l3o) = @{ $tid{8012} };
	$page = read_block($path, $l3b);
	($off) = lp_of($page, $l3o);
	my ($info3, $xinfo3) = unpack('CC', substr($page, $off, 2));
	ok(($info3 & 7) == 3 && ($info3 & 0x08) && ($xinfo3 & 0x02),
		'row 8012 is a V3 record with a lock-only xmax');
	write_bytes($path, $l3b * 8192 + $off + 2, pack('V', $next + 1_000_000));
	# a row that moved (its k changed): its old record's successor now
	# names row 20002, which a later transaction made
	my $moved;
	for my $p (0 .. $nblocks - 1)
	{
		next if $page{$p};
		my $pg = read_block($path, $p);
		for my $i (1 .. int((unpack('v', substr($pg, 12, 2)) - 24) / 4))
		{
			my ($x, $f) = lp_of($pg, $i);
			next unless $f == 1;
			# a V3 record whose end is a move: info XMAX|SUCC, xinfo MOVED
			my ($info, $xinfo) = unpack('CC', substr($pg, $x, 2));
			if (($info & 7) == 3 && ($info & 0x18) == 0x18 && ($xinfo & 0x12) == 0x10)
			{
				$moved = [ $p, $i, $x ];
				last;
			}
		}
		last if $moved;
	}
	ok($moved, 'a moved row\'s old record');
	write_bytes($path, $moved->[0] * 8192 + $moved->[2] + 6,
		pack('vvv', $sb >> 16, $sb & 0xffff, $so));
	$page{ $moved->[0] } = 1;
	# 7505: column k (bytes 4..7 of the data) no longer what the index holds
	($b, $o) = @{ $tid{7505} };
	$page = read_block($path, $b);
	($off) = lp_of($page, $o);
	my $v0 = $off + version0($page, $off);
	my $hoff;
	if (ord(substr($page, $off, 1)) <= 2)
	{
		$hoff = unpack('C', substr($page, $v0 + 14, 1));
	}
	else
	{
		# V3: the header, the null bitmap, MAXALIGNed from the record's start
		my ($vflags, $natts) = unpack('vv', substr($page, $v0 + 8, 4));
		my $d = version0($page, $off) + 12 + ($vflags & 0x20 ? int(($natts + 7) / 8) : 0);
		$hoff = (($d + 7) & ~7) - version0($page, $off);
	}
	write_bytes($path, $b * 8192 + $v0 + $hoff + 4, pack('V', 777777));
	# the TOAST table's last page (the newest values): its chunks are gone
	write_bytes($toast, (-s $toast) - 8192, "\0" x 8192);

	my $logpos = -s $node->logfile;
	$node->start;
	# inserted while the index on k was not ready: no entry there
	$node->safe_psql('postgres', q{
UPDATE pg_index SET indisready = false WHERE indexrelid = 'c_k'::regclass;
INSERT INTO c VALUES (20001, 5, 'not in c_k', NULL);
UPDATE pg_index SET indisready = true WHERE indexrelid = 'c_k'::regclass;
});
	my $row_tid = $node->safe_psql('postgres', 'SELECT ctid FROM c WHERE id = 20001');

	my $err = sub {
		my ($sql) = @_;
		my ($ret, $out, $e) = $node->psql('postgres',
			"\\set VERBOSITY verbose\nSET enable_seqscan = off;\n$sql");
		$e =~ s/\n(?:LOCATION|CONTEXT).*//gs;
		return $e;
	};
	my $at = sub { my ($id) = @_; "($tid{$id}[0],$tid{$id}[1])" };
	my $range = sub {
		my ($id) = @_;
		"SELECT * FROM c WHERE ctid >= '($tid{$id}[0],0)' AND ctid < '("
		  . ($tid{$id}[0] + 1) . ",0)'";
	};
	like($err->($range->(4005)),
		qr/ERROR:  XX001: damaged line pointer in relation "c" at TID \Q@{[$at->(4005)]}\E\nDETAIL:  an unused line pointer with storage/,
		'a line pointer whose flags say unused but that has storage: XX001');
	my $dupblk = $tid{7305}[0];
	like($err->($range->(7305)),
		qr/ERROR:  XX001: damaged line pointer in relation "c" at TID \($dupblk,\d+\)\nDETAIL:  Line pointers \d+ and \d+ name the same record/,
		'two line pointers naming the same record: XX001');
	like($err->($range->(7205)),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(7205)]}\E\nDETAIL:  Version 0, field "vh_xmin": transaction ID \d+ is not one whose status is known/,
		'an xmin not assigned yet: XX001, not "could not access status"');
	like($err->("UPDATE c SET v = 'x' WHERE id = 4292"),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(4292)]}\E\nDETAIL:  Record header field "rh_locker": transaction ID \d+ is not one/,
		'a locker not assigned yet: the UPDATE raises XX001 rather than wait for it');
	like($err->("UPDATE c SET v = 'x' WHERE id = 8012"),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(8012)]}\E\nDETAIL:  Record header field "xmax": transaction ID \d+ is not one/,
		'the same in a V3 record');
	# (a row with an external value is locked for the TOAST work first,
	# which rewrites the record from a copy of the page)
	like($err->("UPDATE c SET v = 'x' WHERE id = 9008"),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(9008)]}\E\nDETAIL:  Version 3, field "vh_natts": 49924 attributes exceed/,
		'a damaged middle version: an UPDATE, which rewrites every version, raises XX001 naming the record');
	like($err->("DELETE FROM c WHERE id = 9504"),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(9504)]}\E\nDETAIL:  Version 2, field "vh_xmin": transaction ID \d+ is not one whose status is known/,
		'an older version\'s xmin not assigned yet: the DELETE\'s pruning, in the image of the page it changes, raises XX001 naming the record');
	like($err->("SELECT id FROM c WHERE id = 9008 FOR UPDATE"),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(9008)]}\E\nDETAIL:  Version 3, field "vh_natts"/,
		'and so does a row lock');
	like($err->("SELECT * FROM c WHERE id = 7805"),
		qr/ERROR:  XX001: corrupted minidb record in relation "c" at TID \Q@{[$at->(7805)]}\E\nDETAIL:  The version read, field "data": 110 attributes, but the table has 4/,
		'a V3 version whose natts was damaged: XX001, its data is not deformed');
	is($err->("SELECT * FROM c WHERE id = 7505"), '',
		'a changed column does not fail reads');

	$node->safe_psql('postgres',
		q{CREATE TABLE found AS SELECT * FROM minidb_verify('c', check_toast => true, check_indexes => true)});
	my $found = sub {
		my ($b, $o, $field, $re) = @_;
		my $rows = $node->safe_psql('postgres',
			"SELECT field || ': ' || msg FROM found WHERE blkno = $b AND offnum = $o");
		return scalar grep { /^\Q$field\E/ && /$re/ } split /\n/, $rows;
	};
	ok($found->(@{ $tid{4005} }, 'line pointer', qr/unused line pointer with storage/),
		'minidb_verify: the unused line pointer with storage');
	ok($found->($tid{7305}[0], $tid{7305}[1], 'line pointer', qr/overlaps the record at offset/),
		'minidb_verify: the two line pointers naming one record');
	ok($found->(@{ $tid{7205} }, 'vh_xmin', qr/is not assigned yet/),
		'minidb_verify: the xmin not assigned yet');
	ok($found->(@{ $tid{7805} }, 'data', qr/110 attributes, but the table has 4/),
		'minidb_verify: the V3 version with too many attributes');
	ok($found->(@{ $tid{9008} }, 'vh_natts', qr/49924 attributes exceed/),
		'minidb_verify: the middle version with too many attributes');
	ok($found->(@{ $tid{9504} }, 'vh_xmin', qr/is not assigned yet/),
		'minidb_verify: the older version\'s xmin not assigned yet');
	ok($found->(@{ $tid{4292} }, 'rh_locker', qr/is not assigned yet/),
		'minidb_verify: the locker not assigned yet');
	ok($found->(@{ $tid{8012} }, 'xmax', qr/is not assigned yet/),
		'minidb_verify: the V3 locker not assigned yet');
	ok($found->($moved->[0], $moved->[1], 'successor',
			qr/successor \($sb,$so\) was made by transaction \d+, not by the moving update's \d+/),
		'minidb_verify: the successor made by another transaction');
	ok($found->(@{ $tid{7505} }, 'index c_k', qr/holds other values than its visible version/),
		'minidb_verify: the index entry whose key the row no longer has');
	my ($rb, $ro) = $row_tid =~ /\((\d+),(\d+)\)/;
	ok($found->($rb, $ro, 'index c_k', qr/has no entry in the index/),
		'minidb_verify: the row without an index entry');
	my $unreadable = $node->safe_psql('postgres', q{
CREATE TEMP TABLE bad (id int);
DO $$ BEGIN
  FOR i IN 7001..7040 LOOP
	BEGIN PERFORM md5(pad) FROM c WHERE id = i;
	EXCEPTION WHEN data_corrupted THEN INSERT INTO bad VALUES (i); END;
  END LOOP;
END $$;
SELECT count(*) FROM bad;
SELECT string_agg(b.id::text, ',' ORDER BY b.id) FROM bad b JOIN expect e USING (id)
 WHERE NOT EXISTS (SELECT 1 FROM found f WHERE f.field = 'toast: pad'
					 AND (f.blkno, f.offnum) = (e.page, e.off));});
	my ($nbad, $missed) = split /\n/, $unreadable;
	cmp_ok($nbad, '>', 0, "the zeroed TOAST page makes $nbad rows unreadable");
	is($missed // '', '', 'minidb_verify (check_toast) lists every one of them');
	note "minidb_verify on the damaged table:\n"
	  . $node->safe_psql('postgres',
		q{SELECT blkno, offnum, version, field, msg FROM found ORDER BY blkno, offnum LIMIT 12});
	is(log_has_crash($logpos), '', 'no crash');
	$node->stop;
	PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir,
		"$ENV{MINIDB_CORRUPTION_KEEP}-targeted")
	  if $ENV{MINIDB_CORRUPTION_KEEP};
}

# A row's end renamed: the xmax of a moved row's old record, and of a
# deleted row's, turned into the ID of an aborted transaction (hint bits
# clear).  No read can tell: the row is back, and the moved one is there
# twice.  Heap is the oracle: the same damage to heap tuples (t_xmax, the
# HEAP_XMAX_COMMITTED hint cleared) gives the same rows.  The random rounds
# do not draw such flips (xid_flip_undecidable).
{
	restore_pristine();
	$node->start;
	$node->safe_psql('postgres', q{
CREATE TABLE h (id int PRIMARY KEY, k int, v text) USING heap WITH (autovacuum_enabled = off);
CREATE INDEX h_k ON h (k);
INSERT INTO h SELECT id, k, v FROM c WHERE id IN (9005, 9006);
});
	my %old = map {
		my $t = $_;
		$t => [ map { [ $node->safe_psql('postgres', "SELECT ctid FROM $t WHERE id = $_")
				  =~ /\((\d+),(\d+)\)/ ] } (9005, 9006) ]
	} ('c', 'h');
	$node->safe_psql('postgres', q{
UPDATE c SET k = k + 1000 WHERE id = 9005; UPDATE h SET k = k + 1000 WHERE id = 9005;
DELETE FROM c WHERE id = 9006; DELETE FROM h WHERE id = 9006;
});
	my $aborted = $node->safe_psql('postgres',
		q{BEGIN; SELECT txid_current(); ROLLBACK;});
	my $hpath = $node->data_dir . '/'
	  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('h')});
	$node->safe_psql('postgres', 'CHECKPOINT');
	$node->stop;
	for my $i (0, 1)
	{
		# minidb: a V3 record whose end is a move (0x10 in xinfo) or a delete
		my ($b, $o) = @{ $old{c}[$i] };
		my $page = read_block($path, $b);
		my ($off) = lp_of($page, $o);
		my ($info, $xinfo) = unpack('CC', substr($page, $off, 2));
		ok(($info & 7) == 3 && ($info & 0x08) && !($xinfo & 0x03)
			  && ($xinfo & 0x10) == ($i ? 0 : 0x10),
			'row ' . (9005 + $i) . "'s old record ends with a " . ($i ? 'delete' : 'move'));
		write_bytes($path, $b * 8192 + $off + 1, pack('C', $xinfo & ~0x0c));
		write_bytes($path, $b * 8192 + $off + 2, pack('V', $aborted));
		# heap: t_xmax at 4, t_infomask at 20 (HEAP_XMAX_COMMITTED 0x0400)
		($b, $o) = @{ $old{h}[$i] };
		$page = read_block($hpath, $b);
		($off) = lp_of($page, $o);
		my $mask = unpack('v', substr($page, $off + 20, 2));
		write_bytes($hpath, $b * 8192 + $off + 4, pack('V', $aborted));
		write_bytes($hpath, $b * 8192 + $off + 20, pack('v', $mask & ~0x0400));
	}
	my $logpos = -s $node->logfile;
	$node->start;
	my $rows = sub {
		my ($t) = @_;
		$node->safe_psql('postgres', "SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT string_agg(id || ':' || k, ',' ORDER BY id, k) FROM $t WHERE id IN (9005, 9006)");
	};
	is($rows->('c'), $rows->('h'),
		'a row\'s end renamed to an aborted transaction: the same rows as heap');
	is($node->safe_psql('postgres', q{SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT string_agg(id || ' ' || n, ', ' ORDER BY id) FROM
  (SELECT id, count(*) AS n FROM c WHERE id IN (9005, 9006) GROUP BY id) s}),
		'9005 2, 9006 1', '(the moved row twice, the deleted one back)');
	is(log_has_crash($logpos), '', 'no crash');
	$node->stop;
}

my %count = map { $_ => 0 }
  qw(flips harmless masked read write hint verify verify_silent crashes redrawn);
my %by_field;
my @failures;
my $round = 0;
while ($count{flips} < $want_flips)
{
	$round++;
	my $t0 = time;
	restore_pristine();
	note sprintf("round %d: pristine copy back in %.1f s", $round, time - $t0);
	open(my $fh, '+<:raw', $path) or die "open $path: $!";
	my %flip;    # page => [ byte, xor, what ]
	for my $p (@all_pages)
	{
		my $page;
		sysseek($fh, $p * 8192, 0) or die;
		sysread($fh, $page, 8192) == 8192 or die;
		my $target = pick_target(page_targets($page));
		next unless $target;
		my ($byte, $what) = @$target;
		my $x = 1 + int(rand(255));
		# a transaction ID must not come to name an assigned one of another
		# status, nor one the round's own writes assign (drawn again)
		my $tries = 0;
		$x = 1 + int(rand(255)), $tries++
		  while $tries < 1000 && xid_flip_undecidable($page, $byte, $what, $x);
		$count{redrawn}++ if $tries;
		my $old = ord(substr($page, $byte, 1));
		sysseek($fh, $p * 8192 + $byte, 0) or die;
		syswrite($fh, chr($old ^ $x), 1) == 1 or die;
		$flip{$p} = [ $byte, $x, $what, $old ];
	}
	close($fh);
	PostgreSQL::Test::RecursiveCopy::copypath($node->data_dir,
		"$ENV{MINIDB_CORRUPTION_KEEP}-round$round")
	  if $ENV{MINIDB_CORRUPTION_KEEP};
	my $logpos = -s $node->logfile;
	my @t = (time);
	$node->start;
	push @t, time;

	my @pages = sort { $a <=> $b } keys %flip;
	my $reads = per_page('page_rows', $settings_tid, \@pages);
	my $index = per_page('page_index_rows', $settings_idx, \@pages);
	my ($ret, $vout, $verr) = $node->psql('postgres',
		q{SELECT blkno, coalesce(offnum, 0), field, msg FROM minidb_verify('c', true, true)},
		timeout => 600);
	my %verified;
	for (split /\n/, $vout)
	{
		my ($b, $o) = split /\|/;
		$verified{$b}{$o} = 1;
	}
	push @failures, "round $round: minidb_verify failed: $verr" if $ret != 0;
	push @t, time;
	my $writes = per_page('page_write', '', \@pages);
	push @t, time;
	my ($vret, undef, $vacerr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nVACUUM c", timeout => 600);
	$vacerr =~ s/\n/ /g;
	my $after = per_page('page_index_rows', $settings_idx, \@pages);
	my $ids = per_page('page_ids', $settings_tid,
		[ 0 .. $node->safe_psql('postgres', q{SELECT pg_relation_size('c') / 8192}) - 1 ]);
	my $crash = log_has_crash($logpos);
	push @t, time;

	# every error, wherever it came from, names the block it is about
	my %errors_on;    # block => [ phase, outcome ]
	my @all = (
		(map { [ 'read', $_, $reads->{$_} ] } @pages),
		(map { [ 'index read', $_, $index->{$_} ] } @pages),
		(map { [ 'write', $_, $writes->{$_} ] } @pages),
		(map { [ 'read after writes', $_, $after->{$_} ] } @pages),
		(map { [ 'ids', $_, $ids->{$_} ] } keys %$ids));
	if ($vret != 0)
	{
		my $st = $vacerr =~ /ERROR:\s+(\w{5}):/ ? $1 : 'none';
		push @all, [ 'vacuum', -1, "error $st $vacerr" ];
	}
	for my $e (@all)
	{
		my ($phase, $p, $o) = @$e;
		next if $o =~ /^ok/;
		my $at = error_block($o) // error_block_of_file($o);
		if (!$at || !exists $flip{ $at->[0] })
		{
			push @failures, "round $round, $phase of page $p: an error that does not name a damaged block: $o";
			next;
		}
		push @{ $errors_on{ $at->[0] } }, [ $phase, $o, $at->[1] ];
	}

	# duplicate ids after the writes
	my %seen;
	for my $p (keys %$ids)
	{
		next unless $ids->{$p} =~ /^ok (.*)/;
		$seen{$_}++ for grep { length } split /,/, $1;
	}
	my @dups = grep { $seen{$_} > 1 } keys %seen;

	my %hint_reported;    # pages of a hint flip minidb_verify reported
	for my $p (@pages)
	{
		my ($byte, $x, $what, $old) = @{ $flip{$p} };
		my $desc = sprintf("page %d byte %d (%s) 0x%02x ^ 0x%02x", $p, $byte, $what, $old, $x);
		(my $field = $what) =~ s/^(line pointer).*/$1/;
		$field =~ s/^record \d+ (?:version \d+ )?//;
		$field =~ s/ byte \d+$//;
		$count{flips}++;
		my $errs = $errors_on{$p} // [];
		my @read_errs = grep { $_->[0] =~ /read$/ && $_->[0] ne 'read after writes' } @$errs;
		my $wrong_read = ($reads->{$p} =~ /^ok/ && $reads->{$p} ne $pristine_reads->{$p})
		  || ($index->{$p} =~ /^ok/ && $index->{$p} ne $pristine_index->{$p});
		my $wrong_after = $writes->{$p} eq 'ok' && $after->{$p} =~ /^ok/
		  && $after->{$p} ne $pristine_after->{$p};
		my $found = exists $verified{$p};
		$count{verify}++ if $found;
		# hint bits alone: a version's (committed, aborted, frozen), or a V3
		# record end's (xinfo: committed, aborted); or a flip that sets a
		# version's "creator aborted" hint, whatever else it changes: the
		# version is then passed over unread (heap passes over a tuple
		# with HEAP_XMIN_INVALID so, whatever its other bits say); or one
		# that sets its "committed" or "frozen" hint and otherwise changes
		# only data flags (has-null, has-varwidth, has-external), which
		# every read of the version checks against its data: a result
		# that changes without an error then comes from the hint (a
		# version taken as frozen lets pruning drop the ones below it, so
		# that an UPDATE stays on the page where it would have moved); or
		# one that sets a row end's "ender committed" or "ender aborted"
		# hint, whatever else it changes: the end is then taken or passed
		# over without the commit log (heap's HEAP_XMAX_COMMITTED and
		# HEAP_XMAX_INVALID likewise: a deleted or moved row comes back, a
		# locked one goes)
		my $hint_only = ($what =~ /vh_flags byte 0$/
			  && (($x & ~0x07) == 0 || (($x & 0x02) && !($old & 0x02))
				|| (($x & 0x05 & ~$old) && ($x & ~0xe7) == 0)))
		  || ($what =~ /xinfo$/
			&& (($x & ~0x0c) == 0 || ($x & 0x0c & ~$old)));
		note "round $round: $desc: "
		  . (@$errs ? join('; ', map { "$_->[0]: $_->[1]" } @$errs) : 'no error')
		  . ($found ? ' (minidb_verify: ' . join(',', sort keys %{ $verified{$p} }) . ')' : '')
		  . " [write: $writes->{$p}]"
		  if $ENV{MINIDB_CORRUPTION_VERBOSE};

		if (@read_errs)
		{
			$count{read}++;
			$by_field{$field}{read}++;
			for my $e (@read_errs)
			{
				push @failures, "round $round: $desc: a read failed ($e->[1]) but minidb_verify does not list (" . "$p,$e->[2])"
				  unless $verified{$p}{ $e->[2] } || $verified{$p}{0};
			}
		}
		elsif ($wrong_read || $wrong_after)
		{
			if ($hint_only)
			{
				$count{hint}++;
				$by_field{$field}{hint}++;
				$hint_reported{$p} = 1 if $found;
				push @failures, "round $round: $desc: hint bits changed what reads return, and minidb_verify does not report it"
				  unless $found;
			}
			else
			{
				push @failures, "round $round: $desc: wrong result without an error"
				  . ($wrong_read ? " (reads)" : " (after the writes)");
			}
		}
		elsif (@$errs)
		{
			$count{write}++;
			$by_field{$field}{write}++;
		}
		elsif ($writes->{$p} ne 'ok')
		{
			# another page's damage stopped this page's writes
			$count{masked}++;
			$by_field{$field}{'reads harmless, writes stopped elsewhere'}++;
			$count{verify_silent}++ if $found;
		}
		else
		{
			$count{harmless}++;
			$by_field{$field}{harmless}++;
			$count{verify_silent}++ if $found;
		}
	}
	for my $d (@dups)
	{
		# a moved row whose end a hint flip passes over is there twice,
		# as in heap; minidb_verify must have reported that hint
		my @on = grep { $ids->{$_} =~ /^ok (?:.*,)?\Q$d\E(?:,|$)/ } keys %$ids;
		next if grep { $hint_reported{$_} } @on;
		push @failures, "round $round: id $d appears twice after the writes";
	}
	if ($crash)
	{
		$count{crashes}++;
		push @failures, "round $round: the server crashed:\n$crash";
	}
	$node->stop('fast', fail_ok => 1);
	push @t, time;
	note sprintf("round %d: %d flips; seconds: start %.1f, reads and verify %.1f, writes %.1f, vacuum and reads %.1f, stop %.1f",
		$round, scalar @pages, map { $t[$_ + 1] - $t[$_] } 0 .. 4);
}

diag(sprintf(
		"%d flips in %d rounds: %d harmless, %d more harmless to reads whose page's writes "
		  . "another page's damage stopped (%d of these %d still reported by minidb_verify), "
		  . "%d detected by reads, %d more by writes or VACUUM, %d silent hint-bit flips; "
		  . "minidb_verify reported %d of the flipped pages",
		$count{flips}, $round, $count{harmless}, $count{masked}, $count{verify_silent},
		$count{harmless} + $count{masked}, $count{read},
		$count{write}, $count{hint}, $count{verify}));
note "$count{redrawn} flips of a transaction ID drawn again (they would have named one of another status, or one the round assigns)";
for my $f (sort keys %by_field)
{
	note sprintf("  %-20s %s", $f,
		join(', ', map { "$_ $by_field{$f}{$_}" } sort keys %{ $by_field{$f} }));
}
cmp_ok($count{flips}, '>=', $want_flips, "at least $want_flips flips");
is($count{crashes}, 0, 'no round crashed the server');
is(scalar(@failures), 0, 'every flip is harmless or an XX001/XX002 naming relation, block and offset, and minidb_verify lists what reads refused')
  or diag(join("\n", @failures[ 0 .. ($#failures < 60 ? $#failures : 60) ]));

# ---------------------------------------------------------------------
# A zeroed page, and a file truncated at a page boundary
# ---------------------------------------------------------------------
for my $case ('zero', 'truncate')
{
	restore_pristine();
	my $victim = int($nblocks / 2);
	if ($case eq 'zero')
	{
		open(my $fh, '+<:raw', $path) or die;
		sysseek($fh, $victim * 8192, 0) or die;
		syswrite($fh, "\0" x 8192, 8192) == 8192 or die;
		close($fh);
	}
	else
	{
		truncate($path, $victim * 8192) or die "truncate: $!";
	}
	my $logpos = -s $node->logfile;
	$node->start;
	my $reads = per_page('page_rows', $settings_tid, \@all_pages);
	my $index = per_page('page_index_rows', $settings_idx, \@all_pages);
	my @errs = grep { !/^ok/ } values %$reads, values %$index;
	is(scalar(grep { !/^error XX001 / } @errs), 0,
		"$case: reads return rows or raise XX001")
	  or diag(join("\n", grep { !/^error XX001 / } @errs));
	$node->safe_psql('postgres', q{
CREATE TABLE found AS SELECT * FROM minidb_verify('c', check_indexes => true)});
	my $lost = $case eq 'zero' ? "e.page = $victim" : "e.page >= $victim";
	is($node->safe_psql('postgres', qq{
SELECT count(*) FROM expect e, (VALUES ('index c_pkey'), ('index c_k')) i(field)
 WHERE $lost AND NOT EXISTS
	(SELECT 1 FROM found f WHERE f.blkno = e.page AND f.offnum = e.off
		AND f.field = i.field AND f.msg ~ '(past the end|on an empty page)')}),
		'0', "$case: minidb_verify lists the entry of every lost row in both indexes");
	is($node->safe_psql('postgres', q{SELECT count(*) FROM found WHERE msg !~ '(past the end|on an empty page)'}),
		'0', "$case: and nothing else");
	my $writes = per_page('page_write', '', \@all_pages);
	my ($vret, undef, $vacerr) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nVACUUM c");
	ok($vret == 0 || $vacerr =~ /ERROR:  XX001/, "$case: VACUUM runs or raises XX001")
	  or diag($vacerr);
	is(scalar(grep { !/^ok|^error XX001 / } values %$writes), 0,
		"$case: writes succeed or raise XX001")
	  or diag(join("\n", grep { !/^ok|^error XX001 / } values %$writes));
	is(log_has_crash($logpos), '', "$case: no crash");
	$node->stop('fast', fail_ok => 1);
}

# ANALYZE reads a block under its share lock one row per call, as heap's
# does, with the same page checks as a scan: a line pointer copied over
# another (two naming one record) raises XX001 after the plain rows before
# it were handed out, and a damaged record raises XX001 as a read does.
{
	$node->start;
	$node->safe_psql('postgres', q{
CREATE TABLE an (id int, v int) USING minidb;
INSERT INTO an SELECT g, g FROM generate_series(1, 100) g;
CREATE TABLE an2 (id int, v int) USING minidb;
INSERT INTO an2 SELECT g, g FROM generate_series(1, 100) g;
VACUUM (FREEZE) an, an2;
});
	my $dir = $node->data_dir;
	my ($apath, $a2path) = map {
		"$dir/" . $node->safe_psql('postgres', "SELECT pg_relation_filepath('$_')")
	} ('an', 'an2');
	$node->stop;
	my $pg = read_block($apath, 0);
	write_bytes($apath, 24 + 4 * 4, substr($pg, 24 + 1 * 4, 4));
	# an2 (0,7): its version's natts, 2 -> 110 (past the 8-byte V3 header)
	$pg = read_block($a2path, 0);
	my ($off7) = lp_of($pg, 7);
	is(ord(substr($pg, $off7, 1)) & 7, 3, 'an2 (0,7) is a V3 record');
	is(unpack('v', substr($pg, $off7 + version0($pg, $off7) + 10, 2)), 2,
		'of 2 attributes');
	write_bytes($a2path, $off7 + version0($pg, $off7) + 10, pack('v', 110));
	my $logpos = -s $node->logfile;
	$node->start;
	my (undef, undef, $e) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nANALYZE an");
	like($e,
		qr/ERROR:  XX001: damaged line pointer in relation "an" at TID \(0,5\)\nDETAIL:  Line pointers 2 and 5 name the same record/,
		'ANALYZE: two line pointers naming one record raise XX001');
	(undef, undef, $e) = $node->psql('postgres',
		"\\set VERBOSITY verbose\nANALYZE an2");
	like($e,
		qr/ERROR:  XX001: corrupted minidb record in relation "an2" at TID \(0,7\)/,
		'ANALYZE: a damaged record raises XX001 naming it');
	is($node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_stats WHERE tablename IN ('an', 'an2')}),
		'0', 'and ANALYZE stored no statistics for either');
	is(log_has_crash($logpos), '', 'ANALYZE of damaged pages: no crash');
	$node->stop('fast', fail_ok => 1);
}

done_testing();
