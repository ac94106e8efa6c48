# minidb tables are WAL-logged with generic WAL records, which logical
# decoding cannot turn into row changes.  A publication that includes a
# minidb table would therefore replicate nothing; instead, writes to a
# published minidb table fail with a clear ERROR, while unpublished minidb
# tables and published heap tables keep working under wal_level = logical.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('logical');
$node->init(allows_streaming => 'logical');
$node->start;
$node->safe_psql('postgres', q{
CREATE EXTENSION minidb_am;
CREATE TABLE m (id int PRIMARY KEY, v text) USING minidb;
CREATE TABLE other (id int PRIMARY KEY, v text) USING minidb;
CREATE TABLE h (id int PRIMARY KEY, v text) USING heap;
INSERT INTO m VALUES (1, 'before');
CREATE PUBLICATION pub FOR TABLE m, h;
});

my ($ret, $out, $err);
($ret, $out, $err) = $node->psql('postgres', "INSERT INTO m VALUES (2, 'x')");
isnt($ret, 0, 'insert into a published minidb table fails');
like($err, qr/logical replication of minidb tables is not supported/,
	'with a clear error');
($ret, $out, $err) = $node->psql('postgres', "UPDATE m SET v = 'y' WHERE id = 1");
like($err, qr/logical replication of minidb tables is not supported/,
	'update of a published minidb table fails clearly');
($ret, $out, $err) = $node->psql('postgres', "DELETE FROM m WHERE id = 1");
like($err, qr/logical replication of minidb tables is not supported/,
	'delete from a published minidb table fails clearly');
($ret, $out, $err) = $node->psql('postgres',
	"COPY m FROM PROGRAM 'printf \"3\\tz\\n\"'");
like($err, qr/logical replication of minidb tables is not supported/,
	'COPY (multi_insert) into a published minidb table fails clearly');

is($node->safe_psql('postgres', 'SELECT id, v FROM m'), '1|before',
	'the published minidb table is unchanged');

$node->safe_psql('postgres', q{
INSERT INTO other VALUES (1, 'a');
UPDATE other SET v = 'b' WHERE id = 1;
INSERT INTO h VALUES (1, 'heap');
});
is($node->safe_psql('postgres', 'SELECT v FROM other'), 'b',
	'an unpublished minidb table works under wal_level = logical');
is($node->safe_psql('postgres', 'SELECT v FROM h'), 'heap',
	'a published heap table works');

$node->safe_psql('postgres', 'ALTER PUBLICATION pub DROP TABLE m');
$node->safe_psql('postgres', "INSERT INTO m VALUES (2, 'after')");
is($node->safe_psql('postgres', 'SELECT count(*) FROM m'), '2',
	'writes work again once the table leaves the publication');

$node->stop;
done_testing();
