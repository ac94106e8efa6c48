-- WAL bytes per row of a whole-table non-key UPDATE, heap beside minidb.
-- psql -X -A -f bench/update_wal.sql  (on a server with minidb_am installed)
\set QUIET on
drop table if exists ih, im;
create extension if not exists minidb_am;
create table ih (id int, v text, n int) using heap with (fillfactor=90);
create table im (id int, v text, n int) using minidb with (fillfactor=90);
insert into ih select g, 'value ' || g, 0 from generate_series(1,300000) g;
insert into im select g, 'value ' || g, 0 from generate_series(1,300000) g;
vacuum ih; vacuum im;
checkpoint;
\timing on
select pg_current_wal_lsn() as l0 \gset
update ih set n = n + 1;
select pg_current_wal_lsn() as l1 \gset
update im set n = n + 1;
select pg_current_wal_lsn() as l2 \gset
\timing off
select (pg_wal_lsn_diff(:'l1', :'l0') / 300000)::int as heap_wal_per_row, (pg_wal_lsn_diff(:'l2', :'l1') / 300000)::int as minidb_wal_per_row;
