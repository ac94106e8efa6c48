# pg_dump / pg_restore round trip of a database holding minidb tables.
#
# The source database has minidb tables (plain, with TOAST values, indexes,
# an identity column, constraints, rows updated in place, moved and deleted,
# a partitioned table mixing heap and minidb partitions, an inheritance
# child, an unlogged table, a materialized view USING minidb) beside heap
# ones.  It is dumped in custom, directory (restored with -j 2) and plain
# formats and restored into new databases: every table keeps its access
# method (pg_dump writes "SET default_table_access_method = minidb" before
# such tables), the data is identical (an md5 over every row, in key
# order), the indexes work and pass amcheck, the sequences continue, and
# dumping the restored database gives the same dump.  pg_dump needs nothing
# from the extension beyond CREATE EXTENSION minidb_am in the dump, which
# creates the access method.  --no-table-access-method restores the tables
# as heap, with the same data.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('dump');
$node->init;
$node->start;

my $tempdir = PostgreSQL::Test::Utils::tempdir;

$node->safe_psql('postgres', 'CREATE DATABASE src');
$node->safe_psql('src', q{
CREATE EXTENSION minidb_am;
CREATE TABLE m (id int PRIMARY KEY, k int NOT NULL CHECK (k >= 0), v text,
                big text, seq int GENERATED ALWAYS AS IDENTITY) USING minidb;
CREATE INDEX m_k ON m (k);
ALTER TABLE m ALTER COLUMN big SET STORAGE EXTERNAL;
INSERT INTO m (id, k, v, big)
  SELECT i, i % 50, 'v' || i, CASE WHEN i % 10 = 0 THEN repeat(md5(i::text), 300) END
  FROM generate_series(1, 3000) i;
UPDATE m SET v = v || '+' WHERE id % 3 = 0;
UPDATE m SET k = k + 100 WHERE id % 7 = 0;
DELETE FROM m WHERE id % 11 = 0;
CREATE TABLE h (id int PRIMARY KEY, m_id int REFERENCES m (id), note text) USING heap;
INSERT INTO h SELECT i, i, 'h' || i FROM generate_series(1, 100) i WHERE i % 11 <> 0;

CREATE TABLE p (id int, k int, v text, PRIMARY KEY (k, id)) PARTITION BY RANGE (k);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (100) USING minidb;
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (100) TO (200) USING heap;
CREATE TABLE p3 PARTITION OF p FOR VALUES FROM (200) TO (300) USING minidb;
INSERT INTO p SELECT i, i % 300, 'p' || i FROM generate_series(1, 1500) i;
UPDATE p SET k = k + 100 WHERE k < 200 AND id % 4 = 0;

CREATE TABLE par (id int, v text) USING minidb;
CREATE TABLE chi (extra int) INHERITS (par) USING minidb;
INSERT INTO par SELECT i, 'par' || i FROM generate_series(1, 50) i;
INSERT INTO chi SELECT i, 'chi' || i, i FROM generate_series(51, 100) i;

CREATE UNLOGGED TABLE u (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO u SELECT i, 'u' || i FROM generate_series(1, 100) i;

CREATE MATERIALIZED VIEW mv USING minidb AS SELECT k, count(*) AS n FROM m GROUP BY k;
CREATE UNIQUE INDEX mv_k ON mv (k);
});

# what each database holds: access methods and a digest of every table
my $amq = q{SELECT c.relname || ':' || coalesce(a.amname, '-') FROM pg_class c
  LEFT JOIN pg_am a ON a.oid = c.relam
  WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p', 'm')
  ORDER BY c.relname};
my $dataq = q{SELECT string_agg(t || ':' || d, ' ' ORDER BY t) FROM (
  SELECT 'm' AS t, md5(string_agg(x::text, '|' ORDER BY id)) AS d FROM m x
  UNION ALL SELECT 'h', md5(string_agg(x::text, '|' ORDER BY id)) FROM h x
  UNION ALL SELECT 'p', md5(string_agg(x::text || x.tableoid::regclass::text, '|' ORDER BY k, id)) FROM p x
  UNION ALL SELECT 'par', md5(string_agg(x::text || x.tableoid::regclass::text, '|' ORDER BY id)) FROM par x
  UNION ALL SELECT 'u', md5(string_agg(x::text, '|' ORDER BY id)) FROM u x
  UNION ALL SELECT 'mv', md5(string_agg(x::text, '|' ORDER BY k)) FROM mv x) s};
my $src_am = $node->safe_psql('src', $amq);
my $src_data = $node->safe_psql('src', $dataq);
like($src_am, qr/^m:minidb$/m, 'source table m is minidb');

# pg_dump writes the access method for the restore to set
my $plain = "$tempdir/src.sql";
$node->command_ok([ 'pg_dump', '-f', $plain, $node->connstr('src') ], 'plain pg_dump');
my $sql = slurp_file($plain);
like($sql, qr/^SET default_table_access_method = minidb;$/m,
	'dump sets default_table_access_method = minidb');
like($sql, qr/^CREATE EXTENSION IF NOT EXISTS minidb_am /m, 'dump creates the extension');
unlike($sql, qr/CREATE ACCESS METHOD/, 'the access method comes with the extension');

sub check_restored
{
	my ($db, $what) = @_;
	is($node->safe_psql($db, $amq), $src_am, "$what: access methods kept");
	is($node->safe_psql($db, $dataq), $src_data, "$what: data identical");
	$node->safe_psql($db, 'CREATE EXTENSION IF NOT EXISTS amcheck');
	is($node->safe_psql($db, q{
		SELECT count(*) FROM (SELECT bt_index_check(i.indexrelid, true)
		  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		  JOIN pg_am a ON a.oid = c.relam
		 WHERE a.amname = 'btree' AND c.relkind = 'i' AND c.relnamespace = 'public'::regnamespace) s}),
		$node->safe_psql($db, q{SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
		 JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'btree' AND c.relkind = 'i'
		   AND c.relnamespace = 'public'::regnamespace}),
		"$what: every btree index passes amcheck (heapallindexed)");
	is($node->safe_psql($db, q{SET enable_seqscan = off; SET enable_bitmapscan = off;
		SELECT count(*) FROM m WHERE k BETWEEN 100 AND 200}),
		$node->safe_psql('src', q{SELECT count(*) FROM m WHERE k BETWEEN 100 AND 200}),
		"$what: index scan on the restored minidb table");
	# the restored tables take writes; the identity continues
	is($node->safe_psql($db, q{INSERT INTO m (id, k, v) VALUES (100000, 1, 'new') RETURNING seq}),
		'3001', "$what: identity continues");
	$node->safe_psql($db, q{UPDATE m SET v = 'after restore' WHERE id < 100;
		UPDATE p SET k = 250 WHERE id = 1; DELETE FROM chi WHERE id = 60;
		REFRESH MATERIALIZED VIEW CONCURRENTLY mv});
	is($node->safe_psql($db, q{SELECT count(*) FROM m WHERE v = 'after restore'}),
		$node->safe_psql('src', q{SELECT count(*) FROM m WHERE id < 100}),
		"$what: restored table takes updates");
}

# custom format, pg_restore into a new database
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tempdir/src.dump", $node->connstr('src') ],
	'pg_dump -Fc');
$node->safe_psql('postgres', 'CREATE DATABASE dst_custom');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr('dst_custom'),
	"$tempdir/src.dump" ], 'pg_restore of the custom dump');
# dumping the restored database gives the same dump (before any write)
$node->command_ok([ 'pg_dump', '-f', "$tempdir/dst.sql", $node->connstr('dst_custom') ],
	'pg_dump of the restored database');
# (\restrict / \unrestrict carry a random key per dump)
my $strip = sub { my $s = shift; $s =~ s/^\\(?:un)?restrict .*$//mg; return $s; };
is($strip->(slurp_file("$tempdir/dst.sql")), $strip->($sql),
	'dump of the restored database equals the original dump');
check_restored('dst_custom', 'custom format');

# directory format, parallel restore
$node->command_ok([ 'pg_dump', '-Fd', '-j', '2', '-f', "$tempdir/src.dir", $node->connstr('src') ],
	'pg_dump -Fd -j 2');
$node->safe_psql('postgres', 'CREATE DATABASE dst_dir');
$node->command_ok([ 'pg_restore', '--exit-on-error', '-j', '2', '-d', $node->connstr('dst_dir'),
	"$tempdir/src.dir" ], 'pg_restore -j 2 of the directory dump');
check_restored('dst_dir', 'directory format, parallel');

# plain format through psql
$node->safe_psql('postgres', 'CREATE DATABASE dst_plain');
$node->command_ok([ 'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('dst_plain'),
	'-f', $plain ], 'plain dump restored with psql');
check_restored('dst_plain', 'plain format');

# --no-table-access-method: the same data, in heap tables
$node->safe_psql('postgres', 'CREATE DATABASE dst_heap');
$node->command_ok([ 'pg_restore', '--exit-on-error', '--no-table-access-method',
	'-d', $node->connstr('dst_heap'), "$tempdir/src.dump" ],
	'pg_restore --no-table-access-method');
is($node->safe_psql('dst_heap', q{SELECT count(*) FROM pg_class c JOIN pg_am a ON a.oid = c.relam
	WHERE a.amname = 'minidb'}), '0', 'no minidb table with --no-table-access-method');
is($node->safe_psql('dst_heap', $dataq), $src_data, 'heap copy holds the same data');

# data only into an existing minidb schema (COPY into minidb tables)
$node->safe_psql('postgres', 'CREATE DATABASE dst_data');
$node->command_ok([ 'pg_restore', '--exit-on-error', '--schema-only', '-d',
	$node->connstr('dst_data'), "$tempdir/src.dump" ], 'schema-only restore');
$node->command_ok([ 'pg_restore', '--exit-on-error', '--data-only', '--disable-triggers',
	'-d', $node->connstr('dst_data'), "$tempdir/src.dump" ], 'data-only restore');
$node->safe_psql('dst_data', 'REFRESH MATERIALIZED VIEW mv');
is($node->safe_psql('dst_data', $amq), $src_am, 'schema then data: access methods kept');
is($node->safe_psql('dst_data', $dataq), $src_data, 'schema then data: data identical');

$node->stop;
done_testing();
