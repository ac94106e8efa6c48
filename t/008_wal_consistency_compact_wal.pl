# The wal_consistency_checking test again, with minidb_am in
# shared_preload_libraries: every change to a minidb page is then a record
# of minidb's resource manager (PREPEND, MOVE, PRUNE, VISIBLE, DELTA),
# masked by its rm_mask on replay.
use strict;
use warnings;
use FindBin;
# loaded here, at compile time, so that its INIT block runs (port setup)
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{MINIDB_TAP_PRELOAD} = 1;
do "$FindBin::Bin/007_wal_consistency.pl";
die $@ if $@;
