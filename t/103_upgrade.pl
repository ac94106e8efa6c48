# Upgrades (issue 15, item 7): release 1.0's script, then ALTER EXTENSION
# UPDATE, in a database holding minidb tables.
#
# Database "old" creates the extension as release 1.0 did
# (upgrade/minidb_am--1.0.sql, frozen), fills minidb tables (records of
# both formats, V1 and V2, chains several versions deep, moved rows, TOAST
# values, indexes), and updates to the default version.  The data must
# read the same before and after, the new functions must work, and the
# extension's objects must equal those of a fresh CREATE EXTENSION in
# database "new": every member (pg_describe_object), each function's full
# definition (signature, defaults, volatility, strictness, parallel
# safety, SECURITY DEFINER or not, settings), its ACL, its initial
# privileges (pg_init_privs, what pg_dump restores) and its comment.
# Then DROP EXTENSION leaves the cluster-wide role minidb_bench (README,
# "Security"), which the next CREATE EXTENSION uses again.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $node = PostgreSQL::Test::Cluster->new('upgrade');
$node->init;
$node->append_conf('postgresql.conf', "shared_preload_libraries = 'minidb_am'");
$node->start;

my $catalog = q{
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       CASE WHEN d.classid = 'pg_proc'::regclass THEN pg_get_functiondef(d.objid) END AS def,
       CASE WHEN d.classid = 'pg_proc'::regclass
            THEN (SELECT proacl::text FROM pg_proc WHERE oid = d.objid) END AS acl,
       CASE WHEN d.classid = 'pg_am'::regclass
            THEN (SELECT amhandler::text || ' ' || amtype::text FROM pg_am WHERE oid = d.objid) END AS am,
       obj_description(d.objid, c.relname) AS comment,
       (SELECT i.initprivs::text || ' ' || i.privtype::text FROM pg_init_privs i
         WHERE i.objoid = d.objid AND i.classoid = d.classid AND i.objsubid = 0) AS initprivs
FROM pg_depend d JOIN pg_class c ON c.oid = d.classid
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'minidb_am')
ORDER BY 1;
SELECT extversion, extrelocatable, extnamespace::regnamespace, extconfig, extcondition
FROM pg_extension WHERE extname = 'minidb_am';
};
# every row of every minidb table, in key order
my $content = q{
SELECT 'm', md5(string_agg(format('%s|%s|%s|%s', id, k, v, md5(coalesce(big, ''))), ',' ORDER BY id)) FROM m
UNION ALL
SELECT 'v1', md5(string_agg(format('%s|%s', id, v), ',' ORDER BY id)) FROM v1
ORDER BY 1;
};

is($node->safe_psql('postgres',
		q{SELECT string_agg(source || '>' || target || ':' || path, ' ' ORDER BY source, target)
		  FROM pg_extension_update_paths('minidb_am') WHERE path IS NOT NULL}),
	'1.0>1.1:1.0--1.1', 'one update path: 1.0 to 1.1');

$node->safe_psql('postgres', 'CREATE DATABASE old');
$node->safe_psql('postgres', 'CREATE DATABASE new');
$node->safe_psql('old', q{
CREATE EXTENSION minidb_am VERSION '1.0';
CREATE EXTENSION amcheck;
SET minidb.record_format = 'v1';
CREATE TABLE v1 (id int PRIMARY KEY, v text) USING minidb;
INSERT INTO v1 SELECT g, 'v1 row ' || g FROM generate_series(1, 300) g;
UPDATE v1 SET v = v || '+' WHERE id % 3 = 0;
RESET minidb.record_format;
CREATE TABLE m (id int PRIMARY KEY, k int, v text, big text) USING minidb;
CREATE INDEX m_k ON m (k);
INSERT INTO m SELECT g, g % 10, 'v' || g,
                     CASE WHEN g % 50 = 0 THEN repeat(md5(g::text), 200) END
  FROM generate_series(1, 2000) g;
UPDATE m SET v = v || '+' WHERE id % 3 = 0;
UPDATE m SET v = v || '+' WHERE id % 3 = 0;
UPDATE m SET k = k + 100 WHERE id % 7 = 0;
DELETE FROM m WHERE id % 11 = 0;
});
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'minidb_am'}),
	'1.0', 'release 1.0 installs');
my $before = $node->safe_psql('old', $content);

$node->safe_psql('old', 'ALTER EXTENSION minidb_am UPDATE');
is($node->safe_psql('old', q{SELECT extversion FROM pg_extension WHERE extname = 'minidb_am'}),
	'1.1', 'ALTER EXTENSION UPDATE goes to 1.1');
is($node->safe_psql('old', $content), $before, 'every row reads the same after the update');
is($node->safe_psql('old', q{
SET enable_seqscan = off;
SELECT count(*) FROM m WHERE k >= 100}),
	$node->safe_psql('old', q{SELECT count(*) FROM m WHERE id % 7 = 0 AND id % 11 <> 0}),
	'index scans read the same rows');
is($node->safe_psql('old', q{SELECT bt_index_check('m_k', true), bt_index_check('v1_pkey', true)}),
	'|', 'indexes pass amcheck');
is($node->safe_psql('old', q{SELECT count(*) FROM minidb_verify('m', true, true)})
	. $node->safe_psql('old', q{SELECT count(*) FROM minidb_verify('v1', true, true)}),
	'00', 'minidb_verify (new in 1.1) finds nothing damaged');

# old records keep their format; new rows take the default; both read
$node->safe_psql('old', q{INSERT INTO v1 VALUES (1000, 'after the update')});
is($node->safe_psql('old', q{SELECT count(*) FROM v1}), '301', 'writes after the update');

# functions new in 1.1
my ($ret, $out, $err) = $node->psql('old', q{
BEGIN;
SELECT id FROM m WHERE id = 1 FOR SHARE;
SELECT locked_row, modes FROM minidb_row_locks('m');
COMMIT;});
like($out, qr/\(0,1\)\|\{"For Share"\}/, 'minidb_row_locks (new in 1.1) works');
is($node->safe_psql('old', q{SELECT minidb_force_kill('m', ARRAY['(0,2)']::tid[])}), '1',
	'minidb_force_kill (new in 1.1) works');

# the same extension as a fresh CREATE EXTENSION
$node->safe_psql('new', 'CREATE EXTENSION minidb_am');
my $fresh = $node->safe_psql('new', $catalog);
my $updated = $node->safe_psql('old', $catalog);
like($fresh, qr/function minidb_force_kill\(regclass,tid\[\]\)/, 'the catalog query sees the functions');
is($updated, $fresh, '1.0 + update has exactly the objects of a fresh 1.1');

# DROP EXTENSION leaves the role, the next CREATE EXTENSION uses it
$node->safe_psql('new', 'DROP EXTENSION minidb_am');
$node->safe_psql('old', 'DROP EXTENSION minidb_am CASCADE');
is($node->safe_psql('postgres',
		q{SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = 'minidb_bench'}),
	'may run the minidb_am benchmark functions (minidb_bench_*)',
	'DROP EXTENSION leaves the role minidb_bench, marked');
$node->safe_psql('new', q{CREATE EXTENSION minidb_am VERSION '1.0'; ALTER EXTENSION minidb_am UPDATE});
is($node->safe_psql('new', $catalog), $fresh, 'and a new 1.0 + update uses it again');
$node->safe_psql('new', 'DROP EXTENSION minidb_am');
$node->safe_psql('postgres', 'DROP ROLE minidb_bench');
is($node->safe_psql('postgres', q{SELECT count(*) FROM pg_roles WHERE rolname = 'minidb_bench'}),
	'0', 'DROP ROLE works once no database has the extension');

$node->stop;
done_testing();
