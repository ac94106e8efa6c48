/*-------------------------------------------------------------------------
 *
 * minidb_wal.c
 *	  WAL-logged page writes: page images and their deltas.
 *
 * A writer that changes minidb pages in a way no compact record describes
 * (an insert, a row lock, the end of a speculative insertion, a rewritten
 * page) asks minidb_write_page() for a private image of each exclusively
 * locked buffer's page, changes the images, and calls minidb_write_finish(),
 * which copies the images into the buffers and WAL-logs the difference in
 * one critical section.  Nothing reaches the buffers before that.
 *
 * What is logged is a delta in generic WAL's format (fragments of
 * <offset, length, bytes> per page), computed eight bytes at a time: the
 * server's GenericXLogFinish() compares byte by byte, which was most of an
 * UPDATE's time.  Its record depends on the WAL mode:
 *
 *	- library preloaded (minidb_custom_wal): a DELTA record of minidb's
 *	  resource manager, replayed by minidb_wal_redo_delta below and masked
 *	  by minidb_mask (hint bits and all, see minidb_xlog.c);
 *	- not preloaded: a generic WAL record (RM_GENERIC_ID), replayed by the
 *	  server's generic_redo, so that nothing needs the library at replay.
 *
 * The delta follows generic WAL's rules exactly, so that replay produces
 * the bytes the primary has:
 *
 *	- the bytes between pd_lower and pd_upper are a hole that is neither
 *	  logged nor kept (zeroed on the primary when logged, as replay zeroes
 *	  it);
 *	- bytes of the new page that lay outside the OLD page's valid range
 *	  (its hole, or the whole page when the old one is new) are always
 *	  logged, never compared: the old hole of a page changed by a compact
 *	  record (PageIndexTupleOverwrite) holds stale bytes on the primary
 *	  where a standby, or a full-page image, has zeros;
 *	- a page marked full-image is logged whole.
 *
 * Hint bits differ between a primary and its standby (they are set
 * without WAL), so a delta is only right on a standby if no byte holding a
 * hint moved.  Preloaded, every change that moves records is a compact
 * record replayed by running the same change (minidb_xlog.c), and a delta
 * whose page layout moved anyway is logged as a full image instead (a
 * safety net, not a path anything takes).  Not preloaded, hint bits are
 * set only inside WAL-logged changes (minidb_set_hint), so primary and
 * standby hold the same bytes and generic WAL's strict consistency check
 * holds.
 *
 * Visibility map.  A change to an all-visible page clears PD_ALL_VISIBLE
 * and the page's two map bits in the same WAL record.  Preloaded, as heap
 * does it: the map bits are cleared by visibilitymap_clear() inside the
 * critical section, and replay clears them from a flag in the record.
 * Generic WAL can only replay page images, so there the map page itself is
 * registered in the record.  One catch: generic WAL treats the bytes
 * between pd_lower and pd_upper as a hole, and a map page keeps its whole
 * bitmap in exactly that range (PageInit(page, BLCKSZ, 0) leaves pd_lower
 * at the header).  The map image therefore gets pd_lower = pd_upper =
 * BLCKSZ: no hole, and the delta covers the bitmap bytes.  Nothing in
 * PostgreSQL reads pd_lower of a map page (visibilitymap.c addresses the
 * bitmap with PageGetContents), and the page stays valid for
 * PageIsVerified.  The first such change to a map page logs its bitmap
 * once; later ones log a few bytes.  Map pages are locked only in
 * minidb_write_finish, in block order, after every table page: the order
 * heap uses, and no map lock is held while a writer looks for room.
 *
 * A write may change at most MINIDB_WRITE_MAX_PAGES table pages; with
 * generic WAL each may bring its map page along, and generic WAL takes at
 * most four pages per record.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/visibilitymap.h"
#include "access/xloginsert.h"
#include "access/xlogutils.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_xlog.h"

/* Set by minidb_xlog_init when the resource manager is registered */
bool		minidb_custom_wal = false;

/* A fragment header: offset and length, as generic_xlog.c writes them */
#define FRAGMENT_HEADER_SIZE	(2 * sizeof(OffsetNumber))
/* Differences closer than this join one fragment (a header costs 4 bytes) */
#define MERGE_GAP				8
/*
 * Fragments are at least MERGE_GAP bytes apart, so a delta never exceeds
 * the page plus one header per (MERGE_GAP + 1) bytes.
 */
#define MAX_DELTA_SIZE \
	(BLCKSZ + (BLCKSZ / (MERGE_GAP + 1) + 1) * FRAGMENT_HEADER_SIZE)

#define MINIDB_WAL_MAX_PAGES	4	/* MAX_GENERIC_XLOG_PAGES */

typedef struct MinidbWalPage
{
	Buffer		buffer;
	bool		full_image;
	bool		is_vm;			/* a visibility map page (generic WAL) */
	bool		clear_vm;		/* an all-visible table page */
	BlockNumber blkno;			/* clear_vm: the table page */
	Buffer		vmbuffer;		/* clear_vm: its map page, pinned */
	int			deltalen;
	PGAlignedBlock image;
	char		delta[MAX_DELTA_SIZE];
} MinidbWalPage;

struct MinidbWalState
{
	Relation	rel;
	bool		logged;			/* RelationNeedsWAL */
	bool		custom;			/* a DELTA record, not generic WAL */
	int			ntable;			/* table pages registered */
	int			nlocked;		/* map pages locked here, to unlock */
	Buffer		locked[MINIDB_WAL_MAX_PAGES];
	MinidbWalState *outer;		/* the write under way before this one */
	MinidbWalPage pages[MINIDB_WAL_MAX_PAGES];
};

/*
 * The writes under way (begun, not finished), innermost first, so that
 * damage found in one of their page images, where a write checks a record
 * before changing it (the transaction IDs pruning must look up, say), is
 * reported naming the record's block and offset as damage found on a
 * buffer's page is (minidb_write_image_of).  A write that fails leaves it
 * to transaction abort, which frees the images, to forget it
 * (minidb_write_forget).
 */
static MinidbWalState *writes_under_way = NULL;

/* visibilitymap.c's arithmetic (it keeps these macros to itself) */
#define MINIDB_VM_MAPSIZE (BLCKSZ - MAXALIGN(SizeOfPageHeaderData))
#define MINIDB_VM_BLOCKS_PER_BYTE (BITS_PER_BYTE / BITS_PER_HEAPBLOCK)
#define MINIDB_VM_BLOCKS_PER_PAGE (MINIDB_VM_MAPSIZE * MINIDB_VM_BLOCKS_PER_BYTE)
#define MINIDB_VM_MAPBYTE(x) (((x) % MINIDB_VM_BLOCKS_PER_PAGE) / MINIDB_VM_BLOCKS_PER_BYTE)
#define MINIDB_VM_OFFSET(x) (((x) % MINIDB_VM_BLOCKS_PER_BYTE) * BITS_PER_HEAPBLOCK)

void
minidb_write_begin(MinidbPageWrite *w, Relation rel)
{
	MinidbWalState *state = palloc(sizeof(MinidbWalState));

	state->rel = rel;
	state->logged = RelationNeedsWAL(rel);
	state->custom = minidb_custom_wal;
	state->ntable = 0;
	state->nlocked = 0;
	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
	{
		state->pages[i].buffer = InvalidBuffer;
		state->pages[i].clear_vm = false;
		state->pages[i].vmbuffer = InvalidBuffer;
	}
	state->outer = writes_under_way;
	writes_under_way = state;
	w->state = state;
}

/*
 * The buffer whose page image (minidb_write_page) holds ptr, and that
 * image: false when ptr lies in none of the writes under way.
 */
bool
minidb_write_image_of(const void *ptr, Buffer *buffer, Page *image)
{
	const char *p = (const char *) ptr;

	for (MinidbWalState *state = writes_under_way; state; state = state->outer)
		for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		{
			MinidbWalPage *wp = &state->pages[i];

			if (BufferIsValid(wp->buffer) && !wp->is_vm &&
				p >= wp->image.data && p < wp->image.data + BLCKSZ)
			{
				*buffer = wp->buffer;
				*image = (Page) wp->image.data;
				return true;
			}
		}
	return false;
}

/* At (sub)transaction end: the images of failed writes are gone */
void
minidb_write_forget(void)
{
	writes_under_way = NULL;
}

/* The slot of buffer, registering it (a copy of its page) if new */
static MinidbWalPage *
register_page(MinidbWalState *state, Buffer buffer)
{
	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
	{
		MinidbWalPage *p = &state->pages[i];

		if (p->buffer == buffer)
			return p;
		if (BufferIsInvalid(p->buffer))
		{
			p->buffer = buffer;
			p->full_image = false;
			p->is_vm = false;
			p->clear_vm = false;
			p->vmbuffer = InvalidBuffer;
			p->deltalen = 0;
			memcpy(p->image.data, BufferGetPage(buffer), BLCKSZ);
			return p;
		}
	}
	elog(ERROR, "maximum number %d of minidb WAL buffers is exceeded",
		 MINIDB_WAL_MAX_PAGES);
	return NULL;				/* keep compiler quiet */
}

/*
 * The page to change for an exclusively locked buffer.  A new page is
 * initialized here and logged as a full image.  A page marked all-visible
 * loses the mark here, and its visibility map bits at minidb_write_finish.
 * Registering the same buffer twice returns the same image.
 */
Page
minidb_write_page(MinidbPageWrite *w, Buffer buffer, bool is_new)
{
	MinidbWalState *state = w->state;
	MinidbWalPage *p;
	bool		known = false;
	Page		page;

	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		known |= (state->pages[i].buffer == buffer);
	if (!known && state->ntable >= MINIDB_WRITE_MAX_PAGES)
		elog(ERROR, "too many pages in one minidb write");
	p = register_page(state, buffer);
	page = (Page) p->image.data;
	if (!known)
		state->ntable++;
	if (is_new || PageIsNew(page))
	{
		p->full_image |= is_new;
		minidb_page_init(page);
	}
	else if (PageIsAllVisible(page))
	{
		PageClearAllVisible(page);
		p->clear_vm = true;
		p->blkno = BufferGetBlockNumber(buffer);

		/*
		 * Pinning may read the map page: I/O under the buffer lock, which
		 * heap avoids by pinning first.  It happens once per page per
		 * VACUUM that marked it all-visible, so we accept it.
		 */
		visibilitymap_pin(state->rel, p->blkno, &p->vmbuffer);
	}
	return page;
}

/*
 * Generic WAL: register an exclusively locked map page, without a hole
 * (see the header comment); returns the bitmap of its image.
 */
static uint8 *
register_vm_page(MinidbWalState *state, Buffer vmbuf)
{
	MinidbWalPage *vp = register_page(state, vmbuf);
	Page		vmpage = (Page) vp->image.data;

	vp->is_vm = true;
	((PageHeader) vmpage)->pd_lower = BLCKSZ;
	((PageHeader) vmpage)->pd_upper = BLCKSZ;
	return (uint8 *) PageGetContents(vmpage);
}

/*
 * Generic WAL: register the map pages of the all-visible table pages and
 * clear their bits in the images (see the header comment).  Map pages are
 * locked in block order, each once; their buffers go to locked[].
 */
static void
register_vm_pages(MinidbWalState *state)
{
	MinidbWalPage *order[MINIDB_WAL_MAX_PAGES];
	int			n = 0;

	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		if (BufferIsValid(state->pages[i].buffer) && state->pages[i].clear_vm)
			order[n++] = &state->pages[i];
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && order[j]->blkno < order[j - 1]->blkno; j--)
		{
			MinidbWalPage *t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}

	for (int k = 0; k < n; k++)
	{
		Buffer		vmbuf = order[k]->vmbuffer;
		BlockNumber heapblk = order[k]->blkno;
		bool		seen = false;
		uint8	   *map;

		for (int j = 0; j < state->nlocked; j++)
			seen |= (state->locked[j] == vmbuf);
		if (!seen)
		{
			LockBuffer(vmbuf, BUFFER_LOCK_EXCLUSIVE);
			state->locked[state->nlocked++] = vmbuf;
		}
		map = register_vm_page(state, vmbuf);
		map[MINIDB_VM_MAPBYTE(heapblk)] &=
			~(VISIBILITYMAP_VALID_BITS << MINIDB_VM_OFFSET(heapblk));
	}
}

/* ----------------------------------------------------------------
 * The delta
 * ----------------------------------------------------------------
 */
static void
append_fragment(MinidbWalPage *p, int start, int end)
{
	OffsetNumber offset = start;
	OffsetNumber length = end - start;
	char	   *ptr = p->delta + p->deltalen;

	if (p->deltalen + FRAGMENT_HEADER_SIZE + length > MAX_DELTA_SIZE)
		elog(ERROR, "minidb WAL delta overflows its buffer");
	memcpy(ptr, &offset, sizeof(offset));
	ptr += sizeof(offset);
	memcpy(ptr, &length, sizeof(length));
	ptr += sizeof(length);
	memcpy(ptr, p->image.data + start, length);
	p->deltalen += FRAGMENT_HEADER_SIZE + length;
}

typedef struct Fragment
{
	int			start;			/* -1: none open */
	int			end;
} Fragment;

/* Bytes i..i+n of the image go into the delta: extend or flush the open one */
static inline void
note_difference(MinidbWalPage *p, Fragment *f, int i, int n)
{
	if (f->start >= 0 && i - f->end > MERGE_GAP)
	{
		append_fragment(p, f->start, f->end);
		f->start = -1;
	}
	if (f->start < 0)
		f->start = i;
	f->end = i + n;
}

/*
 * The bytes of [start, end) that differ between the old page and the
 * image: single bytes up to the first aligned word, whole words in between
 * (the hot loop), single bytes after the last one.
 */
static void
compare_region(MinidbWalPage *p, Fragment *f, const char *old,
			   int start, int end)
{
	const char *image = p->image.data;
	int			wstart = Min(TYPEALIGN(sizeof(uint64), start), end);
	int			wend = Max(wstart, end - end % (int) sizeof(uint64));
	int			i;

	for (i = start; i < wstart; i++)
		if (old[i] != image[i])
			note_difference(p, f, i, 1);
	for (i = wstart; i < wend; i += sizeof(uint64))
	{
		if (likely(*(const uint64 *) (old + i) == *(const uint64 *) (image + i)))
			continue;
		note_difference(p, f, i, sizeof(uint64));
	}
	for (i = wend; i < end; i++)
		if (old[i] != image[i])
			note_difference(p, f, i, 1);
}

/*
 * Fragments for the image's bytes [start, end): those inside the old
 * page's valid range [vstart, vend) only where they differ, the others
 * always (generic_xlog.c's computeRegionDelta does the same).
 */
static void
delta_region(MinidbWalPage *p, const char *old, int start, int end,
			 int vstart, int vend)
{
	Fragment	f = {-1, -1};
	int			cstart = Max(start, vstart);
	int			cend = Min(end, vend);

	if (cstart >= cend)
		note_difference(p, &f, start, end - start);
	else
	{
		if (start < cstart)
			note_difference(p, &f, start, cstart - start);
		compare_region(p, &f, old, cstart, cend);
		if (cend < end)
			note_difference(p, &f, cend, end - cend);
	}
	if (f.start >= 0 && f.end > f.start)
		append_fragment(p, f.start, f.end);
}

static void
compute_delta(MinidbWalPage *p, const char *old)
{
	PageHeader	hdr = (PageHeader) p->image.data;
	PageHeader	oldhdr = (PageHeader) old;
	int			old_lower = oldhdr->pd_lower;
	int			old_upper = oldhdr->pd_upper;

	/* a new or insane old page: nothing of it is valid */
	if (PageIsNew((Page) old) || old_lower < SizeOfPageHeaderData ||
		old_lower > old_upper || old_upper > BLCKSZ)
	{
		old_lower = 0;
		old_upper = BLCKSZ;
	}
	p->deltalen = 0;
	delta_region(p, old, 0, hdr->pd_lower, 0, old_lower);
	delta_region(p, old, hdr->pd_upper, BLCKSZ, old_upper, BLCKSZ);
}

/*
 * Did records move on the page?  A stored item that is stored at another
 * offset in the image (the layout changed, so a byte that held a hint bit
 * may now hold data).  Items that became unused or dead, and new items in
 * the old hole, move nothing.
 */
static bool
layout_moved(const char *old, const char *image)
{
	OffsetNumber oldmax;
	OffsetNumber newmax;

	if (PageIsNew((Page) old))
		return false;
	oldmax = PageGetMaxOffsetNumber((Page) old);
	newmax = PageGetMaxOffsetNumber((Page) image);
	for (OffsetNumber off = FirstOffsetNumber;
		 off <= Min(oldmax, newmax) && off <= MaxOffsetNumber; off++)
	{
		ItemId		o = PageGetItemId((Page) old, off);
		ItemId		n = PageGetItemId((Page) image, off);

		if (ItemIdHasStorage(o) && ItemIdHasStorage(n) &&
			ItemIdGetOffset(o) != ItemIdGetOffset(n))
			return true;
	}
	return false;
}

/* Copy an image into its buffer, zeroing the hole as replay will */
static void
apply_image(MinidbWalPage *p, bool zero_hole)
{
	Page		page = BufferGetPage(p->buffer);
	PageHeader	hdr = (PageHeader) p->image.data;

	if (!zero_hole)
	{
		memcpy(page, p->image.data, BLCKSZ);
		return;
	}
	memcpy(page, p->image.data, hdr->pd_lower);
	memset(page + hdr->pd_lower, 0, hdr->pd_upper - hdr->pd_lower);
	memcpy(page + hdr->pd_upper, p->image.data + hdr->pd_upper,
		   BLCKSZ - hdr->pd_upper);
}

XLogRecPtr
minidb_write_finish(MinidbPageWrite *w)
{
	MinidbWalState *state = w->state;
	XLogRecPtr	lsn = InvalidXLogRecPtr;
	bool		vm_in_record = state->logged && !state->custom;
	xl_minidb_delta xlrec;

	if (vm_in_record)
		register_vm_pages(state);

	/* deltas need the unchanged pages: compute them before applying */
	if (state->logged)
		for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		{
			MinidbWalPage *p = &state->pages[i];
			const char *old;

			if (BufferIsInvalid(p->buffer) || p->full_image)
				continue;
			old = BufferGetPage(p->buffer);
			if (state->custom && !p->is_vm && layout_moved(old, p->image.data))
				p->full_image = true;
			else
				compute_delta(p, old);
		}

	xlrec.vmclear = 0;
	if (state->logged)
		XLogBeginInsert();
	START_CRIT_SECTION();
	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
	{
		MinidbWalPage *p = &state->pages[i];

		if (BufferIsInvalid(p->buffer))
			continue;
		apply_image(p, state->logged);
		MarkBufferDirty(p->buffer);
		if (p->clear_vm && !vm_in_record)
		{
			visibilitymap_clear(state->rel, p->blkno, p->vmbuffer,
								VISIBILITYMAP_VALID_BITS);
			xlrec.vmclear |= (1 << i);
		}
		if (!state->logged)
			continue;
		if (p->full_image)
			XLogRegisterBuffer(i, p->buffer,
							   REGBUF_FORCE_IMAGE | REGBUF_STANDARD);
		else
		{
			XLogRegisterBuffer(i, p->buffer, REGBUF_STANDARD);
			XLogRegisterBufData(i, p->delta, p->deltalen);
		}
	}
	if (state->logged)
	{
		if (state->custom)
		{
			XLogRegisterData((char *) &xlrec, sizeof(xlrec));
			lsn = XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_DELTA);
		}
		else
			lsn = XLogInsert(RM_GENERIC_ID, 0);
		for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
			if (BufferIsValid(state->pages[i].buffer))
				PageSetLSN(BufferGetPage(state->pages[i].buffer), lsn);
	}
	END_CRIT_SECTION();

	for (int j = 0; j < state->nlocked; j++)
		LockBuffer(state->locked[j], BUFFER_LOCK_UNLOCK);
	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		if (BufferIsValid(state->pages[i].buffer) && state->pages[i].clear_vm)
			ReleaseBuffer(state->pages[i].vmbuffer);
	for (MinidbWalState **link = &writes_under_way; *link; link = &(*link)->outer)
		if (*link == state)
		{
			*link = state->outer;
			break;
		}
	pfree(state);
	w->state = NULL;
	return lsn;
}

/*
 * Generic WAL: mark an exclusively locked buffer's page all-visible (and
 * all-frozen, per flags) in the page and in the map page vmbuffer (pinned),
 * as one generic record.  Heap's XLOG_HEAP2_VISIBLE would do it with a
 * conflict horizon, but its replay checks both pages with heap's mask,
 * which reads our map pages' bitmaps as line pointers (pd_lower is BLCKSZ
 * on them, see above) and our records as heap tuples.  Generic WAL carries
 * no conflict horizon: standbys serving queries on minidb tables need the
 * library preloaded, or hot_standby_feedback.
 */
void
minidb_wal_set_visible(Relation rel, Buffer buffer, Buffer vmbuffer,
					   uint8 flags)
{
	MinidbPageWrite w;
	MinidbWalState *state;
	BlockNumber blkno = BufferGetBlockNumber(buffer);
	uint8	   *map;

	Assert(!minidb_custom_wal && RelationNeedsWAL(rel));
	minidb_write_begin(&w, rel);
	state = w.state;
	PageSetAllVisible((Page) register_page(state, buffer)->image.data);
	state->ntable++;
	LockBuffer(vmbuffer, BUFFER_LOCK_EXCLUSIVE);
	state->locked[state->nlocked++] = vmbuffer;
	map = register_vm_page(state, vmbuffer);
	map[MINIDB_VM_MAPBYTE(blkno)] |= (flags << MINIDB_VM_OFFSET(blkno));
	minidb_write_finish(&w);
}

/* ----------------------------------------------------------------
 * Replay (minidb's resource manager)
 * ----------------------------------------------------------------
 */

/*
 * Clear the visibility map bits of a record's block: before the block is
 * read, and even when it needs no redo, as heap's redo does.
 */
void
minidb_redo_clear_vm(XLogReaderState *record, uint8 block_id)
{
	RelFileLocator rnode;
	BlockNumber blkno;
	Relation	reln;
	Buffer		vmbuffer = InvalidBuffer;

	XLogRecGetBlockTag(record, block_id, &rnode, NULL, &blkno);
	reln = CreateFakeRelcacheEntry(rnode);
	visibilitymap_pin(reln, blkno, &vmbuffer);
	visibilitymap_clear(reln, blkno, vmbuffer, VISIBILITYMAP_VALID_BITS);
	ReleaseBuffer(vmbuffer);
	FreeFakeRelcacheEntry(reln);
}

/* Apply a delta (generic_xlog.c's applyPageRedo, bounds-checked) */
static void
apply_delta(Page page, const char *delta, Size size)
{
	const char *ptr = delta;
	const char *end = delta + size;

	while (ptr < end)
	{
		OffsetNumber offset;
		OffsetNumber length;

		if (end - ptr < FRAGMENT_HEADER_SIZE)
			elog(PANIC, "minidb_redo: truncated delta fragment header");
		memcpy(&offset, ptr, sizeof(offset));
		ptr += sizeof(offset);
		memcpy(&length, ptr, sizeof(length));
		ptr += sizeof(length);
		if ((Size) offset + length > BLCKSZ || end - ptr < length)
			elog(PANIC, "minidb_redo: delta fragment %u+%u out of bounds",
				 offset, length);
		memcpy(page + offset, ptr, length);
		ptr += length;
	}
}

void
minidb_wal_redo_delta(XLogReaderState *record)
{
	XLogRecPtr	lsn = record->EndRecPtr;
	xl_minidb_delta *xlrec = (xl_minidb_delta *) XLogRecGetData(record);
	Buffer		buffers[MINIDB_WAL_MAX_PAGES];
	int			maxid = XLogRecMaxBlockId(record);

	if (maxid >= MINIDB_WAL_MAX_PAGES)
		elog(PANIC, "minidb_redo: DELTA record with block id %d", maxid);
	for (int id = 0; id <= maxid; id++)
		if (XLogRecHasBlockRef(record, id) && (xlrec->vmclear & (1 << id)))
			minidb_redo_clear_vm(record, id);

	for (int id = 0; id <= maxid; id++)
	{
		buffers[id] = InvalidBuffer;
		if (!XLogRecHasBlockRef(record, id))
			continue;
		if (XLogReadBufferForRedo(record, id, &buffers[id]) == BLK_NEEDS_REDO)
		{
			Page		page = BufferGetPage(buffers[id]);
			PageHeader	hdr = (PageHeader) page;
			Size		size;
			char	   *delta = XLogRecGetBlockData(record, id, &size);

			apply_delta(page, delta, size);
			if (hdr->pd_lower > hdr->pd_upper || hdr->pd_upper > BLCKSZ)
				elog(PANIC, "minidb_redo: page with pd_lower %u, pd_upper %u",
					 hdr->pd_lower, hdr->pd_upper);
			/* the hole, as the primary zeroed it */
			memset(page + hdr->pd_lower, 0, hdr->pd_upper - hdr->pd_lower);
			PageSetLSN(page, lsn);
			MarkBufferDirty(buffers[id]);
		}
	}
	for (int id = 0; id <= maxid; id++)
		if (BufferIsValid(buffers[id]))
			UnlockReleaseBuffer(buffers[id]);
}
