/*-------------------------------------------------------------------------
 *
 * minidb_page.h
 *	  Pages of records: layout, record access, page changes, pruning plans.
 *
 * A minidb page is a standard PostgreSQL page: line pointers, one record
 * per LP_NORMAL item, and a small special area carrying a magic number.
 * This layer (minidb_page.c) knows records (chain.h) and pages and
 * nothing above them: no WAL, no visibility, no snapshots.  Every page
 * change is a function of (page, arguments), so that WAL replay runs
 * the same function the primary ran.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_PAGE_H
#define MINIDB_PAGE_H

#include "access/htup_details.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "utils/rel.h"

#include "chain.h"

/* ----------------------------------------------------------------
 * Page layout
 * ----------------------------------------------------------------
 */
#define MINIDB_PAGE_MAGIC	0x4D44		/* "MD" */

typedef struct MinidbPageOpaqueData
{
	uint16		md_magic;
	uint16		md_flags;		/* MINIDB_PAGE_* */
} MinidbPageOpaqueData;

/*
 * Written by CLUSTER or VACUUM FULL: the page's records are in the order
 * the rewrite meant (an index's), not in the order their versions were
 * written; sequential scans keep it (see rows_order_by_age).
 */
#define MINIDB_PAGE_REWRITTEN	0x0001

typedef MinidbPageOpaqueData *MinidbPageOpaque;

#define MinidbPageGetOpaque(page) \
	((MinidbPageOpaque) PageGetSpecialPointer(page))

/*
 * Every record keeps room on its page for what ends or locks its row, so
 * that DELETE, a row lock and a non-in-place UPDATE never fail for lack of
 * space: a V3 record grows by at most MINIDB_SLOT_RESERVE (8 bytes) when
 * its xmax and successor fields appear, and not at all after; a V1 or V2
 * record by a marker version (MINIDB_MARKER_GROWTH_MAX, 24).  A page keeps
 * the reserve of its records (minidb_page_reserve); inserts and in-place
 * prepends honour it, each counting the reserve of the record it writes by
 * that record's format (minidb_page_record_room, minidb_format_reserve).
 */
#define MINIDB_LEGACY_RESERVE	MINIDB_MARKER_GROWTH_MAX

/* Room an empty page has for a new record's bytes and its reserve */
#define MINIDB_PAGE_ROOM_MAX \
	(BLCKSZ - MAXALIGN(SizeOfPageHeaderData + sizeof(ItemIdData)) - \
	 MAXALIGN(sizeof(MinidbPageOpaqueData)))

/* Largest record that fits on an empty page (a V3 one: see below) */
#define MINIDB_MAX_RECORD_LEN	(MINIDB_PAGE_ROOM_MAX - MINIDB_SLOT_RESERVE)

/* The most a record of format keeps for its end (minidb_record_reserve) */
static inline Size
minidb_format_reserve(int format)
{
	return format == MINIDB_FORMAT_V3 ? MINIDB_SLOT_RESERVE :
		MINIDB_LEGACY_RESERVE;
}

/*
 * Largest record of format that fits on an empty page with its reserve:
 * a V1 or V2 record keeps 16 bytes more than a V3 one
 */
static inline Size
minidb_max_record_len(int format)
{
	return MINIDB_PAGE_ROOM_MAX - minidb_format_reserve(format);
}

/*
 * The room a new record takes on a page besides its line pointer: its
 * bytes, and the reserve it keeps for its own end, counted by its format
 * as minidb_page_reserve will count it once the record is there.  Every
 * room check for a new record takes its size so (the "needed" of
 * minidb_page_room_for_insert and minidb_page_free_for_insert): until
 * 2026-12-02 they counted MINIDB_SLOT_RESERVE for every new record, and a
 * V1 or V2 record added last to a page kept 16 bytes less than its
 * DELETE or moving UPDATE might take.
 */
static inline Size
minidb_page_record_room(const char *rec, uint32 len)
{
	return MAXALIGN(len) + minidb_record_reserve_quick(rec, len);
}

/* Page changes, each a function of (page, arguments) */
extern void minidb_page_init(Page page);
extern void minidb_page_check(Relation rel, Buffer buffer);
extern void minidb_page_check_rest(Relation rel, Buffer buffer,
								   OffsetNumber off, uint32 below);
extern Size minidb_page_reserve(Page page);
extern Size minidb_page_free_for_insert(Page page);
extern bool minidb_page_room_for_insert(Page page, Size needed);
extern bool minidb_page_room_for_replace(Page page, OffsetNumber off,
										 uint32 newlen, Size newreserve);
/* The same in two steps, for a writer that may know the reserve */
#define MINIDB_RESERVE_UNKNOWN	((Size) -1)
extern bool minidb_page_insert_limit(Page page, Size needed, Size *limit);
extern bool minidb_page_replace_limit(Page page, OffsetNumber off,
									  uint32 newlen, Size newreserve,
									  Size *limit);
extern bool minidb_page_reserve_within(Page page, Size limit, Size *known);
extern Size minidb_page_item_reserve(Page page, OffsetNumber off);

/* The page's reserve is at most limit whatever its records hold */
static inline bool
minidb_page_reserve_clearly_within(Page page, Size limit)
{
	return (Size) PageGetMaxOffsetNumber(page) * MINIDB_LEGACY_RESERVE <= limit;
}
extern void minidb_page_ensure_room(Relation rel, Buffer buffer,
									OffsetNumber off, uint32 len,
									uint32 addlen);
extern OffsetNumber minidb_page_add_record(Page page, const char *rec,
										   uint32 len);
extern void minidb_page_replace_record(Page page, OffsetNumber off,
									   const char *rec, uint32 len);
/* Reading records: see "Reading records off a page" in minidb_page.c */
typedef enum MinidbItem
{
	MINIDB_ITEM_RECORD,			/* a record */
	MINIDB_ITEM_NONE,			/* no record: unused, dead, past the end */
	MINIDB_ITEM_DAMAGED			/* a line pointer that cannot be right */
} MinidbItem;

extern const char *minidb_page_damage(Page page);
extern OffsetNumber minidb_page_shared_record(Page page, OffsetNumber *first);
extern bool minidb_page_locate(const void *ptr, Buffer *buffer,
							   OffsetNumber *off);
extern bool minidb_page_item_holding(Page page, const void *ptr,
									 OffsetNumber *off);
extern void minidb_page_check_items(Relation rel, Buffer buffer);
extern OffsetNumber minidb_page_maxoff(Page page);
extern MinidbItem minidb_page_item(Page page, OffsetNumber off, char **rec,
								   uint32 *len, const char **why);
extern char *minidb_page_record(Relation rel, Buffer buffer,
								OffsetNumber off, uint32 *len);
extern void minidb_page_record_validate(Relation rel, Buffer buffer,
										OffsetNumber off);
extern char *minidb_page_get_record(Relation rel, Buffer buffer,
									OffsetNumber off, uint32 *len);
extern char *minidb_image_record(Page image, OffsetNumber off, uint32 *len);
extern char *minidb_page_record_at(Relation rel, Buffer buffer,
								   ItemPointer tid, uint32 *len);
extern char *minidb_page_checked_record_at(Relation rel, Buffer buffer,
											 ItemPointer tid, uint32 *len);

/*
 * Pruning plans.  Pruning and VACUUM decide what to do to a
 * page (minidb_prune.c, minidb_vacuum.c), minidb_page_execute_plan carries
 * it out, on the primary and in replay of the compact PRUNE record.  The
 * conflict horizon is what a hot standby needs: the newest xid whose
 * versions the plan removes or freezes (queries whose snapshots do not see
 * it yet are cancelled on replay).
 */
#define MINIDB_PLAN_KEEP		0x01	/* action: the version stays */
#define MINIDB_PLAN_FREEZE		0x02	/* action: ... and is frozen */

#define MINIDB_RPLAN_CLEAR_LOCKER	0x01	/* forget the record's row locker */
#define MINIDB_RPLAN_SET_LOCKER		0x02	/* replace it: locker, lockmode */
#define MINIDB_RPLAN_LOCKER_MULTI	0x04	/* ... and the new one is a multi */
#define MINIDB_RPLAN_SET_END_XID	0x08	/* V3: the end's multixact becomes
											 * its updater (locker field) */

#define MINIDB_PLAN_SET_PRUNE_XID	0x01	/* set pd_prune_xid to prune_xid */
#define MINIDB_PLAN_TRUNCATE_LP		0x02	/* PageTruncateLinePointerArray */

/*
 * Versions a page's records hold: each has a header of 12 bytes or more,
 * and a V3 record's end counts as one more.
 */
#define MINIDB_MAX_PAGE_VERSIONS \
	(BLCKSZ / MINIDB_VERSION_HDRSZ + MaxHeapTuplesPerPage)

typedef struct MinidbRecordPlan
{
	OffsetNumber off;
	uint16		nversions;		/* the versions it holds before the change */
	uint16		first;			/* its first action in MinidbPagePlan.actions */
	uint8		flags;			/* MINIDB_RPLAN_* */
	TransactionId locker;		/* MINIDB_RPLAN_SET_LOCKER: the new locker */
	uint16		lockmode;		/* ... and its mode (MINIDB_LOCK_*) */
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

/*
 * What a write that prunes one record before it prepends to it logs
 * besides keep[] (from the pruning plan, minidb_prune.h's
 * MinidbPruneResult): the plan's conflict horizon for hot standbys (invalid
 * when nothing that needs one goes), and the data of the record's head
 * (version 0) for the prefix/suffix compression, NULL when the head is a
 * marker.  head points into the record on the page.
 */
typedef struct MinidbWritePlan
{
	TransactionId conflict;
	const char *head;
	uint32		headlen;
} MinidbWritePlan;

extern void minidb_plan_init(MinidbPagePlan *plan);
extern uint8 *minidb_plan_add_record(MinidbPagePlan *plan, OffsetNumber off,
									 int nversions, uint8 flags);
extern void minidb_plan_note_xid(MinidbPagePlan *plan, TransactionId xid);
extern bool minidb_plan_is_empty(const MinidbPagePlan *plan);
extern void minidb_page_execute_plan(Page page, const MinidbPagePlan *plan);

/*
 * The prepend as page functions, on the primary and in replay: the record
 * at off pruned to keep[] with v prepended in format (palloc'd), then put
 * in place.  extra gives a row end's successor or partition move.
 */
extern char *minidb_prepend_build(Page page, OffsetNumber off,
								  const bool *keep,
								  const MinidbVersionData *v, int format,
								  const MinidbRecordEnd *extra,
								  uint32 *newlen);
extern void minidb_prepend_place(Page page, OffsetNumber off, const char *rec,
								 uint32 len, TransactionId xmin);
/* The record at off with its lockers set (palloc'd; see minidb_lock.c) */
extern char *minidb_lockers_build(Page page, OffsetNumber off,
								  const MinidbLockers *lk, uint32 *newlen);

/* Every version of a record, damage raised (see minidb_page.c) */
typedef struct MinidbVersionWalk
{
	MinidbChainIter it;
	Relation	rel;
	ItemPointerData tid;
} MinidbVersionWalk;

extern void minidb_walk_begin(MinidbVersionWalk *w, Relation rel,
							  ItemPointer tid, char *rec, uint32 len);
extern bool minidb_walk_next(MinidbVersionWalk *w, MinidbVersionRef *ref);

/* A damaged record: ERROR (ERRCODE_DATA_CORRUPTED) naming relation and TID */
pg_noreturn extern void minidb_report_corruption(Relation rel, ItemPointer tid,
												 const MinidbChainError *err);

/*
 * minidb_page_record's common case, inline: a normal line pointer, within
 * the line pointer array, MAXALIGNed, inside the page's tuple space
 * (pd_upper..pd_special, read now, under this lock) and long enough for a
 * record header.  NULL says only "not that": the caller asks
 * minidb_page_record, which tells no record from damage.  The page must be
 * one minidb_page_check accepted (since it was pinned).  Whatever the page
 * holds now, nothing is read outside it: the item's line pointer lies
 * within MaxHeapTuplesPerPage of the header, and the record ends before
 * the special area's fixed place, not only before pd_special (a page
 * replaced under the pin, as a standby's redo of a full-page image does,
 * is not checked again until the next pin).
 */
static pg_attribute_always_inline char *
minidb_page_record_plain(Page page, OffsetNumber off, uint32 *len)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		lp;
	uint32		lpoff;
	uint32		lplen;

	if (off < FirstOffsetNumber || off > MaxHeapTuplesPerPage ||
		off > PageGetMaxOffsetNumber(page))
		return NULL;
	lp = PageGetItemId(page, off);
	if (!ItemIdIsNormal(lp))
		return NULL;
	lpoff = ItemIdGetOffset(lp);
	lplen = ItemIdGetLength(lp);
	if ((lpoff & (MAXIMUM_ALIGNOF - 1)) != 0 || lpoff < ph->pd_upper ||
		lpoff + lplen > ph->pd_special || lplen < MINIDB_R3_INFO_PREFIX ||
		lpoff + lplen > BLCKSZ - MAXALIGN(sizeof(MinidbPageOpaqueData)))
		return NULL;
	*len = lplen;
	return (char *) page + lpoff;
}

#endif							/* MINIDB_PAGE_H */
