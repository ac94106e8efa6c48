# Logical replication of minidb tables.
#
# Preloaded (minidb's resource manager decodes minidb's row changes,
# minidb_logical.c): publications of every kind -- FOR TABLE, ALTER
# PUBLICATION ... ADD TABLE, FOR TABLES IN SCHEMA, FOR ALL TABLES -- accept
# minidb tables, writes to them work, and a subscriber (whose tables are
# minidb tables too, written by its apply worker) ends up with the
# publisher's rows: initial copy, INSERT, multi-row INSERT, in-place and
# moving UPDATE, key UPDATE, DELETE, COPY, TOAST values, ON CONFLICT,
# TRUNCATE.
#
# Not preloaded, wal_level = logical: minidb logs generic WAL, which
# decoding would skip without a word, so every write to a decoded minidb
# table fails with FEATURE_NOT_SUPPORTED at once (INSERT, UPDATE, DELETE,
# COPY, INSERT ... ON CONFLICT), publication or not; unlogged and
# temporary minidb tables, reads, heap tables and rewrites (ALTER TABLE
# ... SET ACCESS METHOD minidb, VACUUM FULL, CLUSTER) keep working.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $pub = PostgreSQL::Test::Cluster->new('publisher');
$pub->init(allows_streaming => 'logical');
$pub->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'");
$pub->start;
my $sub = PostgreSQL::Test::Cluster->new('subscriber');
$sub->init;
$sub->start;

my $tables = q{
CREATE TABLE m (id int PRIMARY KEY, k int, v text, big text) USING minidb;
CREATE INDEX ON m (k);
CREATE TABLE h (id int PRIMARY KEY, v text) USING heap;
CREATE SCHEMA s;
CREATE TABLE s.sm (id int PRIMARY KEY, v text) USING minidb;
CREATE TABLE added (id int PRIMARY KEY, v text) USING minidb;
};
$pub->safe_psql('postgres', "CREATE EXTENSION minidb_am; $tables");
$pub->safe_psql('postgres', q{
INSERT INTO m SELECT i, i, 'before' || i, NULL FROM generate_series(1, 50) i;
INSERT INTO s.sm VALUES (1, 'before');
CREATE PUBLICATION p1 FOR TABLE m, h;
ALTER PUBLICATION p1 ADD TABLE added;
CREATE PUBLICATION p2 FOR TABLES IN SCHEMA s;
});
$sub->safe_psql('postgres', "CREATE EXTENSION minidb_am; $tables");
my $connstr = $pub->connstr . ' dbname=postgres';
$sub->safe_psql('postgres',
	"CREATE SUBSCRIPTION sub CONNECTION '$connstr' PUBLICATION p1, p2");
$pub->wait_for_catchup('sub');
$sub->poll_query_until('postgres',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die "initial sync did not finish";
is($sub->safe_psql('postgres', 'SELECT count(*), sum(k) FROM m'), '50|1275',
	'the initial copy of a published minidb table reaches the subscriber');

# Writes to published minidb tables work (they used to fail), and replicate
$pub->safe_psql('postgres', q{
INSERT INTO m VALUES (100, 100, 'one', NULL);
INSERT INTO m SELECT i, i, 'many', NULL FROM generate_series(101, 110) i;
UPDATE m SET v = 'in place' WHERE id BETWEEN 1 AND 10;
UPDATE m SET k = k + 1000 WHERE id BETWEEN 11 AND 20;
UPDATE m SET id = id + 200 WHERE id BETWEEN 21 AND 25;
DELETE FROM m WHERE id BETWEEN 26 AND 30;
INSERT INTO m SELECT 300, 300, 'toast', string_agg(md5(g::text), '') FROM generate_series(1, 1000) g;
UPDATE m SET v = 'toast kept' WHERE id = 300;
UPDATE m SET big = big || 'more' WHERE id = 300;
INSERT INTO m VALUES (1, 1, 'conflict', NULL), (400, 400, 'new', NULL)
  ON CONFLICT (id) DO UPDATE SET v = excluded.v;
INSERT INTO h VALUES (1, 'heap');
INSERT INTO added VALUES (1, 'added');
INSERT INTO s.sm VALUES (2, 'schema');
UPDATE s.sm SET v = 'schema2' WHERE id = 1;
});
$pub->safe_psql('postgres', "COPY m (id, k, v) FROM PROGRAM 'printf \"500\\t500\\tcopied\\n501\\t501\\tcopied\\n\"'");

my $q_m = "SELECT id, k, v, md5(coalesce(big, '')) FROM m ORDER BY id";
$pub->wait_for_catchup('sub');
is($sub->safe_psql('postgres', $q_m), $pub->safe_psql('postgres', $q_m),
	'FOR TABLE: the subscriber has the publisher\'s minidb rows (INSERT, in-place and moving UPDATE, key UPDATE, DELETE, TOAST, ON CONFLICT, COPY)');
is($sub->safe_psql('postgres', 'SELECT * FROM added'), '1|added',
	'ALTER PUBLICATION ... ADD TABLE of a minidb table replicates');
is($sub->safe_psql('postgres', 'SELECT * FROM s.sm ORDER BY id'), "1|schema2\n2|schema",
	'FOR TABLES IN SCHEMA with a minidb table replicates');
is($sub->safe_psql('postgres', 'SELECT * FROM h'), '1|heap',
	'the heap table of the same publication replicates');

# FOR ALL TABLES: accepted, minidb writes keep working and replicate
$pub->safe_psql('postgres', q{
CREATE DATABASE alldb;
});
$pub->safe_psql('alldb', q{
CREATE EXTENSION minidb_am;
CREATE TABLE a (id int PRIMARY KEY, v text) USING minidb;
CREATE PUBLICATION pall FOR ALL TABLES;
INSERT INTO a VALUES (1, 'x');
});
$sub->safe_psql('postgres', q{
CREATE DATABASE alldb;
});
$sub->safe_psql('alldb', q{
CREATE EXTENSION minidb_am;
CREATE TABLE a (id int PRIMARY KEY, v text) USING minidb;
});
my $connall = $pub->connstr . ' dbname=alldb';
$sub->safe_psql('alldb',
	"CREATE SUBSCRIPTION suball CONNECTION '$connall' PUBLICATION pall");
$pub->wait_for_catchup('suball');
$sub->poll_query_until('alldb',
	"SELECT count(*) = 0 FROM pg_subscription_rel WHERE srsubstate NOT IN ('r', 's')")
  or die "initial sync did not finish";
my ($ret, $out, $err) = $pub->psql('alldb', q{
INSERT INTO a VALUES (2, 'y');
UPDATE a SET v = 'x2' WHERE id = 1;
DELETE FROM a WHERE id = 2;
INSERT INTO a VALUES (3, 'z');
});
is($ret, 0, 'FOR ALL TABLES: writes to minidb tables work') or diag($err);
$pub->wait_for_catchup('suball');
is($sub->safe_psql('alldb', 'SELECT * FROM a ORDER BY id'), "1|x2\n3|z",
	'FOR ALL TABLES: the subscriber has the rows');

# TRUNCATE replicates as for heap
$pub->safe_psql('postgres', 'TRUNCATE m');
$pub->wait_for_catchup('sub');
is($sub->safe_psql('postgres', 'SELECT count(*) FROM m'), '0',
	'TRUNCATE of a published minidb table replicates');

$sub->safe_psql('alldb', 'DROP SUBSCRIPTION suball');
$sub->safe_psql('postgres', 'DROP SUBSCRIPTION sub');
$sub->stop;
$pub->stop;

# ---------------------------------------------------------------------
# Not preloaded: writes that decoding would lose are refused
# ---------------------------------------------------------------------
my $node = PostgreSQL::Test::Cluster->new('generic');
$node->init(allows_streaming => 'logical');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE TABLE m (id int PRIMARY KEY, v text) USING minidb;
CREATE TABLE h (id int PRIMARY KEY, v text) USING heap;
CREATE UNLOGGED TABLE um (id int PRIMARY KEY, v text) USING minidb;
CREATE PUBLICATION pall FOR ALL TABLES;
});

my $refusal = qr/ERROR:  cannot write to minidb table "m" while wal_level is logical and minidb_am is not preloaded/;
foreach my $stmt (
	"INSERT INTO m VALUES (1, 'x')",
	"INSERT INTO m VALUES (1, 'x') ON CONFLICT (id) DO NOTHING",
	"COPY m FROM PROGRAM 'printf \"3\\tz\\n\"'",
	"INSERT INTO m SELECT i, 'x' FROM generate_series(1, 3) i")
{
	($ret, $out, $err) = $node->psql('postgres', $stmt);
	like($err, $refusal, "refused without preloading: $stmt");
}
($ret, $out, $err) = $node->psql('postgres',
	"\\set VERBOSITY verbose\nINSERT INTO m VALUES (1, 'x')");
like($err, qr/ERROR:  0A000:/, 'with FEATURE_NOT_SUPPORTED');
like($err, qr/HINT:  Add minidb_am to shared_preload_libraries/,
	'and a hint that says what to do');

# rows written before wal_level became logical can be read, not changed
$node->append_conf('postgresql.conf', 'wal_level = replica');
$node->safe_psql('postgres', 'DROP PUBLICATION pall');
$node->restart;
$node->safe_psql('postgres', "INSERT INTO m VALUES (1, 'old'), (2, 'old')");
$node->append_conf('postgresql.conf', 'wal_level = logical');
$node->restart;
is($node->safe_psql('postgres', 'SELECT count(*) FROM m'), '2',
	'reading a minidb table works');
($ret, $out, $err) = $node->psql('postgres', "UPDATE m SET v = 'y' WHERE id = 1");
like($err, $refusal, 'UPDATE is refused');
($ret, $out, $err) = $node->psql('postgres', "DELETE FROM m WHERE id = 1");
like($err, $refusal, 'DELETE is refused');
is($node->safe_psql('postgres', 'SELECT string_agg(v, \',\' ORDER BY id) FROM m'),
	'old,old', 'the table is unchanged');

is($node->safe_psql('postgres', q{
INSERT INTO h VALUES (1, 'heap');
INSERT INTO um VALUES (1, 'unlogged');
UPDATE um SET v = 'unlogged2';
CREATE TEMP TABLE tm (id int, v text) USING minidb;
INSERT INTO tm VALUES (1, 'temp');
ALTER TABLE h SET ACCESS METHOD minidb;
VACUUM FULL m;
CLUSTER m USING m_pkey;
SELECT (SELECT v FROM h) || (SELECT v FROM um) || (SELECT v FROM tm) ||
  (SELECT string_agg(v, ',' ORDER BY id) FROM m);
}),
	'heapunlogged2tempold,old',
	'heap, unlogged and temporary minidb tables, a rewrite into minidb, VACUUM FULL and CLUSTER work');

$node->stop;
done_testing();
