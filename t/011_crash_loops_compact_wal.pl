# The crash loops again, with minidb_am in shared_preload_libraries:
# compact records of minidb's resource manager and its rm_mask.
use strict;
use warnings;
use FindBin;
# loaded here, at compile time, so that its INIT block runs (port setup)
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{MINIDB_TAP_PRELOAD} = 1;
do "$FindBin::Bin/010_crash_loops.pl";
die $@ if $@;
