/*-------------------------------------------------------------------------
 *
 * pg_compat.h
 *	  What differs between the PostgreSQL versions minidb builds against:
 *	  15, 17 and 18 (16 is not tested).
 *
 * Each shim is named for what it does, and its comment names the version
 * that brought the change.  Where a new name only renames an old thing,
 * the new name is defined for the older versions (RelFileLocator,
 * pg_noreturn, AmAutoVacuumWorkerProcess, TransamVariables).  The AM's
 * files call these and hold no version #if of their own, except where a
 * callback's signature forces one: the TableAmRoutine (minidb_am.c),
 * ANALYZE's next block and the bitmap scan (minidb_scan.[ch]), the
 * counting allocator (bench.c), the reorder buffer (minidb_logical.c).
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_PG_COMPAT_H
#define MINIDB_PG_COMPAT_H

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "access/valid.h"
#include "catalog/pg_class.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "storage/lmgr.h"
#include "storage/standby.h"
#include "utils/acl.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplesort.h"
#if PG_VERSION_NUM >= 170000
#include "access/tidstore.h"
#endif

/* ---- 16 ---- */

/* 16: RelFileNode {spcNode, dbNode, relNode} became RelFileLocator */
#if PG_VERSION_NUM < 160000
typedef RelFileNode RelFileLocator;
#define MINIDB_LOCATOR_SPC(l)	((l).spcNode)
#define MINIDB_LOCATOR_DB(l)	((l).dbNode)
#define MINIDB_LOCATOR_REL(l)	((l).relNode)
#else
#define MINIDB_LOCATOR_SPC(l)	((l).spcOid)
#define MINIDB_LOCATOR_DB(l)	((l).dbOid)
#define MINIDB_LOCATOR_REL(l)	((l).relNumber)
#endif

/* 16: RelidByRelfilenode (relfilenodemap.h) became RelidByRelfilenumber */
#if PG_VERSION_NUM >= 160000
#include "utils/relfilenumbermap.h"
#define minidb_relid_by_locator(l)	RelidByRelfilenumber((l).spcOid, (l).relNumber)
#else
#include "utils/relfilenodemap.h"
#define minidb_relid_by_locator(l)	RelidByRelfilenode((l).spcNode, (l).relNode)
#endif

/*
 * 16: tuple_update says which indexes need entries (TU_UpdateIndexes), and
 * INDEX_ATTR_BITMAP_ALL was split into the HOT-blocking and the summarized
 * (BRIN) columns.  As heap's HOT since 16, a change to summarized columns
 * alone does not move the row: the in-place prepend answers TU_Summarizing
 * and the server gives the summarizing indexes an entry for the same TID
 * (their summary of the block range then covers the new values too); an
 * in-place prepend that changed no indexed column needs no entry
 * (TU_None), a moved row needs them all (TU_All).  On 15 every indexed
 * column blocks an in-place update, as it blocks HOT there.
 */
#if PG_VERSION_NUM >= 160000
typedef TU_UpdateIndexes MinidbUpdateIndexes;
#define MINIDB_UPDATE_INDEXES(in_place, summarized) \
	(!(in_place) ? TU_All : (summarized) ? TU_Summarizing : TU_None)
#define minidb_stay_blocking_attrs(rel) \
	RelationGetIndexAttrBitmap((rel), INDEX_ATTR_BITMAP_HOT_BLOCKING)
#define minidb_summarized_attrs(rel) \
	RelationGetIndexAttrBitmap((rel), INDEX_ATTR_BITMAP_SUMMARIZED)
#else
typedef bool MinidbUpdateIndexes;
#define MINIDB_UPDATE_INDEXES(in_place, summarized)	(!(in_place))
#define minidb_stay_blocking_attrs(rel) \
	RelationGetIndexAttrBitmap((rel), INDEX_ATTR_BITMAP_ALL)
#define minidb_summarized_attrs(rel)	((Bitmapset *) NULL)
#endif

/* 16: an update's statistics count those whose new version left the page */
#if PG_VERSION_NUM >= 160000
#define minidb_count_update(rel, in_place, new_page) \
	pgstat_count_heap_update(rel, in_place, new_page)
#else
#define minidb_count_update(rel, in_place, new_page) \
	pgstat_count_heap_update(rel, in_place)
#endif

/* 16: HeapKeyTest returns its result instead of setting an argument */
static inline bool
minidb_heap_key_test(HeapTuple tuple, TupleDesc desc, int nkeys, ScanKey keys)
{
#if PG_VERSION_NUM >= 160000
	return HeapKeyTest(tuple, desc, nkeys, keys);
#else
	bool		result;

	HeapKeyTest(tuple, desc, nkeys, keys, result);
	return result;
#endif
}

/* 16: tuplesort_getdatum takes "copy"; false is 15's behaviour */
#if PG_VERSION_NUM >= 160000
#define minidb_tuplesort_getdatum(state, forward, val, isnull) \
	tuplesort_getdatum(state, forward, false, val, isnull, NULL)
#else
#define minidb_tuplesort_getdatum(state, forward, val, isnull) \
	tuplesort_getdatum(state, forward, val, isnull, NULL)
#endif

/*
 * 16: pg_class_ownercheck became object_ownercheck, which reports a missing
 * relation as an internal error ("cache lookup failed"); keep 15's
 * undefined_table for it.
 */
static inline bool
minidb_class_ownercheck(Oid relid, Oid roleid)
{
#if PG_VERSION_NUM >= 160000
	if (!superuser_arg(roleid) &&
		!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	return object_ownercheck(RelationRelationId, relid, roleid);
#else
	return pg_class_ownercheck(relid, roleid);
#endif
}

/*
 * 16: a recovery conflict says whether it is about a catalog relation (for
 * logical decoding on standbys); minidb tables are never catalogs.
 */
#if PG_VERSION_NUM >= 160000
#define minidb_resolve_snapshot_conflict(horizon, locator) \
	ResolveRecoveryConflictWithSnapshot(horizon, false, locator)
#else
#define minidb_resolve_snapshot_conflict(horizon, locator) \
	ResolveRecoveryConflictWithSnapshot(horizon, locator)
#endif

/*
 * 16: VACUUM's cutoffs come in a struct VacuumCutoffs (vacuum_get_cutoffs),
 * which the failsafe check takes too.  Returns whether VACUUM is aggressive.
 */
static inline bool
minidb_vacuum_get_cutoffs(Relation rel, VacuumParams *params,
						  TransactionId *OldestXmin, MultiXactId *OldestMxact,
						  TransactionId *FreezeLimit,
						  MultiXactId *MultiXactCutoff)
{
#if PG_VERSION_NUM >= 160000
	struct VacuumCutoffs c;
	bool		aggressive = vacuum_get_cutoffs(rel, params, &c);

	*OldestXmin = c.OldestXmin;
	*OldestMxact = c.OldestMxact;
	*FreezeLimit = c.FreezeLimit;
	*MultiXactCutoff = c.MultiXactCutoff;
	return aggressive;
#else
	return vacuum_set_xid_limits(rel, params->freeze_min_age,
								 params->freeze_table_age,
								 params->multixact_freeze_min_age,
								 params->multixact_freeze_table_age,
								 OldestXmin, OldestMxact, FreezeLimit,
								 MultiXactCutoff);
#endif
}

static inline bool
minidb_vacuum_xid_failsafe_check(TransactionId relfrozenxid,
								 MultiXactId relminmxid)
{
#if PG_VERSION_NUM >= 160000
	struct VacuumCutoffs c = {0};

	c.relfrozenxid = relfrozenxid;
	c.relminmxid = relminmxid;
	return vacuum_xid_failsafe_check(&c);
#else
	return vacuum_xid_failsafe_check(relfrozenxid, relminmxid);
#endif
}

/* 16: pgrowlocks says "For Share" of a multixact member too, not "Share" */
#if PG_VERSION_NUM >= 160000
#define MINIDB_PGROWLOCKS_MEMBER_PREFIX	"For "
#else
#define MINIDB_PGROWLOCKS_MEMBER_PREFIX	""
#endif

/* 16: index AMs use IndexVacuumInfo.heaprel (nbtree's bulk delete does) */
#if PG_VERSION_NUM >= 160000
#define minidb_ivinfo_set_heaprel(ivinfo, rel)	((ivinfo)->heaprel = (rel))
#else
#define minidb_ivinfo_set_heaprel(ivinfo, rel)	((void) 0)
#endif

/*
 * VACUUM (VERBOSE)'s report, which minidb writes in heap's lines
 * (vacuumlazy.c's heap_vacuum_rel): 16 added the "frozen:" line; 18 the
 * pages eagerly scanned, the "visibility map:" line, "reads" for
 * "misses" and the WAL buffers that were full.
 */
#define MINIDB_VACUUM_REPORT_FROZEN	(PG_VERSION_NUM >= 160000)
#define MINIDB_VACUUM_REPORT_EAGER	(PG_VERSION_NUM >= 180000)
#define MINIDB_VACUUM_REPORT_VM		(PG_VERSION_NUM >= 180000)
#define MINIDB_VACUUM_REPORT_READS	(PG_VERSION_NUM >= 180000)
#define MINIDB_VACUUM_REPORT_WAL_BUFFERS_FULL (PG_VERSION_NUM >= 180000)
#if PG_VERSION_NUM >= 180000
#define minidb_wal_buffers_full(w)	((w)->wal_buffers_full)
#else
#define minidb_wal_buffers_full(w)	((int64) 0)
#endif

/* ---- 17 ---- */

/* 17: ShmemVariableCache was renamed */
#if PG_VERSION_NUM < 170000
#define TransamVariables ShmemVariableCache
#endif

/* 17: IsAutoVacuumWorkerProcess() was renamed */
#if PG_VERSION_NUM < 170000
#define AmAutoVacuumWorkerProcess()	IsAutoVacuumWorkerProcess()
#endif

/*
 * 17: writing a new relation's pages directly, bypassing shared buffers, as
 * heap's rewrite does, became the bulk write API (smgr_bulk_*: it WAL-logs
 * each page as a full image when the relation needs WAL, and syncs the
 * file at the end).  On 15, rewriteheap.c's way by hand: log_newpage, then
 * smgrextend without an fsync request, then smgrimmedsync at the end,
 * because a checkpoint during the rewrite cannot have flushed pages that
 * were never in shared buffers.  Pages go in block order from 0, into a
 * relation that is new and empty, which only its creator can see.  The
 * page passed in is the caller's to start again afterwards: 17+ copies it
 * into the bulk writer's buffer, 15 sets its LSN and checksum in place and
 * writes it from there (as rewriteheap.c does with its state's page).
 */
#if PG_VERSION_NUM >= 170000
#include "storage/bulk_write.h"

typedef struct MinidbBulkWriter
{
	BulkWriteState *state;
} MinidbBulkWriter;

static inline void
minidb_bulk_start(MinidbBulkWriter *bw, Relation rel)
{
	bw->state = smgr_bulk_start_rel(rel, MAIN_FORKNUM);
}

static inline void
minidb_bulk_write(MinidbBulkWriter *bw, BlockNumber blkno, char *page)
{
	BulkWriteBuffer buf = smgr_bulk_get_buf(bw->state);

	memcpy(buf->data, page, BLCKSZ);
	smgr_bulk_write(bw->state, blkno, buf, true);
}

static inline void
minidb_bulk_finish(MinidbBulkWriter *bw)
{
	smgr_bulk_finish(bw->state);
}
#else
#include "access/xloginsert.h"
#include "storage/smgr.h"

typedef struct MinidbBulkWriter
{
	Relation	rel;
} MinidbBulkWriter;

static inline void
minidb_bulk_start(MinidbBulkWriter *bw, Relation rel)
{
	bw->rel = rel;
}

static inline void
minidb_bulk_write(MinidbBulkWriter *bw, BlockNumber blkno, char *page)
{
	if (RelationNeedsWAL(bw->rel))
		log_newpage(&bw->rel->rd_node, MAIN_FORKNUM, blkno, page, true);
	PageSetChecksumInplace(page, blkno);
	smgrextend(RelationGetSmgr(bw->rel), MAIN_FORKNUM, blkno, page, true);
}

static inline void
minidb_bulk_finish(MinidbBulkWriter *bw)
{
	if (RelationNeedsWAL(bw->rel))
		smgrimmedsync(RelationGetSmgr(bw->rel), MAIN_FORKNUM);
}
#endif

/* 17: old_snapshot_threshold ("snapshot too old") was removed */
#if PG_VERSION_NUM >= 170000
#define minidb_old_snapshot_threshold_enabled()	false
#else
#define minidb_old_snapshot_threshold_enabled()	(old_snapshot_threshold >= 0)
#endif

/*
 * 17: index vacuuming takes its dead TIDs from a TidStore, bounded in bytes,
 * no longer from VacDeadItems' sorted array, and pg_stat_progress_vacuum
 * counts them in bytes and item ids.  minidb keeps the sorted array on
 * every version (phase 3 walks it, and it bounds the memory as 15 did); on
 * 17+ the TidStore is built from it before the first index of a pass is
 * vacuumed, and emptied with the array's contents.
 *
 * Parallel index vacuuming (vacuumparallel.c): on 15 the array itself
 * lives in the parallel vacuum's shared memory; on 17+ a shared TidStore
 * does, which minidb fills from its (local) array before each parallel
 * index pass and empties after it with parallel_vacuum_reset_dead_items.
 */
#if PG_VERSION_NUM >= 170000
typedef struct MinidbDeadItems
{
	TidStore   *store;			/* built from items[], or NULL */
	ParallelVacuumState *pvs;	/* store is the parallel vacuum's, or NULL */
	int			max_items;
	int			num_items;
	ItemPointerData items[FLEXIBLE_ARRAY_MEMBER];
} MinidbDeadItems;
#else
typedef VacDeadItems MinidbDeadItems;
#endif

/* How many dead TIDs fit in bytes (15's MAXDEADITEMS) */
#define MINIDB_MAXDEADITEMS(bytes) \
	(((bytes) - offsetof(MinidbDeadItems, items)) / sizeof(ItemPointerData))

static inline MinidbDeadItems *
minidb_dead_items_create(int max_items)
{
	MinidbDeadItems *d = palloc0(offsetof(MinidbDeadItems, items) +
								 sizeof(ItemPointerData) * max_items);

	d->max_items = max_items;
	return d;
}

#if PG_VERSION_NUM >= 170000
/* Put the sorted array's TIDs into ts, a block at a time */
static inline void
minidb_dead_items_fill(TidStore *ts, MinidbDeadItems *d)
{
	for (int i = 0, n; i < d->num_items; i += n)
	{
		OffsetNumber offsets[MaxOffsetNumber];
		BlockNumber blkno = ItemPointerGetBlockNumber(&d->items[i]);

		for (n = 0; i + n < d->num_items &&
			 ItemPointerGetBlockNumber(&d->items[i + n]) == blkno; n++)
			offsets[n] = ItemPointerGetOffsetNumber(&d->items[i + n]);
		TidStoreSetBlockOffsets(ts, blkno, offsets, n);
	}
}
#endif

static inline IndexBulkDeleteResult *
minidb_bulkdel_one_index(IndexVacuumInfo *ivinfo,
						 IndexBulkDeleteResult *istat, MinidbDeadItems *d)
{
#if PG_VERSION_NUM >= 170000
	VacDeadItemsInfo info;

	if (d->store == NULL)
	{
		d->store = TidStoreCreateLocal(sizeof(ItemPointerData) * d->max_items,
									   true);
		minidb_dead_items_fill(d->store, d);
	}
	info.max_bytes = sizeof(ItemPointerData) * d->max_items;
	info.num_items = d->num_items;
	return vac_bulkdel_one_index(ivinfo, istat, d->store, &info);
#else
	return vac_bulkdel_one_index(ivinfo, istat, d);
#endif
}

static inline void
minidb_dead_items_reset(MinidbDeadItems *d)
{
	d->num_items = 0;
#if PG_VERSION_NUM >= 170000
	if (d->store && d->pvs)
		parallel_vacuum_reset_dead_items(d->pvs);
	else if (d->store)
		TidStoreDestroy(d->store);
	d->store = NULL;
#endif
}

/* 17: parallel_vacuum_init sizes the shared TidStore in kB, no longer in TIDs */
static inline ParallelVacuumState *
minidb_parallel_vacuum_init(Relation rel, Relation *indrels, int nindexes,
							int nworkers, int max_items, int vac_work_mem,
							int elevel, BufferAccessStrategy bstrategy)
{
#if PG_VERSION_NUM >= 170000
	return parallel_vacuum_init(rel, indrels, nindexes, nworkers,
								vac_work_mem, elevel, bstrategy);
#else
	return parallel_vacuum_init(rel, indrels, nindexes, nworkers,
								max_items, elevel, bstrategy);
#endif
}

/* The dead items of a parallel vacuum */
static inline MinidbDeadItems *
minidb_dead_items_parallel(ParallelVacuumState *pvs, int max_items)
{
#if PG_VERSION_NUM >= 170000
	MinidbDeadItems *d = minidb_dead_items_create(max_items);

	d->pvs = pvs;
	return d;
#else
	return parallel_vacuum_get_dead_items(pvs);
#endif
}

/* One parallel index pass over the dead items */
static inline void
minidb_parallel_bulkdel_all_indexes(ParallelVacuumState *pvs,
									MinidbDeadItems *d, long num_table_tuples,
									int num_index_scans)
{
#if PG_VERSION_NUM >= 170000
	if (d->store == NULL)
	{
		VacDeadItemsInfo *info;

		/* reset after each pass: the store is a new one */
		d->store = parallel_vacuum_get_dead_items(pvs, &info);
		minidb_dead_items_fill(d->store, d);
		info->num_items = d->num_items;
	}
#endif
	parallel_vacuum_bulkdel_all_indexes(pvs, num_table_tuples,
										num_index_scans);
}

/*
 * After parallel_vacuum_end, which freed the shared memory: the dead
 * items left to free (15: none, they were in it).
 */
static inline MinidbDeadItems *
minidb_dead_items_end_parallel(MinidbDeadItems *d)
{
#if PG_VERSION_NUM >= 170000
	d->num_items = 0;
	d->store = NULL;
	d->pvs = NULL;
	return d;
#else
	return NULL;
#endif
}

/* pg_stat_progress_vacuum: how many dead TIDs fit, how many are kept */
static inline void
minidb_progress_dead_items(MinidbDeadItems *d, bool report_max)
{
#if PG_VERSION_NUM >= 170000
	if (report_max)
		pgstat_progress_update_param(PROGRESS_VACUUM_MAX_DEAD_TUPLE_BYTES,
									 sizeof(ItemPointerData) * d->max_items);
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_DEAD_ITEM_IDS,
								 d->num_items);
	pgstat_progress_update_param(PROGRESS_VACUUM_DEAD_TUPLE_BYTES,
								 sizeof(ItemPointerData) * d->num_items);
#else
	if (report_max)
		pgstat_progress_update_param(PROGRESS_VACUUM_MAX_DEAD_TUPLES,
									 d->max_items);
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_DEAD_TUPLES,
								 d->num_items);
#endif
}

/* ---- 18 ---- */

/* 18: pg_attribute_noreturn() became pg_noreturn, before the declaration */
#ifndef pg_noreturn
#define pg_noreturn pg_attribute_noreturn()
#endif

/* 18: a TID range scan's bounds moved into the scan-type union "st" */
#if PG_VERSION_NUM >= 180000
#define MINIDB_SCAN_MINTID(sscan)	((sscan)->st.tidrange.rs_mintid)
#define MINIDB_SCAN_MAXTID(sscan)	((sscan)->st.tidrange.rs_maxtid)
#else
#define MINIDB_SCAN_MINTID(sscan)	((sscan)->rs_mintid)
#define MINIDB_SCAN_MAXTID(sscan)	((sscan)->rs_maxtid)
#endif

/* 18: index_beginscan takes instrumentation for EXPLAIN (none here) */
#if PG_VERSION_NUM >= 180000
#define minidb_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, NULL, nkeys, norderbys)
#else
#define minidb_index_beginscan(heap, index, snapshot, nkeys, norderbys) \
	index_beginscan(heap, index, snapshot, nkeys, norderbys)
#endif

/*
 * 18: a NOWAIT or SKIP LOCKED lock that fails is logged when
 * log_lock_failures is on; heap passes the setting, so minidb does too.
 */
#if PG_VERSION_NUM >= 180000
#define minidb_conditional_lock_tuple(rel, tid, mode) \
	ConditionalLockTuple(rel, tid, mode, log_lock_failures)
#define minidb_conditional_xact_lock_table_wait(xid) \
	ConditionalXactLockTableWait(xid, log_lock_failures)
#else
#define minidb_conditional_lock_tuple(rel, tid, mode) \
	ConditionalLockTuple(rel, tid, mode)
#define minidb_conditional_xact_lock_table_wait(xid) \
	ConditionalXactLockTableWait(xid)
#endif

/* 18: VACUUM's and ANALYZE's cost delays are accounted apart */
#if PG_VERSION_NUM >= 180000
#define minidb_vacuum_delay_point()	vacuum_delay_point(false)
#else
#define minidb_vacuum_delay_point()	vacuum_delay_point()
#endif

/*
 * 18: pg_class.relallfrozen is set with relallvisible, and VACUUM's start
 * time feeds the cumulative vacuum time statistics.
 */
#if PG_VERSION_NUM >= 180000
#define minidb_vac_update_relstats(rel, pages, tuples, allvisible, allfrozen, \
								   hasindex, frozenxid, minmulti, \
								   frozenxid_updated, minmulti_updated, outer) \
	vac_update_relstats(rel, pages, tuples, allvisible, allfrozen, hasindex, \
						frozenxid, minmulti, frozenxid_updated, \
						minmulti_updated, outer)
#define minidb_pgstat_report_vacuum(relid, shared, live, dead, starttime) \
	pgstat_report_vacuum(relid, shared, live, dead, starttime)
#else
#define minidb_vac_update_relstats(rel, pages, tuples, allvisible, allfrozen, \
								   hasindex, frozenxid, minmulti, \
								   frozenxid_updated, minmulti_updated, outer) \
	vac_update_relstats(rel, pages, tuples, allvisible, hasindex, \
						frozenxid, minmulti, frozenxid_updated, \
						minmulti_updated, outer)
#define minidb_pgstat_report_vacuum(relid, shared, live, dead, starttime) \
	pgstat_report_vacuum(relid, shared, live, dead)
#endif

#endif							/* MINIDB_PG_COMPAT_H */
