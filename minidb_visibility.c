/*-------------------------------------------------------------------------
 *
 * minidb_visibility.c
 *	  Does this version's xmin/cid satisfy this snapshot?
 *
 * Versions in a record are ordered by commit (a writer prepends only once
 * the head's xmin, if another transaction's, has ended), so a reader walks
 * newest to oldest and takes the first version its snapshot accepts.  If
 * that version is a tombstone or a "moved" marker there is no row.
 *
 * Each predicate below answers for one version; hint bits are set on the
 * page (MarkBufferDirtyHint) as heap does, so that clog is asked once per
 * version rather than once per read.  As in heapam_visibility.c the
 * procarray is consulted before clog.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/snapmgr.h"

#include "minidb_am.h"

/*
 * Set a hint bit, unless the transaction's commit record might not be
 * flushed yet (asynchronous commit): the same rule as heap's SetHintBits.
 */
void
minidb_set_hint(MinidbVersionHeader *vh, Buffer buffer, uint16 hint,
				TransactionId xid)
{
	/*
	 * No buffer: vh is in a private copy of a record, or in the page image a
	 * WAL-logged change is building (minidb_write_page).  There the hint goes
	 * out with the change's own WAL record, which follows the commit record,
	 * so the commit-LSN rule below is kept by construction.
	 */
	if (!BufferIsValid(buffer))
	{
		vh->vh_flags |= hint;
		return;
	}

	/*
	 * Generic WAL (the library not preloaded): replay must produce the
	 * primary's bytes, and the server's mask for generic WAL knows nothing
	 * of our hint bits, so a permanent page gets them only inside
	 * WAL-logged changes (above).  See minidb_wal.c.
	 */
	if (!minidb_custom_wal && BufferIsPermanent(buffer))
		return;

	if (hint == MINIDB_V_XMIN_COMMITTED && TransactionIdIsValid(xid))
	{
		XLogRecPtr	commitLSN = TransactionIdGetCommitLSN(xid);

		if (BufferIsPermanent(buffer) && XLogNeedsFlush(commitLSN) &&
			BufferGetLSNAtomic(buffer) < commitLSN)
			return;
	}
	vh->vh_flags |= hint;
	MarkBufferDirtyHint(buffer, true);
}

/*
 * Has vh's creator committed?  For versions of other, finished
 * transactions; sets the hint either way.
 */
bool
minidb_xid_committed(MinidbVersionHeader *vh, Buffer buffer)
{
	if (vh->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
		return true;
	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return false;
	if (TransactionIdIsInProgress(vh->vh_xmin))
		return false;
	if (TransactionIdDidCommit(vh->vh_xmin))
	{
		minidb_set_hint(vh, buffer, MINIDB_V_XMIN_COMMITTED, vh->vh_xmin);
		return true;
	}
	minidb_set_hint(vh, buffer, MINIDB_V_XMIN_ABORTED, InvalidTransactionId);
	return false;
}

/*
 * Is vh's creator known to have aborted (or crashed)?  Never true for a
 * transaction still in progress.
 */
bool
minidb_xid_aborted(MinidbVersionHeader *vh, Buffer buffer)
{
	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return true;
	if (vh->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
		return false;
	if (TransactionIdIsCurrentTransactionId(vh->vh_xmin))
		return false;
	if (TransactionIdIsInProgress(vh->vh_xmin))
		return false;
	return !minidb_xid_committed(vh, buffer);
}

/* MVCC: committed before the snapshot, or ours from an earlier command */
static pg_attribute_always_inline bool
mvcc_sees(MinidbVersionHeader *vh, MinidbVisArg *va)
{
	Snapshot	snapshot = va->snapshot;
	TransactionId xmin = vh->vh_xmin;

	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return false;
	if (vh->vh_flags & MINIDB_V_FROZEN)
		return true;
	if (vh->vh_flags & MINIDB_V_XMIN_COMMITTED)
		return !XidInMVCCSnapshot(xmin, snapshot);

	if (TransactionIdIsCurrentTransactionId(xmin))
		return vh->vh_cid < snapshot->curcid;
	if (XidInMVCCSnapshot(xmin, snapshot))
		return false;
	if (TransactionIdDidCommit(xmin))
	{
		minidb_set_hint(vh, va->buffer, MINIDB_V_XMIN_COMMITTED, xmin);
		return true;
	}
	/* finished before the snapshot, and not committed: aborted or crashed */
	minidb_set_hint(vh, va->buffer, MINIDB_V_XMIN_ABORTED,
					InvalidTransactionId);
	return false;
}

static bool
visible_mvcc(MinidbVersionHeader *vh, int index, void *arg)
{
	return mvcc_sees(vh, (MinidbVisArg *) arg);
}

/* The same, remembering the xmin passed over (see visible_tracking) */
static bool
visible_mvcc_tracking(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;

	if (mvcc_sees(vh, va))
		return true;
	if (!(vh->vh_flags & MINIDB_V_XMIN_ABORTED))
		va->newer_xmin = vh->vh_xmin;
	return false;
}

/* SnapshotSelf: committed now, or ours (any command) */
static bool
visible_self(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;

	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return false;
	if (TransactionIdIsCurrentTransactionId(vh->vh_xmin))
		return true;
	return minidb_xid_committed(vh, va->buffer);
}

/*
 * SnapshotAny and SnapshotToast: the newest version that is a row.  Callers
 * fetch by TID with SnapshotAny to get "the row version at this TID" (DELETE
 * RETURNING, AFTER triggers' OLD row, EvalPlanQual): for a record that is
 * the newest data version, even under a tombstone or moved marker.
 */
static bool
visible_any(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;

	if (vh->vh_flags & MINIDB_V_NODATA_MASK)
		return false;
	return !minidb_xid_aborted(vh, va->buffer);
}

/*
 * SnapshotDirty: committed, ours, or in progress.  As in heap, report the
 * in-progress inserter in snapshot->xmin and the in-progress deleter in
 * snapshot->xmax so that the caller can wait for them.  An in-progress
 * tombstone or move is passed over: the row is still there, being deleted.
 */
static bool
visible_dirty(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;
	Snapshot	snapshot = va->snapshot;
	TransactionId xmin = vh->vh_xmin;

	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return false;
	if (vh->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
		return true;
	if (TransactionIdIsCurrentTransactionId(xmin))
		return true;
	if (TransactionIdIsInProgress(xmin))
	{
		if (vh->vh_flags & MINIDB_V_NODATA_MASK)
		{
			snapshot->xmax = xmin;
			return false;
		}
		if (!TransactionIdIsValid(snapshot->xmax))
			snapshot->xmin = xmin;
		return true;
	}
	return minidb_xid_committed(vh, va->buffer);
}

/*
 * SnapshotNonVacuumable: anything not yet dead to everyone.  A committed
 * marker that every snapshot sees ends the row; a younger one leaves the
 * row "recently dead", which this snapshot still returns.
 */
static bool
visible_non_vacuumable(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;

	if (minidb_xid_aborted(vh, va->buffer))
		return false;
	if (vh->vh_flags & MINIDB_V_NODATA_MASK)
	{
		if ((vh->vh_flags & MINIDB_V_FROZEN) ||
			(minidb_xid_committed(vh, va->buffer) &&
			 GlobalVisTestIsRemovableXid(va->vistest, vh->vh_xmin)))
			return true;		/* dead: stop here, no row */
		return false;
	}
	return true;
}

/*
 * Wraps the snapshot's predicate to remember the xmin of the newest version
 * passed over: the visible version's xmax, as the system column shows it.
 */
static bool
visible_tracking(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;

	if (va->fn(vh, index, arg))
		return true;
	if (!(vh->vh_flags & MINIDB_V_XMIN_ABORTED))
		va->newer_xmin = vh->vh_xmin;
	return false;
}

MinidbVisibleFn
minidb_visibility_fn(Snapshot snapshot)
{
	switch (snapshot->snapshot_type)
	{
		case SNAPSHOT_MVCC:
			return visible_mvcc;
		case SNAPSHOT_SELF:
			return visible_self;
		case SNAPSHOT_ANY:
		case SNAPSHOT_TOAST:
			return visible_any;
		case SNAPSHOT_DIRTY:
			return visible_dirty;
		case SNAPSHOT_NON_VACUUMABLE:
			return visible_non_vacuumable;
		case SNAPSHOT_HISTORIC_MVCC:
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("logical decoding of minidb tables is not supported")));
	}
	elog(ERROR, "unrecognized snapshot type %d", (int) snapshot->snapshot_type);
	return NULL;				/* keep compiler quiet */
}

void
minidb_vis_arg_init(MinidbVisArg *va, Snapshot snapshot, Buffer buffer)
{
	va->snapshot = snapshot;
	va->buffer = buffer;
	va->vistest = NULL;
	va->fn = minidb_visibility_fn(snapshot);
	va->newer_xmin = InvalidTransactionId;
	if (snapshot->snapshot_type == SNAPSHOT_NON_VACUUMABLE)
		va->vistest = snapshot->vistest;
	if (snapshot->snapshot_type == SNAPSHOT_DIRTY)
	{
		snapshot->xmin = snapshot->xmax = InvalidTransactionId;
		snapshot->speculativeToken = 0;
	}
}

/* The first version not known to be aborted */
static bool
not_aborted(MinidbVersionHeader *vh, int index, void *arg)
{
	return !minidb_xid_aborted(vh, *(Buffer *) arg);
}

/*
 * The effective head of a record: its newest version that did not abort.
 * Returns its index, or -1 when every version aborted.
 */
int
minidb_effective_head(Relation rel, ItemPointer tid, char *rec, uint32 len,
					  Buffer buffer, MinidbVersionRef *ref)
{
	MinidbChainError err;
	int			idx;

	idx = minidb_chain_find_visible(rec, len, not_aborted, &buffer, ref,
									&err);
	if (idx == -2)
		minidb_report_corruption(rel, tid, &err);
	return idx;
}

/*
 * The visible version of a record: its index (>= 0) with *ref and *xmax
 * (the xmin of the newer version that ended it, if any) filled in,
 * or -1 when the snapshot sees no row (nothing visible, or a tombstone or
 * moved marker).  A damaged record raises ERRCODE_DATA_CORRUPTED.
 */
int
minidb_find_visible(Relation rel, ItemPointer tid, char *rec, uint32 len,
					Snapshot snapshot, Buffer buffer, MinidbVersionRef *ref,
					TransactionId *xmax)
{
	MinidbVisArg va;
	MinidbChainError err;
	int			idx;

	minidb_vis_arg_init(&va, snapshot, buffer);

	idx = minidb_chain_find_visible(rec, len,
									snapshot->snapshot_type == SNAPSHOT_MVCC ?
									visible_mvcc_tracking : visible_tracking,
									&va, ref, &err);
	if (idx == -2)
		minidb_report_corruption(rel, tid, &err);
	if (idx >= 0 && (ref->vh->vh_flags & MINIDB_V_NODATA_MASK))
		return -1;
	/* an insertion another backend is still deciding on: say whose */
	if (idx == 0 && snapshot->snapshot_type == SNAPSHOT_DIRTY &&
		TransactionIdIsValid(snapshot->xmin))
	{
		ItemPointer spec = &minidb_record_header(rec)->rh_successor;

		if (ItemPointerGetOffsetNumberNoCheck(spec) == SpecTokenOffsetNumber)
			snapshot->speculativeToken = ItemPointerGetBlockNumberNoCheck(spec);
	}
	if (xmax)
		*xmax = va.newer_xmin;
	return idx;
}

/*
 * The xmin of a record's oldest version: the INSERT or moving UPDATE that
 * created the record.  Following a "moved" marker, it must be the marker's
 * own xmin, or the successor slot was reused by another row.
 */
TransactionId
minidb_record_origin_xmin(Relation rel, ItemPointer tid, char *rec, uint32 len)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	TransactionId oldest = InvalidTransactionId;
	bool		damaged = false;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		minidb_report_corruption(rel, tid, &err);
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
		oldest = ref.vh->vh_xmin;
	if (damaged)
		minidb_report_corruption(rel, tid, &err);
	return oldest;
}
