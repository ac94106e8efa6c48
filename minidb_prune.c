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
#include "utils/snapmgr.h"

#include "minidb_am.h"

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
 * The pruning rule, without changing anything: keep[i] tells whether
 * version i stays.  Versions whose xmin aborted go; so does everything
 * older than the "floor", the newest surviving version that every snapshot
 * sees.  Returns the number kept (at least one when any version is
 * committed or in progress; 0 when every version aborted), or -1 for a
 * damaged record (readers report it).  *floor is the floor's index, or -1.
 * Hint bits are set through buffer when it is valid.
 */
int
minidb_prune_plan(char *rec, uint32 len, GlobalVisState *vistest,
				  Buffer buffer, bool *keep, int *nversions, int *floor)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;
	bool		floor_found = false;
	TransactionId floor_xmin = InvalidTransactionId;
	int			nkeep = 0;
	int			n = 0;

	*nversions = 0;
	*floor = -1;
	if (!minidb_chain_iter_init(&it, rec, len, &err))
		return -1;
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionHeader *vh = ref.vh;

		keep[n] = !floor_found && !minidb_xid_aborted(vh, buffer);
		if (keep[n])
		{
			nkeep++;
			floor_found = visible_to_all(vh, vistest, buffer);
			if (floor_found)
			{
				*floor = n;
				floor_xmin = vh->vh_xmin;
			}
		}
		n++;
	}
	if (damaged)
		return -1;
	*nversions = n;
	/* versions older than the floor go: standbys must know who ended them */
	if (*floor >= 0 && *floor < n - 1)
		minidb_note_removed_xid(floor_xmin);
	return nkeep;
}

/*
 * Prune rec in place: returns its new length (== len when nothing went).
 * At least one version always stays; a wholly dead record is VACUUM's.
 */
uint32
minidb_prune_record(char *rec, uint32 len, GlobalVisState *vistest,
					Buffer buffer, int *npruned)
{
	bool		keep[MINIDB_MAX_VERSIONS];
	int			n;
	int			floor;
	int			nkeep;

	*npruned = 0;
	nkeep = minidb_prune_plan(rec, len, vistest, buffer, keep, &n, &floor);
	if (nkeep < 0 || nkeep == n)
		return len;
	if (nkeep == 0)
	{
		keep[0] = true;
		nkeep = 1;
	}
	*npruned = n - nkeep;
	return minidb_record_prune(rec, len, keep);
}

/*
 * Bytes that pruning the records of a locked page would give back, without
 * changing it (hint bits aside): lets a writer decide whether pruning is
 * worth a WAL record.
 */
Size
minidb_page_prunable_bytes(Page page, GlobalVisState *vistest, Buffer buffer)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	Size		total = 0;
	bool		keep[MINIDB_MAX_VERSIONS];

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		char	   *rec;
		uint32		len;
		int			n;
		int			floor;
		int			nkeep;
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged = false;

		if (!ItemIdIsNormal(lp))
			continue;
		rec = (char *) PageGetItem(page, lp);
		len = ItemIdGetLength(lp);
		nkeep = minidb_prune_plan(rec, len, vistest, buffer, keep, &n, &floor);
		if (nkeep <= 0 || nkeep == n)
			continue;
		if (!minidb_chain_iter_init(&it, rec, len, &err))
			continue;
		while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
			if (!keep[ref.index])
				total += MAXALIGN(ref.vh->vh_len);
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
 * Prune the record at off on a page being changed (a page handed out by
 * minidb_write_page, so the change is WAL-logged with the caller's).
 * Returns the number of versions removed.
 */
int
minidb_prune_item(Page page, OffsetNumber off, GlobalVisState *vistest)
{
	ItemId		lp = PageGetItemId(page, off);
	char	   *rec;
	char	   *copy;
	uint32		len;
	uint32		newlen;
	int			npruned;

	if (!ItemIdIsNormal(lp))
		return 0;
	rec = (char *) PageGetItem(page, lp);
	len = ItemIdGetLength(lp);
	newlen = minidb_prune_record(rec, len, vistest, InvalidBuffer, &npruned);
	if (newlen == len)
		return 0;
	/* the record shrank in place: shorten its item */
	copy = palloc(newlen);
	memcpy(copy, rec, newlen);
	minidb_page_replace_record(page, off, copy, newlen);
	pfree(copy);
	return npruned;
}

/*
 * Prune every record on a page being changed.  Returns the versions removed
 * that were dead tuples in pgstat's count and need no VACUUM now: a record
 * pruned down to its marker (a deleted or moved row) still awaits VACUUM,
 * as heap's LP_DEAD item does, so the row version it ended is not counted.
 */
int
minidb_prune_page(Relation rel, Page page, GlobalVisState *vistest)
{
	OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
	int			total = 0;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		int			n = minidb_prune_item(page, off, vistest);
		char	   *rec;
		MinidbVersionHeader *head;

		if (n == 0)
			continue;
		rec = (char *) PageGetItem(page, PageGetItemId(page, off));
		head = (MinidbVersionHeader *) (rec + minidb_record_head_offset(rec));
		if (minidb_record_header(rec)->rh_nversions == 1 &&
			(head->vh_flags & MINIDB_V_NODATA_MASK))
			n--;
		total += n;
	}
	return total;
}

/*
 * A recently dead "moved" head keeps its meaning for old snapshots (no row
 * here) but its successor TID pointed into the old relation: turn it into
 * a tombstone, which means the same to readers and points nowhere.
 */
static void
forget_successor(char *rec)
{
	MinidbRecordHeader *rh = minidb_record_header(rec);
	MinidbVersionHeader *head = (MinidbVersionHeader *)
		(rec + minidb_record_head_offset(rec));

	if (head->vh_flags & MINIDB_V_MOVED)
		head->vh_flags = (head->vh_flags & ~(MINIDB_V_MOVED | MINIDB_V_KEYS_UPDATED)) |
			MINIDB_V_TOMBSTONE;
	rh->rh_flags &= ~MINIDB_REC_MOVED_PART;
	ItemPointerSetInvalid(&rh->rh_successor);
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
	MinidbRecordHeader *rh = minidb_record_header(rec);
	bool		damaged = false;
	bool		keep[MINIDB_MAX_VERSIONS];
	bool		floor_found = false;
	bool		head_seen = false;
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
			head_seen = true;
			if (committed && TransactionIdPrecedes(vh->vh_xmin, freeze_cutoff))
				vh->vh_flags |= MINIDB_V_FROZEN;
			(*nkept)++;
		}
		n++;
	}
	if (damaged)
		return len;
	if (*nkept == 0)
		return 0;				/* every version aborted */
	if (*nkept < n)
		len = minidb_record_prune(rec, len, keep);
	rh->rh_locker = InvalidTransactionId;
	rh->rh_lockmode = MINIDB_LOCK_NONE;
	forget_successor(rec);
	return len;
}
