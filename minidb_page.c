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
#include "access/visibilitymap.h"
#include "pgstat.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "utils/snapmgr.h"

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

/*
 * The record at tid on a locked buffer, for callers that hold a TID they
 * know to be a record (one they are about to change or lock); ERROR if
 * there is none.
 */
char *
minidb_page_record_at(Relation rel, Buffer buffer, ItemPointer tid,
					  uint32 *len)
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

/* ----------------------------------------------------------------
 * WAL-logged writes
 *
 * Every change to a page also clears the page's all-visible state: the
 * PD_ALL_VISIBLE flag on the page and both of its bits in the visibility
 * map, in the same generic WAL record as the change, so that crash
 * recovery and standbys never see a changed page marked all-visible.
 *
 * The visibility map page is registered with generic WAL like any other
 * page.  One catch: generic WAL treats the bytes between pd_lower and
 * pd_upper as a hole it neither logs nor keeps (minidb_wal_finish zeroes
 * it), and a visibility map page keeps its whole bitmap in exactly that
 * hole (PageInit(page, BLCKSZ, 0) leaves pd_lower at the header).  So the
 * image we change gets pd_lower = pd_upper = BLCKSZ: no hole, and the
 * delta covers the bitmap bytes.  Nothing in PostgreSQL reads pd_lower of
 * a visibility map page (visibilitymap.c addresses the bitmap with
 * PageGetContents), and the page stays valid for PageIsVerified.  The
 * first such change to a map page logs its whole bitmap once (the old
 * pd_lower made those bytes "new"); later ones log a few bytes.
 *
 * Generic WAL takes at most MAX_GENERIC_XLOG_PAGES (4) pages per record:
 * one write may therefore change at most two table pages (each may bring
 * its map page along).  Map pages are locked only in minidb_write_finish,
 * in block order, after every table page: the order heap uses (table page,
 * then map page), and no map lock is held while a writer looks for room.
 * ----------------------------------------------------------------
 */

/* visibilitymap.c's arithmetic (it keeps these macros to itself) */
#define MINIDB_VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define MINIDB_VM_BLOCKS_PER_BYTE (BITS_PER_BYTE / BITS_PER_HEAPBLOCK)
#define MINIDB_VM_BLOCKS_PER_PAGE (MINIDB_VM_MAPSIZE * MINIDB_VM_BLOCKS_PER_BYTE)
#define MINIDB_VM_MAPBLOCK(x) ((x) / MINIDB_VM_BLOCKS_PER_PAGE)
#define MINIDB_VM_MAPBYTE(x) (((x) % MINIDB_VM_BLOCKS_PER_PAGE) / MINIDB_VM_BLOCKS_PER_BYTE)
#define MINIDB_VM_OFFSET(x) (((x) % MINIDB_VM_BLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK)

void
minidb_write_begin(MinidbPageWrite *w, Relation rel)
{
	w->state = minidb_wal_start(rel);
	w->nbuffers = 0;
	w->rel = rel;
	w->nvm = 0;
}

/*
 * The page to change for an exclusively locked buffer.  A new page is
 * initialized here and logged as a full image.  A page marked all-visible
 * loses the mark here, and its visibility map bits at minidb_write_finish.
 */
Page
minidb_write_page(MinidbPageWrite *w, Buffer buffer, bool is_new)
{
	Page		page;

	page = minidb_wal_register(w->state, buffer,
									 is_new ? MINIDB_WAL_FULL_IMAGE : 0);
	if (is_new || PageIsNew(page))
		minidb_page_init(page);
	else if (PageIsAllVisible(page))
	{
		BlockNumber blkno = BufferGetBlockNumber(buffer);

		PageClearAllVisible(page);
		if (w->nvm >= MINIDB_WRITE_MAX_PAGES)
			elog(ERROR, "too many all-visible pages in one minidb write");
		/*
		 * Pinning may read the map page: I/O under the buffer lock, which
		 * heap avoids by pinning first.  It happens once per page per
		 * VACUUM that marked it all-visible, so we accept it.
		 */
		w->vm_buffer[w->nvm] = InvalidBuffer;
		visibilitymap_pin(w->rel, blkno, &w->vm_buffer[w->nvm]);
		w->vm_heapblk[w->nvm] = blkno;
		w->nvm++;
	}
	w->nbuffers++;
	return page;
}

/* Register the map pages of w's all-visible pages and clear their bits */
static void
write_clear_vm_bits(MinidbPageWrite *w, Buffer *locked, int *nlocked)
{
	int			order[MINIDB_WRITE_MAX_PAGES];

	/* lock map pages in block order, each once: no deadlock among writers */
	for (int i = 0; i < w->nvm; i++)
		order[i] = i;
	for (int i = 1; i < w->nvm; i++)
		for (int j = i; j > 0 &&
			 w->vm_heapblk[order[j]] < w->vm_heapblk[order[j - 1]]; j--)
		{
			int			t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}

	*nlocked = 0;
	for (int k = 0; k < w->nvm; k++)
	{
		int			i = order[k];
		BlockNumber heapblk = w->vm_heapblk[i];
		Buffer		vmbuf = w->vm_buffer[i];
		bool		seen = false;
		Page		vmpage;
		uint8	   *map;

		for (int j = 0; j < *nlocked; j++)
			seen |= (locked[j] == vmbuf);
		if (!seen)
		{
			LockBuffer(vmbuf, BUFFER_LOCK_EXCLUSIVE);
			locked[(*nlocked)++] = vmbuf;
		}
		vmpage = minidb_wal_register(w->state, vmbuf, 0);
		/* no hole: see above */
		((PageHeader) vmpage)->pd_lower = BLCKSZ;
		((PageHeader) vmpage)->pd_upper = BLCKSZ;
		map = (uint8 *) PageGetContents(vmpage);
		map[MINIDB_VM_MAPBYTE(heapblk)] &=
			~(VISIBILITYMAP_VALID_BITS << MINIDB_VM_OFFSET(heapblk));
	}
}

void
minidb_write_finish(MinidbPageWrite *w)
{
	Buffer		locked[MINIDB_WRITE_MAX_PAGES];
	int			nlocked = 0;

	minidb_log_removed_horizon(w->rel);

	if (w->nvm > 0)
		write_clear_vm_bits(w, locked, &nlocked);
	minidb_wal_finish(w->state);
	w->state = NULL;
	for (int j = 0; j < nlocked; j++)
		LockBuffer(locked[j], BUFFER_LOCK_UNLOCK);
	for (int i = 0; i < w->nvm; i++)
		ReleaseBuffer(w->vm_buffer[i]);
	w->nvm = 0;
}

/* ----------------------------------------------------------------
 * Finding room
 * ----------------------------------------------------------------
 */

/*
 * Opportunistic pruning for inserts: a locked candidate page short of
 * "needed" bytes is pruned (one WAL-logged change) when pruning would
 * give back enough.  Asking first costs a walk over the page's records
 * (hint bits make it cheap); pruning for nothing would cost a WAL record.
 * True if the page now has the room.
 */
static bool
prune_for_room(Relation rel, Buffer buffer, Size needed)
{
	Page		page = BufferGetPage(buffer);
	GlobalVisState *vistest = GlobalVisTestFor(rel);
	MinidbPageWrite w;
	Page		copy;
	int			npruned;

	if (minidb_page_free_for_insert(page) +
		minidb_page_prunable_bytes(page, vistest, buffer) < needed)
		return false;
	minidb_write_begin(&w, rel);
	copy = minidb_write_page(&w, buffer, false);
	npruned = minidb_prune_page(rel, copy, vistest);
	minidb_write_finish(&w);
	/* as heap_page_prune: the removed versions are dead tuples no more */
	pgstat_update_heap_dead_tuples(rel, npruned);
	return minidb_page_free_for_insert(page) >= needed;
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
	if (minidb_page_free_for_insert(page) >= needed)
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
