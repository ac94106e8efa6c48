/* minidb_am: the table access method itself */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION minidb_am" to load this file. \quit

CREATE FUNCTION minidb_tableam_handler(internal)
RETURNS table_am_handler
AS 'MODULE_PATHNAME'
LANGUAGE C STRICT;

CREATE ACCESS METHOD minidb TYPE TABLE HANDLER minidb_tableam_handler;
COMMENT ON ACCESS METHOD minidb IS 'inline version chains: one record per row, newest version first';
