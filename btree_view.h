/*-------------------------------------------------------------------------
 *
 * btree_view.h
 *	  The page-view layer: a record's bytes seen in place, under the lock.
 *
 * A record's bytes are seen only inside a callback that runs while the
 * buffer is pinned and content-locked.  Nothing may keep a pointer into the
 * page after the callback returns.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef BTREE_VIEW_H
#define BTREE_VIEW_H

#include "minidb_page.h"

typedef void (*MinidbViewFn) (char *rec, uint32 len, Buffer buffer,
							  void *arg);

typedef enum MinidbViewStatus
{
	MINIDB_VIEW_OK,
	MINIDB_VIEW_NO_BLOCK,		/* block past the end of the relation */
	MINIDB_VIEW_NO_ITEM,		/* offset out of range, unused or dead */
} MinidbViewStatus;

extern MinidbViewStatus minidb_view_record(Relation rel, ItemPointer tid,
										   Buffer *pin, MinidbViewFn fn,
										   void *arg);
extern char *minidb_copy_record(Relation rel, ItemPointer tid, Buffer *pin,
								MemoryContext cxt, uint32 *len,
								MinidbViewStatus *status);

/*
 * Pages this backend checked (minidb_page_check) and has kept pinned since,
 * by the pin that an index fetch keeps from call to call (MinidbViewPin) or
 * a sequential scan keeps on its last page (minidb_scan.c): a later step
 * of the same statement (the UPDATE's fetch of the old row, its write)
 * takes another pin on such a page from here, without the buffer manager's
 * lookup, and needs no check of its own, for the reason the holder itself
 * checks once per pin.  The holder notes a page after its
 * check and forgets it before it lets the pin go; transaction and
 * subtransaction ends forget every page (an error lets pins go through
 * the resource owners, past the holder).
 */
extern void minidb_checked_pin_note(Relation rel, Buffer buffer);
extern void minidb_checked_pin_forget(Buffer buffer);
extern Buffer minidb_checked_pin_share(Relation rel, BlockNumber blkno);
extern void minidb_checked_pins_clear(void);
extern Buffer minidb_read_buffer_checked(Relation rel, BlockNumber blkno,
										 bool *checked);

/*
 * A pin an index fetch keeps from call to call, with the block it holds,
 * so that a fetch from the same block asks the buffer manager nothing.
 */
typedef struct MinidbViewPin
{
	Buffer		buffer;			/* InvalidBuffer, or pinned by us */
	BlockNumber blkno;			/* the block of buffer, when valid */
} MinidbViewPin;

/*
 * minidb_view_record for a caller that keeps its pin in a MinidbViewPin,
 * inline, so that a callback known where it is called is inlined too.
 * The same steps: pin (reused when it holds the block), share lock, the
 * page check once per pin (minidb_page_check: the page's header, special
 * area and line pointer array as a whole; a pinned page stays the same
 * page, and the writers that change it under an exclusive lock keep it
 * sound), then the one line pointer, checked under this lock on every
 * call (minidb_page_record_plain, and minidb_page_record for anything
 * else: no record, or damage), and fn on the record, under the lock.
 */
static pg_attribute_always_inline MinidbViewStatus
minidb_view_record_pinned(Relation rel, ItemPointer tid, MinidbViewPin *vp,
						  MinidbViewFn fn, void *arg)
{
	BlockNumber blkno = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	bool		repinned = false;
	Buffer		buffer;
	Page		page;
	uint32		len;
	char	   *rec;

	if (unlikely(!BufferIsValid(vp->buffer) || vp->blkno != blkno))
	{
		if (BufferIsValid(vp->buffer))
			minidb_checked_pin_forget(vp->buffer);
		vp->buffer = ReleaseAndReadBuffer(vp->buffer, rel, blkno);
		vp->blkno = blkno;
		repinned = true;
	}
	buffer = vp->buffer;
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (unlikely(repinned || PageIsNew(page)))
	{
		minidb_page_check(rel, buffer);
		if (repinned && !PageIsNew(page))
			minidb_checked_pin_note(rel, buffer);
	}
	rec = minidb_page_record_plain(page, off, &len);
	if (unlikely(rec == NULL))
		rec = minidb_page_record(rel, buffer, off, &len);
	if (rec)
		fn(rec, len, buffer, arg);
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return rec ? MINIDB_VIEW_OK : MINIDB_VIEW_NO_ITEM;
}

/* The read paths that the benchmark compares */
typedef enum MinidbReadPath
{
	MINIDB_PATH_COPY_EAGER,		/* copy the record, decode everything */
	MINIDB_PATH_COPY_LAZY,		/* copy the record, fast walker */
	MINIDB_PATH_VIEW_LAZY,		/* view in place, fast walker (production) */
} MinidbReadPath;

extern int	minidb_read_path;	/* GUC minidb.read_path */

#endif							/* BTREE_VIEW_H */
