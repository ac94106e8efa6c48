#!/usr/bin/perl
# test/isolation/random_oracle.pl — randomized isolation specs, heap as oracle
#
#   PGHOST=... PGPORT=... PG_CONFIG=... \
#   test/isolation/random_oracle.pl [--seeds 1,2] [--count N] [--only I]
#                                   [--generate-only] WORKDIR
#
# For every seed S of the list and every index I in 1..N (or I alone with
# --only) this generates one isolation spec, r<S>_<I>, from a generator
# seeded with S and I only, so a spec is reproduced from its name: a small
# table t (id int PRIMARY KEY, k int, v text, n int) with an index on k, a
# few rows, some with out-of-line TOAST values, sometimes a child table c
# with a foreign key to t; 2 or 3 sessions, each one transaction (BEGIN at
# READ COMMITTED, REPEATABLE READ or SERIALIZABLE, a few statements, COMMIT
# or ROLLBACK) drawn from: UPDATE of n (in place on minidb), of the indexed
# column k, of v (TOAST-sized or short), of the primary key (moves the
# row); DELETE; INSERT, INSERT ... ON CONFLICT DO NOTHING / DO UPDATE;
# MERGE; SELECT ... FOR UPDATE / NO KEY UPDATE / SHARE / KEY SHARE (plain,
# NOWAIT, SKIP LOCKED); SAVEPOINT / ROLLBACK TO / RELEASE; plain SELECTs;
# INSERTs into the child table.  Every output is ordered; nothing prints a
# ctid or an xid.  The first session's teardown reads the whole table and
# the last session's (which runs with sequential scans off) reads it again
# through the index on k, so the end state of every permutation is compared.
#
# Permutations: a few interleavings of the sessions' steps chosen at random
# and kept only when isolationtester accepts them: a step is taken as one
# that may wait when another session's open transaction wrote or locked a
# row it may touch (ids, or every row for a statement on k), and then no
# later step of its session comes before that transaction's end; an
# interleaving that could deadlock is not used.  When no step of one session
# can wait on another and the interleavings are few, the spec lists none and
# isolationtester runs them all.
#
# Each spec runs through pg_isolation_regress twice with its tables USING
# heap, then once USING minidb.  When heap's two outputs differ, the spec is
# discarded ("discarded: heap not deterministic", not counted); otherwise
# heap's output is the expected one and minidb must print exactly that.
# One line per spec: "isorandom NAME ... ok", "... FAILED (see DIR)" or
# "... discarded (...)"; a failing spec, heap's and minidb's outputs and
# their diff are kept in WORKDIR/failed/NAME/.  Then a summary line
# "isorandom: P passed, F failed, D discarded".  Exit status 1 when
# anything failed.
#
# Reproduce one spec: test/isolation/random_oracle.pl --seeds S --only I DIR
# (same spec, same run).  --generate-only writes the specs (USING minidb)
# into DIR/specs and stops.
#
# Environment: PG_CONFIG (pg_config), PGHOST, PGPORT, PGUSER: the server;
# ISORANDOM_SEED (default seed list, "1"), ISORANDOM_SPECS (default count,
# 40); PGISOLATIONTIMEOUT (isolationtester's step wait before it cancels a
# step, default here 20 s).
use v5.36;
use Getopt::Long;
use File::Path qw(make_path remove_tree);

my @seeds = split /[\s,]+/, ($ENV{ISORANDOM_SEED} // '1');
my $count = $ENV{ISORANDOM_SPECS} // 40;
my ($only, $generate_only);
GetOptions(
    'seeds=s'       => sub { @seeds = split /[\s,]+/, $_[1] },
    'count=i'       => \$count,
    'only=i'        => \$only,
    'generate-only' => \$generate_only,
) or die "usage: random_oracle.pl [--seeds S,...] [--count N] [--only I] [--generate-only] WORKDIR\n";
my $work = shift @ARGV
  or die "usage: random_oracle.pl [--seeds S,...] [--count N] [--only I] [--generate-only] WORKDIR\n";
@seeds = grep { length } @seeds;
die "random_oracle: seeds must be integers\n" if grep { !/^\d+$/ } @seeds;

# ------------------------------------------------------------------ helpers
sub pick(@list) { return $list[ int(rand(@list)) ]; }
sub chance($p) { return rand() < $p; }

sub weighted(@pairs) {    # (name => weight, ...)
    my $total = 0;
    for (my $i = 1; $i < @pairs; $i += 2) { $total += $pairs[$i]; }
    my $r = rand($total);
    for (my $i = 0; $i < @pairs; $i += 2) {
        return $pairs[$i] if ($r -= $pairs[ $i + 1 ]) < 0;
    }
    return $pairs[-2];
}

# Row-lock modes of the footprint model: KS (key share), SH (share),
# NK (no key update), UP (update: DELETE, key update, FOR UPDATE),
# IN (insert or upsert of a key: waits on any writer of that key).
my %CONFLICT = (
    KS => { UP => 1, IN => 1 },
    SH => { NK => 1, UP => 1, IN => 1 },
    NK => { SH => 1, NK => 1, UP => 1, IN => 1 },
    UP => { KS => 1, SH => 1, NK => 1, UP => 1, IN => 1 },
    IN => { KS => 1, SH => 1, NK => 1, UP => 1, IN => 1 },
);

# Do two footprints (each { ids => [..] or undef for every row, mode }) meet?
sub fp_meet($a, $b) {    # do they name a row in common, whatever the modes?
    return 1 if !defined $a->{ids} || !defined $b->{ids};
    my %in = map { $_ => 1 } @{ $a->{ids} };
    return scalar grep { $in{$_} } @{ $b->{ids} };
}

sub fp_conflict($a, $b) {
    return 0 unless $CONFLICT{ $a->{mode} }{ $b->{mode} };
    return 1 if !defined $a->{ids} || !defined $b->{ids};
    my %in = map { $_ => 1 } @{ $a->{ids} };
    return scalar grep { $in{$_} } @{ $b->{ids} };
}

# ------------------------------------------------------------------ generator
my $READ = "SELECT id, k, n, length(v) AS len, left(md5(v), 8) AS vmd5 FROM t ORDER BY id;";
my $READ_K = "SELECT k, id, n FROM t WHERE k >= -1000 ORDER BY k, id;";
my $READ_FK = "SELECT id, k, n, length(v) AS len, left(md5(v), 8) AS vmd5, "
  . "(SELECT string_agg(tag, ',' ORDER BY tag) FROM c WHERE c.pid = t.id) AS kids FROM t ORDER BY id;";

sub gen_spec($seed, $idx) {
    srand($seed * 1_000_003 + $idx);
    my $name = "r${seed}_$idx";
    my $nrows = 3 + int(rand(3));
    my $external = chance(0.6);
    my $fk = chance(0.35);
    my $cascade = $fk && chance(0.5);
    my @rows;
    for my $id (1 .. $nrows) {
        my $k = int(rand(3));
        my $v = chance(0.4) ? "repeat(md5('r$id'), 200)" : "'v$id'";
        push @rows, "($id, $k, $v, 0)";
    }
    my @setup = (
        "CREATE EXTENSION IF NOT EXISTS minidb_am;",
        "SET client_min_messages = warning;",
        "DROP TABLE IF EXISTS c, t;",
        "CREATE TABLE t (id int PRIMARY KEY, k int, v text, n int) USING minidb;",
        "CREATE INDEX t_k ON t (k);",
    );
    push @setup, "ALTER TABLE t ALTER v SET STORAGE EXTERNAL;" if $external;
    push @setup, "INSERT INTO t VALUES " . join(', ', @rows) . ";";
    if ($fk) {
        push @setup,
          "CREATE TABLE c (pid int REFERENCES t" . ($cascade ? " ON DELETE CASCADE" : "") .
          ", tag text) USING minidb;";
        push @setup, "INSERT INTO c VALUES (3, 'c0');";
    }

    my $nsess = chance(0.35) ? 3 : 2;
    my @sessions;
    for my $s (1 .. $nsess) {
        my @steps;
        # one transaction, sometimes two; the first session may VACUUM
        # between them
        my $ntx = chance(0.3) ? 2 : 1;
        for my $tx (1 .. $ntx) {
        if ($tx > 1 && $s == 1 && chance(0.5)) {
            push @steps, { op => 'vacuum', sql => 'VACUUM t;' };
        }
        my $level = weighted('READ COMMITTED' => 4, 'REPEATABLE READ' => 3, 'SERIALIZABLE' => 2);
        push @steps, { op => 'begin', sql => "BEGIN ISOLATION LEVEL $level;" };
        my $nops = 1 + int(rand(4));
        my $sp = 0;
        for my $o (1 .. $nops) {
            # what this step adds: names it in the end state
            my $d = $s * 100 + ($tx - 1) * 10 + $o;
            my $x = weighted(1 => 6, 2 => 5, (map { $_ => 1 } 3 .. $nrows), $nrows + 1 => 1, 11 => 1, 12 => 1);
            # an INSERT mostly of a key that is not there (yet)
            my $xi = chance(0.3) ? $x : pick($nrows + 1, $nrows + 1, $nrows + 2, 11, 12);
            my $kk = int(rand(3));
            my $op = weighted(
                upd_n => 4, upd_nk => 2, upd_k => 2, upd_v => 2, upd_id => 2, upd_ret => 1,
                del => 2, del_k => 1, ins => 2, ins_dn => 1, ins_du => 2, merge => 2,
                lock => 4, lock_k => 1, sel => 2, sel_k => 1,
                upd_id_k => 1, ins_mv => 1, del_ret => 1, lock_all => 1, sel_ios => 1,
                sp => ($sp ? 0 : 1), sp_rb => ($sp ? 2 : 0), sp_rel => ($sp ? 1 : 0),
                child => ($fk ? 3 : 0));
            my ($sql, $fp);
            my $big = "repeat(md5('u$d'), 200)";
            if ($op eq 'upd_n') {
                $sql = "UPDATE t SET n = n + $d WHERE id = $x;";
                $fp = { ids => [$x], mode => 'NK' };
            } elsif ($op eq 'upd_nk') {
                $sql = "UPDATE t SET n = n + $d WHERE k = $kk;";
                $fp = { ids => undef, mode => 'NK' };
            } elsif ($op eq 'upd_k') {
                $sql = "UPDATE t SET k = k + 1 WHERE id = $x;";
                $fp = { ids => [$x], mode => 'NK' };
            } elsif ($op eq 'upd_v') {
                my $v = chance(0.6) ? $big : "'s$d'";
                $sql = "UPDATE t SET v = $v, n = n + $d WHERE id = $x;";
                $fp = { ids => [$x], mode => 'NK' };
            } elsif ($op eq 'upd_id') {
                $sql = "UPDATE t SET id = id + 10 WHERE id = $x;";
                $fp = { ids => [ $x, $x + 10 ], mode => 'UP' };
            } elsif ($op eq 'upd_ret') {
                $sql = "WITH u AS (UPDATE t SET n = n + $d WHERE k = $kk RETURNING id, n) SELECT * FROM u ORDER BY id;";
                $fp = { ids => undef, mode => 'NK' };
            } elsif ($op eq 'del') {
                $sql = "DELETE FROM t WHERE id = $x;";
                $fp = { ids => [$x], mode => 'UP' };
            } elsif ($op eq 'del_k') {
                $sql = "DELETE FROM t WHERE k = $kk;";
                $fp = { ids => undef, mode => 'UP' };
            } elsif ($op eq 'ins') {
                my $v = chance(0.3) ? $big : "'i$d'";
                $sql = "INSERT INTO t VALUES ($xi, $kk, $v, $d);";
                $fp = { ids => [$xi], mode => 'IN' };
            } elsif ($op eq 'ins_dn') {
                $sql = "INSERT INTO t VALUES ($xi, $kk, 'i$d', $d) ON CONFLICT (id) DO NOTHING;";
                $fp = { ids => [$xi], mode => 'IN' };
            } elsif ($op eq 'ins_du') {
                my $set = chance(0.5) ? "n = t.n + $d" : "n = t.n + $d, k = EXCLUDED.k";
                $sql = "INSERT INTO t VALUES ($xi, $kk, 'i$d', $d) ON CONFLICT (id) DO UPDATE SET $set;";
                $fp = { ids => [$xi], mode => 'IN' };
            } elsif ($op eq 'merge') {
                my $matched = pick(
                    "WHEN MATCHED THEN UPDATE SET n = t.n + $d",
                    "WHEN MATCHED AND t.n > 150 THEN DELETE WHEN MATCHED THEN UPDATE SET n = t.n + $d, k = s.k",
                    "WHEN MATCHED THEN DELETE");
                $sql = "MERGE INTO t USING (VALUES ($x, $kk)) s(id, k) ON t.id = s.id $matched "
                  . "WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.k, 'm$d', $d);";
                $fp = { ids => [$x], mode => 'IN' };
            } elsif ($op eq 'lock' || $op eq 'lock_k') {
                my ($clause, $mode) = @{ pick(['UPDATE', 'UP'], ['NO KEY UPDATE', 'NK'],
                                               ['SHARE', 'SH'], ['KEY SHARE', 'KS']) };
                my $wait = weighted('' => 3, ' NOWAIT' => 1, ' SKIP LOCKED' => 1);
                my $where = $op eq 'lock' ? "id = $x" : "k = $kk";
                $sql = "SELECT id, k, n FROM t WHERE $where ORDER BY id FOR $clause$wait;";
                $fp = { ids => ($op eq 'lock' ? [$x] : undef), mode => $mode, nowait => ($wait ne '') };
            } elsif ($op eq 'upd_id_k') {
                $sql = "UPDATE t SET id = id + 10 WHERE k = $kk;";
                $fp = { ids => undef, mode => 'UP' };
            } elsif ($op eq 'ins_mv') {
                # an upsert that changes the key of the row it finds
                $sql = "INSERT INTO t VALUES ($x, $kk, 'i$d', $d) ON CONFLICT (id) DO UPDATE SET id = t.id + 20, n = t.n + $d;";
                $fp = { ids => [ $x, $x + 20 ], mode => 'IN' };
            } elsif ($op eq 'del_ret') {
                $sql = "WITH d AS (DELETE FROM t WHERE k = $kk OR id = $x RETURNING id, k, n) SELECT * FROM d ORDER BY id;";
                $fp = { ids => undef, mode => 'UP' };
            } elsif ($op eq 'lock_all') {
                my ($clause, $mode) = @{ pick(['UPDATE', 'UP'], ['NO KEY UPDATE', 'NK'],
                                               ['SHARE', 'SH'], ['KEY SHARE', 'KS']) };
                my $wait = weighted('' => 2, ' SKIP LOCKED' => 1);
                $sql = "SELECT id, n FROM t ORDER BY id FOR $clause$wait;";
                $fp = { ids => undef, mode => $mode, nowait => ($wait ne '') };
            } elsif ($op eq 'sel_ios') {
                # index-only scans when sequential scans are off (the
                # visibility map after VACUUM)
                $sql = pick("SELECT id FROM t WHERE id >= 0 ORDER BY id;",
                            "SELECT k, count(*) FROM t WHERE k >= 0 GROUP BY k ORDER BY k;");
            } elsif ($op eq 'sel') {
                $sql = $READ;
            } elsif ($op eq 'sel_k') {
                $sql = "SELECT id, n FROM t WHERE k = $kk ORDER BY id;";
            } elsif ($op eq 'sp') {
                $sql = "SAVEPOINT sp;";
                $sp = 1;
            } elsif ($op eq 'sp_rb') {
                $sql = "ROLLBACK TO sp;";
            } elsif ($op eq 'sp_rel') {
                $sql = "RELEASE sp;";
                $sp = 0;
            } elsif ($op eq 'child') {
                $sql = "INSERT INTO c VALUES ($x, 's$d');";
                $fp = { ids => [$x], mode => 'KS' };
            }
            push @steps, { op => $op, sql => $sql, fp => $fp };
        }
        push @steps, chance(0.8) ? { op => 'commit', sql => 'COMMIT;', end => 1 }
                                 : { op => 'rollback', sql => 'ROLLBACK;', end => 1 };
        }
        for my $i (0 .. $#steps) {
            $steps[$i]{name} = "s${s}_" . ($i + 1) . "_$steps[$i]{op}";
            $steps[$i]{sess} = $s - 1;
        }
        my @set;
        push @set, "SET enable_seqscan = off; SET enable_bitmapscan = off;"
          if $s == $nsess || chance(0.3);
        push @sessions, { name => "s$s", steps => \@steps, setup => join(' ', @set) };
    }
    $sessions[0]{teardown} = $fk ? $READ_FK : $READ;
    $sessions[-1]{teardown} = $READ_K;

    # permutations
    my @perms;
    my $can_wait = 0;
    for my $a (@sessions) {
        for my $b (@sessions) {
            next if $a == $b;
            for my $sa (@{ $a->{steps} }) {
                next unless $sa->{fp} && !$sa->{fp}{nowait};
                for my $sb (@{ $b->{steps} }) {
                    $can_wait = 1 if $sb->{fp} && fp_conflict($sa->{fp}, $sb->{fp});
                }
            }
        }
    }
    my $ninterleave = interleavings(map { scalar @{ $_->{steps} } } @sessions);
    my $all = !$can_wait && $ninterleave <= 20 && chance(0.5);
    unless ($all) {
        my $want = 2 + int(rand(3));
        my %seen;
        for my $try (1 .. 40) {
            last if @perms >= $want;
            my $p = gen_permutation(\@sessions);
            next unless $p;
            my $line = join(' ', @$p);
            next if $seen{$line}++;
            push @perms, $line;
        }
        # the sessions one after another always works
        if (!@perms) {
            push @perms, join(' ', map { map { $_->{name} } @{ $_->{steps} } } @sessions);
        }
    }

    my $text = "# generated by test/isolation/random_oracle.pl --seeds $seed --only $idx\n";
    $text .= "# (heap is the oracle: expected output is this spec's run USING heap)\n\n";
    $text .= "setup\n{\n" . join('', map { "  $_\n" } @setup) . "}\n\n";
    $text .= "teardown\n{\n  DROP TABLE c, t;\n}\n" if $fk;
    $text .= "teardown\n{\n  DROP TABLE t;\n}\n" unless $fk;
    for my $s (@sessions) {
        $text .= "\nsession $s->{name}\n";
        $text .= "setup\t\t{ $s->{setup} }\n" if $s->{setup};
        for my $st (@{ $s->{steps} }) {
            $text .= "step $st->{name}\t{ $st->{sql} }\n";
        }
        $text .= "teardown\t{ $s->{teardown} }\n" if $s->{teardown};
    }
    $text .= "\n";
    $text .= "permutation $_\n" for @perms;
    $text .= "# no permutation lines: isolationtester runs all $ninterleave\n" if $all;
    return ($name, $text);
}

sub interleavings(@lens) {    # multinomial coefficient
    my ($n, $r) = (0, 1);
    for my $l (@lens) {
        for my $i (1 .. $l) { $n++; $r = $r * $n / $i; }
    }
    return $r;
}

# One random interleaving that isolationtester accepts under the footprint
# model, or undef when the random walk got stuck (a possible deadlock).
sub gen_permutation($sessions) {
    my $n = @$sessions;
    my @pos = (0) x $n;
    my @held = map { [] } 1 .. $n;      # footprints of each open transaction
    my @txn = (0) x $n;                 # transactions each session ended
    my @blockers = map { {} } 1 .. $n;  # session => its transaction it may wait on
    my @pending;                        # footprint of the step it may wait in
    my @out;
    my $last;
    my $waits_on;
    $waits_on = sub ($s, $t, $seen) {   # may $s (transitively) wait on $t?
        for my $b (sort keys %{ $blockers[$s] }) {
            next if $txn[$b] > $blockers[$s]{$b};
            return 1 if $b == $t;
            next if $seen->{$b}++;
            return 1 if $waits_on->($b, $t, $seen);
        }
        return 0;
    };
    while (1) {
        my @cand;
        for my $s (0 .. $n - 1) {
            next if $pos[$s] >= @{ $sessions->[$s]{steps} };
            next if grep { $txn[$_] <= $blockers[$s]{$_} } keys %{ $blockers[$s] };
            my $st = $sessions->[$s]{steps}[ $pos[$s] ];
            my %b;
            if ($st->{fp} && !$st->{fp}{nowait}) {
                for my $t (0 .. $n - 1) {
                    next if $t == $s;
                    $b{$t} = $txn[$t] if grep { fp_conflict($st->{fp}, $_) } @{ $held[$t] };
                }
            }
            next if grep { $waits_on->($_, $s, {}) } keys %b;
            # Two sessions waiting for the same row at once are woken
            # together when a waiter does not queue on the tuple lock: an
            # INSERT's unique check or ON CONFLICT, MERGE's insert, or a
            # session that holds a lock on the row already (heap skips the
            # queue then).  Which one wins is a race, on heap too: no such
            # pair.
            if (%b) {
                my $mine = grep { fp_meet($st->{fp}, $_) } @{ $held[$s] };
                next if grep {
                    my $u = $_;
                    $u != $s && $pending[$u] && fp_meet($st->{fp}, $pending[$u]) &&
                      (grep { $txn[$_] <= $blockers[$u]{$_} } keys %{ $blockers[$u] }) &&
                      ($mine || $st->{fp}{mode} eq 'IN' || $pending[$u]{mode} eq 'IN' ||
                       (grep { $_ != $pending[$u] && fp_meet($st->{fp}, $_) } @{ $held[$u] }))
                } 0 .. $n - 1;
            }
            # favour steps that wait and switching sessions: interleavings
            # with waits are the interesting ones
            my $w = (%b ? 4 : 1) * (defined $last && $last != $s ? 2 : 1);
            push @cand, [ $s, \%b ], $w;
        }
        last unless @cand;
        my ($s, $b) = @{ weighted(@cand) };
        $last = $s;
        my $st = $sessions->[$s]{steps}[ $pos[$s]++ ];
        push @out, $st->{name};
        $blockers[$s] = $b;
        $pending[$s] = %$b ? $st->{fp} : undef;
        push @{ $held[$s] }, $st->{fp} if $st->{fp};
        if ($st->{end}) {
            $txn[$s]++;
            $held[$s] = [];
        }
    }
    return (grep { $pos[$_] < @{ $sessions->[$_]{steps} } } 0 .. $n - 1) ? undef : \@out;
}

# ------------------------------------------------------------------ runner
my @specs;
for my $seed (@seeds) {
    for my $idx (defined $only ? ($only) : (1 .. $count)) {
        push @specs, [ gen_spec($seed, $idx) ];
    }
}

# WORKDIR is emptied first: only an empty folder or one of ours
if (-d $work && !-e "$work/.random_oracle") {
    opendir(my $dh, $work) or die "random_oracle: $work: $!\n";
    my @entries = grep { !/^\.\.?$/ } readdir($dh);
    die "random_oracle: $work is not empty and not a random_oracle work folder\n" if @entries;
}
remove_tree($work);
make_path("$work/specs");
write_file("$work/.random_oracle", "work folder of test/isolation/random_oracle.pl\n");
sub write_file($path, $text) {
    open(my $fh, '>', $path) or die "random_oracle: $path: $!\n";
    print $fh $text;
    close($fh) or die "random_oracle: $path: $!\n";
}
sub read_file($path) {
    open(my $fh, '<', $path) or return undef;
    local $/;
    my $t = <$fh>;
    close($fh);
    return $t;
}
for my $sp (@specs) {
    write_file("$work/specs/$sp->[0].spec", $sp->[1]);
}
if ($generate_only) {
    say "random_oracle: wrote " . scalar(@specs) . " specs into $work/specs";
    exit 0;
}

my $pg_config = $ENV{PG_CONFIG} // 'pg_config';
chomp(my $pkglibdir = `$pg_config --pkglibdir`);
chomp(my $bindir = `$pg_config --bindir`);
die "random_oracle: $pg_config does not run\n" unless $pkglibdir && $bindir;
my $isolation = "$pkglibdir/pgxs/src/test/isolation/pg_isolation_regress";
$ENV{PGISOLATIONTIMEOUT} //= 20;

# run NAME => (am, expected texts or undef) through pg_isolation_regress in
# $work/$tag; returns { name => output text or undef }
sub run_pass($tag, $am, $expected) {
    my $dir = "$work/$tag";
    make_path("$dir/specs", "$dir/expected", "$dir/out");
    for my $sp (@specs) {
        my ($name, $text) = @$sp;
        $text =~ s/USING minidb/USING $am/g;
        write_file("$dir/specs/$name.spec", $text);
        write_file("$dir/expected/$name.out", $expected ? ($expected->{$name} // '') : '');
    }
    my @cmd = ($isolation, "--inputdir=$dir", "--outputdir=$dir/out", "--bindir=$bindir",
               "--dbname=minidb_isorandom", map { $_->[0] } @specs);
    open(my $log, '>', "$dir/pg_isolation_regress.log") or die "random_oracle: $dir: $!\n";
    my $pid = open(my $fh, '-|');
    die "random_oracle: fork: $!\n" unless defined $pid;
    if (!$pid) {
        open(STDERR, '>&', \*STDOUT);
        exec(@cmd) or die "random_oracle: $isolation: $!\n";
    }
    print $log $_ while <$fh>;
    close($fh);
    close($log);
    my %out;
    $out{ $_->[0] } = read_file("$dir/out/results/$_->[0].out") for @specs;
    return \%out;
}

my $start = time;
my $heap1 = run_pass('heap1', 'heap', undef);
my $heap2 = run_pass('heap2', 'heap', undef);
my $minidb = run_pass('minidb', 'minidb', $heap1);
my ($pass, $fail, $discard) = (0, 0, 0);
for my $sp (@specs) {
    my $name = $sp->[0];
    my ($h1, $h2, $m) = ($heap1->{$name}, $heap2->{$name}, $minidb->{$name});
    if (!defined $h1 || !defined $h2) {
        say "isorandom $name ... discarded (heap run gave no output: see $work/heap1/pg_isolation_regress.log)";
        $discard++;
    } elsif ($h1 ne $h2) {
        say "isorandom $name ... discarded (heap not deterministic)";
        $discard++;
    } elsif (defined $m && $m eq $h1) {
        say "isorandom $name ... ok";
        $pass++;
    } else {
        my $dir = "$work/failed/$name";
        make_path($dir);
        write_file("$dir/$name.spec", read_file("$work/specs/$name.spec"));
        write_file("$dir/heap.out", $h1);
        write_file("$dir/minidb.out", $m // '');
        system("diff -u '$dir/heap.out' '$dir/minidb.out' > '$dir/diff'");
        say "isorandom $name ... FAILED (see $dir)";
        $fail++;
    }
}
my $secs = time - $start;
say "isorandom: $pass passed, $fail failed, $discard discarded (${secs}s; seeds @seeds)";
exit($fail ? 1 : 0);
