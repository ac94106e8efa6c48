/*-------------------------------------------------------------------------
 *
 * minidb_prune.c
 *	  Removing versions that no snapshot can see any more.
 *
 * A version is removable when its own xmin aborted, or when a newer
 * version's xmin committed and is older than the removal horizon
 * (GlobalVisTestIsRemovableXid): every snapshot then sees that newer
 * version or something newer still, and stops before reaching the old
 * one.  A record is dead when its effective head is a committed tombstone
 * or moved marker beyond the horizon, or when every version aborted; only
 * VACUUM, after removing the index entries, may remove a dead record.
 *
 * Pruning is plan, then execute, as pruneheap.c's heap_page_prune and
 * heap_page_prune_execute: the plan (which versions of which records stay,
 * and the conflict horizon a hot standby needs: the xid whose commit made
 * the removed versions invisible to everyone) is made here from the
 * visibility rules; minidb_page_execute_plan carries it out, on the
 * primary and in replay of the PRUNE record that logs it.
 *
 * The functions here work on a record or page the caller holds locked
 * exclusively; TOAST values of pruned versions were already deleted by the
 * transaction that superseded them, exactly as heap does.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "pgstat.h"
#include "utils/snapmgr.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_visibility.h"
#include "minidb_prune.h"

/* Is vh committed and seen by every snapshot that exists or may exist? */
static bool
visible_to_all(MinidbVersionHeader *vh, GlobalVisState *vistest,
			   Buffer buffer)
{
	if (vh->vh_flags & MINIDB_V_FROZEN)
		return true;
	return minidb_xid_committed(vh, buffer) &&
		GlobalVisTestIsRemovableXid(vistest, vh->vh_xmin);
}

/*
 * The pruning rule for one record, without changing anything: keep[i]
 * tells whether version i stays.  Versions whose xmin aborted go; so does
 * everything older than the "floor", the newest surviving version that
 * every snapshot sees.  Returns the number kept (at least one when any
 * version is committed or in progress; 0 when every version aborted), or
 * -1 for a damaged record (readers report it).  *rp gets the rest of the
 * plan (see MinidbPruneResult).  Hint bits are set through buffer when it
 * is valid.
 *
 * The conflict horizon is worked out here once, for everyone who carries
 * out such a plan (page pruning, VACUUM, a write that prunes the record it
 * prepends to): the versions below the floor were ended by the floor or by
 * versions older than it, so the floor's xmin is the newest xid whose
 * commit made a removed version invisible; aborted versions need none.
 */
int
minidb_prune_plan(char *rec, uint32 len, GlobalVisState *vistest,
				  Buffer buffer, bool *keep, MinidbPruneResult *rp)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;
	bool		floor_found = false;
	bool		dropped = false;
	bool		kept_below_dropped = false;
	TransactionId floor_xmin = InvalidTransactionId;
	TransactionId kept_xmin[2] = {InvalidTransactionId, InvalidTransactionId};
	int			nkeep = 0;
	int			n = 0;

	rp->nversions = 0;
	rp->floor = -1;
	rp->horizon = InvalidTransactionId;
	rp->prune_xid = InvalidTransactionId;
	rp->head = NULL;
	rp->headlen = 0;
	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return -1;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionHeader *vh = ref.vh;

		/* a record's newest version is whole, in every format */
		if (n == 0 && !(vh->vh_flags & MINIDB_V_NODATA_MASK))
		{
			rp->head = rec + ref.dataoff;
			rp->headlen = ref.datalen;
		}
		keep[n] = !floor_found && !minidb_xid_aborted(vh, buffer);
		if (!keep[n])
			dropped = true;
		else
		{
			kept_below_dropped |= dropped;
			nkeep++;
			kept_xmin[0] = kept_xmin[1];
			kept_xmin[1] = vh->vh_xmin;
			floor_found = visible_to_all(vh, vistest, buffer);
			if (floor_found)
			{
				rp->floor = n;
				floor_xmin = vh->vh_xmin;
			}
		}
		n++;
	}
	if (damaged)
		return -1;
	rp->nversions = n;

	/*
	 * A V3 version stored as a difference from one that goes is stored
	 * whole; should that take more room than the record has (versions going
	 * from the middle of a chain), prune nothing here this time.  When only
	 * the oldest versions go (the floor's elders, as mostly), the kept ones
	 * stay as they are stored, where they are, under the same header: the
	 * record can only shrink, and sizing it is not needed.
	 */
	if (nkeep > 0 && nkeep < n && kept_below_dropped &&
		!minidb_record_prune_fits(rec, len, keep))
	{
		memset(keep, true, sizeof(bool) * n);
		return n;
	}
	/* versions older than the floor go: standbys must know who ended them */
	if (rp->floor >= 0 && rp->floor < n - 1 &&
		TransactionIdIsNormal(floor_xmin))
		rp->horizon = floor_xmin;
	if (nkeep >= 2)
		rp->prune_xid = kept_xmin[0];
	return nkeep;
}

/*
 * Is the one version keep[] leaves of this record a marker (a deleted or
 * moved row whose record awaits VACUUM, as heap's LP_DEAD item does)?
 */
static bool
lone_marker_kept(char *rec, uint32 len, const bool *keep)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return false;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
		if (keep[ref.index])
			return (ref.vh->vh_flags & MINIDB_V_NODATA_MASK) != 0;
	return false;
}

/*
 * The pruning plan of a locked page: every record pruned to the removal
 * horizon, pd_prune_xid set to the oldest xid after which what is left may
 * be pruned.  Hint bits are set through buffer when it is valid.  True if
 * the plan removes any version.
 */
bool
minidb_plan_page_prune(Page page, GlobalVisState *vistest, Buffer buffer,
					   MinidbPagePlan *plan)
{
	OffsetNumber maxoff = minidb_page_maxoff(page);
	TransactionId page_prune_xid = InvalidTransactionId;
	bool		keep[MINIDB_MAX_PAGE_VERSIONS];

	minidb_plan_init(plan);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		const char *why;
		char	   *rec;
		uint32		len;
		MinidbPruneResult rp;
		int			n;
		int			nkeep;
		uint8	   *actions;

		/* damage is for readers to report: pruning leaves it alone */
		if (minidb_page_item(page, off, &rec, &len, &why) != MINIDB_ITEM_RECORD)
			continue;
		/* a record on a page holds at most MINIDB_MAX_PAGE_VERSIONS */
		if (minidb_record_nversions(rec, len) > MINIDB_MAX_PAGE_VERSIONS)
			continue;
		nkeep = minidb_prune_plan(rec, len, vistest, buffer, keep, &rp);
		if (nkeep < 0)
			continue;
		n = rp.nversions;
		if (TransactionIdIsNormal(rp.prune_xid) &&
			(!TransactionIdIsValid(page_prune_xid) ||
			 TransactionIdPrecedes(rp.prune_xid, page_prune_xid)))
			page_prune_xid = rp.prune_xid;
		if (nkeep == n || n <= 1)
			continue;
		if (nkeep == 0)
			keep[0] = true;		/* every version aborted: VACUUM's record */
		plan->nremoved += n - Max(nkeep, 1);
		if (nkeep == 1 && lone_marker_kept(rec, len, keep))
			plan->nremoved--;	/* the row it ended still awaits VACUUM */
		actions = minidb_plan_add_record(plan, off, n, 0);
		for (int i = 0; i < n; i++)
			actions[i] = keep[i] ? MINIDB_PLAN_KEEP : 0;
		minidb_plan_note_xid(plan, rp.horizon);
	}
	plan->prune_xid = page_prune_xid;
	plan->flags |= MINIDB_PLAN_SET_PRUNE_XID;
	return plan->nrecords > 0;
}

/*
 * Without the resource manager (generic WAL) hint bits are only set inside
 * WAL-logged changes (minidb_set_hint): a page image about to be logged
 * gets them for every version whose transaction has ended.
 */
static void
hint_page_image(Page image)
{
	OffsetNumber maxoff = minidb_page_maxoff(image);

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged = false;
		const char *why;
		char	   *rec;
		uint32		len;

		if (minidb_page_item(image, off, &rec, &len, &why) != MINIDB_ITEM_RECORD ||
			!minidb_chain_iter_init(&it, rec, len, &err))
			continue;
		while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
			if (!(ref.vh->vh_flags & MINIDB_V_HINT_MASK))
				(void) minidb_xid_committed(ref.vh, InvalidBuffer);
	}
}

/*
 * Carry out a plan on an exclusively locked buffer, WAL-logged: as a
 * compact PRUNE record when the library is preloaded, as the delta of a
 * page image (generic WAL) otherwise.
 */
void
minidb_apply_plan(Relation rel, Buffer buffer, const MinidbPagePlan *plan)
{
	MinidbPageWrite w;
	Page		image;

	/* a damaged line pointer must not stop the compaction nameless */
	minidb_page_check_items(rel, buffer);
	if (minidb_custom_wal)
	{
		minidb_log_plan(rel, buffer, plan);
		return;
	}
	minidb_write_begin(&w, rel);
	image = minidb_write_page(&w, buffer, false);
	minidb_page_execute_plan(image, plan);
	if (RelationNeedsWAL(rel))
		hint_page_image(image);
	minidb_write_finish(&w);
}

/*
 * Prune every record of an exclusively locked buffer's page, WAL-logged
 * (one record).  True if versions were removed.
 */
bool
minidb_prune_buffer(Relation rel, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);
	MinidbPagePlan *plan = palloc(sizeof(MinidbPagePlan));
	bool		pruned;

	pruned = minidb_plan_page_prune(page, GlobalVisTestFor(rel), buffer, plan);
	if (pruned)
	{
		minidb_apply_plan(rel, buffer, plan);
		pgstat_update_heap_dead_tuples(rel, plan->nremoved);	/* as heap */
	}
	else if (((PageHeader) page)->pd_prune_xid != plan->prune_xid)
	{
		/*
		 * Nothing to remove yet, but the page's prune hint moves on, so that
		 * writers stop trying until it may pay.  A hint (masked in replay)
		 * with minidb's resource manager; without it replay must produce
		 * the same bytes, so the change is logged.
		 */
		if (minidb_custom_wal || !RelationNeedsWAL(rel))
		{
			((PageHeader) page)->pd_prune_xid = plan->prune_xid;
			MarkBufferDirtyHint(buffer, true);
		}
		else
			minidb_apply_plan(rel, buffer, plan);
	}
	pfree(plan);
	return pruned;
}

/*
 * Does the page hold versions that may be prunable by now?  pd_prune_xid
 * is the oldest xid that superseded a version on the page (as for heap);
 * until the horizon passes it, pruning cannot free anything.
 */
bool
minidb_page_worth_pruning(Relation rel, Page page)
{
	TransactionId prune_xid = ((PageHeader) page)->pd_prune_xid;

	return TransactionIdIsValid(prune_xid) &&
		GlobalVisTestIsRemovableXid(GlobalVisTestFor(rel), prune_xid);
}

/*
 * Bytes that pruning the records of a locked page would give back, without
 * changing it (hint bits aside): lets a writer decide whether pruning is
 * worth a WAL record.
 */
Size
minidb_page_prunable_bytes(Page page, GlobalVisState *vistest, Buffer buffer)
{
	OffsetNumber maxoff = minidb_page_maxoff(page);
	Size		total = 0;
	bool		keep[MINIDB_MAX_VERSIONS];

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		const char *why;
		char	   *rec;
		uint32		len;
		MinidbPruneResult rp;
		int			nkeep;
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged = false;

		if (minidb_page_item(page, off, &rec, &len, &why) != MINIDB_ITEM_RECORD)
			continue;
		nkeep = minidb_prune_plan(rec, len, vistest, buffer, keep, &rp);
		if (nkeep <= 0 || nkeep == rp.nversions)
			continue;
		if (!minidb_chain_iter_init(&it, rec, len, &err))
			continue;
		while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
			if (!keep[ref.index])
				total += MAXALIGN(minidb_ref_size(&ref));
	}
	return total;
}

/*
 * Is the record dead to everyone?  *latest_xid, if given, receives the
 * xid whose removal horizon made it so (for recovery conflicts).
 */
bool
minidb_record_is_dead(char *rec, uint32 len, GlobalVisState *vistest,
					  Buffer buffer, TransactionId *latest_xid)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;

	if (latest_xid)
		*latest_xid = InvalidTransactionId;
	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return false;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionHeader *vh = ref.vh;

		if (minidb_xid_aborted(vh, buffer))
			continue;
		/* the effective head decides */
		if (!(vh->vh_flags & MINIDB_V_NODATA_MASK) ||
			!visible_to_all(vh, vistest, buffer))
			return false;
		if (latest_xid)
			*latest_xid = vh->vh_xmin;
		return true;
	}
	return !damaged;			/* every version aborted */
}

/*
 * Prepare a copy of a record for a table rewrite (CLUSTER, VACUUM FULL):
 * drop the versions no snapshot older than oldest_xmin can see, freeze
 * committed versions older than freeze_cutoff, forget the row locker (the
 * rewrite holds AccessExclusiveLock, so no locker is running) and the
 * successor TID (see forget_successor).  Returns the new
 * length, or 0 when the record is dead to everyone.
 */
uint32
minidb_rewrite_record(char *rec, uint32 len, TransactionId oldest_xmin,
					  TransactionId freeze_cutoff, int *nkept)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;
	bool		keep[MINIDB_MAX_VERSIONS];
	bool		floor_found = false;
	bool		head_seen = false;
	bool		has_end = false;
	TransactionId end_updater = InvalidTransactionId;
	int			n = 0;

	*nkept = 0;
	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return len;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionHeader *vh = ref.vh;
		bool		committed;

		keep[n] = !floor_found && !minidb_xid_aborted(vh, InvalidBuffer);
		if (keep[n])
		{
			committed = minidb_xid_committed(vh, InvalidBuffer);
			floor_found = (vh->vh_flags & MINIDB_V_FROZEN) ||
				(committed && TransactionIdPrecedes(vh->vh_xmin, oldest_xmin));
			if (!head_seen && floor_found &&
				(vh->vh_flags & MINIDB_V_NODATA_MASK))
				return 0;		/* deleted or moved, and nobody can tell */
			if (!head_seen && (vh->vh_flags & MINIDB_V_VIRTUAL))
			{
				has_end = true; /* a V3 end: its lockers are its xmax */
				if (vh->vh_flags & MINIDB_V_XMIN_MULTI)
					end_updater = vh->vh_xmin;	/* resolved by the walk */
			}
			head_seen = true;
			if (committed && TransactionIdPrecedes(vh->vh_xmin, freeze_cutoff) &&
				!(vh->vh_flags & MINIDB_V_VIRTUAL))
				vh->vh_flags |= MINIDB_V_FROZEN;
			(*nkept)++;
		}
		n++;
	}
	if (damaged)
		return len;
	if (*nkept == 0)
		return 0;				/* every version aborted */
	if (*nkept < n && minidb_record_prune_fits(rec, len, keep))
		len = minidb_record_prune(rec, len, keep);
	/*
	 * A recently dead "moved" head keeps its meaning for old snapshots (no
	 * row here) but its successor TID pointed into the old relation: it
	 * becomes a tombstone, which means the same to readers and points
	 * nowhere.  The lockers go (none runs).
	 */
	len = minidb_record_forget_successor(rec, len);
	if (has_end && TransactionIdIsValid(end_updater) && keep[0])
		minidb_record_set_end_xid(rec, len, end_updater);	/* lockers gone */
	if (!has_end)
	{
		MinidbLockers none = {InvalidTransactionId, MINIDB_LOCK_NONE, false, false};

		len = minidb_record_set_lockers(rec, len, rec, len, &none);
	}
	return len;
}
