/*-------------------------------------------------------------------------
 *
 * minidb_page.c
 *	  Page changes, their WAL, and finding room for new records.
 *
 * Every change to a page is a function of (page, arguments): add a record,
 * replace a record, prune.  Callers apply them to the page that
 * minidb_write_page() hands out, and minidb_write_finish() WAL-logs the
 * result.  Generic WAL (access/generic_xlog.h) is the simple, correct
 * start; because the changes are plain functions, a custom resource
 * manager can later replay the same functions from compact records.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/hio.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"

#include "minidb_am.h"

void
minidb_page_init(Page page)
{
	MinidbPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(MinidbPageOpaqueData));
	opaque = MinidbPageGetOpaque(page);
	opaque->md_magic = MINIDB_PAGE_MAGIC;
	opaque->md_flags = 0;
}

/*
 * Refuse a page that is not a minidb page.  New (all-zero) pages are
 * legal: a crash may leave them after a relation extension.
 */
void
minidb_page_check(Relation rel, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);

	if (PageIsNew(page))
		return;
	if (PageGetSpecialSize(page) != MAXALIGN(sizeof(MinidbPageOpaqueData)) ||
		MinidbPageGetOpaque(page)->md_magic != MINIDB_PAGE_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("page %u of relation \"%s\" is not a minidb page",
						BufferGetBlockNumber(buffer),
						RelationGetRelationName(rel))));
}

/* Space reserved on the page for every record's future marker */
static Size
marker_reserve(Page page, int extra_records)
{
	return (Size) (PageGetMaxOffsetNumber(page) + extra_records) *
		MINIDB_MARKER_RESERVE;
}

/* Room for a new record's bytes (its line pointer accounted for) */
Size
minidb_page_free_for_insert(Page page)
{
	Size		space = PageGetFreeSpace(page);	/* minus one line pointer */
	Size		reserve = marker_reserve(page, 1);

	if (PageGetMaxOffsetNumber(page) >= MaxHeapTuplesPerPage)
		return 0;
	return space > reserve ? space - reserve : 0;
}

/* Room for the record at off to become newlen bytes, reserves kept */
Size
minidb_page_free_for_replace(Page page, OffsetNumber off, uint32 newlen)
{
	ItemId		lp = PageGetItemId(page, off);
	Size		avail = PageGetExactFreeSpace(page) +
		MAXALIGN(ItemIdGetLength(lp));
	Size		reserve = marker_reserve(page, 0);

	if (avail < MAXALIGN(newlen) + reserve)
		return 0;
	return avail - MAXALIGN(newlen) - reserve + 1;
}

OffsetNumber
minidb_page_add_record(Page page, const char *rec, uint32 len)
{
	OffsetNumber off;

	off = PageAddItem(page, (Item) rec, len, InvalidOffsetNumber, false, true);
	if (off == InvalidOffsetNumber)
		elog(ERROR, "failed to add minidb record of %u bytes to page", len);
	return off;
}

void
minidb_page_replace_record(Page page, OffsetNumber off, const char *rec,
						   uint32 len)
{
	if (!PageIndexTupleOverwrite(page, off, (Item) rec, len))
		elog(ERROR, "failed to replace minidb record at offset %u (%u bytes)",
			 off, len);
}

/*
 * The record at off on a locked page; ERROR if there is none (callers use
 * it for TIDs they already know to be records).
 */
char *
minidb_page_get_record(Relation rel, Buffer buffer, OffsetNumber off,
					   uint32 *len)
{
	Page		page = BufferGetPage(buffer);
	ItemId		lp;

	minidb_page_check(rel, buffer);
	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		return NULL;
	lp = PageGetItemId(page, off);
	if (!ItemIdIsNormal(lp))
		return NULL;
	*len = ItemIdGetLength(lp);
	return (char *) PageGetItem(page, lp);
}

/* ----------------------------------------------------------------
 * WAL-logged writes
 * ----------------------------------------------------------------
 */
void
minidb_write_begin(MinidbPageWrite *w, Relation rel)
{
	w->state = GenericXLogStart(rel);
	w->nbuffers = 0;
}

/*
 * The page to change for an exclusively locked buffer.  A new page is
 * initialized here and logged as a full image.
 */
Page
minidb_write_page(MinidbPageWrite *w, Buffer buffer, bool is_new)
{
	Page		page;

	page = GenericXLogRegisterBuffer(w->state, buffer,
									 is_new ? GENERIC_XLOG_FULL_IMAGE : 0);
	if (is_new || PageIsNew(page))
		minidb_page_init(page);
	w->nbuffers++;
	return page;
}

void
minidb_write_finish(MinidbPageWrite *w)
{
	GenericXLogFinish(w->state);
	w->state = NULL;
}

/* ----------------------------------------------------------------
 * Finding room
 * ----------------------------------------------------------------
 */

/* Lock a candidate page; true if it has room for len (fillfactor kept) */
static bool
candidate_has_room(Relation rel, Buffer buffer, uint32 len, bool wait)
{
	Size		keep_free = RelationGetTargetPageFreeSpace(rel,
														   HEAP_DEFAULT_FILLFACTOR);

	Page		page = BufferGetPage(buffer);

	if (wait)
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	else if (!ConditionalLockBuffer(buffer))
		return false;
	if (PageIsNew(page))
		return true;
	minidb_page_check(rel, buffer);
	if (minidb_page_free_for_insert(page) >= MAXALIGN(len) + keep_free)
		return true;
	RecordPageWithFreeSpace(rel, BufferGetBlockNumber(buffer),
							minidb_page_free_for_insert(page));
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return false;
}

static Buffer
extend_relation(Relation rel, BulkInsertState bistate)
{
	Buffer		buffer;
	bool		needLock = !RELATION_IS_LOCAL(rel);

	if (needLock)
		LockRelationForExtension(rel, ExclusiveLock);
	buffer = ReadBufferExtended(rel, MAIN_FORKNUM, P_NEW, RBM_NORMAL,
								bistate ? bistate->strategy : NULL);
	/* nobody else can have seen the new page: locking it cannot deadlock */
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	if (needLock)
		UnlockRelationForExtension(rel, ExclusiveLock);
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
	Size		keep_free = RelationGetTargetPageFreeSpace(rel,
														   HEAP_DEFAULT_FILLFACTOR);
	int			tries;

	if (len > MINIDB_MAX_RECORD_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %u, maximum size %zu",
						len, (Size) MINIDB_MAX_RECORD_LEN)));

	if (bistate && BufferIsValid(bistate->current_buf))
		target = BufferGetBlockNumber(bistate->current_buf);
	else
		target = GetPageWithFreeSpace(rel, MAXALIGN(len) + keep_free);
	if (target == InvalidBlockNumber)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

		if (nblocks > 0)
			target = nblocks - 1;
	}

	for (tries = 0; tries < 4 && target != InvalidBlockNumber; tries++)
	{
		Buffer		buffer;

		if (target == other)
			break;
		buffer = ReadBufferExtended(rel, MAIN_FORKNUM, target, RBM_NORMAL,
									bistate ? bistate->strategy : NULL);
		if (candidate_has_room(rel, buffer, len, wait))
		{
			*is_new = PageIsNew(BufferGetPage(buffer));
			return buffer;
		}
		ReleaseBuffer(buffer);
		target = GetPageWithFreeSpace(rel, MAXALIGN(len) + keep_free);
	}
	*is_new = true;
	return extend_relation(rel, bistate);
}
