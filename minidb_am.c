/*-------------------------------------------------------------------------
 *
 * minidb_am.c
 *	  The minidb table access method: handler, routine and settings.
 *
 * minidb stores each row as one record holding all of its versions, newest
 * first (chain.h).  This file only wires the server's TableAmRoutine to
 * the files that own each concern:
 *
 *	minidb_scan.c		reads: scans and fetches by TID
 *	minidb_modify.c		writes: insert, update, delete, row locks
 *	minidb_visibility.c	snapshots and hint bits
 *	minidb_prune.c		removing versions nobody can see
 *	minidb_page.c		page changes and their WAL
 *	btree_view.c		the page-view layer (pin + lock + callback)
 *	minidb_ddl.c		storage, index builds, estimates
 *	minidb_vacuum.c		VACUUM
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_am.h"
#include "commands/defrem.h"
#include "fmgr.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"

#include "chain.h"
#include "minidb_wal.h"
#include "minidb_visibility.h"
#include "btree_view.h"
#include "minidb_lock.h"
#include "minidb_scan.h"
#include "minidb_modify.h"
#include "minidb_ddl.h"
#include "minidb_am.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(minidb_tableam_handler);

int			minidb_read_path = MINIDB_PATH_VIEW_LAZY;

static const struct config_enum_entry read_path_options[] = {
	{"view_lazy", MINIDB_PATH_VIEW_LAZY, false},
	{"copy_lazy", MINIDB_PATH_COPY_LAZY, false},
	{"copy_eager", MINIDB_PATH_COPY_EAGER, false},
	{NULL, 0, false}
};

/* minidb.record_format: the format of records written from now on */
static const struct config_enum_entry record_format_options[] = {
	{"v1", MINIDB_FORMAT_V1, false},
	{"v2", MINIDB_FORMAT_V2, false},
	{"v3", MINIDB_FORMAT_V3, false},
	{NULL, 0, false}
};

void		_PG_init(void);

/*
 * An error lets pins go past their holders, and frees the page images of
 * the write it stopped: forget the checked pins and the writes under way
 */
static void
forget_at_xact_end(XactEvent event, void *arg)
{
	minidb_checked_pins_clear();
	minidb_write_forget();
}

static void
forget_at_subxact_abort(SubXactEvent event, SubTransactionId mySubid,
						SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
	{
		minidb_checked_pins_clear();
		minidb_write_forget();
	}
}

void
_PG_init(void)
{
	/*
	 * Superuser-only: the copy paths are the study's "before" paths, kept
	 * for measurement, and not every table AM callback behaves the same on
	 * them (copy_eager reports no speculative-insertion token, so ON
	 * CONFLICT would wait for the whole inserting transaction).  The
	 * benchmarks set the variable itself around their timed loops.
	 */
	DefineCustomEnumVariable("minidb.read_path",
							 "Read path for fetches by TID (for benchmarks).",
							 "view_lazy reads records in place (the production path); "
							 "copy_lazy and copy_eager copy each record out first, "
							 "as the study's \"before\" paths do.  Superusers only.",
							 &minidb_read_path,
							 MINIDB_PATH_VIEW_LAZY,
							 read_path_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	DefineCustomEnumVariable("minidb.record_format",
							 "Record format of rows written from now on.",
							 "v3 (the default) is compact: optional header fields and "
							 "older versions stored as differences.  v1 keeps whole "
							 "versions back to back; v2 adds a version directory.  A "
							 "write turns a v1 or v2 record into v3 when the setting is "
							 "v3; every format is always readable.",
							 &minidb_record_format,
							 MINIDB_FORMAT_CURRENT,
							 record_format_options,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
	MarkGUCPrefixReserved("minidb");
	minidb_visibility_init();
	minidb_xlog_init();
	RegisterXactCallback(forget_at_xact_end, NULL);
	RegisterSubXactCallback(forget_at_subxact_abort, NULL);
}

static const TupleTableSlotOps *
minidb_slot_callbacks(Relation rel)
{
	return &TTSOpsHeapTuple;
}

static Oid
minidb_relation_toast_am(Relation rel)
{
	return HEAP_TABLE_AM_OID;
}

static const TableAmRoutine minidb_methods = {
	.type = T_TableAmRoutine,

	.slot_callbacks = minidb_slot_callbacks,

	.scan_begin = minidb_scan_begin,
	.scan_end = minidb_scan_end,
	.scan_rescan = minidb_scan_rescan,
	.scan_getnextslot = minidb_scan_getnextslot,

	.scan_set_tidrange = minidb_scan_set_tidrange,
	.scan_getnextslot_tidrange = minidb_scan_getnextslot_tidrange,

	.parallelscan_estimate = table_block_parallelscan_estimate,
	.parallelscan_initialize = table_block_parallelscan_initialize,
	.parallelscan_reinitialize = table_block_parallelscan_reinitialize,

	.index_fetch_begin = minidb_index_fetch_begin,
	.index_fetch_reset = minidb_index_fetch_reset,
	.index_fetch_end = minidb_index_fetch_end,
	.index_fetch_tuple = minidb_index_fetch_tuple,

	.tuple_insert = minidb_tuple_insert,
	.tuple_insert_speculative = minidb_tuple_insert_speculative,
	.tuple_complete_speculative = minidb_tuple_complete_speculative,
	.multi_insert = minidb_multi_insert,
	.tuple_delete = minidb_tuple_delete,
	.tuple_update = minidb_tuple_update,
	.tuple_lock = minidb_tuple_lock,

	.tuple_fetch_row_version = minidb_fetch_row_version,
	.tuple_get_latest_tid = minidb_get_latest_tid,
	.tuple_tid_valid = minidb_tuple_tid_valid,
	.tuple_satisfies_snapshot = minidb_tuple_satisfies_snapshot,
	.index_delete_tuples = minidb_index_delete_tuples,

#if PG_VERSION_NUM >= 160000	/* 16: RelFileNode became RelFileLocator */
	.relation_set_new_filelocator = minidb_relation_set_new_filenode,
#else
	.relation_set_new_filenode = minidb_relation_set_new_filenode,
#endif
	.relation_nontransactional_truncate = minidb_relation_nontransactional_truncate,
	.relation_copy_data = minidb_relation_copy_data,
	.relation_copy_for_cluster = minidb_relation_copy_for_cluster,
	.relation_vacuum = minidb_relation_vacuum,
	.scan_analyze_next_block = minidb_scan_analyze_next_block,
	.scan_analyze_next_tuple = minidb_scan_analyze_next_tuple,
	.index_build_range_scan = minidb_index_build_range_scan,
	.index_validate_scan = minidb_index_validate_scan,

	.relation_size = table_block_relation_size,
	.relation_needs_toast_table = minidb_relation_needs_toast_table,
	.relation_toast_am = minidb_relation_toast_am,
	.relation_fetch_toast_slice = heap_fetch_toast_slice,

	.relation_estimate_size = minidb_relation_estimate_size,

#if PG_VERSION_NUM < 180000	/* 18: the AM walks the bitmap itself */
	.scan_bitmap_next_block = minidb_scan_bitmap_next_block,
#endif
	.scan_bitmap_next_tuple = minidb_scan_bitmap_next_tuple,
	.scan_sample_next_block = minidb_scan_sample_next_block,
	.scan_sample_next_tuple = minidb_scan_sample_next_tuple
};

const TableAmRoutine *
minidb_routine(void)
{
	return &minidb_methods;
}

/*
 * ERROR unless rel is a minidb table; for SQL functions that take a
 * regclass.  caller names the function in the message.
 */
void
minidb_check_relation(Relation rel, const char *caller)
{
	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_MATVIEW)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a minidb table",
						RelationGetRelationName(rel)),
				 errdetail("%s() works on minidb tables only; \"%s\" is not a table.",
						   caller, RelationGetRelationName(rel))));
	if (rel->rd_tableam != &minidb_methods)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a minidb table",
						RelationGetRelationName(rel)),
				 errdetail("%s() works on minidb tables only; this table uses access method \"%s\".",
						   caller, get_am_name(rel->rd_rel->relam))));
}

Datum
minidb_tableam_handler(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(&minidb_methods);
}
