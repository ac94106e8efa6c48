# The streaming-replica test again, with minidb_am in shared_preload_libraries:
# in-place prepends and moving UPDATEs are then logged as minidb's own
# compact WAL records (minidb_xlog.c) and replayed by its resource manager,
# where without preloading they are generic WAL.
use strict;
use warnings;
use FindBin;
# loaded here, at compile time, so that its INIT block runs (port setup)
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

$ENV{MINIDB_TAP_PRELOAD} = 1;
do "$FindBin::Bin/002_streaming_replica.pl";
die $@ if $@;
