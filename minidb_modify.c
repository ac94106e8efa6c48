/*-------------------------------------------------------------------------
 *
 * minidb_modify.c
 *	  Writing minidb tables: INSERT, UPDATE, DELETE and row locks.
 *
 * INSERT adds a record with one version.  DELETE prepends a tombstone.
 * UPDATE that changes no column an index depends on (the HOT-blocking
 * set, which in PostgreSQL 15 is INDEX_ATTR_BITMAP_ALL) and fits the page after pruning prepends the new version in place:
 * same TID, no index entries.  Any other UPDATE ends the old record with a
 * "moved" marker pointing at a new record, and lets the server insert
 * index entries, as heap does for a non-HOT update.
 *
 * A writer may prepend only once the head's xmin, if another
 * transaction's, has ended: it waits otherwise.  That keeps the versions
 * of a record in commit order, which is what lets readers take the first
 * version their snapshot sees.  Row locks (SELECT FOR UPDATE, and the
 * lock EvalPlanQual takes before re-checking a row) live in the record
 * header as a single locker xid; every lock mode is treated as exclusive
 * (stronger than heap; never a wrong answer, sometimes a wait heap would
 * not make).
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heaptoast.h"
#include "access/hio.h"
#include "access/htup_details.h"
#include "access/xact.h"
#include "access/transam.h"
#include "access/xlog.h"
#include "catalog/catalog.h"
#include "catalog/pg_publication.h"
#include "nodes/bitmapset.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/datum.h"
#include "utils/memutils.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/reltrigger.h"

#include "minidb_am.h"

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

/*
 * Changes to minidb tables are logged as generic WAL, which logical
 * decoding cannot turn into row changes: a publication of a minidb table
 * would silently replicate nothing.  Refuse to write instead.  Costs
 * nothing unless wal_level is logical (the descriptor is cached).
 */
static void
check_not_published(Relation rel)
{
	PublicationDesc pubdesc;

	if (!XLogLogicalInfoActive())
		return;
	RelationBuildPublicationDesc(rel, &pubdesc);
	if (pubdesc.pubactions.pubinsert || pubdesc.pubactions.pubupdate ||
		pubdesc.pubactions.pubdelete || pubdesc.pubactions.pubtruncate)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("logical replication of minidb tables is not supported"),
				 errdetail("Table \"%s\" is part of a publication.",
						   RelationGetRelationName(rel))));
}

/* The tuple to store: toasted if it must be, with its table OID set */
static HeapTuple
prepare_tuple(Relation rel, HeapTuple tup, HeapTuple oldtup, int options)
{
	tup->t_tableOid = RelationGetRelid(rel);
	if (rel->rd_rel->relkind != RELKIND_RELATION &&
		rel->rd_rel->relkind != RELKIND_MATVIEW)
		return tup;
	if (HeapTupleHasExternal(tup) || tup->t_len > TOAST_TUPLE_THRESHOLD ||
		(oldtup && HeapTupleHasExternal(oldtup)))
		return heap_toast_insert_or_update(rel, tup, oldtup, options);
	return tup;
}

/*
 * Build a one-version record for tup in memory of the current context.
 * options may carry TABLE_INSERT_FROZEN (COPY FREEZE, into a table created
 * or truncated by this transaction): the version is then frozen from the
 * start, as heap freezes such tuples.
 */
static char *
build_record(HeapTuple tup, TransactionId xid, CommandId cid, int options,
			 uint32 *len)
{
	MinidbVersionData v;
	char	   *rec;

	minidb_version_from_tuple(tup, xid, cid, &v);
	if (options & TABLE_INSERT_FROZEN)
		v.flags |= MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN;
	*len = (uint32) Min(minidb_record_size(&v, 1, minidb_record_format),
						(uint64) PG_UINT32_MAX);
	if (*len > MINIDB_MAX_RECORD_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %u, maximum size %zu",
						*len, (Size) MINIDB_MAX_RECORD_LEN)));
	rec = palloc(MAXALIGN(*len));
	*len = minidb_record_build(rec, MAXALIGN(*len), &v);
	return rec;
}

/* Remember the buffer a bulk insert last used, with a pin of its own */
static void
bistate_remember(BulkInsertState bistate, Buffer buffer)
{
	if (bistate == NULL || bistate->current_buf == buffer)
		return;
	if (BufferIsValid(bistate->current_buf))
		ReleaseBuffer(bistate->current_buf);
	IncrBufferRefCount(buffer);
	bistate->current_buf = buffer;
}

/* The record at tid on an exclusively locked buffer; ERROR if none */
static char *
record_for_write(Relation rel, Buffer buffer, ItemPointer tid, uint32 *len)
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

/*
 * The pruning plan for the record at off before a version is prepended:
 * keep[] (palloc'd, *n entries), or NULL when nothing would go.  Pruning
 * also drops versions whose transaction aborted: an aborted "moved" marker
 * must not end up below a new head.
 */
static bool *
prune_plan_for(Relation rel, Page page, OffsetNumber off, Buffer buffer,
			   int *n)
{
	ItemId		lp = PageGetItemId(page, off);
	char	   *rec = (char *) PageGetItem(page, lp);
	/* the walk never yields more versions than the header declares */
	int			declared = Min(Max(minidb_record_header(rec)->rh_nversions, 1),
							   MINIDB_MAX_VERSIONS);
	bool	   *keep = palloc(sizeof(bool) * declared);
	int			floor;
	int			nkeep;

	nkeep = minidb_prune_plan(rec, ItemIdGetLength(lp), GlobalVisTestFor(rel),
							  buffer, keep, n, &floor);
	if (nkeep > 0 && nkeep < *n)
		return keep;
	pfree(keep);
	return NULL;
}

/*
 * Prepend version v to the record at off on a page image being changed
 * (minidb_write_page), pruning the record first.
 */
static void
page_prepend(Relation rel, Page page, OffsetNumber off,
			 const MinidbVersionData *v, const ItemPointerData *successor,
			 uint8 recflags)
{
	int			n;
	bool	   *keep = prune_plan_for(rel, page, off, InvalidBuffer, &n);
	uint32		len;
	char	   *rec;

	rec = minidb_prepend_build(page, off, keep, v, successor, recflags, &len);
	minidb_prepend_place(page, off, rec, len, v->xmin);
	pfree(rec);
	if (keep)
		pfree(keep);
}

/*
 * Prepend version v to the record at off of an exclusively locked buffer,
 * WAL-logged: as one compact record when the library is preloaded (see
 * minidb_xlog.c), as generic WAL otherwise.  The caller made sure it fits.
 */
static void
prepend_version(Relation rel, Buffer buffer, OffsetNumber off,
				const MinidbVersionData *v, const ItemPointerData *successor,
				uint8 recflags)
{
	MinidbPageWrite w;

	if (minidb_custom_wal)
	{
		int			n;
		bool	   *keep = prune_plan_for(rel, BufferGetPage(buffer), off,
										  buffer, &n);

		minidb_log_prepend(rel, buffer, off, keep, n, v, successor, recflags);
		if (keep)
			pfree(keep);
		return;
	}
	minidb_write_begin(&w, rel);
	page_prepend(rel, minidb_write_page(&w, buffer, false), off, v, successor,
				 recflags);
	minidb_write_finish(&w);
}

/* ----------------------------------------------------------------
 * May this transaction write the record?
 * ----------------------------------------------------------------
 */
typedef struct WriteCheck
{
	TM_Result	result;			/* TM_Ok, TM_BeingModified, or a failure */
	TransactionId wait_xid;		/* TM_BeingModified: whom to wait for */
	MinidbVersionRef head;		/* the effective head */
	bool		traversed;		/* head newer than the snapshot's version */
} WriteCheck;

static bool
version_visible_to(MinidbVersionHeader *vh, Snapshot snapshot, Buffer buffer)
{
	MinidbVisArg va;

	minidb_vis_arg_init(&va, snapshot, buffer);
	return va.fn(vh, 0, &va);
}

static bool
locked_by_other(MinidbRecordHeader *rh)
{
	return rh->rh_lockmode != MINIDB_LOCK_NONE &&
		TransactionIdIsValid(rh->rh_locker) &&
		!TransactionIdIsCurrentTransactionId(rh->rh_locker) &&
		TransactionIdIsInProgress(rh->rh_locker);
}

static bool
locked_by_us(MinidbRecordHeader *rh)
{
	return rh->rh_lockmode != MINIDB_LOCK_NONE &&
		TransactionIdIsCurrentTransactionId(rh->rh_locker);
}

static void
fail(WriteCheck *wc, TM_Result result, TM_FailureData *tmfd,
	 ItemPointer ctid, TransactionId xmax, CommandId cmax)
{
	wc->result = result;
	tmfd->ctid = *ctid;
	tmfd->xmax = xmax;
	tmfd->cmax = cmax;
}

/*
 * Decide whether the record at tid may get a new version from this
 * transaction at command cid: heap's HeapTupleSatisfiesUpdate, for a chain.
 * A committed head the snapshot does not see is a concurrent update
 * (TM_Updated), unless this transaction locked the row since (the lock
 * EvalPlanQual takes), in which case it is the version we mean to replace.
 */
static void
check_writable(Relation rel, ItemPointer tid, char *rec, uint32 len,
			   Buffer buffer, CommandId cid, Snapshot snapshot,
			   Snapshot crosscheck, TM_FailureData *tmfd, WriteCheck *wc)
{
	MinidbRecordHeader *rh = minidb_record_header(rec);
	MinidbVersionHeader *vh;

	wc->result = TM_Ok;
	wc->traversed = false;
	wc->head.vh = NULL;
	if (minidb_effective_head(rel, tid, rec, len, buffer, &wc->head) < 0)
	{
		fail(wc, TM_Invisible, tmfd, tid, InvalidTransactionId,
			 InvalidCommandId);
		return;
	}
	vh = wc->head.vh;

	if (locked_by_other(rh))
	{
		wc->result = TM_BeingModified;
		wc->wait_xid = rh->rh_locker;
		return;
	}
	if (TransactionIdIsCurrentTransactionId(vh->vh_xmin))
	{
		/*
		 * Changed by this very command: an update of an older version is
		 * TM_SelfModified, the row's insertion itself TM_Invisible (heap
		 * tells them apart by xmax and xmin; ON CONFLICT relies on it).
		 */
		if (vh->vh_cid >= cid && wc->head.index == rh->rh_nversions - 1)
			fail(wc, TM_Invisible, tmfd, tid, vh->vh_xmin, vh->vh_cid);
		else if (vh->vh_cid >= cid)
			fail(wc, TM_SelfModified, tmfd, tid, vh->vh_xmin, vh->vh_cid);
		else if (vh->vh_flags & MINIDB_V_NODATA_MASK)
			fail(wc, TM_Invisible, tmfd, tid, vh->vh_xmin, vh->vh_cid);
		return;
	}
	if (!minidb_xid_committed(vh, buffer))
	{
		wc->result = TM_BeingModified;
		wc->wait_xid = vh->vh_xmin;
		return;
	}
	if (vh->vh_flags & MINIDB_V_TOMBSTONE)
	{
		fail(wc, TM_Deleted, tmfd, tid, vh->vh_xmin, InvalidCommandId);
		return;
	}
	if (vh->vh_flags & MINIDB_V_MOVED)
	{
		ItemPointerData ctid = rh->rh_successor;

		if (rh->rh_flags & MINIDB_REC_MOVED_PART)
			ItemPointerSetMovedPartitions(&ctid);
		fail(wc, TM_Updated, tmfd, &ctid, vh->vh_xmin, InvalidCommandId);
		return;
	}
	if (snapshot && IsMVCCSnapshot(snapshot) &&
		!version_visible_to(vh, snapshot, buffer))
	{
		wc->traversed = true;
		if (!locked_by_us(rh))
		{
			fail(wc, TM_Updated, tmfd, tid, vh->vh_xmin, InvalidCommandId);
			return;
		}
	}
	if (crosscheck != InvalidSnapshot &&
		!version_visible_to(vh, crosscheck, buffer))
		fail(wc, TM_Updated, tmfd, tid, vh->vh_xmin, InvalidCommandId);
}

/*
 * Lock the record at tid for writing: on return the buffer is pinned and
 * exclusively locked and wc->result is TM_Ok, or a failure with the buffer
 * released.  Waits for other writers (taking the heavyweight tuple lock
 * first for a fair queue, as heap does) unless !wait.
 */
static Buffer
lock_record_for_write(Relation rel, ItemPointer tid, CommandId cid,
					  Snapshot snapshot, Snapshot crosscheck, bool wait,
					  TM_FailureData *tmfd, WriteCheck *wc, bool *have_tuplock)
{
	*have_tuplock = false;
	for (;;)
	{
		Buffer		buffer = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
		uint32		len;
		char	   *rec;

		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		rec = record_for_write(rel, buffer, tid, &len);
		check_writable(rel, tid, rec, len, buffer, cid, snapshot, crosscheck,
					   tmfd, wc);
		if (wc->result == TM_Ok)
			return buffer;
		UnlockReleaseBuffer(buffer);
		if (wc->result != TM_BeingModified)
			break;
		if (!wait)
		{
			fail(wc, TM_WouldBlock, tmfd, tid, wc->wait_xid, InvalidCommandId);
			break;
		}
		if (!*have_tuplock)
		{
			LockTuple(rel, tid, ExclusiveLock);
			*have_tuplock = true;
		}
		XactLockTableWait(wc->wait_xid, rel, tid, XLTW_Update);
	}
	if (*have_tuplock)
		UnlockTuple(rel, tid, ExclusiveLock);
	*have_tuplock = false;
	return InvalidBuffer;
}

/* Set (or clear) the row locker of the record at tid, WAL-logged */
static void
set_row_locker(Relation rel, Buffer buffer, ItemPointer tid,
			   TransactionId xid, uint16 mode)
{
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	MinidbPageWrite w;
	Page		page;
	MinidbRecordHeader *rh;

	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, buffer, false);
	rh = minidb_record_header((char *) PageGetItem(page,
												   PageGetItemId(page, off)));
	rh->rh_locker = xid;
	rh->rh_lockmode = mode;
	minidb_write_finish(&w);
}

/* ----------------------------------------------------------------
 * INSERT
 * ----------------------------------------------------------------
 */
/*
 * Insert one row.  A speculative insertion (INSERT ... ON CONFLICT) carries
 * its token in the record header's successor field, as heap carries it in
 * t_ctid: offset SpecTokenOffsetNumber, block the token.  The field means
 * "successor" only under a moved head, so nothing else reads it there.
 */
static void
insert_row(Relation rel, TupleTableSlot *slot, CommandId cid, int options,
		   BulkInsertState bistate, uint32 spec_token)
{
	TransactionId xid = GetCurrentTransactionId();
	bool		shouldFree = true;
	HeapTuple	tuple = ExecFetchSlotHeapTuple(slot, true, &shouldFree);
	HeapTuple	heaptup;
	MinidbPageWrite w;
	Buffer		buffer;
	Page		page;
	bool		is_new;
	char	   *rec;
	uint32		len;
	OffsetNumber off;

	check_not_published(rel);
	slot->tts_tableOid = RelationGetRelid(rel);
	heaptup = prepare_tuple(rel, tuple, NULL, options);
	rec = build_record(heaptup, xid, cid, options, &len);
	if (spec_token != 0)
		ItemPointerSet(&minidb_record_header(rec)->rh_successor, spec_token,
					   SpecTokenOffsetNumber);

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	buffer = minidb_buffer_for_insert(rel, len, bistate, InvalidBuffer,
									  &is_new);
	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, buffer, is_new);
	off = minidb_page_add_record(page, rec, len);
	minidb_write_finish(&w);

	ItemPointerSet(&slot->tts_tid, BufferGetBlockNumber(buffer), off);
	tuple->t_self = slot->tts_tid;
	bistate_remember(bistate, buffer);
	UnlockReleaseBuffer(buffer);
	pgstat_count_heap_insert(rel, 1);

	pfree(rec);
	if (heaptup != tuple)
		heap_freetuple(heaptup);
	if (shouldFree)
		heap_freetuple(tuple);
}

void
minidb_tuple_insert(Relation rel, TupleTableSlot *slot, CommandId cid,
					int options, BulkInsertState bistate)
{
	insert_row(rel, slot, cid, options, bistate, 0);
}

void
minidb_tuple_insert_speculative(Relation rel, TupleTableSlot *slot,
								CommandId cid, int options,
								BulkInsertState bistate, uint32 specToken)
{
	Assert(specToken != 0);
	insert_row(rel, slot, cid, options, bistate, specToken);
}

/*
 * The end of a speculative insertion.  Confirmed: the token goes, and the
 * row is an ordinary row.  Conflicting: the row is "super-deleted" -- its
 * only version is marked aborted, so that no snapshot, not even this
 * transaction's, sees it (heap sets xmin invalid for the same effect), and
 * its TOAST values are deleted.  VACUUM removes the dead record and its
 * index entries later.
 */
void
minidb_tuple_complete_speculative(Relation rel, TupleTableSlot *slot,
								  uint32 specToken, bool succeeded)
{
	ItemPointer tid = &slot->tts_tid;
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Buffer		buffer = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
	HeapTuple	oldtup = NULL;
	MinidbPageWrite w;
	MinidbRecordHeader *rh;
	MinidbVersionHeader *vh;
	Page		page;
	uint32		len;
	char	   *rec;

	if (!succeeded)
	{
		bool		shouldFree;
		HeapTuple	tup = ExecFetchSlotHeapTuple(slot, false, &shouldFree);

		if (HeapTupleHasExternal(tup))
			oldtup = shouldFree ? tup : heap_copytuple(tup);
		else if (shouldFree)
			heap_freetuple(tup);
	}

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	rec = record_for_write(rel, buffer, tid, &len);
	rh = minidb_record_header(rec);
	if (ItemPointerGetOffsetNumberNoCheck(&rh->rh_successor) != SpecTokenOffsetNumber)
		elog(ERROR, "minidb record at (%u,%u) is not a speculative insertion",
			 ItemPointerGetBlockNumber(tid), off);

	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, buffer, false);
	rec = (char *) PageGetItem(page, PageGetItemId(page, off));
	rh = minidb_record_header(rec);
	ItemPointerSetInvalid(&rh->rh_successor);
	if (!succeeded)
	{
		vh = (MinidbVersionHeader *) (rec + minidb_record_head_offset(rec));
		vh->vh_flags = (vh->vh_flags &
						~(MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)) |
			MINIDB_V_XMIN_ABORTED;
	}
	minidb_write_finish(&w);
	UnlockReleaseBuffer(buffer);

	if (oldtup)
	{
		heap_toast_delete(rel, oldtup, true);
		heap_freetuple(oldtup);
	}
}

/*
 * Insert many rows, filling each page before logging it: one WAL record
 * per page rather than per row.
 */
void
minidb_multi_insert(Relation rel, TupleTableSlot **slots, int nslots,
					CommandId cid, int options, BulkInsertState bistate)
{
	TransactionId xid = GetCurrentTransactionId();
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "minidb multi insert",
											  ALLOCSET_DEFAULT_SIZES);
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);
	char	  **recs = palloc(sizeof(char *) * nslots);
	uint32	   *lens = palloc(sizeof(uint32) * nslots);
	Size		keep_free = RelationGetTargetPageFreeSpace(rel,
														   HEAP_DEFAULT_FILLFACTOR);
	int			i = 0;

	check_not_published(rel);
	for (int n = 0; n < nslots; n++)
	{
		HeapTuple	tuple = ExecFetchSlotHeapTuple(slots[n], true, NULL);

		slots[n]->tts_tableOid = RelationGetRelid(rel);
		recs[n] = build_record(prepare_tuple(rel, tuple, NULL, options),
							   xid, cid, options, &lens[n]);
	}
	MemoryContextSwitchTo(oldcxt);

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	while (i < nslots)
	{
		MinidbPageWrite w;
		bool		is_new;
		Buffer		buffer = minidb_buffer_for_insert(rel, lens[i], bistate,
													  InvalidBuffer, &is_new);
		Page		page;
		BlockNumber blkno = BufferGetBlockNumber(buffer);

		minidb_write_begin(&w, rel);
		page = minidb_write_page(&w, buffer, is_new);
		do
		{
			OffsetNumber off = minidb_page_add_record(page, recs[i], lens[i]);

			ItemPointerSet(&slots[i]->tts_tid, blkno, off);
			i++;
		} while (i < nslots &&
				 minidb_page_free_for_insert(page) >= MAXALIGN(lens[i]) + keep_free);
		minidb_write_finish(&w);
		bistate_remember(bistate, buffer);
		UnlockReleaseBuffer(buffer);
	}
	pgstat_count_heap_insert(rel, nslots);
	MemoryContextDelete(cxt);
}

/* ----------------------------------------------------------------
 * DELETE
 * ----------------------------------------------------------------
 */
TM_Result
minidb_tuple_delete(Relation rel, ItemPointer tid, CommandId cid,
					Snapshot snapshot, Snapshot crosscheck, bool wait,
					TM_FailureData *tmfd, bool changingPart)
{
	TransactionId xid = GetCurrentTransactionId();
	WriteCheck	wc;
	bool		have_tuplock;
	Buffer		buffer;
	MinidbVersionData marker;
	HeapTuple	oldtup = NULL;
	ItemPointerData moved;
	uint32		len;
	char	   *rec;

	check_not_published(rel);
	buffer = lock_record_for_write(rel, tid, cid, snapshot, crosscheck, wait,
								   tmfd, &wc, &have_tuplock);
	if (wc.result != TM_Ok)
		return wc.result;

	CheckForSerializableConflictIn(rel, tid, ItemPointerGetBlockNumber(tid));
	rec = record_for_write(rel, buffer, tid, &len);
	if (wc.head.vh->vh_flags & MINIDB_V_HASEXTERNAL)
		oldtup = minidb_materialize_copy(rec, &wc.head, InvalidTransactionId,
										 tid, RelationGetRelid(rel));

	minidb_marker_version(xid, cid,
						  changingPart ? MINIDB_V_MOVED : MINIDB_V_TOMBSTONE,
						  &marker);
	ItemPointerSetInvalid(&moved);
	if (changingPart)
		ItemPointerSetMovedPartitions(&moved);

	prepend_version(rel, buffer, ItemPointerGetOffsetNumber(tid), &marker,
					changingPart ? &moved : NULL,
					changingPart ? MINIDB_REC_MOVED_PART : 0);
	UnlockReleaseBuffer(buffer);

	if (oldtup)
	{
		heap_toast_delete(rel, oldtup, false);
		heap_freetuple(oldtup);
	}
	if (have_tuplock)
		UnlockTuple(rel, tid, ExclusiveLock);
	pgstat_count_heap_delete(rel);
	return TM_Ok;
}

/* ----------------------------------------------------------------
 * UPDATE
 * ----------------------------------------------------------------
 */

/* Columns of attrs whose values differ between oldtup and newtup */
static Bitmapset *
changed_columns(Relation rel, Bitmapset *attrs, HeapTuple oldtup,
				HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *changed = NULL;
	int			x = -1;

	while ((x = bms_next_member(attrs, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;
		Form_pg_attribute att;
		bool		null1;
		bool		null2;
		Datum		d1;
		Datum		d2;

		if (attnum <= 0)
			continue;			/* system columns do not change */
		att = TupleDescAttr(desc, attnum - 1);
		d1 = heap_getattr(oldtup, attnum, desc, &null1);
		d2 = heap_getattr(newtup, attnum, desc, &null2);
		if (null1 != null2 ||
			(!null1 && !datumIsEqual(d1, d2, att->attbyval, att->attlen)))
			changed = bms_add_member(changed, x);
	}
	return changed;
}

/*
 * Does the page hold versions that may be prunable by now?  pd_prune_xid
 * is the oldest xid that superseded a version on the page (as for heap);
 * until the horizon passes it, pruning cannot free anything.
 */
static bool
page_worth_pruning(Relation rel, Page page)
{
	TransactionId prune_xid = ((PageHeader) page)->pd_prune_xid;

	return TransactionIdIsValid(prune_xid) &&
		GlobalVisTestIsRemovableXid(GlobalVisTestFor(rel), prune_xid);
}

/*
 * Is there room on the page for the record at off to take v in place?  If
 * not, prune the page (its own WAL record) when that can help; pruning
 * also moves pd_prune_xid on to when pruning may pay again.
 */
static bool
make_room_in_place(Relation rel, Buffer buffer, OffsetNumber off,
				   const MinidbVersionData *v)
{
	Page		page = BufferGetPage(buffer);
	uint32		newlen;

	newlen = minidb_record_prepend_size_rec((char *) PageGetItem(page, PageGetItemId(page, off)),
											ItemIdGetLength(PageGetItemId(page, off)),
											v);
	if (newlen > MINIDB_MAX_RECORD_LEN)
		return false;
	if (minidb_page_free_for_replace(page, off, newlen) > 0)
		return true;
	if (!page_worth_pruning(rel, page))
		return false;

	minidb_prune_buffer(rel, buffer);

	newlen = minidb_record_prepend_size_rec((char *) PageGetItem(page, PageGetItemId(page, off)),
											ItemIdGetLength(PageGetItemId(page, off)),
											v);
	return minidb_page_free_for_replace(page, off, newlen) > 0;
}

typedef struct UpdateTarget
{
	Relation	rel;
	Buffer		buffer;			/* old record's, locked */
	ItemPointer otid;
	HeapTuple	newtup;			/* toasted if needed */
	TransactionId xid;
	CommandId	cid;
} UpdateTarget;

/* The moving UPDATE as one compact WAL record (see minidb_xlog.c) */
static ItemPointerData
move_compact(UpdateTarget *ut, const MinidbVersionData *marker,
			 const char *newrec, uint32 newlen)
{
	Relation	rel = ut->rel;
	OffsetNumber off = ItemPointerGetOffsetNumber(ut->otid);
	Page		page = BufferGetPage(ut->buffer);
	Buffer		newbuf = ut->buffer;
	bool		is_new = false;
	bool	   *keep;
	int			n;
	ItemPointerData newtid;

	if (minidb_page_free_for_insert(page) < MAXALIGN(newlen))
		newbuf = minidb_buffer_for_insert(rel, newlen, NULL, ut->buffer,
										  &is_new);
	keep = prune_plan_for(rel, page, off, ut->buffer, &n);
	newtid = minidb_log_move(rel, ut->buffer, off, keep, n, marker, newbuf,
							 is_new, newrec, newlen);
	if (newbuf != ut->buffer)
		UnlockReleaseBuffer(newbuf);
	if (keep)
		pfree(keep);
	return newtid;
}

/*
 * The change of an UPDATE; returns the row's TID.  In place: one prepend.
 * Otherwise the new record and the old record's "moved" marker go in one
 * WAL record.
 */
static ItemPointerData
write_update(UpdateTarget *ut, bool try_in_place, bool *in_place)
{
	Relation	rel = ut->rel;
	OffsetNumber off = ItemPointerGetOffsetNumber(ut->otid);
	MinidbVersionData v;
	MinidbVersionData marker;
	MinidbPageWrite w;
	ItemPointerData newtid = *ut->otid;
	Page		page;
	Page		target;
	Buffer		newbuf = ut->buffer;
	char	   *newrec;
	uint32		newlen;

	minidb_version_from_tuple(ut->newtup, ut->xid, ut->cid, &v);
	*in_place = try_in_place && make_room_in_place(rel, ut->buffer, off, &v);
	if (*in_place)
	{
		prepend_version(rel, ut->buffer, off, &v, NULL, 0);
		return newtid;
	}

	/* a new record, on this page if it has room, else elsewhere */
	newrec = build_record(ut->newtup, ut->xid, ut->cid, 0, &newlen);
	minidb_marker_version(ut->xid, ut->cid, MINIDB_V_MOVED, &marker);
	if (minidb_custom_wal)
	{
		newtid = move_compact(ut, &marker, newrec, newlen);
		pfree(newrec);
		return newtid;
	}
	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, ut->buffer, false);
	target = page;
	if (minidb_page_free_for_insert(page) < MAXALIGN(newlen))
	{
		bool		is_new;

		newbuf = minidb_buffer_for_insert(rel, newlen, NULL, ut->buffer,
										  &is_new);
		target = minidb_write_page(&w, newbuf, is_new);
	}
	ItemPointerSet(&newtid, BufferGetBlockNumber(newbuf),
				   minidb_page_add_record(target, newrec, newlen));

	/* end the old record with a marker pointing at the new one */
	page_prepend(rel, page, off, &marker, &newtid, 0);
	minidb_write_finish(&w);

	if (newbuf != ut->buffer)
		UnlockReleaseBuffer(newbuf);
	pfree(newrec);
	return newtid;
}

/*
 * May this update prepend in place (same TID, no index entries)?  Not if it
 * changes an indexed column, and not if AFTER UPDATE row triggers will
 * fetch the old and the new row by TID: they need a TID each.
 */
static bool
update_may_stay(Relation rel, Bitmapset *changed, Bitmapset *hot_attrs)
{
	if (bms_overlap(changed, hot_attrs))
		return false;
	if (rel->trigdesc && rel->trigdesc->trig_update_after_row)
		return false;
	return true;
}

TM_Result
minidb_tuple_update(Relation rel, ItemPointer otid, TupleTableSlot *slot,
					CommandId cid, Snapshot snapshot, Snapshot crosscheck,
					bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
					bool *update_indexes)
{
	TransactionId xid = GetCurrentTransactionId();
	Bitmapset  *hot_attrs;
	Bitmapset  *key_attrs;
	Bitmapset  *changed;
	UpdateTarget ut;
	WriteCheck	wc;
	bool		have_tuplock;
	bool		shouldFree = true;
	bool		in_place;
	HeapTuple	newtup;
	HeapTuple	oldtup;
	Buffer		buffer;
	uint32		len;
	char	   *rec;

	check_not_published(rel);
	newtup = ExecFetchSlotHeapTuple(slot, true, &shouldFree);
	newtup->t_tableOid = RelationGetRelid(rel);
	hot_attrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_ALL);
	key_attrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);

	buffer = lock_record_for_write(rel, otid, cid, snapshot, crosscheck, wait,
								   tmfd, &wc, &have_tuplock);
	if (wc.result != TM_Ok)
		return wc.result;
	CheckForSerializableConflictIn(rel, otid, ItemPointerGetBlockNumber(otid));

	rec = record_for_write(rel, buffer, otid, &len);
	oldtup = minidb_materialize_copy(rec, &wc.head, InvalidTransactionId,
									 otid, RelationGetRelid(rel));
	changed = changed_columns(rel, bms_union(hot_attrs, key_attrs), oldtup,
							  newtup);
	*lockmode = bms_overlap(changed, key_attrs) ? LockTupleExclusive :
		LockTupleNoKeyExclusive;

	/*
	 * TOAST work reads and writes other relations: never under our buffer
	 * lock.  Hold the row with a lock in the record header meanwhile, so
	 * that other writers wait as they would for our new version.
	 */
	ut.newtup = newtup;
	if (HeapTupleHasExternal(oldtup) || HeapTupleHasExternal(newtup) ||
		newtup->t_len > TOAST_TUPLE_THRESHOLD)
	{
		set_row_locker(rel, buffer, otid, xid, MINIDB_LOCK_EXCLUSIVE);
		LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		ut.newtup = prepare_tuple(rel, newtup, oldtup, 0);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	}

	ut.rel = rel;
	ut.buffer = buffer;
	ut.otid = otid;
	ut.xid = xid;
	ut.cid = cid;
	slot->tts_tid = write_update(&ut, update_may_stay(rel, changed, hot_attrs),
								 &in_place);
	UnlockReleaseBuffer(buffer);

	*update_indexes = !in_place;
	newtup->t_self = slot->tts_tid;
	if (have_tuplock)
		UnlockTuple(rel, otid, ExclusiveLock);
	pgstat_count_heap_update(rel, in_place);

	heap_freetuple(oldtup);
	if (ut.newtup != newtup)
		heap_freetuple(ut.newtup);
	if (shouldFree)
		heap_freetuple(newtup);
	bms_free(hot_attrs);
	bms_free(key_attrs);
	return TM_Ok;
}

/* ----------------------------------------------------------------
 * Row locks
 * ----------------------------------------------------------------
 */
static TM_Result
wait_or_fail(Relation rel, ItemPointer tid, TransactionId xid,
			 LockWaitPolicy wait_policy, TM_FailureData *tmfd)
{
	switch (wait_policy)
	{
		case LockWaitBlock:
			XactLockTableWait(xid, rel, tid, XLTW_Lock);
			return TM_Ok;
		case LockWaitSkip:
			tmfd->ctid = *tid;
			tmfd->xmax = xid;
			return TM_WouldBlock;
		case LockWaitError:
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not obtain lock on row in relation \"%s\"",
							RelationGetRelationName(rel))));
	}
	return TM_Ok;				/* keep compiler quiet */
}

/*
 * Is the record at tid (on a locked buffer) still the successor a "moved"
 * marker created by prior_xmin pointed at?  Its oldest version was created
 * by the same UPDATE; if VACUUM removed the row and the line pointer was
 * reused, that no longer holds (heap's priorXmax check).
 */
static bool
is_successor_of(Relation rel, Buffer buffer, ItemPointer tid,
				TransactionId prior_xmin)
{
	uint32		len;
	char	   *rec;

	rec = minidb_page_get_record(rel, buffer, ItemPointerGetOffsetNumber(tid),
								 &len);
	return rec != NULL &&
		TransactionIdEquals(minidb_record_origin_xmin(rel, tid, rec, len),
							prior_xmin);
}

/*
 * Lock the row at *tid.  With TUPLE_LOCK_FLAG_FIND_LAST_VERSION, follow the
 * row to its newest version (in place, or through "moved" markers) and
 * lock that, updating *tid: this is what EvalPlanQual relies on.
 */
TM_Result
minidb_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
				  TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
				  LockWaitPolicy wait_policy, uint8 flags,
				  TM_FailureData *tmfd)
{
	bool		follow = (flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION) != 0;
	TransactionId xid = GetCurrentTransactionId();
	TransactionId prior_xmin = InvalidTransactionId;

	tmfd->traversed = false;
	for (;;)
	{
		Buffer		buffer;
		WriteCheck	wc;
		HeapTuple	tuple;
		uint32		len;
		char	   *rec;

		if (TransactionIdIsValid(prior_xmin) &&
			ItemPointerGetBlockNumber(tid) >= RelationGetNumberOfBlocks(rel))
			return TM_Deleted;	/* the successor is gone with its page */
		buffer = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (TransactionIdIsValid(prior_xmin) &&
			!is_successor_of(rel, buffer, tid, prior_xmin))
		{
			UnlockReleaseBuffer(buffer);
			return TM_Deleted;	/* the row we followed is gone */
		}
		rec = record_for_write(rel, buffer, tid, &len);
		check_writable(rel, tid, rec, len, buffer, cid, snapshot,
					   InvalidSnapshot, tmfd, &wc);
		/*
		 * In place, a committed head the snapshot does not see is the
		 * newest version: lock it when following updates, and also under
		 * READ COMMITTED without the flag -- that is INSERT ... ON CONFLICT,
		 * which found the row through a dirty snapshot and expects the
		 * newest version locked, as heap_lock_tuple does regardless of
		 * snapshots.  Under REPEATABLE READ it stays TM_Updated (40001).
		 */
		if (wc.result == TM_Updated && ItemPointerEquals(&tmfd->ctid, tid) &&
			(follow || !IsolationUsesXactSnapshot()))
			wc.result = TM_Ok;
		if (wc.result == TM_BeingModified)
		{
			TransactionId wait_xid = wc.wait_xid;
			TM_Result	r;

			UnlockReleaseBuffer(buffer);
			r = wait_or_fail(rel, tid, wait_xid, wait_policy, tmfd);
			if (r != TM_Ok)
				return r;
			continue;
		}
		if (wc.result == TM_Updated && follow &&
			ItemPointerIndicatesMovedPartitions(&tmfd->ctid))
		{
			/* what heapam_tuple_lock says: there is no newer version here */
			UnlockReleaseBuffer(buffer);
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
		}
		if (wc.result == TM_Updated && follow &&
			ItemPointerIsValid(&tmfd->ctid))
		{
			UnlockReleaseBuffer(buffer);
			*tid = tmfd->ctid;
			prior_xmin = tmfd->xmax;
			tmfd->traversed = true;
			continue;
		}
		if (wc.result == TM_Invisible && wc.head.vh != NULL &&
			!(wc.head.vh->vh_flags & MINIDB_V_NODATA_MASK))
		{
			/* as heap does, show the caller the row (ON CONFLICT reads xmin) */
			ExecStoreHeapTuple(minidb_materialize_copy(rec, &wc.head,
													   InvalidTransactionId,
													   tid,
													   RelationGetRelid(rel)),
							   slot, true);
		}
		if (wc.result != TM_Ok)
		{
			UnlockReleaseBuffer(buffer);
			return wc.result;
		}

		if (wc.traversed)
			tmfd->traversed = true;
		if (!TransactionIdIsCurrentTransactionId(wc.head.vh->vh_xmin) &&
			!locked_by_us(minidb_record_header(rec)))
		{
			set_row_locker(rel, buffer, tid, xid, MINIDB_LOCK_EXCLUSIVE);
			rec = record_for_write(rel, buffer, tid, &len);
		}
		if (minidb_effective_head(rel, tid, rec, len, buffer, &wc.head) < 0)
			elog(ERROR, "locked minidb record has no head");
		tuple = minidb_materialize_copy(rec, &wc.head, InvalidTransactionId,
										tid, RelationGetRelid(rel));
		UnlockReleaseBuffer(buffer);
		ExecStoreHeapTuple(tuple, slot, true);
		return TM_Ok;
	}
}
