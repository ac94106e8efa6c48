/*-------------------------------------------------------------------------
 *
 * minidb_am.h
 *	  Server-side declarations of the minidb table access method.
 *
 * The record byte layout lives in chain.h; this header is everything the
 * server-side files share: page layout, the page-view layer, visibility,
 * page changes with their WAL, scans, writes and maintenance.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_AM_H
#define MINIDB_AM_H

#include "access/genam.h"
#include "access/heapam.h"
#include "access/relscan.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "chain.h"

/* ----------------------------------------------------------------
 * Pages
 *
 * A minidb page is a standard PostgreSQL page: line pointers, one record
 * per LP_NORMAL item, and a small special area carrying a magic number so
 * that a page from anything else is recognised as corrupt.
 * ----------------------------------------------------------------
 */
#define MINIDB_PAGE_MAGIC	0x4D44		/* "MD" */

typedef struct MinidbPageOpaqueData
{
	uint16		md_magic;
	uint16		md_flags;		/* none yet */
} MinidbPageOpaqueData;

typedef MinidbPageOpaqueData *MinidbPageOpaque;

#define MinidbPageGetOpaque(page) \
	((MinidbPageOpaque) PageGetSpecialPointer(page))

/*
 * Every record whose head is a row keeps room on its page for one marker
 * version (tombstone or "moved"), so that DELETE and non-in-place UPDATE
 * never fail for lack of space.  Inserts and in-place prepends honour it.
 */
#define MINIDB_MARKER_RESERVE	MINIDB_MARKER_GROWTH_MAX	/* a V2 directory may grow too */

/* Largest record that fits on an empty page */
#define MINIDB_MAX_RECORD_LEN \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData + sizeof(ItemIdData)) - \
	 MAXALIGN(sizeof(MinidbPageOpaqueData)) - MINIDB_MARKER_RESERVE)

/* minidb_page.c: page changes, each a function of (page, arguments) */
extern void minidb_page_init(Page page);
extern void minidb_page_check(Relation rel, Buffer buffer);
extern Size minidb_page_free_for_insert(Page page);
extern Size minidb_page_free_for_replace(Page page, OffsetNumber off,
										 uint32 newlen);
extern OffsetNumber minidb_page_add_record(Page page, const char *rec,
										   uint32 len);
extern void minidb_page_replace_record(Page page, OffsetNumber off,
									   const char *rec, uint32 len);
extern char *minidb_page_get_record(Relation rel, Buffer buffer,
									OffsetNumber off, uint32 *len);
extern char *minidb_page_record_at(Relation rel, Buffer buffer,
								   ItemPointer tid, uint32 *len);

/*
 * minidb_page.c: pruning plans.  Pruning and VACUUM decide what to do to a
 * page (minidb_prune.c, minidb_vacuum.c), minidb_page_execute_plan carries
 * it out, on the primary and in replay of the compact PRUNE record.  The
 * conflict horizon is what a hot standby needs: the newest xid whose
 * versions the plan removes or freezes (queries whose snapshots do not see
 * it yet are cancelled on replay).
 */
#define MINIDB_PLAN_KEEP		0x01	/* action: the version stays */
#define MINIDB_PLAN_FREEZE		0x02	/* action: ... and is frozen */

#define MINIDB_RPLAN_CLEAR_LOCKER	0x01	/* forget the record's row locker */

#define MINIDB_PLAN_SET_PRUNE_XID	0x01	/* set pd_prune_xid to prune_xid */
#define MINIDB_PLAN_TRUNCATE_LP		0x02	/* PageTruncateLinePointerArray */

/* Versions that fit on a page: each has a 16-byte header */
#define MINIDB_MAX_PAGE_VERSIONS	(BLCKSZ / MINIDB_VERSION_HDRSZ)

typedef struct MinidbRecordPlan
{
	OffsetNumber off;
	uint16		nversions;		/* the versions it holds before the change */
	uint16		first;			/* its first action in MinidbPagePlan.actions */
	uint8		flags;			/* MINIDB_RPLAN_* */
} MinidbRecordPlan;

typedef struct MinidbPagePlan
{
	TransactionId conflict_xid; /* InvalidTransactionId: none */
	TransactionId prune_xid;	/* pd_prune_xid afterwards */
	uint8		flags;			/* MINIDB_PLAN_* */
	int			nrecords;
	int			nactions;
	int			ndead;			/* items that become LP_DEAD */
	int			nunused;		/* items that become LP_UNUSED */
	int			nremoved;		/* pruning: versions removed that pgstat
								 * counts as dead (not logged) */
	MinidbRecordPlan records[MaxHeapTuplesPerPage];
	uint8		actions[MINIDB_MAX_PAGE_VERSIONS];	/* per version, newest
													 * first, record by record */
	OffsetNumber dead[MaxHeapTuplesPerPage];
	OffsetNumber unused[MaxHeapTuplesPerPage];
} MinidbPagePlan;

extern void minidb_plan_init(MinidbPagePlan *plan);
extern uint8 *minidb_plan_add_record(MinidbPagePlan *plan, OffsetNumber off,
									 int nversions, uint8 flags);
extern void minidb_plan_note_xid(MinidbPagePlan *plan, TransactionId xid);
extern bool minidb_plan_is_empty(const MinidbPagePlan *plan);
extern void minidb_page_execute_plan(Page page, const MinidbPagePlan *plan);

/*
 * minidb_wal.c: WAL-logged page writes.  Change the images that
 * minidb_write_page hands out, then minidb_write_finish logs the delta:
 * a DELTA record of minidb's resource manager when the library is
 * preloaded (minidb_custom_wal), a generic WAL record otherwise.
 */
#define MINIDB_WRITE_MAX_PAGES	2	/* table pages per write */

typedef struct MinidbWalState MinidbWalState;

typedef struct MinidbPageWrite
{
	MinidbWalState *state;
} MinidbPageWrite;

extern bool minidb_custom_wal;
extern void minidb_write_begin(MinidbPageWrite *w, Relation rel);
extern Page minidb_write_page(MinidbPageWrite *w, Buffer buffer, bool is_new);
extern XLogRecPtr minidb_write_finish(MinidbPageWrite *w);
extern void minidb_wal_set_visible(Relation rel, Buffer buffer,
								   Buffer vmbuffer, uint8 flags);

/*
 * minidb_xlog.c: the compact records and the resource manager (preloaded
 * library); minidb_prepend_build/place are the prepend as page functions.
 */
extern void minidb_xlog_init(void);
extern char *minidb_prepend_build(Page page, OffsetNumber off,
								  const bool *keep,
								  const MinidbVersionData *v,
								  const ItemPointerData *successor,
								  uint8 recflags, uint32 *newlen);
extern void minidb_prepend_place(Page page, OffsetNumber off, const char *rec,
								 uint32 len, TransactionId xmin);
extern ItemPointerData minidb_log_move(Relation rel, Buffer oldbuf,
									   OffsetNumber off, const bool *keep,
									   int nversions,
									   const MinidbVersionData *marker,
									   Buffer newbuf, bool new_page,
									   const char *newrec, uint32 newlen);
extern void minidb_log_prepend(Relation rel, Buffer buffer, OffsetNumber off,
							   const bool *keep, int nversions,
							   const MinidbVersionData *v,
							   const ItemPointerData *successor,
							   uint8 recflags);
extern void minidb_log_plan(Relation rel, Buffer buffer,
							const MinidbPagePlan *plan);
extern void minidb_log_visible(Relation rel, Buffer buffer, Buffer vmbuffer,
							   TransactionId cutoff_xid, uint8 flags);

/* minidb_hio.c: finding room for a new record */
extern Buffer minidb_buffer_for_insert(Relation rel, uint32 len,
									   BulkInsertState bistate,
									   Buffer otherBuffer, bool *is_new);

/* ----------------------------------------------------------------
 * btree_view.c: the page-view layer
 *
 * A record's bytes are seen only inside a callback that runs while the
 * buffer is pinned and content-locked.  Nothing may keep a pointer into the
 * page after the callback returns.
 * ----------------------------------------------------------------
 */
typedef void (*MinidbViewFn) (char *rec, uint32 len, Buffer buffer,
							  void *arg);

typedef enum MinidbViewStatus
{
	MINIDB_VIEW_OK,
	MINIDB_VIEW_NO_BLOCK,		/* block past the end of the relation */
	MINIDB_VIEW_NO_ITEM,		/* offset out of range, unused or dead */
} MinidbViewStatus;

extern MinidbViewStatus minidb_view_record(Relation rel, ItemPointer tid,
										   Buffer *pin, MinidbViewFn fn,
										   void *arg);
extern char *minidb_copy_record(Relation rel, ItemPointer tid, Buffer *pin,
								MemoryContext cxt, uint32 *len,
								MinidbViewStatus *status);

/* The read paths that the benchmark compares */
typedef enum MinidbReadPath
{
	MINIDB_PATH_COPY_EAGER,		/* copy the record, decode everything */
	MINIDB_PATH_COPY_LAZY,		/* copy the record, fast walker */
	MINIDB_PATH_VIEW_LAZY,		/* view in place, fast walker (production) */
} MinidbReadPath;

extern int	minidb_read_path;	/* GUC minidb.read_path */

/* ----------------------------------------------------------------
 * minidb_visibility.c
 * ----------------------------------------------------------------
 */
typedef struct MinidbVisArg
{
	Snapshot	snapshot;
	Buffer		buffer;			/* for hint bits; InvalidBuffer if a copy */
	GlobalVisState *vistest;	/* for SNAPSHOT_NON_VACUUMABLE */
	MinidbVisibleFn fn;			/* the predicate for this snapshot */
	TransactionId newer_xmin;	/* xmin of the last version passed over */
	Relation	ssi_rel;		/* MVCC: report skipped writers to SSI */
} MinidbVisArg;

extern MinidbVisibleFn minidb_visibility_fn(Snapshot snapshot);
extern void minidb_vis_arg_init(MinidbVisArg *va, Snapshot snapshot,
								Buffer buffer);
extern TransactionId minidb_record_origin_xmin(Relation rel, ItemPointer tid,
											   char *rec, uint32 len);
extern int	minidb_effective_head(Relation rel, ItemPointer tid, char *rec,
								  uint32 len, Buffer buffer,
								  MinidbVersionRef *ref);
extern bool minidb_xid_committed(MinidbVersionHeader *vh, Buffer buffer);
extern bool minidb_xid_aborted(MinidbVersionHeader *vh, Buffer buffer);
extern void minidb_set_hint(MinidbVersionHeader *vh, Buffer buffer,
							uint16 hint, TransactionId xid);

extern void minidb_ssi_conflict_out(Relation rel, TransactionId xid,
									Snapshot snapshot);
extern void minidb_ssi_version_tid(ItemPointer tid, TransactionId xmin,
								   ItemPointer vtid);
extern void minidb_ssi_lock_version(Relation rel, ItemPointer tid,
									Snapshot snapshot, TransactionId xmin);
extern void minidb_ssi_check_in(Relation rel, ItemPointer tid,
								TransactionId xmin);
extern int	minidb_snapshot_version(Relation rel, ItemPointer tid, char *rec,
									uint32 len, Snapshot snapshot,
									Buffer buffer, MinidbVersionRef *ref);
extern int	minidb_row_heads(Relation rel, ItemPointer tid, char *rec,
							 uint32 len, Buffer buffer,
							 MinidbVersionRef *head, MinidbVersionRef *below);
extern int	minidb_find_row_version(Relation rel, ItemPointer tid,
									bool newest, char *rec, uint32 len,
									Buffer buffer, MinidbVersionRef *ref,
									TransactionId *xmax);
extern bool minidb_version_is_newest_committed(Relation rel, ItemPointer tid,
											   char *rec, uint32 len,
											   Buffer buffer,
											   const MinidbVersionRef *ref);

/* Visible version of a record under a snapshot; -1 none, error on damage */
extern int	minidb_find_visible(Relation rel, ItemPointer tid, char *rec,
								uint32 len, Snapshot snapshot, Buffer buffer,
								MinidbVersionRef *ref, TransactionId *xmax);

/* ----------------------------------------------------------------
 * minidb_tuple.c: versions <-> heap tuples
 * ----------------------------------------------------------------
 */

/* A reusable output buffer for materialized tuples (no palloc per row) */
typedef struct MinidbTupleBuf
{
	HeapTupleData tuple;
	char	   *data;
	Size		size;
	MemoryContext cxt;
} MinidbTupleBuf;

extern Size minidb_materialized_size(const MinidbVersionData *v);
extern void minidb_write_tuple(HeapTupleHeader td, const MinidbVersionData *v,
							   TransactionId xmax, ItemPointer tid);
extern void minidb_tuplebuf_init(MinidbTupleBuf *buf, MemoryContext cxt);
extern void minidb_tuple_set_lockers(HeapTupleHeader td, const char *rec);
extern HeapTuple minidb_materialize_data(MinidbTupleBuf *buf,
										 const MinidbVersionData *v,
										 TransactionId xmax, ItemPointer tid,
										 Oid tableoid);
extern HeapTuple minidb_materialize(MinidbTupleBuf *buf, const char *rec,
									const MinidbVersionRef *ref,
									TransactionId xmax, ItemPointer tid,
									Oid tableoid);
extern HeapTuple minidb_materialize_copy(const char *rec,
										 const MinidbVersionRef *ref,
										 TransactionId xmax, ItemPointer tid,
										 Oid tableoid);
extern void minidb_version_from_tuple(HeapTuple tuple, TransactionId xmin,
									  CommandId cid, MinidbVersionData *v);
extern void minidb_marker_version(TransactionId xmin, CommandId cid,
								  uint16 flag, MinidbVersionData *v);
extern void minidb_report_corruption(Relation rel, ItemPointer tid,
									 const MinidbChainError *err)
			pg_attribute_noreturn();
extern void minidb_store_tuple(TupleTableSlot *slot, HeapTuple tuple,
							   bool shouldFree);

/* ----------------------------------------------------------------
 * minidb_scan.c
 * ----------------------------------------------------------------
 */

/* Rows of one page, materialized under the lock into a per-scan arena */
typedef struct MinidbPageRows
{
	int			nrows;
	int			next;			/* bitmap, sample, analyze: next to hand out */
	int			cur;			/* seq scans: the row handed out last */
	OffsetNumber maxoff;		/* of the page the rows came from */
	OffsetNumber offsets[MaxHeapTuplesPerPage];
	uint32		starts[MaxHeapTuplesPerPage];	/* into arena */
	uint32		lens[MaxHeapTuplesPerPage];
	char	   *arena;
	Size		arena_size;
	Size		arena_used;
} MinidbPageRows;

typedef struct MinidbScanDescData
{
	TableScanDescData base;

	BlockNumber nblocks;
	BlockNumber startblock;		/* TID range / analyze */
	BlockNumber numblocks;		/* InvalidBlockNumber = all */
	BlockNumber cblock;			/* current block */
	bool		inited;
	bool		by_age;			/* a page's rows oldest version first, else
								 * in TID order */
	Buffer		cbuf;			/* pinned current buffer, or invalid */
	BufferAccessStrategy strategy;
	struct ParallelBlockTableScanWorkerData *pworker;
	HeapTupleData tuple;		/* what the slot points at */
	MinidbPageRows rows;
	MemoryContext cxt;

	/* analyze */
	TransactionId analyze_oldest;
	double		analyze_live;
	double		analyze_dead;

	/* sample scans */
	BlockNumber sample_pos;
	int			sample_visible[MaxHeapTuplesPerPage + 1];
} MinidbScanDescData;

typedef MinidbScanDescData *MinidbScanDesc;

typedef struct MinidbIndexFetchData
{
	IndexFetchTableData base;
	Buffer		pin;
	MinidbTupleBuf buf;
} MinidbIndexFetchData;

extern TableScanDesc minidb_scan_begin(Relation rel, Snapshot snapshot,
									   int nkeys, struct ScanKeyData *key,
									   ParallelTableScanDesc pscan,
									   uint32 flags);
extern void minidb_scan_end(TableScanDesc scan);
extern void minidb_scan_rescan(TableScanDesc scan, struct ScanKeyData *key,
							   bool set_params, bool allow_strat,
							   bool allow_sync, bool allow_pagemode);
extern bool minidb_scan_getnextslot(TableScanDesc scan,
									ScanDirection direction,
									TupleTableSlot *slot);
extern void minidb_scan_set_tidrange(TableScanDesc scan, ItemPointer mintid,
									 ItemPointer maxtid);
extern bool minidb_scan_getnextslot_tidrange(TableScanDesc scan,
											 ScanDirection direction,
											 TupleTableSlot *slot);
extern struct IndexFetchTableData *minidb_index_fetch_begin(Relation rel);
extern void minidb_index_fetch_reset(struct IndexFetchTableData *data);
extern void minidb_index_fetch_end(struct IndexFetchTableData *data);
extern bool minidb_index_fetch_tuple(struct IndexFetchTableData *scan,
									 ItemPointer tid, Snapshot snapshot,
									 TupleTableSlot *slot,
									 bool *call_again, bool *all_dead);
extern bool minidb_fetch_row_version(Relation rel, ItemPointer tid,
									 Snapshot snapshot, TupleTableSlot *slot);
extern bool minidb_tuple_tid_valid(TableScanDesc scan, ItemPointer tid);
extern void minidb_get_latest_tid(TableScanDesc scan, ItemPointer tid);
extern bool minidb_tuple_satisfies_snapshot(Relation rel,
											TupleTableSlot *slot,
											Snapshot snapshot);
extern bool minidb_scan_bitmap_next_block(TableScanDesc scan,
										  struct TBMIterateResult *tbmres);
extern bool minidb_scan_bitmap_next_tuple(TableScanDesc scan,
										  struct TBMIterateResult *tbmres,
										  TupleTableSlot *slot);
extern bool minidb_scan_sample_next_block(TableScanDesc scan,
										  struct SampleScanState *scanstate);
extern bool minidb_scan_sample_next_tuple(TableScanDesc scan,
										  struct SampleScanState *scanstate,
										  TupleTableSlot *slot);
extern bool minidb_scan_analyze_next_block(TableScanDesc scan,
										   BlockNumber blockno,
										   BufferAccessStrategy bstrategy);
extern bool minidb_scan_analyze_next_tuple(TableScanDesc scan,
										   TransactionId OldestXmin,
										   double *liverows,
										   double *deadrows,
										   TupleTableSlot *slot);
extern BlockNumber minidb_scan_advance_block(MinidbScanDesc scan,
											 ScanDirection direction);
extern bool minidb_scan_next_page(MinidbScanDesc scan,
								  ScanDirection direction);
extern bool minidb_scan_next_row(MinidbScanDesc scan, TupleTableSlot *slot);

/* ----------------------------------------------------------------
 * minidb_modify.c
 * ----------------------------------------------------------------
 */
extern void minidb_tuple_insert(Relation rel, TupleTableSlot *slot,
								CommandId cid, int options,
								BulkInsertState bistate);
extern void minidb_tuple_insert_speculative(Relation rel,
											TupleTableSlot *slot,
											CommandId cid, int options,
											BulkInsertState bistate,
											uint32 specToken);
extern void minidb_tuple_complete_speculative(Relation rel,
											  TupleTableSlot *slot,
											  uint32 specToken,
											  bool succeeded);
extern void minidb_multi_insert(Relation rel, TupleTableSlot **slots,
								int nslots, CommandId cid, int options,
								BulkInsertState bistate);
extern TM_Result minidb_tuple_delete(Relation rel, ItemPointer tid,
									 CommandId cid, Snapshot snapshot,
									 Snapshot crosscheck, bool wait,
									 TM_FailureData *tmfd, bool changingPart);
extern TM_Result minidb_tuple_update(Relation rel, ItemPointer otid,
									 TupleTableSlot *slot, CommandId cid,
									 Snapshot snapshot, Snapshot crosscheck,
									 bool wait, TM_FailureData *tmfd,
									 LockTupleMode *lockmode,
									 bool *update_indexes);

/* ----------------------------------------------------------------
 * minidb_prune.c: removing versions no snapshot can see
 * ----------------------------------------------------------------
 */
extern bool minidb_record_is_dead(char *rec, uint32 len,
								  GlobalVisState *vistest, Buffer buffer,
								  TransactionId *latest_xid);
extern uint32 minidb_rewrite_record(char *rec, uint32 len,
									TransactionId oldest_xmin,
									TransactionId freeze_cutoff, int *nkept);
extern int	minidb_prune_plan(char *rec, uint32 len, GlobalVisState *vistest,
							  Buffer buffer, bool *keep, int *nversions,
							  int *floor);
extern bool minidb_plan_page_prune(Page page, GlobalVisState *vistest,
								   Buffer buffer, MinidbPagePlan *plan);
extern void minidb_apply_plan(Relation rel, Buffer buffer,
							  const MinidbPagePlan *plan);
extern bool minidb_prune_buffer(Relation rel, Buffer buffer);
extern Size minidb_page_prunable_bytes(Page page, GlobalVisState *vistest,
									   Buffer buffer);

/* ----------------------------------------------------------------
 * minidb_ddl.c: storage, index builds, estimates, rewrites
 * ----------------------------------------------------------------
 */
extern void minidb_relation_set_new_filenode(Relation rel,
											 const RelFileNode *newrnode,
											 char persistence,
											 TransactionId *freezeXid,
											 MultiXactId *minmulti);
extern void minidb_relation_nontransactional_truncate(Relation rel);
extern void minidb_relation_copy_data(Relation rel,
									  const RelFileNode *newrnode);
extern void minidb_relation_copy_for_cluster(Relation OldTable,
											 Relation NewTable,
											 Relation OldIndex,
											 bool use_sort,
											 TransactionId OldestXmin,
											 TransactionId *xid_cutoff,
											 MultiXactId *multi_cutoff,
											 double *num_tuples,
											 double *tups_vacuumed,
											 double *tups_recently_dead);
extern double minidb_index_build_range_scan(Relation table_rel,
											Relation index_rel,
											struct IndexInfo *index_info,
											bool allow_sync,
											bool anyvisible,
											bool progress,
											BlockNumber start_blockno,
											BlockNumber numblocks,
											IndexBuildCallback callback,
											void *callback_state,
											TableScanDesc scan);
extern void minidb_index_validate_scan(Relation table_rel,
									   Relation index_rel,
									   struct IndexInfo *index_info,
									   Snapshot snapshot,
									   struct ValidateIndexState *state);
extern bool minidb_relation_needs_toast_table(Relation rel);
extern uint64 minidb_tuple_record_len(HeapTuple tup);
extern HeapTuple minidb_toast_to_fit(Relation rel, HeapTuple tup,
									 int options);
extern void minidb_relation_estimate_size(Relation rel, int32 *attr_widths,
										  BlockNumber *pages, double *tuples,
										  double *allvisfrac);
extern TransactionId minidb_index_delete_tuples(Relation rel,
												TM_IndexDeleteOp *delstate);

/* minidb_vacuum.c */
extern void minidb_relation_vacuum(Relation rel, struct VacuumParams *params,
								   BufferAccessStrategy bstrategy);

/* minidb_am.c */
extern const TableAmRoutine *minidb_routine(void);
extern void minidb_check_relation(Relation rel, const char *caller);

/*
 * minidb_funcs.c: open a relation for the SQL functions that read raw
 * records (minidb_chain, minidb_stats): ownership checked by OID before any
 * lock is taken, then the relation kind and access method.
 */
extern Relation minidb_open_owned(Oid relid, const char *caller);

/* bench.c: ERROR (naming the role) unless superuser or minidb_bench */
#define MINIDB_BENCH_ROLE "minidb_bench"
extern void minidb_bench_check_caller(void);

#endif							/* MINIDB_AM_H */
