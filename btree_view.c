/*-------------------------------------------------------------------------
 *
 * btree_view.c
 *	  The page-view layer: see a record's bytes where they lie.
 *
 * minidb_view_record() pins the record's buffer, takes its content lock in
 * share mode and runs a callback on the record's bytes in the page.  The
 * callback materializes whatever its caller needs into memory the caller
 * owns; no pointer into the page survives the callback.  Because readers
 * never hold such pointers outside the lock, writers may rewrite a record
 * in place under an exclusive content lock, without a cleanup lock.
 *
 * minidb_copy_record() is the "before" of the chain-depth study: it copies
 * the whole record out into freshly allocated memory and lets go of the
 * lock, as a storage layer that cannot lend page memory must.  It is kept,
 * and measured, on purpose.
 *
 * The name comes from the study this project reproduces, where a B+Tree
 * lent such views; here the pages are the table's own.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "storage/bufpage.h"

#include "minidb_page.h"
#include "btree_view.h"

/*
 * Pin the block holding tid, reusing *pin when it already holds that block.
 */
static Buffer
pin_block(Relation rel, BlockNumber blkno, Buffer *pin, bool *repinned)
{
	*repinned = false;
	if (BufferIsValid(*pin) && BufferGetBlockNumber(*pin) == blkno)
		return *pin;
	*pin = ReleaseAndReadBuffer(*pin, rel, blkno);
	*repinned = true;
	return *pin;
}

/*
 * The record at tid on a share-locked page, or NULL with *status set when
 * there is none.  The page's identity (its special area) is checked once
 * per pin: a pinned page stays the same page, and new pages are only ever
 * initialized as minidb pages.
 */
static char *
locked_record(Relation rel, Buffer buffer, ItemPointer tid, uint32 *len,
			  MinidbViewStatus *status, bool check_page)
{
	char	   *rec;

	if (check_page || PageIsNew(BufferGetPage(buffer)))
		minidb_page_check(rel, buffer);
	rec = minidb_page_record(rel, buffer, ItemPointerGetOffsetNumber(tid), len);
	*status = rec ? MINIDB_VIEW_OK : MINIDB_VIEW_NO_ITEM;
	return rec;
}

/*
 * Run fn on the record at tid while its buffer is pinned and share-locked.
 * *pin carries a pin across calls (InvalidBuffer at first); the caller
 * releases it when done.  The block must exist (callers check TIDs that
 * come from users).
 */
MinidbViewStatus
minidb_view_record(Relation rel, ItemPointer tid, Buffer *pin,
				   MinidbViewFn fn, void *arg)
{
	bool		repinned;
	Buffer		buffer = pin_block(rel, ItemPointerGetBlockNumber(tid), pin,
								   &repinned);
	MinidbViewStatus status;
	uint32		len;
	char	   *rec;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	rec = locked_record(rel, buffer, tid, &len, &status, repinned);
	if (rec)
		fn(rec, len, buffer, arg);
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return status;
}

/*
 * Copy the whole record at tid into a fresh chunk of cxt, then let go of the
 * lock.  Returns NULL with *status set when there is no record.
 */
char *
minidb_copy_record(Relation rel, ItemPointer tid, Buffer *pin,
				   MemoryContext cxt, uint32 *len, MinidbViewStatus *status)
{
	bool		repinned;
	Buffer		buffer = pin_block(rel, ItemPointerGetBlockNumber(tid), pin,
								   &repinned);
	char	   *rec;
	char	   *copy = NULL;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	rec = locked_record(rel, buffer, tid, len, status, repinned);
	if (rec)
	{
		copy = MemoryContextAlloc(cxt, *len);
		memcpy(copy, rec, *len);
	}
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return copy;
}
