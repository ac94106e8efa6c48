/*-------------------------------------------------------------------------
 *
 * minidb_scan.h
 *	  Reading minidb tables: scans and fetches by TID (table AM callbacks).
 *
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_SCAN_H
#define MINIDB_SCAN_H

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/tableam.h"
#include "nodes/execnodes.h"

#include "pg_compat.h"
#include "minidb_tuple.h"
#include "btree_view.h"


/*
 * When a row's visible version was written, as a sequential scan orders a
 * page's rows (see rows_order_by_age): its xmin and cmin, and those of the
 * version before it in the record, if any.  A frozen version's xmin is
 * FrozenTransactionId and its cmin InvalidCommandId: no order looks at
 * them, and so the ages of frozen rows compare equal.
 */
typedef struct MinidbRowAge
{
	TransactionId xmin;
	CommandId	cmin;
	TransactionId prev_xmin;	/* invalid: no older version */
	CommandId	prev_cmin;
	bool		frozen;			/* visible to all: its age is unknown */
} MinidbRowAge;

/*
 * A row's age as two numbers, compared in turn (see minidb_scan.c,
 * rows_age_keys)
 */
typedef struct MinidbAgeKey
{
	uint64		hi;
	uint64		lo;
} MinidbAgeKey;

/* Rows of one page, materialized under the lock into a per-scan arena */
typedef struct MinidbPageRows
{
	int			nrows;
	int			next;			/* bitmap, sample, analyze: next to hand out */
	int			cur;			/* seq scans: the row handed out last */
	OffsetNumber maxoff;		/* of the page the rows came from */
	bool		rewritten;		/* the page has MINIDB_PAGE_REWRITTEN */
	bool		uniform;		/* by age: every row is of age ages[0], and
								 * ages[1..] are not set (rows_add_age) */
	bool		keyed;			/* by age: keys[] hold the rows' ages, and
								 * ages[] does not (rows_add_age) */
	TransactionId key_base;		/* the xmin keys[] are relative to */
	TupleDesc	checked_desc;	/* every row's attributes were checked
								 * against it when collected, or NULL */
	OffsetNumber offsets[MaxHeapTuplesPerPage];
	uint32		starts[MaxHeapTuplesPerPage];	/* into arena */
	uint32		lens[MaxHeapTuplesPerPage];
	MinidbRowAge ages[MaxHeapTuplesPerPage];	/* seq scans' order, by row
												 * as collected */
	MinidbAgeKey keys[MaxHeapTuplesPerPage];	/* the same, as keys */
	bool		ordered;		/* row i is handed out as row order[i] */
	uint16		order[MaxHeapTuplesPerPage];	/* rows_order_by_age's */
	char	   *arena;
	Size		arena_size;
	Size		arena_used;
} MinidbPageRows;

/*
 * An order a page's rows were given in: their offsets, and indexes into
 * those in the order given.  A sequential scan keeps one for each page it
 * gave out of line pointer order (minidb_scan.c, scan_page_order), and the
 * relation one for the page it last sorted (rows_start_order).
 */
typedef struct MinidbPageOrder
{
	BlockNumber blkno;
	int			nrows;
	OffsetNumber *offsets;		/* its rows, by offset (rows->offsets) */
	uint16	   *order;			/* their indexes, in the order given */
} MinidbPageOrder;

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
	Buffer		held;			/* a sequential scan's last page, kept
								 * pinned as a checked pin (btree_view.h),
								 * or invalid */
	BufferAccessStrategy strategy;
	struct ParallelBlockTableScanWorkerData *pworker;
	HeapTupleData tuple;		/* what the slot points at */
	MemoryContext cxt;
	MinidbDeltaBuf delta;		/* older versions rebuilt from differences */

	/* analyze: the locked block's next line pointer, its last, its checks */
	OffsetNumber analyze_off;
	OffsetNumber analyze_maxoff;
	bool		analyze_checked;	/* minidb_page_check has passed it */
	int			analyze_plain;	/* its plain rows handed out, counted live
								 * when the block is done */
	uint32		analyze_below;	/* the plain rows' start, see plain_version */
	double		analyze_live;	/* analyze_other_row's counts */
	double		analyze_dead;

	/* sample scans */
	BlockNumber sample_pos;

	/*
	 * The order a sequential scan gave each page it left (see
	 * scan_page_order): which blocks it gave, by bit, and the order of
	 * those whose rows it did not give in line pointer order
	 */
	bits8	   *given;			/* given_inline, or palloc'd */
	BlockNumber given_cap;		/* blocks given[] covers */
	uint64		given_inline;	/* given[] of a table of up to 64 blocks */
	MinidbPageOrder *orders;	/* orders_inline, or palloc'd */
	MinidbPageOrder orders_inline[2];
	int			norders;
	int			orders_cap;
	int			orders_hit;		/* where the last lookup found one */
	BlockNumber giving;			/* the page given last, if its order is not
								 * kept yet, or InvalidBlockNumber */

	/*
	 * store_row's check of a row's attributes, for the slot's descriptor
	 * layout_desc: its first layout_nfixed attributes are fixed-width, and
	 * the first n of them end at layout_end[n] (see store_row)
	 */
	TupleDesc	layout_desc;
	int			layout_nfixed;
	uint32	   *layout_end;		/* layout_cap + 1 entries */
	int			layout_cap;
	uint32		layout_end_inline[33];	/* layout_end, up to 32 attributes */
	uint64		layout_shape;	/* of the last row plain_layout_valid
								 * passed (row_shape), or 0 */

	/*
	 * The large parts last: minidb_scan_begin zeroes what comes before
	 * them, and sets what of them needs setting
	 */
	MinidbPageRows rows;
	int			sample_visible[MaxHeapTuplesPerPage + 1];	/* by offset */
	/* the first order kept (orders[0]) */
	OffsetNumber first_offsets[MaxHeapTuplesPerPage];
	uint16		first_order[MaxHeapTuplesPerPage];
} MinidbScanDescData;

typedef MinidbScanDescData *MinidbScanDesc;

typedef struct MinidbIndexFetchData
{
	IndexFetchTableData base;
	MinidbViewPin pin;			/* kept across fetches, as heap keeps its */
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
#if PG_VERSION_NUM >= 180000	/* 18: the AM walks the bitmap itself */
extern bool minidb_scan_bitmap_next_tuple(TableScanDesc scan,
										  TupleTableSlot *slot,
										  bool *recheck,
										  uint64 *lossy_pages,
										  uint64 *exact_pages);
#else
extern bool minidb_scan_bitmap_next_block(TableScanDesc scan,
										  struct TBMIterateResult *tbmres);
extern bool minidb_scan_bitmap_next_tuple(TableScanDesc scan,
										  struct TBMIterateResult *tbmres,
										  TupleTableSlot *slot);
#endif
extern bool minidb_scan_sample_next_block(TableScanDesc scan,
										  struct SampleScanState *scanstate);
extern bool minidb_scan_sample_next_tuple(TableScanDesc scan,
										  struct SampleScanState *scanstate,
										  TupleTableSlot *slot);
#if PG_VERSION_NUM >= 170000	/* 17: ANALYZE reads through a ReadStream */
extern bool minidb_scan_analyze_next_block(TableScanDesc scan,
										   ReadStream *stream);
#else
extern bool minidb_scan_analyze_next_block(TableScanDesc scan,
										   BlockNumber blockno,
										   BufferAccessStrategy bstrategy);
#endif
extern bool minidb_scan_analyze_next_tuple(TableScanDesc scan,
										   TransactionId OldestXmin,
										   double *liverows,
										   double *deadrows,
										   TupleTableSlot *slot);
extern BlockNumber minidb_scan_advance_block(MinidbScanDesc scan,
											 ScanDirection direction);
extern bool minidb_scan_next_page(MinidbScanDesc scan,
								  ScanDirection direction);

#endif							/* MINIDB_SCAN_H */
