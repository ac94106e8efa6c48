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
#include "access/multixact.h"
#include "access/subtrans.h"
#include "access/transam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/combocid.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_visibility.h"

static pg_attribute_always_inline int find_visible(Relation rel,
													ItemPointer tid,
													char *rec, uint32 len,
													Snapshot snapshot,
													Buffer buffer,
													MinidbVersionRef *ref,
													TransactionId *xmax,
													bool ssi);

/* The hint on a version, or on the record end a virtual marker stands for */
static inline void
set_hint_bits(MinidbVersionHeader *vh, uint16 hint)
{
	if (vh->vh_flags & MINIDB_V_VIRTUAL)
		minidb_virtual_set_hint(vh, hint);
	else
		vh->vh_flags |= hint;
}

/*
 * A version's cid as the current transaction means it: its cmin, or for a
 * (virtual) marker the cmax of the version it ended.  A V3 record keeps the
 * cmax of a version whose row ended in that version's cid, as heap keeps it
 * in t_cid, and both in a combo command id when the current transaction
 * wrote both (MINIDB_V_COMBOCID), which combocid.c resolves.  Only the
 * transaction that wrote a version asks.
 */
CommandId
minidb_version_cid(const MinidbVersionHeader *vh)
{
	HeapTupleHeaderData tup;

	if (likely(!(vh->vh_flags & MINIDB_V_COMBOCID)))
		return vh->vh_cid;
	memset(&tup, 0, sizeof(tup));
	tup.t_infomask = HEAP_COMBOCID;
	tup.t_choice.t_heap.t_field3.t_cid = vh->vh_cid;
	if (vh->vh_flags & MINIDB_V_NODATA_MASK)
	{
		HeapTupleHeaderSetXmax(&tup, vh->vh_xmin);
		return HeapTupleHeaderGetCmax(&tup);
	}
	HeapTupleHeaderSetXmin(&tup, vh->vh_xmin);
	return HeapTupleHeaderGetCmin(&tup);
}

/*
 * The cid a marker that ends head's row stores: cmax, or a combo command
 * id of head's cmin and cmax when head is this transaction's too (heap's
 * HeapTupleHeaderAdjustCmax).  *combo says which.
 */
CommandId
minidb_marker_cid(const MinidbVersionHeader *head, CommandId cmax, bool *combo)
{
	HeapTupleHeaderData tup;

	memset(&tup, 0, sizeof(tup));
	HeapTupleHeaderSetXmin(&tup, head->vh_xmin);
	if (head->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
		tup.t_infomask |= HEAP_XMIN_COMMITTED;
	if (head->vh_flags & MINIDB_V_COMBOCID)
		tup.t_infomask |= HEAP_COMBOCID;
	tup.t_choice.t_heap.t_field3.t_cid = head->vh_cid;
	HeapTupleHeaderAdjustCmax(&tup, &cmax, combo);
	return cmax;
}

/*
 * The updating member of an existing multixact, whatever became of it, or
 * InvalidTransactionId when every member only locks (the last one, should
 * a damaged multixact hold more than one).  Readers ask it through
 * multi_updater; a locker (minidb_lock.c, updater_stays) asks it, then
 * whether that member is running or committed.
 */
TransactionId
minidb_multixact_updater(MultiXactId multi)
{
	MultiXactMember *members;
	TransactionId updater = InvalidTransactionId;
	int			n;

	n = GetMultiXactIdMembers(multi, &members, false, false);
	for (int i = 0; i < n; i++)
		if (ISUPDATE_from_mxstatus(members[i].status))
			updater = members[i].xid;
	if (n > 0)
		pfree(members);
	return updater;
}

/*
 * The updating member of a multixact that ends a V3 record's row (the
 * record layer's minidb_multi_updater_hook), or InvalidTransactionId.
 * Unlike updater_stays (minidb_lock.c), it names the member whether it
 * committed, aborted or runs, and it first checks that the xmax read from
 * the record is an existing multixact.
 */
static TransactionId
multi_updater(TransactionId multi, const char *rec)
{
	MultiXactId oldest;
	MultiXactId next;

	/* a damaged xmax must not be looked up: that error names no record */
	ReadMultiXactIdRange(&oldest, &next);
	if (!MultiXactIdIsValid(multi) || MultiXactIdPrecedes(multi, oldest) ||
		!MultiXactIdPrecedes(multi, next))
		minidb_report_bad_xid(rec, "xmax", multi, true);
	return minidb_multixact_updater((MultiXactId) multi);
}

void
minidb_visibility_init(void)
{
	minidb_multi_updater_hook = multi_updater;
}

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
		set_hint_bits(vh, hint);
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
	set_hint_bits(vh, hint);
	MarkBufferDirtyHint(buffer, true);
}

/* ----------------------------------------------------------------
 * Transaction IDs read from records
 *
 * A damaged byte can turn a version's xmin, or a row locker, into any
 * number.  Before such an ID is looked up in the commit log or the
 * procarray, or taken for running because a snapshot's xmax lies below
 * it, it must be one that was assigned and whose status is still kept:
 * else the lookup fails with an error that names no record ("could not
 * access status of transaction"), answers "aborted" for an ID that was
 * never used (the version would vanish, and pruning would remove it), or
 * "running" forever (a writer would wait for it).  These checks sit on
 * those slow paths only; a hinted version older than the snapshot's xmin
 * costs nothing more.  Damage raises ERRCODE_DATA_CORRUPTED naming the
 * relation, the record's TID and the version.
 * ----------------------------------------------------------------
 */

/*
 * transam.c's circular comparisons, inline: they are calls into the server,
 * and every fetch makes a few (mvcc_sees, xid_in_range).
 */
static inline bool
xid_precedes(TransactionId id1, TransactionId id2)
{
	if (!TransactionIdIsNormal(id1) || !TransactionIdIsNormal(id2))
		return id1 < id2;
	return (int32) (id1 - id2) < 0;
}

static inline bool
xid_follows(TransactionId id1, TransactionId id2)
{
	if (!TransactionIdIsNormal(id1) || !TransactionIdIsNormal(id2))
		return id1 > id2;
	return (int32) (id1 - id2) > 0;
}

static inline bool
xid_follows_or_equals(TransactionId id1, TransactionId id2)
{
	if (!TransactionIdIsNormal(id1) || !TransactionIdIsNormal(id2))
		return id1 >= id2;
	return (int32) (id1 - id2) >= 0;
}

/*
 * Is xid (normal) assigned, and its status still in the commit log?  The
 * next transaction ID read last time is a bound that stays true, so that
 * XidGenLock is taken only for IDs beyond it.
 */
static bool
xid_in_range(TransactionId xid)
{
	static TransactionId next_seen = InvalidTransactionId;

	if (!TransactionIdIsNormal(xid))
		return true;
	/* only moves forward; a stale value is an older, smaller one */
	if (xid_precedes(xid, TransamVariables->oldestClogXid))
		return false;
	if (TransactionIdIsValid(RecentXmin) && xid_precedes(xid, RecentXmin))
		return true;
	if (TransactionIdIsValid(next_seen) && xid_precedes(xid, next_seen) &&
		xid_follows(next_seen, TransamVariables->oldestClogXid))
		return true;
	next_seen = ReadNextTransactionId();
	return xid_precedes(xid, next_seen);
}

/*
 * The relation, block and offset of the record that holds 'where': on a
 * buffer's page, or in the image of one that a write is changing (whose
 * check of the record before the change may find the damage); false for
 * other private copies.  *rec is the record where 'where' lies; *relname
 * may be "?".
 */
static bool
locate_record(const void *where, const char **relname, BlockNumber *blkno,
			  OffsetNumber *off, char **rec, uint32 *len)
{
	Buffer		buffer;
	Page		page;
	RelFileLocator rnode;
	ForkNumber	fork;
	Oid			relid;
	char	   *name = NULL;

	if (where == NULL)
		return false;
	if (minidb_page_locate(where, &buffer, off))
		page = BufferGetPage(buffer);
	else if (!minidb_write_image_of(where, &buffer, &page) ||
			 !minidb_page_item_holding(page, where, off))
		return false;
	*rec = PageGetItem(page, PageGetItemId(page, *off));
	*len = ItemIdGetLength(PageGetItemId(page, *off));
	BufferGetTag(buffer, &rnode, &fork, blkno);
	relid = minidb_relid_by_locator(rnode);
	if (OidIsValid(relid))
		name = get_rel_name(relid);
	*relname = name ? name : "?";
	return true;
}

void
minidb_record_damaged(const char *rec, const MinidbChainError *err)
{
	const char *relname;
	BlockNumber blkno;
	OffsetNumber off;
	char	   *item;
	uint32		len;

	if (!locate_record(rec, &relname, &blkno, &off, &item, &len))
		return;
	if (err->version >= 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
						relname, blkno, off),
				 errdetail("Version %d, field \"%s\": %s.", err->version,
						   err->field, err->detail)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
					relname, blkno, off),
			 errdetail("Record header field \"%s\": %s.", err->field,
					   err->detail)));
}

/*
 * The version or record header at 'where' holds transaction ID (or
 * multixact) 'xid' in 'field', out of range: raise ERRCODE_DATA_CORRUPTED
 * naming the relation, TID and version when 'where' lies on a buffer's
 * page (it does, except for private copies).
 */
void
minidb_report_bad_xid(const void *where, const char *field, uint32 xid,
					  bool multi)
{
	const char *relname;
	BlockNumber blkno;
	OffsetNumber off;
	char	   *rec;
	uint32		len;
	char	   *what;

	if (multi)
	{
		MultiXactId oldest;
		MultiXactId next;

		ReadMultiXactIdRange(&oldest, &next);
		what = psprintf("multixact %u is not one of the existing %u to %u",
						xid, oldest, next - 1);
	}
	else
		what = psprintf("transaction ID %u is not one whose status is known (%u to %u)",
						xid, TransamVariables->oldestClogXid,
						ReadNextTransactionId() - 1);

	if (locate_record(where, &relname, &blkno, &off, &rec, &len))
	{
		int			version = -1;
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged;

		/* (the record header itself: no walk, which would ask for it again) */
		if ((const char *) where != rec &&
			minidb_chain_iter_init(&it, rec, len, &err))
			while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
				if ((char *) ref.vh == (char *) where)
					version = ref.index;
		if (version >= 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
							relname, blkno, off),
					 errdetail("Version %d, field \"%s\": %s.", version,
							   field, what)));
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
						relname, blkno, off),
				 errdetail("Record header field \"%s\": %s.", field, what)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupted minidb record"),
			 errdetail("Field \"%s\": %s.", field, what)));
}

/*
 * vh's xmin may be looked up: else ERROR.  A V3 record's virtual marker
 * stands for the record's xmax field (a MultiXactId's updater was checked
 * when the marker was made: multi_updater).
 */
static void
report_bad_xmin(MinidbVersionHeader *vh)
{
	if (vh->vh_flags & MINIDB_V_VIRTUAL)
		minidb_report_bad_xid(((MinidbVirtualMarker *) vh)->rec, "xmax",
							  vh->vh_xmin, false);
	minidb_report_bad_xid(vh, "vh_xmin", vh->vh_xmin, false);
}

static inline void
check_xmin(MinidbVersionHeader *vh)
{
	if (unlikely(!xid_in_range(vh->vh_xmin)) &&
		!(vh->vh_flags & MINIDB_V_XMIN_MULTI))
		report_bad_xmin(vh);
}

/*
 * The row lockers lk read from rec (xid or multixact) may be looked up:
 * else ERROR naming the record.  For the lock layer, before it asks
 * whether the lockers run.
 */
void
minidb_lockers_sane(const char *rec, const MinidbLockers *lk)
{
	const char *field = minidb_record_format_of(rec) == MINIDB_FORMAT_V3 ?
		"xmax" : "rh_locker";

	if (!TransactionIdIsValid(lk->xid) ||
		(!lk->multi && lk->mode == MINIDB_LOCK_NONE))
		return;
	if (lk->multi)
	{
		MultiXactId oldest;
		MultiXactId next;

		ReadMultiXactIdRange(&oldest, &next);
		if (MultiXactIdPrecedes(lk->xid, oldest) ||
			!MultiXactIdPrecedes(lk->xid, next))
			minidb_report_bad_xid(rec, field, lk->xid, true);
	}
	else if (!xid_in_range(lk->xid))
		minidb_report_bad_xid(rec, field, lk->xid, false);
}

/* The row lockers of rec, checked by minidb_lockers_sane */
void
minidb_get_lockers(const char *rec, MinidbLockers *lk)
{
	minidb_record_get_lockers(rec, lk);
	minidb_lockers_sane(rec, lk);
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
	check_xmin(vh);
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
	check_xmin(vh);
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
	{
		/* beyond the snapshot's xmax: running to it, if it exists at all */
		if (unlikely(xid_follows_or_equals(xmin, snapshot->xmax)))
		{
			check_xmin(vh);
			return false;		/* XidInMVCCSnapshot's answer for it */
		}
		/* XidInMVCCSnapshot's first test, without the call */
		if (xid_precedes(xmin, snapshot->xmin))
			return true;
		return !XidInMVCCSnapshot(xmin, snapshot);
	}

	/* below the snapshot's xmax, it was assigned: only its status may be gone */
	if (!xid_precedes(xmin, snapshot->xmax) ||
		xid_precedes(xmin, TransamVariables->oldestClogXid))
		check_xmin(vh);
	if (TransactionIdIsCurrentTransactionId(xmin))
		return minidb_version_cid(vh) < snapshot->curcid;
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

/*
 * mvcc_sees for a record's newest version, asked without a walk by a reader
 * that has checked the record's shape (minidb_scan.c, plain_version): for
 * the newest version the walker's predicate is this one test, and seeing
 * it passes over no version (nothing to report to SSI).  Hints are set as
 * the walker's read sets them; vh lies on buffer's page.
 */
bool
minidb_mvcc_sees_newest(MinidbVersionHeader *vh, Snapshot snapshot,
						Buffer buffer)
{
	MinidbVisArg va = {.snapshot = snapshot,.buffer = buffer};

	Assert(snapshot->snapshot_type == SNAPSHOT_MVCC);
	return mvcc_sees(vh, &va);
}

/*
 * SSI: a serializable reader passing over a version it cannot see has read
 * around that version's writer, which is concurrent with it (an rw-conflict
 * out), as heap's HeapCheckForSerializableConflictOut reports for the
 * versions it skips.  For a minidb record that is every newer version that
 * did not abort: the updaters of the row the reader returns, or the
 * inserter of a row it does not see at all.
 */
void
minidb_ssi_conflict_out(Relation rel, TransactionId xid, Snapshot snapshot)
{
	if (!CheckForSerializableConflictOutNeeded(rel, snapshot))
		return;
	if (TransactionIdFollowsOrEquals(xid, TransactionXmin))
		xid = SubTransGetTopmostTransaction(xid);
	if (TransactionIdPrecedes(xid, TransactionXmin))
		return;
	if (TransactionIdEquals(xid, GetTopTransactionIdIfAny()))
		return;
	CheckForSerializableConflictOut(rel, xid, snapshot);
}

/*
 * SSI's tuple locks name a version, not a row.  A heap TID names one
 * version, so heap's predicate lock on a tuple meets only the writer that
 * supersedes that very version; a reader's lock on a minidb row TID would
 * meet every later writer of the row, and report rw-conflicts heap does not
 * (PostgreSQL's isolation spec multiple-row-versions fails a transaction
 * heap lets commit).  So readers lock, and writers check, a TID that names
 * the row and the version's xmin: the same block (page and relation locks
 * work as for heap), the line pointer in the low 9 bits of the offset and
 * the xmin modulo 127 above them.  Two versions of a row that share the
 * same xmin modulo 127 share a lock target: a conflict too many, never one
 * too few.
 */
#define MINIDB_SSI_LP_BITS		9	/* MaxHeapTuplesPerPage < 512 */
#define MINIDB_SSI_XMIN_SLOTS	127

void
minidb_ssi_version_tid(ItemPointer tid, TransactionId xmin,
					   ItemPointer vtid)
{
	uint32		off = ItemPointerGetOffsetNumber(tid);

	StaticAssertStmt(MaxHeapTuplesPerPage < (1 << MINIDB_SSI_LP_BITS),
					 "line pointers must fit the low bits");
	off |= (1 + xmin % MINIDB_SSI_XMIN_SLOTS) << MINIDB_SSI_LP_BITS;
	ItemPointerSet(vtid, ItemPointerGetBlockNumber(tid), (OffsetNumber) off);
}

/*
 * A reader returns version xmin of the row at tid: take its SIREAD lock.
 * Only serializable transactions take one (minidb_ssi_lock_version in
 * minidb_visibility.h returns at once otherwise, as PredicateLockTID
 * would, before the lock target is computed on every fetch).
 */
void
minidb_ssi_lock_version_serializable(Relation rel, ItemPointer tid,
									 Snapshot snapshot, TransactionId xmin)
{
	ItemPointerData vtid;

	minidb_ssi_version_tid(tid, xmin, &vtid);
	PredicateLockTID(rel, &vtid, snapshot, xmin);
}

/* A writer supersedes version xmin of the row at tid: conflict in */
void
minidb_ssi_check_in(Relation rel, ItemPointer tid, TransactionId xmin)
{
	ItemPointerData vtid;

	minidb_ssi_version_tid(tid, xmin, &vtid);
	CheckForSerializableConflictIn(rel, &vtid, ItemPointerGetBlockNumber(tid));
}

/*
 * The same, remembering the xmin passed over (see visible_tracking) and,
 * for serializable readers, reporting it to SSI.
 */
static bool
visible_mvcc_tracking(MinidbVersionHeader *vh, int index, void *arg)
{
	MinidbVisArg *va = (MinidbVisArg *) arg;

	if (mvcc_sees(vh, va))
		return true;
	if (!(vh->vh_flags & MINIDB_V_XMIN_ABORTED))
	{
		va->newer_xmin = vh->vh_xmin;
		if (va->ssi_rel)
			minidb_ssi_conflict_out(va->ssi_rel, vh->vh_xmin, va->snapshot);
	}
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
	check_xmin(vh);
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
	va->ssi_rel = NULL;
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
	return find_visible(rel, tid, rec, len, snapshot, buffer, ref, xmax,
						true);
}

/*
 * The same for writers and lockers: which version does the snapshot see?
 * They read nothing on the user's behalf, so SSI is not told.
 */
int
minidb_snapshot_version(Relation rel, ItemPointer tid, char *rec, uint32 len,
						Snapshot snapshot, Buffer buffer,
						MinidbVersionRef *ref)
{
	return find_visible(rel, tid, rec, len, snapshot, buffer, ref, NULL,
						false);
}

static pg_attribute_always_inline int
find_visible(Relation rel, ItemPointer tid, char *rec, uint32 len,
			 Snapshot snapshot, Buffer buffer, MinidbVersionRef *ref,
			 TransactionId *xmax, bool ssi)
{
	MinidbVisArg va;
	MinidbChainError err;
	int			idx;

	if (likely(snapshot->snapshot_type == SNAPSHOT_MVCC))
	{
		/* minidb_vis_arg_init's case for MVCC, without its dispatch */
		va.snapshot = snapshot;
		va.buffer = buffer;
		va.vistest = NULL;
		va.fn = visible_mvcc;
		va.newer_xmin = InvalidTransactionId;
		/* only serializable transactions report conflicts out */
		va.ssi_rel = (ssi && IsolationIsSerializable()) ? rel : NULL;
	}
	else
		minidb_vis_arg_init(&va, snapshot, buffer);

	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
	{
		/*
		 * The search may skip versions (minidb_chain_find_visible_ordered)
		 * when no newer version can be this transaction's own (it has no
		 * xid, so it wrote nothing: the common reader), and SSI needs no
		 * report of each version passed over.
		 */
		MinidbVisibleFn settled = NULL;

		if (va.ssi_rel == NULL &&
			!TransactionIdIsValid(GetTopTransactionIdIfAny()))
			settled = visible_mvcc;
		idx = minidb_chain_find_visible_ordered(rec, len,
												visible_mvcc_tracking,
												settled, &va, ref, &err);
	}
	else
		idx = minidb_chain_find_visible(rec, len, visible_tracking, &va, ref,
										&err);
	if (idx == -2)
		minidb_report_corruption(rel, tid, &err);
	if (idx >= 0 && (ref->vh->vh_flags & MINIDB_V_NODATA_MASK))
		return -1;
	/* an insertion another backend is still deciding on: say whose */
	if (idx == 0 && snapshot->snapshot_type == SNAPSHOT_DIRTY &&
		TransactionIdIsValid(snapshot->xmin))
		snapshot->speculativeToken = minidb_record_spec_token(rec);
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
	MinidbVersionWalk walk;
	MinidbVersionRef ref;
	TransactionId oldest = InvalidTransactionId;

	minidb_walk_begin(&walk, rel, tid, rec, len);
	while (minidb_walk_next(&walk, &ref))
		oldest = ref.vh->vh_xmin;
	return oldest;
}

/*
 * The ref of version index of a record, found again after a walk that
 * noted only the index.
 */
void
minidb_ref_at(Relation rel, ItemPointer tid, char *rec, uint32 len,
			  int index, MinidbVersionRef *ref)
{
	MinidbVersionWalk walk;

	minidb_walk_begin(&walk, rel, tid, rec, len);
	while (minidb_walk_next(&walk, ref))
		if (ref->index == index)
			return;
	elog(ERROR, "minidb record at (%u,%u) has no version %d",
		 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid), index);
}

/* ----------------------------------------------------------------
 * What writers, lockers and fetches by TID need
 * ----------------------------------------------------------------
 */

typedef struct HeadsState
{
	Buffer		buffer;
	int			found;
	int			head;			/* the head's index */
	TransactionId above;		/* xmin of the last version not aborted
								 * passed over */
} HeadsState;

/*
 * Remember the first version that did not abort (the head); accept the
 * first one after it whose writer did not abort and is not running
 * elsewhere (what the head's transaction, with all the versions it has
 * stacked, is changing).  Each version passed over that did not abort is
 * remembered as the one above.
 */
static bool
head_then_settled(MinidbVersionHeader *vh, int index, void *arg)
{
	HeadsState *hs = (HeadsState *) arg;

	if (minidb_xid_aborted(vh, hs->buffer))
		return false;
	if (hs->found++ == 0)
	{
		hs->head = index;
		hs->above = vh->vh_xmin;
		return false;
	}
	if (TransactionIdIsCurrentTransactionId(vh->vh_xmin) ||
		minidb_xid_committed(vh, hs->buffer))
		return true;
	hs->above = vh->vh_xmin;
	return false;
}

/*
 * The newest version of a record that did not abort (its head, what a
 * writer supersedes), and below it the newest one whose writer has ended
 * (what a head still in progress supersedes).  Returns 0 when every version
 * aborted, 1 when only the head is known, 2 when both are.
 *
 * *superseder (if given) is whom a change of the row waits for while the
 * head's transaction runs: with 2, the xmin of the version just above
 * below that did not abort, the writer that superseded it; with 1 (no
 * settled version below), the head's.  The running versions above below
 * are all one transaction's (a writer waits for the head's to end before it
 * prepends), but of its subtransactions: heap waits for the xmax of the
 * version its scan saw, which is that one, not the head's.  Rolled back
 * to a savepoint taken before it, that subtransaction ends and the waiter
 * goes on, even when the head's was a savepoint released since, whose
 * wait is the whole transaction's.
 */
int
minidb_row_heads(Relation rel, ItemPointer tid, char *rec, uint32 len,
				 Buffer buffer, MinidbVersionRef *head,
				 MinidbVersionRef *below, TransactionId *superseder)
{
	HeadsState	hs;
	MinidbChainError err;
	int			idx;

	hs.buffer = buffer;
	hs.found = 0;
	hs.head = -1;
	hs.above = InvalidTransactionId;
	idx = minidb_chain_find_visible(rec, len, head_then_settled, &hs, below,
									&err);
	if (idx == -2)
		minidb_report_corruption(rel, tid, &err);
	if (hs.found == 0)
		return 0;
	minidb_ref_at(rel, tid, rec, len, hs.head, head);
	if (superseder)
		*superseder = idx >= 0 ? hs.above : head->vh->vh_xmin;
	return idx >= 0 ? 2 : 1;
}

/*
 * Fetching "the row version at this TID" (SnapshotAny).
 *
 * A heap TID names one version, so heap answers such a fetch with the very
 * version the caller's scan returned, or the one it locked.  A minidb TID
 * names a row, and the answer must be chosen.  The executor asks in three
 * situations: (1) the old row of an UPDATE or DELETE before and after the
 * change (to build the new row, for RETURNING, for AFTER triggers and
 * transition tables), (2) a row EvalPlanQual re-reads without locking it
 * (ROW_MARK_REFERENCE), and (3) the newest version of a row after it has
 * locked it (EvalPlanQual of UPDATE, DELETE and MERGE).  The rule that
 * gives heap's answer in all three:
 *
 *	- never a version another transaction has not committed, and never an
 *	  aborted one (the version a scan returned was neither);
 *	- never a marker: a TID whose row was deleted or moved still names the
 *	  row version before the marker, as heap's old tuple does;
 *	- for a TID that tuple_lock handed back marked MINIDB_TID_NEWEST (see
 *	  minidb_lock.h), the newest committed version: the one it locked (3);
 *	  own versions count only when made by an earlier command than the
 *	  active snapshot's, so that the old row after the UPDATE that follows
 *	  is still the old row;
 *	- for a plain TID, the version the active snapshot sees: the one the
 *	  caller's scan returned (1, 2), which also excludes what the current
 *	  command itself wrote, so that the old row after an in-place UPDATE is
 *	  the old row;
 *	- failing all that (a row this command inserted or moved here, or no
 *	  active snapshot), the newest version left.
 */
typedef struct RowVersionState
{
	Buffer		buffer;
	Snapshot	active;			/* the active MVCC snapshot, or NULL */
	bool		newest;			/* the TID names the version we locked */
	int			fallback;		/* newest candidate's index, or -1 */
	TransactionId newer_xmin;	/* xmin of the last version passed over */
	TransactionId fallback_xmax;
	MinidbVisArg va;			/* the active snapshot's test */
} RowVersionState;

static bool
row_version_wanted(MinidbVersionHeader *vh, int index, void *arg)
{
	RowVersionState *rs = (RowVersionState *) arg;
	bool		ours;
	bool		ok;

	if (minidb_xid_aborted(vh, rs->buffer))
		return false;
	if (vh->vh_flags & MINIDB_V_NODATA_MASK)
	{
		rs->newer_xmin = vh->vh_xmin;	/* the deleter is the row's xmax */
		return false;
	}
	ours = TransactionIdIsCurrentTransactionId(vh->vh_xmin);
	if (!ours && !minidb_xid_committed(vh, rs->buffer))
	{
		rs->newer_xmin = vh->vh_xmin;
		return false;			/* in progress elsewhere */
	}
	if (rs->fallback < 0)
	{
		rs->fallback = index;
		rs->fallback_xmax = rs->newer_xmin;
	}
	if (rs->active == NULL)
		ok = true;
	else if (rs->newest)
		ok = !ours || minidb_version_cid(vh) < rs->active->curcid;
	else
		ok = mvcc_sees(vh, &rs->va);
	if (!ok)
		rs->newer_xmin = vh->vh_xmin;
	return ok;
}

int
minidb_find_row_version(Relation rel, ItemPointer tid, bool newest, char *rec,
						uint32 len, Buffer buffer, MinidbVersionRef *ref,
						TransactionId *xmax)
{
	RowVersionState rs;
	MinidbChainError err;
	int			idx;

	rs.buffer = buffer;
	rs.active = NULL;
	rs.fallback = -1;
	rs.newer_xmin = InvalidTransactionId;
	rs.fallback_xmax = InvalidTransactionId;
	if (ActiveSnapshotSet() && IsMVCCSnapshot(GetActiveSnapshot()))
	{
		rs.active = GetActiveSnapshot();
		minidb_vis_arg_init(&rs.va, rs.active, buffer);
	}
	rs.newest = newest;

	idx = minidb_chain_find_visible(rec, len, row_version_wanted, &rs, ref,
									&err);
	if (idx == -2)
		minidb_report_corruption(rel, tid, &err);
	if (idx >= 0)
	{
		*xmax = rs.newer_xmin;
		return idx;
	}
	if (rs.fallback < 0)
		return -1;
	minidb_ref_at(rel, tid, rec, len, rs.fallback, ref);
	*xmax = rs.fallback_xmax;
	return ref->index;
}

/*
 * Would minidb_find_row_version return version 0, v, of a record that the
 * newest reader's shortcuts accepted (minidb_chain_single_plain,
 * minidb_v3_newest_plain: stored whole, no end, no lockers, so no newer
 * version and no xmax), by its hints alone?  A version hinted committed or
 * frozen is neither aborted, nor in progress, nor ours; then the active
 * MVCC snapshot, if any, must see it unless the TID names the newest
 * version.  False means only "not decided here".
 */
bool
minidb_row_version_is_head(const MinidbVersionData *v, bool newest)
{
	Snapshot	active;

	if (!(v->flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)) ||
		(v->flags & MINIDB_V_NODATA_MASK))
		return false;
	if (newest || !ActiveSnapshotSet())
		return true;
	active = GetActiveSnapshot();
	return !IsMVCCSnapshot(active) ||
		minidb_mvcc_sees_hinted(v->xmin, v->flags, active);
}

/*
 * Is the version at ref the newest one that counts: no newer version
 * committed or written by this transaction?  (Newer versions still in
 * progress elsewhere, or aborted, do not count.)
 */
typedef struct NewestState
{
	Buffer		buffer;
	int			target;
	bool		newest;
} NewestState;

static bool
newer_than_target(MinidbVersionHeader *vh, int index, void *arg)
{
	NewestState *ns = (NewestState *) arg;

	if (index >= ns->target)
		return true;
	if (TransactionIdIsCurrentTransactionId(vh->vh_xmin) ||
		minidb_xid_committed(vh, ns->buffer))
	{
		ns->newest = false;
		return true;
	}
	return false;
}

bool
minidb_version_is_newest_committed(Relation rel, ItemPointer tid, char *rec,
								   uint32 len, Buffer buffer,
								   const MinidbVersionRef *ref)
{
	NewestState ns;
	MinidbVersionRef dummy;
	MinidbChainError err;

	ns.buffer = buffer;
	ns.target = ref->index;
	ns.newest = true;
	if (minidb_chain_find_visible(rec, len, newer_than_target, &ns, &dummy,
								  &err) == -2)
		minidb_report_corruption(rel, tid, &err);
	return ns.newest;
}
