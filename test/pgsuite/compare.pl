#!/usr/bin/perl
# test/pgsuite/compare.pl: the verdicts of test/pgsuite/run.sh
#
#   compare.pl --suite core|isolation --heap DIR                 heap alone,
#       each test against PostgreSQL's expected output (pg_regress's verdict)
#   compare.pl --suite S --heap DIR --am DIR --accepted FILE     each test's
#       output (results/NAME.out) against heap's
#
# A run folder (written by run.sh) holds status.tsv (name, status, detail),
# results/, log/server.log, crashes.tsv, notes and seconds.
#
# Prints "ok NAME" or "FAILED NAME (reason)" per test, a summary and, last,
# "N passed, M failed".  Exit status 0 only when nothing failed.  The diff of
# every test whose output differs from heap's goes to AMDIR/diffs/NAME.diff.
#
# The accepted list: "test kind free text" per line ("#" starts a comment);
# isolation specs are written "isolation/NAME".  Kinds, each checked here:
#   order    the sorted lines of both outputs are equal, and that holds
#            statement by statement (between consecutive "(N rows)" lines),
#            so that rows only move within one result
#   ctid     the outputs are equal once every "(n,m)" is replaced by "(#,#)"
#            (and the padding of columns, which follows the values' widths)
#   plan     every changed line lies inside an EXPLAIN result (from a
#            "QUERY PLAN" / explain* column header to its "(N rows)" line)
#   catalog  every changed line names minidb (or is a "(N rows)" line)
#   syscol   the outputs are equal once every "(n,m)" is masked and so are
#            the values of the columns named cmin or cmax (heap's cmin
#            column shows the combo command id or cmax an UPDATE wrote
#            over the inserting command's id; minidb shows the inserting
#            command's id, which is what the documentation says cmin is)
#   tidperm  (isolation) the text starts with the permutation, quoted:
#            "step step ..."; the outputs are equal once every "(n,m)" is
#            masked, except inside that permutation's output, which may
#            differ (a permutation whose steps name the TID heap gives a
#            new version, e.g. WHERE ctid = '(0,3)'; minidb keeps a row's
#            TID when it updates it)
# Never accepted, whatever the kind: a crash, a hang, no output, an internal
# error (SQLSTATE XX000 in the server log for that test) or a changed line
# with ERROR:/FATAL:/PANIC: or a lost connection.  At most 20 core tests
# and 3 isolation specs may be listed.
use strict;
use warnings;
use Getopt::Long;
use File::Path qw(make_path);

my ($suite, $heapdir, $amdir, $accepted) = ('core');
my $max_core = 20;
GetOptions(
    'suite=s'    => \$suite,
    'heap=s'     => \$heapdir,
    'am=s'       => \$amdir,
    'accepted=s' => \$accepted,
    'max-core=i' => \$max_core,
) or die "usage\n";
die "--heap is required\n" unless $heapdir;

my @KINDS = qw(order ctid plan catalog syscol tidperm);
my $prefix = $suite eq 'isolation' ? 'isolation/' : '';

sub slurp {
    my ($f) = @_;
    open(my $fh, '<', $f) or return undef;
    local $/;
    my $s = <$fh>;
    close $fh;
    return $s;
}

sub lines_of {
    my ($f) = @_;
    my $s = slurp($f);
    return undef unless defined $s;
    return [ split /\n/, $s, -1 ];
}

sub read_status {
    my ($dir) = @_;
    my (@order, %st);
    open(my $fh, '<', "$dir/status.tsv") or return ([], {});
    while (<$fh>) {
        chomp;
        my ($n, $s, $d) = split /\t/, $_, 3;
        push @order, $n unless exists $st{$n};
        $st{$n} = { status => $s, detail => $d // '' };
    }
    return (\@order, \%st);
}

# The server log: which test each backend ran (log_connections and the %a
# of log_line_prefix '%m [%p] %a %e '), crashes, and per test the errors
# with SQLSTATE XX000 (internal) and 53200 (out of memory).
sub read_log {
    my ($dir) = @_;
    my %r = (crashes => [], internal => {}, oom => {}, panic => 0, trap => 0);
    my %pidtest;
    open(my $fh, '<', "$dir/log/server.log") or return \%r;
    my $last_crash;
    while (my $l = <$fh>) {
        chomp $l;
        if ($l =~ /^TRAP: /) {
            $r{trap}++;
            push @{ $r{crashes} }, { line => $l, test => undef };
            next;
        }
        if ($l !~ /^\S+ \S+ \S+ \[\d+\] / && $last_crash && defined $last_crash->{query}
            && $last_crash->{query} eq '') {
            # the query of "Failed process was running:" began on the next line
            ($last_crash->{query} = $l) =~ s/^\s+//;
            next;
        }
        next unless $l =~ /^\S+ \S+ \S+ \[(\d+)\] (\S*) ?(\w{5}|) ?(\w+):\s+(.*)$/;
        my ($pid, $app, $code, $level, $msg) = ($1, $2, $3, $4, $5);
        if ($msg =~ /^connection authorized: .*application_name=(\S+)/) {
            $app = $1;
        }
        if ($app =~ m{^(?:pg_regress|isolation)/([^/\s]+)}) {
            $pidtest{$pid} = $1;
        }
        my $test = $pidtest{$pid};
        if ($level eq 'LOG' && $msg =~ /\(PID (\d+)\) was terminated by signal (\d+)(: .*)?/) {
            $last_crash = { line => $msg, test => $pidtest{$1}, signal => $2 };
            push @{ $r{crashes} }, $last_crash;
            next;
        }
        if ($last_crash && $level eq 'DETAIL' && $msg =~ /^Failed process was running: ?(.*)/) {
            $last_crash->{query} = $1;
            $last_crash = undef if $1 ne '';
            next;
        }
        $last_crash = undef;
        if ($level eq 'PANIC') {
            $r{panic}++;
            push @{ $r{crashes} }, { line => "PANIC: $msg", test => $test };
        }
        next unless defined $test && $level eq 'ERROR';
        push @{ $r{internal}{$test} }, $msg if $code eq 'XX000';
        push @{ $r{oom}{$test} }, $msg if $code eq '53200' && $msg =~ /out of memory/;
    }
    close $fh;
    return \%r;
}

sub read_accepted {
    my ($f) = @_;
    my (%acc, @problems);
    return (\%acc, \@problems) unless $f && -f $f;
    open(my $fh, '<', $f) or return (\%acc, ["cannot read $f"]);
    while (<$fh>) {
        chomp;
        s/#.*//;
        next unless /\S/;
        my ($t, $k, $text) = split ' ', $_, 3;
        if (!defined $k || !grep { $_ eq $k } @KINDS) {
            push @problems, "line $.: kind must be one of @KINDS";
            next;
        }
        push @problems, "line $.: $t listed twice" if $acc{$t};
        $acc{$t} = { kind => $k, text => $text // '' };
    }
    close $fh;
    my $core = grep { !m{^isolation/} } keys %acc;
    push @problems, "$core core tests listed, at most $max_core" if $core > $max_core;
    my $iso = grep { m{^isolation/} } keys %acc;
    push @problems, "$iso isolation specs listed, at most 3" if $iso > 3;
    return (\%acc, \@problems);
}

# Line numbers (1-based) that differ: ([old...], [new...])
sub changed_lines {
    my ($a, $b) = @_;
    my @out = `diff --unchanged-line-format= --old-line-format='-%dn\n' --new-line-format='+%dn\n' '$a' '$b'`;
    my (@old, @new);
    for (@out) {
        push @old, $1 if /^-(\d+)/;
        push @new, $1 if /^\+(\d+)/;
    }
    return (\@old, \@new);
}

# Lines inside EXPLAIN results: header "QUERY PLAN" (or a column named
# explain...), its dashes line, the plan, up to and including "(N rows)"
sub plan_lines {
    my ($l) = @_;
    my %in;
    my $inside = 0;
    for my $i (0 .. $#$l) {
        my $s = $l->[$i];
        if (!$inside && $s =~ /^\s*(QUERY PLAN|explain\w*)\s*$/i
            && $i < $#$l && $l->[ $i + 1 ] =~ /^-+$/) {
            $inside = 1;
        }
        $in{ $i + 1 } = 1 if $inside;
        $inside = 0 if $inside && $s =~ /^\(\d+ rows?\)$/;
    }
    return \%in;
}

# The output cut after every "(N rows)" line
sub segments {
    my ($l) = @_;
    my @seg = ([]);
    for (@$l) {
        push @{ $seg[-1] }, $_;
        push @seg, [] if /^\(\d+ rows?\)$/;
    }
    return @seg;
}

# Diagnosis only (no list kind): with the EXPLAIN results taken out of both
# outputs, does the order check hold?
sub order_after_plans {
    my ($h, $m) = @_;
    my $ph = plan_lines($h);
    my $pm = plan_lines($m);
    my @h2 = map { $h->[$_] } grep { !$ph->{ $_ + 1 } } 0 .. $#$h;
    my @m2 = map { $m->[$_] } grep { !$pm->{ $_ + 1 } } 0 .. $#$m;
    return 0 if join("\n", sort @h2) ne join("\n", sort @m2);
    my @sh = segments(\@h2);
    my @sm = segments(\@m2);
    return 0 if @sh != @sm;
    for my $i (0 .. $#sh) {
        return 0 if join("\n", sort @{ $sh[$i] }) ne join("\n", sort @{ $sm[$i] });
    }
    return 1;
}

my $BAD = qr/\b(?:ERROR|FATAL|PANIC):|server closed the connection|connection to server was lost|terminating connection/;

# Every "(n,m)" masked
# (and the padding of columns, which follows the widths of the values)
sub mask_tids {
    return [ map { my $x = s/\(\d+,\d+\)/(#,#)/gr; $x =~ s/\s*\|\s*/|/g; $x =~ s/^\s+|\s+$//g; $x =~ s/^[-+]+$/-/; $x } @{ $_[0] } ];
}

# The values of columns named cmin or cmax masked, in every result whose
# header (a line of column names, then a line of dashes) names them
sub mask_cid_columns {
    my ($l) = @_;
    my @out;
    my @cols;
    for my $i (0 .. $#$l) {
        my $s = $l->[$i];
        if ($i < $#$l && $l->[ $i + 1 ] =~ /^-+(\+-+)*$/ && $s =~ /\|/) {
            my @names = map { s/^\s+|\s+$//gr } split /\|/, $s, -1;
            @cols = grep { $names[$_] =~ /^(cmin|cmax)$/ } 0 .. $#names;
        } elsif ($s =~ /^\(\d+ rows?\)$/) {
            @cols = ();
        } elsif (@cols && $s =~ /\|/) {
            my @f = split /\|/, $s, -1;
            $f[$_] = ' # ' for grep { $_ <= $#f } @cols;
            $s = join '|', @f;
        }
        push @out, $s;
    }
    return \@out;
}

# The output without the block of one isolation permutation
sub without_permutation {
    my ($l, $perm) = @_;
    my @out;
    my $skip = 0;
    for (@$l) {
        if (/^starting permutation: (.*)$/) {
            $skip = ($1 =~ s/\s+$//r) eq $perm;
        }
        push @out, $_ unless $skip;
    }
    return \@out;
}

# check_kind(KIND, heapfile, amfile, heaplines, amlines, text) -> error
# text or ''
sub check_kind {
    my ($kind, $hf, $mf, $h, $m, $text) = @_;
    my ($old, $new) = changed_lines($hf, $mf);
    my @changed = ((map { $h->[ $_ - 1 ] } @$old), (map { $m->[ $_ - 1 ] } @$new));
    my @bad = grep { /$BAD/ } @changed;
    return "a changed line reports an error: $bad[0]" if @bad;
    if ($kind eq 'order') {
        my $a = join "\n", sort @$h;
        my $b = join "\n", sort @$m;
        return 'the sorted outputs differ' if $a ne $b;
        my @sh = segments($h);
        my @sm = segments($m);
        return 'rows moved between results' if @sh != @sm;
        for my $i (0 .. $#sh) {
            return "rows moved between results (result " . ($i + 1) . ")"
                if join("\n", sort @{ $sh[$i] }) ne join("\n", sort @{ $sm[$i] });
        }
        return '';
    }
    if ($kind eq 'ctid') {
        my $a = join "\n", @{ mask_tids($h) };
        my $b = join "\n", @{ mask_tids($m) };
        return $a eq $b ? '' : 'the outputs differ outside (n,m) values';
    }
    if ($kind eq 'plan') {
        my $ph = plan_lines($h);
        my $pm = plan_lines($m);
        for (@$old) { return "line $_ of heap's output is outside an EXPLAIN result: $h->[$_-1]" unless $ph->{$_} }
        for (@$new) { return "line $_ of minidb's output is outside an EXPLAIN result: $m->[$_-1]" unless $pm->{$_} }
        return '';
    }
    if ($kind eq 'syscol') {
        my $a = join "\n", @{ mask_cid_columns(mask_tids($h)) };
        my $b = join "\n", @{ mask_cid_columns(mask_tids($m)) };
        return $a eq $b ? '' : 'the outputs differ outside (n,m) values and cmin/cmax columns';
    }
    if ($kind eq 'tidperm') {
        my ($perm) = ($text // '') =~ /^"([^"]+)"/;
        return 'no permutation named ("step step ..." first in the text)' unless $perm;
        my $hp = without_permutation($h, $perm);
        my $mp = without_permutation($m, $perm);
        return "no permutation \"$perm\" in heap's output" if @$hp == @$h;
        my $a = join "\n", @{ mask_tids($hp) };
        my $b = join "\n", @{ mask_tids($mp) };
        return $a eq $b ? '' : "the outputs differ outside permutation \"$perm\" and (n,m) values";
    }
    if ($kind eq 'catalog') {
        my @other = grep { !/minidb/i && !/^\(\d+ rows?\)$/ } @changed;
        return "a changed line does not name minidb: $other[0]" if @other;
        return '';
    }
    return "unknown kind $kind";
}

sub short { my $s = shift // ''; $s =~ s/\s+/ /g; return length($s) > 110 ? substr($s, 0, 107) . '...' : $s; }

my ($order_h, $st_h) = read_status($heapdir);
my $log_h = read_log($heapdir);
my ($pass, $fail) = (0, 0);
my (@failed, %byhint);

sub verdict {
    my ($ok, $name, $reason, $hint) = @_;
    if ($ok) {
        $pass++;
        print "ok $name", ($reason ? " ($reason)" : ''), "\n";
    } else {
        $fail++;
        push @failed, $name;
        push @{ $byhint{ $hint // 'other' } }, $name;
        print "FAILED $name ($reason)\n";
    }
}

# The server log of a run: crashes, PANIC, TRAP fail the run
sub server_log_verdict {
    my ($what, $log) = @_;
    my @c = @{ $log->{crashes} };
    return unless @c;
    my @where = map { ($_->{test} // '?') . ': ' . short($_->{line}) } @c;
    verdict(0, $what, scalar(@c) . " crash/PANIC/TRAP line(s) in the server log; " . join('; ', @where[0 .. ($#where < 2 ? $#where : 2)]), 'crash');
}

sub notes {
    my ($dir) = @_;
    my $n = slurp("$dir/notes") // '';
    return grep { /\S/ } split /\n/, $n;
}

if (!$amdir) {
    # heap alone, against PostgreSQL's expected output
    for my $t (@$order_h) {
        my $s = $st_h->{$t};
        if ($s->{status} eq 'ok') {
            verdict(1, "$prefix$t");
        } elsif ($s->{status} eq 'ignored') {
            verdict(1, "$prefix$t", 'differs from expected, ignored by the schedule');
        } elsif ($s->{status} eq 'skipped') {
            verdict(0, "$prefix$t", 'skipped (PGSUITE_SKIP)', 'skipped');
        } elsif ($s->{status} eq 'failed') {
            verdict(0, "$prefix$t", "differs from PostgreSQL's expected output $s->{detail}", 'differs from expected');
        } else {
            verdict(0, "$prefix$t", "$s->{status}: $s->{detail}", $s->{status});
        }
    }
    server_log_verdict("${prefix}server-log", $log_h);
    print "\n==== $suite on heap: summary ====\n";
    print "time: ", (slurp("$heapdir/seconds") // '?') =~ s/\s+//r, " s\n";
    print "note: $_\n" for notes($heapdir);
    print "diffs against expected: $heapdir/regression.diffs.all\n" if $fail;
    print "$pass passed, $fail failed\n";
    exit($fail ? 1 : 0);
}

# ---------------------------------------------------------------- minidb vs heap
my ($order_m, $st_m) = read_status($amdir);
my $log_m = read_log($amdir);
my ($acc, $acc_problems) = read_accepted($accepted);
my %crash_test;
for my $c (@{ $log_m->{crashes} }) {
    push @{ $crash_test{ $c->{test} } }, $c if defined $c->{test};
}
# crashes run.sh saw while a group/spec ran, for those the log cannot place
my %crash_group;
if (open(my $fh, '<', "$amdir/crashes.tsv")) {
    while (<$fh>) {
        chomp;
        my ($g, $l) = split /\t/, $_, 2;
        next unless $l =~ /terminated by signal|PANIC|TRAP/;
        $crash_group{$_} = $g for split ' ', $g;
    }
}
make_path("$amdir/diffs");
my @unneeded;
my %seen;

for my $t (@$order_m) {
    my $name = "$prefix$t";
    $seen{$name} = 1;
    my $s  = $st_m->{$t};
    my $hs = $st_h->{$t};
    my $hf = "$heapdir/results/$t.out";
    my $mf = "$amdir/results/$t.out";
    my $a  = $acc->{$name};
    if (my $c = $crash_test{$t}) {
        verdict(0, $name, "crash: " . short($c->[0]{line}) . (defined $c->[0]{query} ? '; running: ' . short($c->[0]{query}) : ''), 'crash');
        next;
    }
    if ($s->{status} eq 'hang') {
        verdict(0, $name, "hang: $s->{detail}", 'hang');
        next;
    }
    if ($s->{status} eq 'skipped') {
        verdict(0, $name, 'skipped (PGSUITE_SKIP)', 'skipped');
        next;
    }
    if ($s->{status} eq 'notrun' || $s->{status} eq 'noresult' || !-f $mf) {
        verdict(0, $name, "no output: $s->{status} $s->{detail}", 'no output');
        next;
    }
    if (!$hs || !-f $hf) {
        verdict(0, $name, 'no heap output to compare with (baseline)', 'no baseline');
        next;
    }
    my $h = lines_of($hf);
    my $m = lines_of($mf);
    if (join("\n", @$h) eq join("\n", @$m)) {
        push @unneeded, $name if $a;
        verdict(1, $name);
        next;
    }
    # differs
    my $label_h = "heap/results/$t.out";
    my $label_m = "minidb/results/$t.out";
    my $d = `diff -u --label '$label_h' --label '$label_m' '$hf' '$mf'`;
    (my $df = "$amdir/diffs/$t.diff") =~ s{/isolation/}{/};
    if (open(my $fh, '>', $df)) { print $fh $d; close $fh; }
    my ($old, $new) = changed_lines($hf, $mf);
    my $size = sprintf('-%d +%d lines', scalar @$old, scalar @$new);
    my @internal = @{ $log_m->{internal}{$t} // [] };
    my @internal_h = @{ $log_h->{internal}{$t} // [] };
    my @oom = @{ $log_m->{oom}{$t} // [] };
    my $cg = $crash_group{$t};
    # what kind of difference it looks like
    my ($hint, $why);
    my @newlines = map { $m->[ $_ - 1 ] } @$new;
    my @oldlines = map { $h->[ $_ - 1 ] } @$old;
    if ($cg) {
        my @who = grep { $crash_group{$_} eq $cg && $crash_test{$_} } keys %crash_group;
        ($hint, $why) = ('crash of another test', 'lost its session: the server crashed while its group ran'
            . (@who ? ' (crash in ' . join(' ', sort @who) . ')' : " ($cg)"));
    } elsif (@internal > @internal_h) {
        ($hint, $why) = ('internal error', 'internal error XX000: ' . short($internal[0]));
    } elsif (@oom) {
        ($hint, $why) = ('out of memory', 'out of memory: ' . short($oom[0]));
    } elsif (grep { /connection to server was lost|server closed the connection/ } @newlines) {
        ($hint, $why) = ('connection lost', 'connection lost');
    } elsif (my ($c) = grep { /^isolationtester: canceling step|timed out after \d+ seconds/ } @newlines) {
        ($hint, $why) = ('hang (step cancelled)', short($c));
    } elsif (($c) = grep { /canceling statement due to (lock|statement) timeout/ } @newlines) {
        ($hint, $why) = ('hang (lock/statement timeout)', 'waited until ' . ($c =~ /(lock|statement) timeout/)[0] . '_timeout: ' . short($c));
    } elsif (grep { /\b(ERROR|FATAL):/ } @newlines, @oldlines) {
        my ($e) = (grep({ /\b(ERROR|FATAL):/ } @newlines), grep({ /\b(ERROR|FATAL):/ } @oldlines));
        ($hint, $why) = ('error differs', 'errors differ: ' . short($e));
    } else {
        my @would = grep { check_kind($_, $hf, $mf, $h, $m) eq '' } @KINDS;
        if (@would) {
            ($hint, $why) = ("$would[0] only", "$would[0] only, not listed");
        } elsif (order_after_plans($h, $m)) {
            ($hint, $why) = ('order and plan only', 'rows in another order and other plans, nothing else');
        } else {
            ($hint, $why) = ('output differs', 'output differs');
        }
    }
    if ($a && $hint !~ /^(crash|internal error|out of memory|connection lost)/) {
        my $err = check_kind($a->{kind}, $hf, $mf, $h, $m, $a->{text});
        if ($err eq '') {
            verdict(1, $name, "accepted: $a->{kind}");
        } else {
            verdict(0, $name, "listed as $a->{kind}, but $err; $size", "listed, check fails");
        }
        next;
    }
    verdict(0, $name, "$why; $size" . ($a ? "; listed as $a->{kind}, which cannot cover this" : ''), $hint);
}

for my $p (@$acc_problems) {
    verdict(0, 'accepted.txt', $p, 'accepted list');
}
for my $n (sort keys %$acc) {
    next if $prefix && $n !~ m{^isolation/};
    next if !$prefix && $n =~ m{^isolation/};
    print "note: accepted.txt lists $n, which did not run\n" unless $seen{$n};
}
server_log_verdict("${prefix}server-log", $log_m);
server_log_verdict("${prefix}server-log-heap", $log_h);

print "\n==== $suite: minidb against heap, summary ====\n";
printf "time: heap %s s, minidb %s s\n", map { (slurp("$_/seconds") // '?') =~ s/\s+//r } $heapdir, $amdir;
my @hr = grep { $st_h->{$_}{status} ne 'skipped' } @$order_h;
my $hp = grep { $st_h->{$_}{status} eq 'ok' || $st_h->{$_}{status} eq 'ignored' } @hr;
my @hf = grep { $st_h->{$_}{status} ne 'ok' && $st_h->{$_}{status} ne 'ignored' } @hr;
printf "heap baseline: %d of %d match PostgreSQL's expected output%s\n", $hp, scalar @hr,
    (@hf ? ' (differ: ' . join(' ', @hf) . ')' : '');
print "note: accepted.txt lists $_, whose output now equals heap's: remove the line\n" for @unneeded;
print "note (heap): $_\n" for notes($heapdir);
print "note (minidb): $_\n" for notes($amdir);
for my $k (sort { @{ $byhint{$b} } <=> @{ $byhint{$a} } || $a cmp $b } keys %byhint) {
    printf "%-30s %3d  %s\n", $k, scalar @{ $byhint{$k} }, join(' ', @{ $byhint{$k} });
}
print "diffs: $amdir/diffs/\n" if $fail;
print "$pass passed, $fail failed\n";
exit($fail ? 1 : 0);
