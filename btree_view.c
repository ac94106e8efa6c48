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

#if PG_VERSION_NUM >= 160000	/* 16: RelFileNode became RelFileLocator */
typedef RelFileLocator ViewRelFile;
#define VIEW_REL_FILE(rel)			((rel)->rd_locator)
#define VIEW_REL_FILE_EQUALS(a, b)	RelFileLocatorEquals(a, b)
#else
typedef RelFileNode ViewRelFile;
#define VIEW_REL_FILE(rel)			((rel)->rd_node)
#define VIEW_REL_FILE_EQUALS(a, b)	RelFileNodeEquals(a, b)
#endif

/*
 * The checked pins (see btree_view.h): a few at most are open at once (one
 * per index fetch or sequential scan of a minidb table in the running
 * statements); when all slots are taken a note replaces the oldest, which
 * only costs a check.  A page is named by its relation's file, whether
 * that uses local buffers, and its block.
 */
#define CHECKED_PINS	4

typedef struct CheckedPin
{
	Buffer		buffer;			/* InvalidBuffer: a free slot */
	BlockNumber blkno;
	bool		local;			/* the relation's buffers are local */
	ViewRelFile file;
} CheckedPin;

static CheckedPin checked_pins[CHECKED_PINS];
static int	checked_pins_next;

void
minidb_checked_pin_note(Relation rel, Buffer buffer)
{
	CheckedPin *cp = &checked_pins[checked_pins_next];

	checked_pins_next = (checked_pins_next + 1) % CHECKED_PINS;
	cp->buffer = buffer;
	cp->blkno = BufferGetBlockNumber(buffer);
	cp->local = RelationUsesLocalBuffers(rel);
	cp->file = VIEW_REL_FILE(rel);
}

void
minidb_checked_pin_forget(Buffer buffer)
{
	for (int i = 0; i < CHECKED_PINS; i++)
		if (checked_pins[i].buffer == buffer)
			checked_pins[i].buffer = InvalidBuffer;
}

void
minidb_checked_pins_clear(void)
{
	for (int i = 0; i < CHECKED_PINS; i++)
		checked_pins[i].buffer = InvalidBuffer;
}

#ifdef MINIDB_CHECK_FAST_PATH
/*
 * The registry trusts its holders to forget a page before they let its pin
 * go.  A -DMINIDB_CHECK_FAST_PATH build (the sanitizer run) checks, before
 * it shares a pin, that the buffer still holds the page the note names and
 * that this backend still pins it: a holder that let its pin go first
 * would leave a buffer the buffer manager may since have given to another
 * page.
 */
static void
checked_pin_verify(const CheckedPin *cp, Relation rel)
{
	ViewRelFile file;
	ForkNumber	fork;
	BlockNumber blkno;

	if (cp->local != BufferIsLocal(cp->buffer))
		elog(ERROR, "checked pin %d of block %u of \"%s\" is %s buffer, the note says otherwise",
			 cp->buffer, cp->blkno, RelationGetRelationName(rel),
			 BufferIsLocal(cp->buffer) ? "a local" : "a shared");
	if (cp->local && LocalRefCount[-cp->buffer - 1] <= 0)
		elog(ERROR, "checked pin %d of block %u of \"%s\" is no longer pinned",
			 cp->buffer, cp->blkno, RelationGetRelationName(rel));
	BufferGetTag(cp->buffer, &file, &fork, &blkno);
	if (!VIEW_REL_FILE_EQUALS(file, cp->file) || fork != MAIN_FORKNUM ||
		blkno != cp->blkno)
		elog(ERROR, "checked pin %d holds block %u of another relation or fork, not block %u of \"%s\"",
			 cp->buffer, blkno, cp->blkno, RelationGetRelationName(rel));
}
#endif

/*
 * A new pin of our own on the checked page holding blkno of rel, or
 * InvalidBuffer when no checked pin holds it.
 */
Buffer
minidb_checked_pin_share(Relation rel, BlockNumber blkno)
{
	for (int i = 0; i < CHECKED_PINS; i++)
	{
		CheckedPin *cp = &checked_pins[i];

		if (cp->buffer != InvalidBuffer && cp->blkno == blkno &&
			cp->local == RelationUsesLocalBuffers(rel) &&
			VIEW_REL_FILE_EQUALS(cp->file, VIEW_REL_FILE(rel)))
		{
#ifdef MINIDB_CHECK_FAST_PATH
			checked_pin_verify(cp, rel);
#endif
			IncrBufferRefCount(cp->buffer);
			return cp->buffer;
		}
	}
	return InvalidBuffer;
}

/*
 * Pin blkno of rel: from a checked pin when there is one (*checked: the
 * page needs no check under this pin), else through the buffer manager.
 */
Buffer
minidb_read_buffer_checked(Relation rel, BlockNumber blkno, bool *checked)
{
	Buffer		buffer = minidb_checked_pin_share(rel, blkno);

	*checked = BufferIsValid(buffer);
	if (!*checked)
		buffer = ReadBuffer(rel, blkno);
	return buffer;
}

/*
 * Pin the block holding tid, reusing *pin when it already holds that block
 * and a checked pin when there is one (*repinned: the page is yet to be
 * checked under this pin).
 */
static Buffer
pin_block(Relation rel, BlockNumber blkno, Buffer *pin, bool *repinned)
{
	*repinned = false;
	if (BufferIsValid(*pin) && BufferGetBlockNumber(*pin) == blkno)
		return *pin;
	if (!BufferIsValid(*pin) &&
		BufferIsValid(*pin = minidb_checked_pin_share(rel, blkno)))
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
