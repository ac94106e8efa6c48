/*-------------------------------------------------------------------------
 *
 * minidb_hio.c
 *	  Finding room for a new record (heap's hio.c).
 *
 * A candidate page comes from the insert's bulk state, the relation's
 * target block or the free space map; one short of room is pruned when
 * that would give back enough (minidb_prune.c), else the relation grows.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/hio.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "minidb_page.h"
#include "minidb_hio.h"
#include "minidb_prune.h"

/*
 * Opportunistic pruning for inserts: a locked candidate page short of
 * "needed" bytes is pruned (one WAL-logged change) when pruning would
 * give back enough.  Asking first costs a walk over the page's records
 * (hint bits make it cheap); pruning for nothing would cost a WAL record.
 * A page no version of which was superseded, or not long enough ago
 * (minidb_page_worth_pruning, the UPDATE's test), is not asked: an
 * insert-only page would be walked whole, record by record, each time it
 * fills.  True if the page now has the room.
 */
static bool
prune_for_room(Relation rel, Buffer buffer, Size needed)
{
	Page		page = BufferGetPage(buffer);

	if (!minidb_page_worth_pruning(rel, page))
		return false;
	if (minidb_page_free_for_insert(page) +
		minidb_page_prunable_bytes(page, GlobalVisTestFor(rel), buffer) < needed)
		return false;
	minidb_prune_buffer(rel, buffer);
	return minidb_page_room_for_insert(page, needed);
}

/* Lock a candidate page; true if it has "needed" bytes free for a record */
static bool
candidate_has_room(Relation rel, Buffer buffer, Size needed, bool wait)
{
	Page		page = BufferGetPage(buffer);

	if (wait)
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	else if (!ConditionalLockBuffer(buffer))
		return false;
	if (PageIsNew(page))
		return true;
	minidb_page_check(rel, buffer);
	if (minidb_page_room_for_insert(page, needed))
		return true;
	if (prune_for_room(rel, buffer, needed))
		return true;
	RecordPageWithFreeSpace(rel, BufferGetBlockNumber(buffer),
							minidb_page_free_for_insert(page));
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return false;
}

/*
 * The free space a page needs to take a record of len bytes, fillfactor
 * kept: heap's rule (RelationGetBufferForTuple) in minidb's units.  A page
 * counts as "nearly empty" when the space it lacks is slight (a few line
 * pointers' worth); a record that would not fit beside the fillfactor's
 * reserve on such a page asks for no more than that, so a low fillfactor
 * never asks for more than a page can hold (the FSM refuses requests above
 * a page) nor extends the relation for every large record.
 */
static Size
needed_for_record(Relation rel, uint32 len)
{
	Size		keep_free = RelationGetTargetPageFreeSpace(rel,
														   HEAP_DEFAULT_FILLFACTOR);
	Size		nearly_empty = MINIDB_MAX_RECORD_LEN -
		(MaxHeapTuplesPerPage / 8 * sizeof(ItemIdData));

	if (MAXALIGN(len) + keep_free > nearly_empty)
		return Max(MAXALIGN(len), nearly_empty);
	return MAXALIGN(len) + keep_free;
}

/*
 * A new page at the end of the relation, exclusively locked and all zero.
 * The lock must be taken before the page can be seen (RBM_ZERO_AND_LOCK,
 * as heap's hio.c does): once the relation has grown, a backend without a
 * target block tries its last page (minidb_buffer_for_insert), and had it
 * locked the page first, it would have initialized it and added a record
 * that our caller's initialization would then wipe out, a committed row
 * lost.  Should the page not be new all the same, refuse it rather than
 * risk that.
 */
static Buffer
extend_relation(Relation rel, BulkInsertState bistate)
{
	Buffer		buffer;
	bool		needLock = !RELATION_IS_LOCAL(rel);

	if (needLock)
		LockRelationForExtension(rel, ExclusiveLock);
	buffer = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_ZERO_AND_LOCK,
								bistate ? bistate->strategy : NULL);
	if (needLock)
		UnlockRelationForExtension(rel, ExclusiveLock);
	if (!PageIsNew(BufferGetPage(buffer)))
		elog(ERROR, "page %u of relation \"%s\" should be empty but is not",
			 BufferGetBlockNumber(buffer), RelationGetRelationName(rel));
	return buffer;
}

/*
 * An exclusively locked buffer with room for a record of len bytes.
 * otherBuffer, if valid, is already locked by the caller and is never
 * returned; to stay clear of deadlocks we only try-lock existing pages
 * while holding it, and fall back to a new page.  *is_new tells the caller
 * to initialize the page (through minidb_write_page).
 */
Buffer
minidb_buffer_for_insert(Relation rel, uint32 len, BulkInsertState bistate,
						 Buffer otherBuffer, bool *is_new)
{
	BlockNumber target = InvalidBlockNumber;
	BlockNumber other = BufferIsValid(otherBuffer) ?
		BufferGetBlockNumber(otherBuffer) : InvalidBlockNumber;
	bool		wait = !BufferIsValid(otherBuffer);
	Size		needed;
	Buffer		buffer;
	int			tries;

	if (len > MINIDB_MAX_RECORD_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %u, maximum size %zu",
						len, (Size) MINIDB_MAX_RECORD_LEN)));
	needed = needed_for_record(rel, len);

	if (bistate && BufferIsValid(bistate->current_buf))
		target = BufferGetBlockNumber(bistate->current_buf);
	else
		target = RelationGetTargetBlock(rel);
	if (target == InvalidBlockNumber)
		target = GetPageWithFreeSpace(rel, needed);
	if (target == InvalidBlockNumber)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

		if (nblocks > 0)
			target = nblocks - 1;
	}

	for (tries = 0; tries < 4 && target != InvalidBlockNumber; tries++)
	{
		if (target != other)
		{
			buffer = ReadBufferExtended(rel, MAIN_FORKNUM, target, RBM_NORMAL,
										bistate ? bistate->strategy : NULL);
			if (candidate_has_room(rel, buffer, needed, wait))
			{
				*is_new = PageIsNew(BufferGetPage(buffer));
				RelationSetTargetBlock(rel, target);
				return buffer;
			}
			ReleaseBuffer(buffer);
		}
		target = GetPageWithFreeSpace(rel, needed);
	}
	*is_new = true;
	buffer = extend_relation(rel, bistate);
	RelationSetTargetBlock(rel, BufferGetBlockNumber(buffer));
	return buffer;
}
