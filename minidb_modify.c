/*-------------------------------------------------------------------------
 *
 * minidb_modify.c
 *	  Writing minidb tables: INSERT, UPDATE, DELETE and row locks.
 *
 * INSERT adds a record with one version.  DELETE ends the row (a
 * tombstone: the xmax of a V3 record).  UPDATE that changes no column an
 * index depends on (the HOT-blocking set, which in PostgreSQL 15 is
 * INDEX_ATTR_BITMAP_ALL) and fits the page, after pruning if need be,
 * prepends the new version in place: same TID, no index entries, the old
 * version stored as its difference from the new one.  Any other UPDATE
 * ends the old record with a "moved" marker pointing at a new record, and
 * lets the server insert index entries, as heap does for a non-HOT update.
 *
 * A writer may prepend only once the head's xmin, if another
 * transaction's, has ended: it waits otherwise.  That keeps the versions
 * of a record in commit order, which is what lets readers take the first
 * version their snapshot sees.  Row locks live in the record (see
 * minidb_lock.c).
 *
 * Writes produce records of format V3 (minidb.record_format); a V1 or V2
 * record becomes V3 when it is written, unless that would take more room
 * than writing it in its own format (write_format).
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
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
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

#include "chain.h"
#include "minidb_page.h"
#include "btree_view.h"
#include "minidb_wal.h"
#include "minidb_hio.h"
#include "minidb_visibility.h"
#include "minidb_tuple.h"
#include "minidb_lock.h"
#include "minidb_prune.h"
#include "minidb_modify.h"
#include "minidb_ddl.h"
#include "minidb_logical.h"

/* ----------------------------------------------------------------
 * Helpers
 * ----------------------------------------------------------------
 */

/*
 * Stamp the caller's tuple as the version this transaction writes, as
 * heap_prepare_insert does, so that the slot shows xmin, cmin and xmax
 * (RETURNING xmin, triggers reading them) as heap's would.
 */
static void
stamp_version(HeapTuple tup, TransactionId xid, CommandId cid, int options)
{
	HeapTupleHeader td = tup->t_data;

	td->t_infomask &= ~HEAP_XACT_MASK;
	td->t_infomask2 &= ~HEAP2_XACT_MASK;
	td->t_infomask |= HEAP_XMAX_INVALID;
	HeapTupleHeaderSetXmin(td, xid);
	if (options & TABLE_INSERT_FROZEN)
		HeapTupleHeaderSetXminFrozen(td);
	HeapTupleHeaderSetCmin(td, cid);
	HeapTupleHeaderSetXmax(td, 0);
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
	{
		HeapTuple	toasted = heap_toast_insert_or_update(rel, tup, oldtup,
														  options);
		/* heap's limits are not ours: see minidb_toast_to_fit */
		HeapTuple	fitted = minidb_toast_to_fit(rel, toasted, options);

		if (fitted != toasted && toasted != tup)
			heap_freetuple(toasted);
		return fitted;
	}
	return tup;
}

/*
 * The most a one-version record holding v takes, in any format: the
 * version as V1 and V2 store it (minidb_version_size: its header and
 * bitmap MAXALIGNed, then the data) behind a V1/V2 record header, with a
 * V2 directory entry and its padding; a V3 record keeps less in front of
 * its data (12 bytes of fields, a 12-byte version header and the bitmap,
 * padded to MAXALIGN).  The builders never write past the size they are
 * given (an error, not an overrun), so a record is built in one pass.
 */
#define ONE_VERSION_RECORD_MAX(v) \
	(minidb_version_size(v) + MINIDB_RECORD_HDRSZ + 2 * MAXIMUM_ALIGNOF)

/*
 * Build a one-version record for tup in memory of the current context.
 * options may carry TABLE_INSERT_FROZEN (COPY FREEZE, into a table created
 * or truncated by this transaction): the version is then frozen from the
 * start, as heap freezes such tuples.  *vp (if vp) gets the version the
 * record was built from, its data and bitmap in tup: what an INSERT logs.
 */
static char *
build_record_from(HeapTuple tup, TransactionId xid, CommandId cid,
				  int options, const MinidbRecordEnd *extra, uint32 *len,
				  MinidbVersionData *vp)
{
	MinidbVersionData v;
	uint32		size;
	char	   *rec;

	minidb_version_from_tuple(tup, xid, cid, &v);
	if (options & TABLE_INSERT_FROZEN)
		v.flags |= MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN;
	if (vp)
		*vp = v;
	size = MAXALIGN(ONE_VERSION_RECORD_MAX(&v));
	if (size > minidb_max_record_len(minidb_record_format))
	{
		/* perhaps too big for a page: sized first, to refuse it as such */
		*len = minidb_record_build_ex(NULL, 0, &v, minidb_record_format,
									  extra);
		if (*len > minidb_max_record_len(minidb_record_format))
			ereport(ERROR,
					(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
					 errmsg("row is too big: size %u, maximum size %zu",
							*len,
							minidb_max_record_len(minidb_record_format))));
		size = MAXALIGN(*len);
	}
	rec = palloc(size);
	*len = minidb_record_build_ex(rec, size, &v, minidb_record_format, extra);
#ifdef MINIDB_CHECK_FAST_PATH
	if (*len != minidb_record_build_ex(NULL, 0, &v, minidb_record_format,
									   extra))
		elog(ERROR, "minidb record built in %u bytes, sized at %u", *len,
			 minidb_record_build_ex(NULL, 0, &v, minidb_record_format,
									extra));
#endif
	return rec;
}

static char *
build_record(HeapTuple tup, TransactionId xid, CommandId cid, int options,
			 const MinidbRecordEnd *extra, uint32 *len)
{
	return build_record_from(tup, xid, cid, options, extra, len, NULL);
}

StaticAssertDecl(MINIDB_SPEC_TOKEN_OFFSET == SpecTokenOffsetNumber,
				 "chain.h's speculative token offset is heap's");

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

#define KEEP_LOCAL	32

/* Let go of prune_plan_for's keep[] (in local, or palloc'd) */
static inline void
free_keep(bool *keep, const bool *local)
{
	if (keep && keep != local)
		pfree(keep);
}

/*
 * The pruning plan for the record at off before a version is prepended:
 * keep[] (*n entries: in local when they fit there, else palloc'd; see
 * free_keep), or NULL when nothing would go.  Pruning also drops versions
 * whose transaction aborted: an aborted "moved" marker must not end up
 * below a new head.  *wp (if given) gets what the WAL record of the write
 * needs from the record, read off the plan's walk (its conflict invalid
 * when nothing goes).
 */
static bool *
prune_plan_for(Relation rel, Page page, OffsetNumber off, Buffer buffer,
			   int *n, MinidbWritePlan *wp, bool local[KEEP_LOCAL])
{
	uint32		len;
	char	   *rec = minidb_image_record(page, off, &len);
	int			declared = minidb_record_nversions(rec, len);
	bool	   *keep;
	MinidbPruneResult rp;
	int			nkeep;

	/*
	 * The walk never yields more versions than the header declares.  (Counted
	 * once: Min and Max would read the header up to four times.)
	 */
	declared = Min(Max(declared, 1), MINIDB_MAX_VERSIONS);
	keep = declared <= KEEP_LOCAL ? local : palloc(sizeof(bool) * declared);
	nkeep = minidb_prune_plan(rec, len, GlobalVisTestFor(rel), buffer, keep,
							  &rp);
	*n = rp.nversions;
	if (wp)
	{
		wp->head = rp.head;
		wp->headlen = rp.headlen;
		wp->conflict = InvalidTransactionId;
	}
	if (nkeep > 0 && nkeep < *n)
	{
		/*
		 * No pgstat_update_heap_dead_tuples here: heap removes nothing when
		 * it updates or deletes a row (its HOT chain waits for a page prune
		 * or VACUUM), so its n_dead_tup still counts these versions; the
		 * counters follow heap's (PostgreSQL's isolation spec stats), and
		 * VACUUM reports the true count.
		 */
		if (wp)
			wp->conflict = rp.horizon;
		return keep;
	}
	free_keep(keep, local);
	return NULL;
}

/*
 * The format a write of v to rec (with extra) produces: V3 when
 * minidb.record_format asks for it and the rewritten record is no larger
 * than one in rec's own format (which the page's reserve covers).
 */
static int
write_format(const char *rec, uint32 len, const MinidbVersionData *v,
			 const MinidbRecordEnd *extra)
{
	int			own = minidb_record_format_of(rec);
	int			format = minidb_record_write_format(rec);

	if (format == own)
		return own;
	if (minidb_record_prepend_size_ex(rec, len, v, format, extra) >
		minidb_record_prepend_size_ex(rec, len, v, own, extra))
		return own;
	return format;
}

/*
 * Prepend version v to the record at off on a page image being changed
 * (minidb_write_page), pruning the record first.
 */
static void
page_prepend(Relation rel, Page page, OffsetNumber off,
			 const MinidbVersionData *v, int format,
			 const MinidbRecordEnd *extra)
{
	int			n;
	bool		local[KEEP_LOCAL];
	bool	   *keep = prune_plan_for(rel, page, off, InvalidBuffer, &n, NULL,
									  local);
	uint32		len;
	char	   *rec;

	rec = minidb_prepend_build(page, off, keep, v, format, extra, &len);
	minidb_prepend_place(page, off, rec, len, v->xmin);
	pfree(rec);
	free_keep(keep, local);
}

/*
 * Prepend version v to the record at off of an exclusively locked buffer,
 * WAL-logged: as one compact record when the library is preloaded (see
 * minidb_xlog.c), as generic WAL otherwise.  The caller made sure it fits.
 */
static void
prepend_version(Relation rel, Buffer buffer, OffsetNumber off,
				const MinidbVersionData *v, int format,
				const MinidbRecordEnd *extra)
{
	MinidbPageWrite w;

	if (minidb_custom_wal)
	{
		int			n;
		MinidbWritePlan wp;
		bool		local[KEEP_LOCAL];
		bool	   *keep = prune_plan_for(rel, BufferGetPage(buffer), off,
										  buffer, &n, &wp, local);

		minidb_log_prepend(rel, buffer, off, keep, n, &wp, v, format, extra);
		free_keep(keep, local);
		return;
	}
	minidb_page_record_validate(rel, buffer, off);
	minidb_write_begin(&w, rel);
	page_prepend(rel, minidb_write_page(&w, buffer, false), off, v, format,
				 extra);
	minidb_write_finish(&w);
}

/*
 * The marker that ends the row of rec (being written by xid's command cid,
 * a change in mode) for a record of format: in V3, its xmax keeps the
 * row's other lockers beside xid (a multixact), and the cid the ended
 * version stores is heap's: the cmax, or a combo command id when the
 * version is this transaction's too.  head is the version it ends.
 */
static void
end_marker(const char *rec, const MinidbVersionHeader *head, int format,
		   TransactionId xid, CommandId cid, LockTupleMode mode,
		   uint16 flag, MinidbVersionData *marker)
{
	minidb_marker_version(xid, cid, flag, marker);
	if (format == MINIDB_FORMAT_V3)
	{
		MinidbLockers lk;
		bool		is_multi;
		bool		combo;

		minidb_get_lockers(rec, &lk);
		marker->xmin = minidb_end_xmax(&lk, xid, mode, &is_multi);
		if (is_multi)
			marker->flags |= MINIDB_V_XMIN_MULTI;
		marker->cid = minidb_marker_cid(head, cid, &combo);
		if (combo)
			marker->flags |= MINIDB_V_COMBOCID;
	}
}

/* ----------------------------------------------------------------
 * May this transaction write the record?
 * ----------------------------------------------------------------
 */

/*
 * The mode an UPDATE or DELETE locks the row in, decided once the version
 * it supersedes is known: an UPDATE of a key column is exclusive, others
 * are no-key (heap's *lockmode).  NULL: DELETE, always exclusive.
 */
typedef LockTupleMode (*WriteModeFn) (void *arg, Relation rel, char *rec,
									  const MinidbVersionRef *target);

/*
 * Lock the record at tid for writing: on return the buffer is pinned and
 * exclusively locked and rc->result is TM_Ok, or a failure with the buffer
 * released (tmfd filled in).  Waits for the running writer of the head and
 * for lockers whose mode conflicts, taking the heavyweight tuple lock first
 * for a fair queue as heap does, unless !wait.  *mode is the mode the write
 * takes.  The tuple lock can go once the buffer is locked: a waiter queued
 * behind it will find our change when it gets the buffer.  *recp (if
 * recp) is the record, on TM_Ok, as it lies on the locked page.
 */
static Buffer
lock_record_for_write(Relation rel, ItemPointer tid, CommandId cid,
					  Snapshot snapshot, Snapshot crosscheck, bool wait,
					  WriteModeFn mode_fn, void *mode_arg, LockTupleMode *mode,
					  TM_FailureData *tmfd, MinidbRowCheck *rc, char **recp)
{
	MinidbRowRequest req;
	LockTupleMode tuplock_mode = *mode;
	bool		tuplock = false;
	Buffer		buffer = InvalidBuffer;

	req.cid = cid;
	req.snapshot = snapshot;
	req.crosscheck = crosscheck;
	req.mode = *mode;
	req.locking = false;
	req.named_newest = false;
	req.prior_xmin = InvalidTransactionId;
	for (;;)
	{
		MinidbWaitFor wf;
		bool		checked;
		uint32		len;
		char	   *rec;

		buffer = minidb_read_buffer_checked(rel,
											ItemPointerGetBlockNumber(tid),
											&checked);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		rec = checked ?
			minidb_page_checked_record_at(rel, buffer, tid, &len) :
			minidb_page_record_at(rel, buffer, tid, &len);
		minidb_check_row(rel, tid, rec, len, buffer, &req, tmfd, rc);
		if (rc->result == TM_Ok && mode_fn)
			*mode = mode_fn(mode_arg, rel, rec, &rc->target);
		minidb_check_lockers(rec, *mode, rc);
		if (rc->result == TM_Ok)
		{
			if (recp)
				*recp = rec;
			break;
		}
		UnlockReleaseBuffer(buffer);
		buffer = InvalidBuffer;
		if (rc->result != TM_BeingModified)
			break;
		wf = rc->wait;
		wf.mode = *mode;
		if (!wait)
		{
			tmfd->ctid = *tid;
			tmfd->xmax = wf.xid;
			tmfd->cmax = InvalidCommandId;
			rc->result = TM_WouldBlock;
			break;
		}
		/* the tuple lock's queue, unless we are a locker ourselves */
		if (!tuplock)
			tuplock_mode = *mode;
		if (rc->our_mode < 0)
			minidb_acquire_tuplock(rel, tid, tuplock_mode, LockWaitBlock,
								   &tuplock);
		minidb_wait_for(rel, tid, &wf, LockWaitBlock, XLTW_Update);
	}
	minidb_release_tuplock(rel, tid, tuplock_mode, &tuplock);

	/*
	 * The write puts our xid into the record's xmax (the end of the row, or
	 * the updater beside its lockers), where another backend's lock may add
	 * it to a multixact: as heap_update and heap_delete do, say first that
	 * this transaction may be a member of one (see minidb_add_row_lock).
	 */
	if (rc->result == TM_Ok)
		MultiXactIdSetOldestMember();
	return buffer;
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
	MinidbReserveChange rc;
	MinidbVersionData v;		/* the record's version, for its WAL */
	Buffer		buffer;
	Page		page;
	bool		is_new;
	char	   *rec;
	uint32		len;
	OffsetNumber off;

	minidb_logical_check_writable(rel);
	slot->tts_tableOid = RelationGetRelid(rel);
	stamp_version(tuple, xid, cid, options);
	heaptup = prepare_tuple(rel, tuple, NULL, options);
	if (spec_token != 0)
	{
		MinidbRecordEnd extra;
		ItemPointerData token;

		memset(&extra, 0, sizeof(extra));
		ItemPointerSet(&token, spec_token, SpecTokenOffsetNumber);
		extra.successor = &token;
		extra.spec = true;
		rec = build_record_from(heaptup, xid, cid, options, &extra, &len,
								&v);
	}
	else
		rec = build_record_from(heaptup, xid, cid, options, NULL, &len, &v);

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	buffer = minidb_buffer_for_insert(rel, rec, len, bistate, InvalidBuffer,
									  &is_new, &rc);
	if (minidb_custom_wal)
		off = minidb_log_insert(rel, buffer, is_new, rec, len, &v);
	else
	{
		minidb_write_begin(&w, rel);
		page = minidb_write_page(&w, buffer, is_new);
		off = minidb_page_add_record(page, rec, len);
		minidb_write_finish(&w);
	}
	minidb_reserve_change_end(&rc, rel, buffer, off);

	ItemPointerSet(&slot->tts_tid, BufferGetBlockNumber(buffer), off);
	tuple->t_self = slot->tts_tid;
	bistate_remember(bistate, buffer);
	UnlockReleaseBuffer(buffer);
	pgstat_count_heap_insert(rel, 1);
	/* a speculative insertion is logged for decoding once confirmed */
	if (spec_token == 0)
		minidb_logical_log_insert(rel, &heaptup, 1);

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
	HeapTuple	confirmed = NULL;
	MinidbPageWrite w;
	MinidbVersionHeader *vh;
	Page		page;
	uint32		len;
	char	   *rec;
	MinidbVersionWalk walk;
	MinidbVersionRef head;

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
	rec = minidb_page_record_at(rel, buffer, tid, &len);
	if (minidb_record_spec_token(rec) == 0)
		elog(ERROR, "minidb record at (%u,%u) is not a speculative insertion",
			 ItemPointerGetBlockNumber(tid), off);
	/* where its version is, checked (the record may be damaged) */
	minidb_walk_begin(&walk, rel, tid, rec, len);
	if (!minidb_walk_next(&walk, &head))
		elog(ERROR, "speculative minidb record at (%u,%u) has no version",
			 ItemPointerGetBlockNumber(tid), off);
	/* the row as stored, for logical decoding */
	if (succeeded && minidb_logical_wanted(rel))
		confirmed = minidb_materialize_copy(rec, &head, InvalidTransactionId,
											tid, RelationGetRelid(rel));

	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, buffer, false);
	rec = minidb_image_record(page, off, &len);
	minidb_record_clear_spec(rec, len);
	if (!succeeded)
	{
		vh = (MinidbVersionHeader *) (rec + head.offset);
		vh->vh_flags = (vh->vh_flags &
						~(MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)) |
			MINIDB_V_XMIN_ABORTED;
	}
	minidb_write_finish(&w);
	UnlockReleaseBuffer(buffer);

	if (confirmed)
	{
		minidb_logical_log_insert(rel, &confirmed, 1);
		heap_freetuple(confirmed);
	}
	if (oldtup)
	{
		heap_toast_delete(rel, oldtup, true);
		heap_freetuple(oldtup);
	}
	/* as heap_abort_speculative: count the deletion, as the insertion was */
	if (!succeeded)
		pgstat_count_heap_delete(rel);
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
	HeapTuple  *stored = palloc(sizeof(HeapTuple) * nslots);
	Size		keep_free = RelationGetTargetPageFreeSpace(rel,
														   HEAP_DEFAULT_FILLFACTOR);
	int			i = 0;

	minidb_logical_check_writable(rel);
	for (int n = 0; n < nslots; n++)
	{
		HeapTuple	tuple = ExecFetchSlotHeapTuple(slots[n], true, NULL);

		slots[n]->tts_tableOid = RelationGetRelid(rel);
		stamp_version(tuple, xid, cid, options);
		stored[n] = prepare_tuple(rel, tuple, NULL, options);
		recs[n] = build_record(stored[n], xid, cid, options, NULL, &lens[n]);
	}
	MemoryContextSwitchTo(oldcxt);

	CheckForSerializableConflictIn(rel, NULL, InvalidBlockNumber);
	while (i < nslots)
	{
		MinidbPageWrite w;
		bool		is_new;
		Buffer		buffer = minidb_buffer_for_insert(rel, recs[i], lens[i],
													  bistate, InvalidBuffer,
													  &is_new, NULL);
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
				 minidb_page_room_for_insert(page,
											 minidb_page_record_room(recs[i],
																	 lens[i]) +
											 keep_free));
		minidb_write_finish(&w);
		bistate_remember(bistate, buffer);
		UnlockReleaseBuffer(buffer);
	}
	pgstat_count_heap_insert(rel, nslots);
	minidb_logical_log_insert(rel, stored, nslots);
	MemoryContextDelete(cxt);
}

/* ----------------------------------------------------------------
 * DELETE
 * ----------------------------------------------------------------
 */
TM_Result
minidb_tuple_delete(Relation rel, ItemPointer ptid, CommandId cid,
					Snapshot snapshot, Snapshot crosscheck, bool wait,
					TM_FailureData *tmfd, bool changingPart)
{
	ItemPointerData plain = minidb_tid_plain(ptid);
	ItemPointer tid = &plain;
	TransactionId xid = GetCurrentTransactionId();
	LockTupleMode mode = LockTupleExclusive;
	MinidbRowCheck rc;
	Buffer		buffer;
	MinidbVersionData marker;
	MinidbRecordEnd extra;
	HeapTuple	oldtup = NULL;
	bool		has_external;
	ItemPointerData moved;
	uint32		len;
	char	   *rec;
	int			format;

	minidb_logical_check_writable(rel);
	buffer = lock_record_for_write(rel, tid, cid, snapshot, crosscheck, wait,
								   NULL, NULL, &mode, tmfd, &rc, NULL);
	if (rc.result != TM_Ok)
		return rc.result;

	minidb_ssi_check_in(rel, tid, rc.target.vh->vh_xmin);
	rec = minidb_page_record_at(rel, buffer, tid, &len);
	has_external = (rc.target.vh->vh_flags & MINIDB_V_HASEXTERNAL) != 0;
	if (has_external || minidb_logical_wanted(rel))
		oldtup = minidb_materialize_copy(rec, &rc.target, InvalidTransactionId,
										 tid, RelationGetRelid(rel));

	/* a move to another partition is a delete here: it locks like one */
	memset(&extra, 0, sizeof(extra));
	if (changingPart)
	{
		ItemPointerSetMovedPartitions(&moved);
		extra.successor = &moved;
		extra.moved_part = true;
	}
	minidb_marker_version(xid, cid,
						  changingPart ? MINIDB_V_MOVED : MINIDB_V_TOMBSTONE,
						  &marker);
	format = write_format(rec, len, &marker, &extra);
	end_marker(rec, rc.head.vh, format, xid, cid, LockTupleExclusive,
			   changingPart ? MINIDB_V_MOVED : MINIDB_V_TOMBSTONE, &marker);
	if (changingPart)
		marker.flags |= MINIDB_V_KEYS_UPDATED;

	prepend_version(rel, buffer, ItemPointerGetOffsetNumber(tid), &marker,
					format, &extra);
	UnlockReleaseBuffer(buffer);

	minidb_logical_log_delete(rel, oldtup);
	if (has_external)
		heap_toast_delete(rel, oldtup, false);
	if (oldtup)
		heap_freetuple(oldtup);
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
 * Is there room on the page for the record at off to take v in place?  If
 * not, prune the page (its own WAL record) when that can help; pruning
 * also moves pd_prune_xid on to when pruning may pay again.
 */
static bool
make_room_in_place(Relation rel, Buffer buffer, OffsetNumber off,
				   const MinidbVersionData *v, const MinidbRecordEnd *extra,
				   int *format)
{
	Page		page = BufferGetPage(buffer);
	uint32		newlen;
	uint32		len;
	char	   *rec = minidb_page_record(rel, buffer, off, &len);

	*format = write_format(rec, len, v, extra);
	newlen = minidb_record_prepend_size_ex(rec, len, v, *format, extra);
	if (newlen > minidb_max_record_len(*format))
		return false;
	/* (the new record is not built yet: the most its format keeps) */
	if (minidb_page_room_for_replace(page, off, newlen,
									 minidb_format_reserve(*format)))
		return true;
	if (!minidb_page_worth_pruning(rel, page))
		return false;

	minidb_prune_buffer(rel, buffer);

	rec = minidb_page_record(rel, buffer, off, &len);
	*format = write_format(rec, len, v, extra);
	newlen = minidb_record_prepend_size_ex(rec, len, v, *format, extra);
	return minidb_page_room_for_replace(page, off, newlen,
										minidb_format_reserve(*format));
}

/*
 * The in-place UPDATE's common case, with the compact WAL: the record's
 * pruning planned and the new record built first, and placed if, as built,
 * it fits; so the write is sized once, by building it.  False, with
 * nothing changed, when it does not fit: make_room_in_place then prunes
 * the page if that can help.
 */
static bool
prepend_if_it_fits(Relation rel, Buffer buffer, OffsetNumber off,
				   const MinidbVersionData *v, const MinidbRecordEnd *extra)
{
	Page		page = BufferGetPage(buffer);
	uint32		len;
	char	   *rec = minidb_page_record(rel, buffer, off, &len);
	int			format = write_format(rec, len, v, extra);
	int			n;
	MinidbWritePlan wp;
	bool		local[KEEP_LOCAL];
	bool	   *keep = prune_plan_for(rel, page, off, buffer, &n, &wp, local);
	uint32		newlen;
	char	   *newrec = minidb_prepend_build(page, off, keep, v, format, extra,
											  &newlen);
	MinidbReserveChange rc;
	bool		fits = newlen <= minidb_max_record_len(format) &&
		minidb_buffer_room_for_replace(rel, buffer, off, newlen,
									   minidb_record_reserve_quick(newrec,
																   newlen),
									   &rc);

	if (fits)
	{
		minidb_log_prepend_built(rel, buffer, off, keep, n, &wp, v, format,
								 extra, newrec, newlen);
		minidb_reserve_change_end(&rc, rel, buffer, off);
	}
	else
		pfree(newrec);
	free_keep(keep, local);
	return fits;
}

typedef struct UpdateTarget
{
	Relation	rel;
	Buffer		buffer;			/* old record's, locked */
	ItemPointer otid;
	HeapTuple	newtup;			/* toasted if needed */
	TransactionId xid;
	CommandId	cid;
	bool		keys_updated;	/* the UPDATE counts as a key update: it
								 * changes a key column, or we hold the row
								 * FOR UPDATE */
	const MinidbVersionHeader *head;	/* the version it supersedes */
	MinidbLockers lockers;		/* the row's, read under the buffer lock;
								 * write_update leaves those the new version
								 * keeps: heap's xmax of the new tuple */
} UpdateTarget;

/* The moving UPDATE as one compact WAL record (see minidb_xlog.c) */
static ItemPointerData
move_compact(UpdateTarget *ut, const MinidbVersionData *marker, int format,
			 const char *newrec, uint32 newlen)
{
	Relation	rel = ut->rel;
	OffsetNumber off = ItemPointerGetOffsetNumber(ut->otid);
	Page		page = BufferGetPage(ut->buffer);
	Buffer		newbuf = ut->buffer;
	bool		is_new = false;
	bool		local[KEEP_LOCAL];
	bool	   *keep;
	int			n;
	MinidbWritePlan wp;
	ItemPointerData newtid;

	if (!minidb_page_room_for_insert(page,
									 minidb_page_record_room(newrec, newlen)))
		newbuf = minidb_buffer_for_insert(rel, newrec, newlen, NULL,
										  ut->buffer, &is_new, NULL);
	keep = prune_plan_for(rel, page, off, ut->buffer, &n, &wp, local);
	newtid = minidb_log_move(rel, ut->buffer, off, keep, n, wp.conflict,
							 marker, format, newbuf, is_new, newrec, newlen);
	if (newbuf != ut->buffer)
		UnlockReleaseBuffer(newbuf);
	free_keep(keep, local);
	return newtid;
}

/*
 * What an UPDATE in place changes beyond the new version: when the row's
 * lockers all ended, they go, as heap_update gives the new tuple no xmax
 * then (and the old one's while any locker remains).  NULL: nothing.
 */
static const MinidbRecordEnd *
in_place_end(const UpdateTarget *ut, MinidbRecordEnd *extra)
{
	if (!minidb_lockers_ended(&ut->lockers))
		return NULL;
	memset(extra, 0, sizeof(*extra));
	extra->drop_lockers = true;
	return extra;
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
	MinidbRecordEnd extra;
	MinidbLockers lk;
	MinidbPageWrite w;
	ItemPointerData newtid = *ut->otid;
	Page		page;
	Page		target;
	Buffer		newbuf = ut->buffer;
	char	   *newrec;
	char	   *oldrec;
	uint32		newlen;
	uint32		oldlen;
	int			format;

	minidb_version_from_tuple(ut->newtup, ut->xid, ut->cid, &v);
	if (ut->keys_updated)
		v.flags |= MINIDB_V_KEYS_UPDATED;
	if (try_in_place)
	{
		const MinidbRecordEnd *ex = in_place_end(ut, &extra);

		if (minidb_custom_wal &&
			prepend_if_it_fits(rel, ut->buffer, off, &v, ex))
			*in_place = true;
		else
		{
			*in_place = make_room_in_place(rel, ut->buffer, off, &v, ex,
										   &format);
			if (*in_place)
				prepend_version(rel, ut->buffer, off, &v, format, ex);
		}
		if (*in_place)
		{
			if (ex != NULL)
				memset(&ut->lockers, 0, sizeof(ut->lockers));
			return newtid;
		}
	}
	*in_place = false;

	/*
	 * A new record, on this page if it has room, else elsewhere.  It takes
	 * the row's lockers along (locks that let a no-key UPDATE through, and
	 * our own), as heap gives them to the new tuple version: a DELETE of the
	 * moved row must still wait for a FOR KEY SHARE lock taken before.
	 */
	oldrec = minidb_page_checked_record_at(rel, ut->buffer, ut->otid, &oldlen);
	minidb_get_lockers(oldrec, &lk);
	memset(&extra, 0, sizeof(extra));
	if (minidb_lockers_live(&lk))
	{
		extra.lockers = &lk;
		ut->lockers = lk;
	}
	else
		memset(&ut->lockers, 0, sizeof(ut->lockers));
	newrec = build_record(ut->newtup, ut->xid, ut->cid, 0, &extra, &newlen);

	/* the old record's end: where the row went is patched in below */
	memset(&extra, 0, sizeof(extra));
	extra.successor = &newtid;
	minidb_marker_version(ut->xid, ut->cid, MINIDB_V_MOVED, &marker);
	format = write_format(oldrec, oldlen, &marker, &extra);
	end_marker(oldrec, ut->head, format, ut->xid, ut->cid,
			   ut->keys_updated ? LockTupleExclusive : LockTupleNoKeyExclusive,
			   MINIDB_V_MOVED, &marker);
	if (ut->keys_updated)
		marker.flags |= MINIDB_V_KEYS_UPDATED;
	if (minidb_custom_wal)
	{
		newtid = move_compact(ut, &marker, format, newrec, newlen);
		pfree(newrec);
		return newtid;
	}
	minidb_page_record_validate(rel, ut->buffer, off);
	minidb_write_begin(&w, rel);
	page = minidb_write_page(&w, ut->buffer, false);
	target = page;
	if (!minidb_page_room_for_insert(page,
									 minidb_page_record_room(newrec, newlen)))
	{
		bool		is_new;

		newbuf = minidb_buffer_for_insert(rel, newrec, newlen, NULL,
										  ut->buffer, &is_new, NULL);
		target = minidb_write_page(&w, newbuf, is_new);
	}
	ItemPointerSet(&newtid, BufferGetBlockNumber(newbuf),
				   minidb_page_add_record(target, newrec, newlen));

	/* end the old record with a marker pointing at the new one */
	page_prepend(rel, page, off, &marker, format, &extra);
	minidb_write_finish(&w);

	if (newbuf != ut->buffer)
		UnlockReleaseBuffer(newbuf);
	pfree(newrec);
	return newtid;
}

/* What an UPDATE learns from the version it supersedes */
typedef struct UpdateOld
{
	HeapTuple	newtup;
	Bitmapset  *blocking_attrs;	/* columns whose change moves the row */
	Bitmapset  *summarized_attrs;	/* columns only summarizing indexes use */
	Bitmapset  *key_attrs;
	Bitmapset  *fk_attrs;		/* the foreign keys', when fk_checks */
	Bitmapset  *checked_attrs;	/* all four together */
	bool		own_tids;		/* triggers_need_own_tids */
	bool		fk_checks;		/* foreign-key checks of new rows */
	HeapTuple	oldtup;			/* that version, materialized */
	Bitmapset  *changed;		/* which of checked_attrs the UPDATE changes */
} UpdateOld;

/*
 * Will AFTER row triggers fetch this table's rows by TID later, so that an
 * UPDATE must give the new row a TID of its own?  An AFTER UPDATE trigger
 * fetches the old and the new row, which need a TID each, and an AFTER
 * INSERT trigger (deferred ones fire at commit) must find the row as it was
 * inserted, not as a later UPDATE left it in place.  (Transition tables
 * need no such help: the old row is read right after the update, while the
 * active snapshot still sees it.)
 *
 * The foreign-key triggers are the exception, for the UPDATEs that queue
 * none of their events.  Those of a referenced table are queued only for
 * an UPDATE that changes the key (RI_FKey_pk_upd_check_required), and one
 * that stays in place changes no indexed column, keys included.  Those of
 * a referencing table (the check of the new row) are set in *fk_checks:
 * see fk_checks_queue_nothing for when an UPDATE may stay all the same.
 */
static bool
triggers_need_own_tids(Relation rel, bool *fk_checks)
{
	TriggerDesc *trigdesc = rel->trigdesc;

	*fk_checks = false;
	if (trigdesc == NULL ||
		!(trigdesc->trig_update_after_row || trigdesc->trig_insert_after_row))
		return false;
	for (int i = 0; i < trigdesc->numtriggers; i++)
	{
		Trigger    *trig = &trigdesc->triggers[i];

		if (!TRIGGER_FOR_ROW(trig->tgtype) || !TRIGGER_FOR_AFTER(trig->tgtype) ||
			!(TRIGGER_FOR_UPDATE(trig->tgtype) ||
			  TRIGGER_FOR_INSERT(trig->tgtype)))
			continue;
		if (trig->tgisinternal)
		{
			int			ri = RI_FKey_trigger_type(trig->tgfoid);

			if (ri == RI_TRIGGER_PK)
				continue;
			if (ri == RI_TRIGGER_FK)
			{
				*fk_checks = true;
				continue;
			}
		}
		return true;
	}
	return false;
}

/* The columns of the foreign keys of rel (as referencing table) */
static Bitmapset *
fk_columns(Relation rel)
{
	Bitmapset  *cols = NULL;
	ListCell   *lc;

	foreach(lc, RelationGetFKeyList(rel))
	{
		ForeignKeyCacheInfo *fk = lfirst_node(ForeignKeyCacheInfo, lc);

		for (int i = 0; i < fk->nkeys; i++)
			cols = bms_add_member(cols, fk->conkey[i] -
								  FirstLowInvalidHeapAttributeNumber);
	}
	return cols;
}

/*
 * Does newtup hold some but not all of a foreign key's columns?  MATCH
 * FULL refuses such a row, and RI_FKey_fk_upd_check_required queues its
 * check whatever changed (a NOT VALID constraint lets old rows keep them).
 */
static bool
fk_partly_null(Relation rel, HeapTuple newtup)
{
	ListCell   *lc;

	foreach(lc, RelationGetFKeyList(rel))
	{
		ForeignKeyCacheInfo *fk = lfirst_node(ForeignKeyCacheInfo, lc);
		int			nulls = 0;

		for (int i = 0; i < fk->nkeys; i++)
			if (heap_attisnull(newtup, fk->conkey[i], RelationGetDescr(rel)))
				nulls++;
		if (nulls > 0 && nulls < fk->nkeys)
			return true;
	}
	return false;
}

/*
 * May an UPDATE of a referencing table stay in place?  Only when it queues
 * no foreign-key check, so that no check ever fetches the row by its TID
 * (it would get the version its snapshot sees, maybe the old one, and read
 * an in-place new version as dead: RI_FKey_check's SnapshotSelf test).
 * RI_FKey_fk_upd_check_required queues none when the new row's key is
 * whole or all NULL, the superseded version was not written by this
 * transaction (else the check goes in whatever changed: this transaction's
 * INSERT check would no longer see its row), and the key did not change.
 * The same conditions leave this transaction's own INSERT checks alone:
 * a row this transaction wrote always moves.
 */
static bool
fk_checks_queue_nothing(Relation rel, const UpdateOld *uo,
						TransactionId old_xmin)
{
	return !TransactionIdIsCurrentTransactionId(old_xmin) &&
		!bms_overlap(uo->changed, uo->fk_attrs) &&
		!fk_partly_null(rel, uo->newtup);
}

/*
 * May this update prepend in place (same TID, no new index entries but the
 * summarizing indexes', see MINIDB_UPDATE_INDEXES)?  Not if it changes a
 * column that blocks that (an indexed column; from 16 on, one a summarizing
 * index alone uses does not), nor when triggers need TIDs of their own.
 */
static bool
update_may_stay(Relation rel, const UpdateOld *uo, TransactionId old_xmin)
{
	if (bms_overlap(uo->changed, uo->blocking_attrs) || uo->own_tids)
		return false;
	return !uo->fk_checks || fk_checks_queue_nothing(rel, uo, old_xmin);
}

static LockTupleMode
update_mode(void *arg, Relation rel, char *rec, const MinidbVersionRef *target)
{
	UpdateOld  *uo = (UpdateOld *) arg;
	ItemPointerData tid = uo->newtup->t_self;

	if (uo->oldtup)
		heap_freetuple(uo->oldtup);
	bms_free(uo->changed);
	uo->oldtup = minidb_materialize_copy(rec, target, InvalidTransactionId,
										 &tid, RelationGetRelid(rel));
	uo->changed = changed_columns(rel, uo->checked_attrs, uo->oldtup,
								  uo->newtup);
	return bms_overlap(uo->changed, uo->key_attrs) ? LockTupleExclusive :
		LockTupleNoKeyExclusive;
}

TM_Result
minidb_tuple_update(Relation rel, ItemPointer potid, TupleTableSlot *slot,
					CommandId cid, Snapshot snapshot, Snapshot crosscheck,
					bool wait, TM_FailureData *tmfd, LockTupleMode *lockmode,
					MinidbUpdateIndexes *update_indexes)
{
	ItemPointerData plain = minidb_tid_plain(potid);
	ItemPointer otid = &plain;
	TransactionId xid = GetCurrentTransactionId();
	UpdateOld	uo;
	UpdateTarget ut;
	MinidbRowCheck rc;
	MinidbVersionHeader head;
	uint32		oldlen;
	char	   *oldrec;
	bool		shouldFree = true;
	bool		in_place;
	HeapTuple	newtup;
	Buffer		buffer;
	TransactionId old_xmin;

	minidb_logical_check_writable(rel);
	newtup = ExecFetchSlotHeapTuple(slot, true, &shouldFree);
	newtup->t_tableOid = RelationGetRelid(rel);
	stamp_version(newtup, xid, cid, 0);
	newtup->t_self = *otid;
	uo.newtup = newtup;
	uo.blocking_attrs = minidb_stay_blocking_attrs(rel);
	uo.summarized_attrs = minidb_summarized_attrs(rel);
	uo.key_attrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_KEY);
	uo.checked_attrs = bms_union(uo.blocking_attrs, uo.key_attrs);
	uo.checked_attrs = bms_add_members(uo.checked_attrs, uo.summarized_attrs);
	uo.own_tids = triggers_need_own_tids(rel, &uo.fk_checks);
	uo.fk_attrs = uo.fk_checks ? fk_columns(rel) : NULL;
	uo.checked_attrs = bms_add_members(uo.checked_attrs, uo.fk_attrs);
	uo.oldtup = NULL;
	uo.changed = NULL;

	*lockmode = LockTupleNoKeyExclusive;
	buffer = lock_record_for_write(rel, otid, cid, snapshot, crosscheck, wait,
								   update_mode, &uo, lockmode, tmfd, &rc,
								   &oldrec);
	if (rc.result != TM_Ok)
	{
		if (uo.oldtup)
			heap_freetuple(uo.oldtup);
		if (shouldFree)
			heap_freetuple(newtup);
		return rc.result;
	}
	minidb_ssi_check_in(rel, otid, rc.target.vh->vh_xmin);
	old_xmin = rc.target.vh->vh_xmin;

	/*
	 * The superseded version's header, copied while rc.head still points at
	 * it: the row lock below may grow the record, which moves it on the
	 * page, and while the TOAST work runs unlocked other writers may add
	 * lockers or prune the page.
	 */
	head = *rc.head.vh;

	/*
	 * TOAST work reads and writes other relations: never under our buffer
	 * lock.  Hold the row with a lock of the update's mode meanwhile (other
	 * lockers stay), so that other writers wait as they would for our new
	 * version.
	 */
	ut.newtup = newtup;
	if (HeapTupleHasExternal(uo.oldtup) || HeapTupleHasExternal(newtup) ||
		newtup->t_len > TOAST_TUPLE_THRESHOLD)
	{
		if (rc.our_mode < (int) *lockmode)
			minidb_add_row_lock(rel, buffer, otid, *lockmode);
		LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
		ut.newtup = prepare_tuple(rel, newtup, uo.oldtup, 0);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		/* others may have added their locks meanwhile */
		oldrec = minidb_page_checked_record_at(rel, buffer, otid, &oldlen);
	}

	ut.rel = rel;
	ut.buffer = buffer;
	ut.otid = otid;
	ut.xid = xid;
	ut.cid = cid;
	/*
	 * Heap records an UPDATE by a transaction that holds the row FOR UPDATE
	 * as a key update (compute_new_xmax_infomask keeps the stronger of the
	 * two modes), so that FOR KEY SHARE conflicts with it as with a DELETE.
	 */
	ut.keys_updated = (*lockmode == LockTupleExclusive ||
					   rc.our_mode >= (int) LockTupleExclusive);
	minidb_get_lockers(oldrec, &ut.lockers);
	ut.head = &head;
	slot->tts_tid = write_update(&ut,
								 update_may_stay(rel, &uo, old_xmin),
								 &in_place);
	UnlockReleaseBuffer(buffer);

	*update_indexes =
		MINIDB_UPDATE_INDEXES(in_place,
							  bms_overlap(uo.changed, uo.summarized_attrs));
	newtup->t_self = slot->tts_tid;
	minidb_tuple_set_lockers(newtup->t_data, &ut.lockers);
	minidb_count_update(rel, in_place,
						ItemPointerGetBlockNumber(&slot->tts_tid) !=
						ItemPointerGetBlockNumber(otid));
	minidb_logical_log_update(rel, uo.oldtup, newtup, ut.newtup);

	heap_freetuple(uo.oldtup);
	if (ut.newtup != newtup)
		heap_freetuple(ut.newtup);
	if (shouldFree)
		heap_freetuple(newtup);
	bms_free(uo.blocking_attrs);
	bms_free(uo.summarized_attrs);
	bms_free(uo.key_attrs);
	bms_free(uo.fk_attrs);
	bms_free(uo.checked_attrs);
	bms_free(uo.changed);
	return TM_Ok;
}
