/*-------------------------------------------------------------------------
 *
 * minidb_page.c
 *	  The page layer: page changes as functions of (page, arguments).
 *
 * Every change to a minidb page is a function of (page, arguments): add a
 * record, replace a record, carry out a pruning plan.  The primary applies
 * them to a locked buffer's page (compact WAL records, minidb_xlog.c) or to
 * a page image (WAL-logged writes, minidb_wal.c), and replay applies the
 * same functions to the standby's page, which is why primary and standby
 * end with the same layout.  This file calls nothing above it: no WAL, no
 * visibility rules, no buffers beyond the page check.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "storage/bufpage.h"

#include "minidb_am.h"

void
minidb_page_init(Page page)
{
	MinidbPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(MinidbPageOpaqueData));
	opaque = MinidbPageGetOpaque(page);
	opaque->md_magic = MINIDB_PAGE_MAGIC;
	opaque->md_flags = 0;
}

/*
 * Refuse a page that is not a minidb page.  New (all-zero) pages are
 * legal: a crash may leave them after a relation extension.
 */
void
minidb_page_check(Relation rel, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);

	if (PageIsNew(page))
		return;
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(MinidbPageOpaqueData)) ||
		MinidbPageGetOpaque(page)->md_magic != MINIDB_PAGE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("page %u of relation \"%s\" is not a minidb page",
						BufferGetBlockNumber(buffer),
						RelationGetRelationName(rel))));
}

/* Space reserved on the page for every record's future marker */
static Size
marker_reserve(Page page, int extra_records)
{
	return (Size) (PageGetMaxOffsetNumber(page) + extra_records) *
		MINIDB_MARKER_RESERVE;
}

/* Room for a new record's bytes (its line pointer accounted for) */
Size
minidb_page_free_for_insert(Page page)
{
	Size		space = PageGetFreeSpace(page);	/* minus one line pointer */
	Size		reserve = marker_reserve(page, 1);

	if (PageGetMaxOffsetNumber(page) >= MaxHeapTuplesPerPage)
		return 0;
	return space > reserve ? space - reserve : 0;
}

/* Room for the record at off to become newlen bytes, reserves kept */
Size
minidb_page_free_for_replace(Page page, OffsetNumber off, uint32 newlen)
{
	ItemId		lp = PageGetItemId(page, off);
	Size		avail = PageGetExactFreeSpace(page) +
		MAXALIGN(ItemIdGetLength(lp));
	Size		reserve = marker_reserve(page, 0);

	if (avail < MAXALIGN(newlen) + reserve)
		return 0;
	return avail - MAXALIGN(newlen) - reserve + 1;
}

OffsetNumber
minidb_page_add_record(Page page, const char *rec, uint32 len)
{
	OffsetNumber off;

	off = PageAddItem(page, (Item) rec, len, InvalidOffsetNumber, false, true);
	if (off == InvalidOffsetNumber)
		elog(ERROR, "failed to add minidb record of %u bytes to page", len);
	return off;
}

void
minidb_page_replace_record(Page page, OffsetNumber off, const char *rec,
						   uint32 len)
{
	if (!PageIndexTupleOverwrite(page, off, (Item) rec, len))
		elog(ERROR, "failed to replace minidb record at offset %u (%u bytes)",
			 off, len);
}

/*
 * The record at off on a locked page; ERROR if there is none (callers use
 * it for TIDs they already know to be records).
 */
char *
minidb_page_get_record(Relation rel, Buffer buffer, OffsetNumber off,
					   uint32 *len)
{
	Page		page = BufferGetPage(buffer);
	ItemId		lp;

	minidb_page_check(rel, buffer);
	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		return NULL;
	lp = PageGetItemId(page, off);
	if (!ItemIdIsNormal(lp))
		return NULL;
	*len = ItemIdGetLength(lp);
	return (char *) PageGetItem(page, lp);
}


/*
 * The record at tid on a locked buffer, for callers that hold a TID they
 * know to be a record (one they are about to change or lock); ERROR if
 * there is none.
 */
char *
minidb_page_record_at(Relation rel, Buffer buffer, ItemPointer tid,
					  uint32 *len)
{
	char	   *rec = minidb_page_get_record(rel, buffer,
											 ItemPointerGetOffsetNumber(tid),
											 len);

	if (rec == NULL)
		elog(ERROR, "no minidb record at (%u,%u) in relation \"%s\"",
			 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			 RelationGetRelationName(rel));
	return rec;
}

/* ----------------------------------------------------------------
 * Pruning plans
 *
 * Pruning (minidb_prune.c) and VACUUM (minidb_vacuum.c) decide what to do
 * to a page from the visibility rules, then carry the decision out here:
 * plan, then execute, as pruneheap.c's heap_page_prune and
 * heap_page_prune_execute.  Replay of the compact PRUNE record executes the
 * logged plan on the standby's page (minidb_xlog.c).  The plan names each
 * record's versions by index, newest first, as the record holds them
 * before the change.
 * ----------------------------------------------------------------
 */

/* Start an empty plan */
void
minidb_plan_init(MinidbPagePlan *plan)
{
	plan->conflict_xid = InvalidTransactionId;
	plan->prune_xid = InvalidTransactionId;
	plan->flags = 0;
	plan->nrecords = 0;
	plan->nactions = 0;
	plan->ndead = 0;
	plan->nunused = 0;
	plan->nremoved = 0;
}

/*
 * Add a record with nversions versions to a plan; returns its actions
 * (one per version, MINIDB_PLAN_KEEP by default) to fill in.
 */
uint8 *
minidb_plan_add_record(MinidbPagePlan *plan, OffsetNumber off,
					   int nversions, uint8 flags)
{
	MinidbRecordPlan *rp;
	uint8	   *actions;

	if (plan->nrecords >= MaxHeapTuplesPerPage || nversions < 1 ||
		plan->nactions + nversions > MINIDB_MAX_PAGE_VERSIONS)
		elog(ERROR, "minidb pruning plan overflows (record %d, %d versions)",
			 plan->nrecords, nversions);
	rp = &plan->records[plan->nrecords++];
	rp->off = off;
	rp->nversions = (uint16) nversions;
	rp->first = (uint16) plan->nactions;
	rp->flags = flags;
	actions = plan->actions + plan->nactions;
	memset(actions, MINIDB_PLAN_KEEP, nversions);
	plan->nactions += nversions;
	return actions;
}

/* Let xid, if normal and newer, be the plan's conflict horizon */
void
minidb_plan_note_xid(MinidbPagePlan *plan, TransactionId xid)
{
	if (TransactionIdIsNormal(xid) &&
		(!TransactionIdIsValid(plan->conflict_xid) ||
		 TransactionIdFollows(xid, plan->conflict_xid)))
		plan->conflict_xid = xid;
}

/* Does the plan change anything? */
bool
minidb_plan_is_empty(const MinidbPagePlan *plan)
{
	return plan->nrecords == 0 && plan->ndead == 0 && plan->nunused == 0 &&
		!(plan->flags & (MINIDB_PLAN_SET_PRUNE_XID | MINIDB_PLAN_TRUNCATE_LP));
}

/* The item at off, which the plan says is a record; ERROR otherwise */
static ItemId
plan_item(Page page, OffsetNumber off, bool normal)
{
	ItemId		lp;

	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		elog(ERROR, "minidb pruning plan names offset %u of a page with %u items",
			 off, (unsigned int) PageGetMaxOffsetNumber(page));
	lp = PageGetItemId(page, off);
	if (normal && (!ItemIdIsNormal(lp) ||
				   ItemIdGetLength(lp) < MINIDB_RECORD_HDRSZ))
		elog(ERROR, "minidb pruning plan names offset %u, which holds no record",
			 off);
	return lp;
}

/* Carry out one record's part of a plan; true if the record shrank */
static bool
execute_record(Page page, const MinidbRecordPlan *rp, const uint8 *actions)
{
	ItemId		lp = plan_item(page, rp->off, true);
	char	   *rec = (char *) PageGetItem(page, lp);
	uint32		len = ItemIdGetLength(lp);
	MinidbRecordHeader *rh = minidb_record_header(rec);
	bool		keep[MINIDB_MAX_PAGE_VERSIONS];
	bool		prune = false;
	bool		freeze = false;

	if (rh->rh_nversions != rp->nversions)
		elog(ERROR, "minidb record at offset %u holds %u versions, its pruning plan %u",
			 rp->off, rh->rh_nversions, rp->nversions);
	for (int i = 0; i < rp->nversions; i++)
	{
		keep[i] = (actions[i] & MINIDB_PLAN_KEEP) != 0;
		prune |= !keep[i];
		freeze |= (actions[i] & MINIDB_PLAN_FREEZE) != 0;
	}

	/* freeze first: the plan numbers the versions before pruning */
	if (freeze)
	{
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged = false;

		if (!minidb_chain_iter_init(&it, rec, len, &err))
			damaged = true;
		else
			while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
				if (actions[ref.index] & MINIDB_PLAN_FREEZE)
					ref.vh->vh_flags |= MINIDB_V_FROZEN;
		if (damaged)
			elog(ERROR, "minidb record at offset %u to freeze is damaged: version %d, field \"%s\": %s",
				 rp->off, err.version, err.field, err.detail);
	}
	if (rp->flags & MINIDB_RPLAN_CLEAR_LOCKER)
	{
		rh->rh_locker = InvalidTransactionId;
		rh->rh_lockmode = MINIDB_LOCK_NONE;
		rh->rh_flags &= ~MINIDB_REC_LOCK_MULTI;
	}
	if (prune)
	{
		uint32		newlen = minidb_record_prune(rec, len, keep);

		if (newlen == 0)
			elog(ERROR, "minidb pruning plan keeps no version of the record at offset %u",
				 rp->off);
		if (newlen != len)
		{
			/* shorter in place; PageRepairFragmentation moves it */
			ItemIdSetNormal(lp, ItemIdGetOffset(lp), newlen);
			return true;
		}
	}
	return false;
}

/*
 * Carry out a plan on a page: freeze, forget lockers and prune each planned
 * record in place, mark the dead items LP_DEAD and the unused ones
 * LP_UNUSED, then compact the page (PageRepairFragmentation) if anything
 * shrank or went, truncate the line pointer array if asked, and set
 * pd_prune_xid.  The same plan on the same page gives the same bytes,
 * hint bits aside: that is what replay relies on.
 */
void
minidb_page_execute_plan(Page page, const MinidbPagePlan *plan)
{
	bool		repair = false;

	for (int i = 0; i < plan->nrecords; i++)
	{
		const MinidbRecordPlan *rp = &plan->records[i];

		if ((int) rp->first + rp->nversions > plan->nactions)
			elog(ERROR, "minidb pruning plan is inconsistent");
		repair |= execute_record(page, rp, plan->actions + rp->first);
	}
	for (int i = 0; i < plan->ndead; i++)
	{
		ItemId		lp = plan_item(page, plan->dead[i], false);

		repair |= ItemIdHasStorage(lp);
		ItemIdSetDead(lp);
	}
	for (int i = 0; i < plan->nunused; i++)
	{
		ItemId		lp = plan_item(page, plan->unused[i], false);

		repair |= ItemIdHasStorage(lp);
		ItemIdSetUnused(lp);
	}
	if (repair)
		PageRepairFragmentation(page);
	if (plan->flags & MINIDB_PLAN_TRUNCATE_LP)
		PageTruncateLinePointerArray(page);
	if (plan->flags & MINIDB_PLAN_SET_PRUNE_XID)
		((PageHeader) page)->pd_prune_xid = plan->prune_xid;
}
