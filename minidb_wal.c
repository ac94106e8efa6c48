/*-------------------------------------------------------------------------
 *
 * minidb_wal.c
 *	  Generic WAL records, with a fast delta.
 *
 * minidb logs its page changes as generic WAL records (RM_GENERIC_ID), so
 * the server's own generic_redo replays them on crash recovery and on
 * standbys, and the extension need not be preloaded.  The records are made
 * here rather than by GenericXLogFinish() for one reason: speed.  The
 * server's delta computation compares the old and new page byte by byte;
 * with two pages per moving UPDATE it was most of an UPDATE's time.  This
 * file compares eight bytes at a time and emits the same record format
 * (fragments of <offset, length, bytes> per page), with the same rules:
 * the bytes between pd_lower and pd_upper are a hole that is neither
 * logged nor kept (zeroed here, as generic_redo zeroes it on replay), and
 * a page marked full-image is logged whole.
 *
 * The interface mirrors access/generic_xlog.h: start, register each
 * exclusively locked buffer to get a private image of its page, change the
 * images, finish.  Nothing reaches the buffers before finish, which copies
 * the images in and logs them inside one critical section; abort simply
 * drops the images.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/generic_xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "utils/rel.h"

#include "minidb_am.h"

/* A fragment header: offset and length, as generic_xlog.c writes them */
#define FRAGMENT_HEADER_SIZE	(2 * sizeof(OffsetNumber))
/* Differences closer than this join one fragment (a header costs 4 bytes) */
#define MERGE_GAP				8
/* Worst case: every other word differs */
#define MAX_DELTA_SIZE			(BLCKSZ + (BLCKSZ / (2 * sizeof(uint64))) * FRAGMENT_HEADER_SIZE)

typedef struct MinidbWalPage
{
	Buffer		buffer;
	int			flags;
	int			deltalen;
	PGAlignedBlock image;
	char		delta[MAX_DELTA_SIZE];
} MinidbWalPage;

struct MinidbWalState
{
	bool		logged;
	MinidbWalPage pages[MINIDB_WAL_MAX_PAGES];
};

MinidbWalState *
minidb_wal_start(Relation rel)
{
	MinidbWalState *state = palloc(sizeof(MinidbWalState));

	state->logged = RelationNeedsWAL(rel);
	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		state->pages[i].buffer = InvalidBuffer;
	return state;
}

/*
 * The image of an exclusively locked buffer's page, to be changed by the
 * caller.  Registering the same buffer twice returns the same image.
 */
Page
minidb_wal_register(MinidbWalState *state, Buffer buffer, int flags)
{
	for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
	{
		MinidbWalPage *p = &state->pages[i];

		if (p->buffer == buffer)
		{
			p->flags |= flags;
			return (Page) p->image.data;
		}
		if (BufferIsInvalid(p->buffer))
		{
			p->buffer = buffer;
			p->flags = flags;
			memcpy(p->image.data, BufferGetPage(buffer), BLCKSZ);
			return (Page) p->image.data;
		}
	}
	elog(ERROR, "maximum number %d of minidb WAL buffers is exceeded",
		 MINIDB_WAL_MAX_PAGES);
	return NULL;				/* keep compiler quiet */
}

static void
append_fragment(MinidbWalPage *p, const char *image, int start, int end)
{
	OffsetNumber offset = start;
	OffsetNumber length = end - start;
	char	   *ptr = p->delta + p->deltalen;

	memcpy(ptr, &offset, sizeof(offset));
	ptr += sizeof(offset);
	memcpy(ptr, &length, sizeof(length));
	ptr += sizeof(length);
	memcpy(ptr, image + start, length);
	p->deltalen += FRAGMENT_HEADER_SIZE + length;
}

/* Add byte i..i+n of a difference to the open fragment, or flush it */
static inline void
note_difference(MinidbWalPage *p, int i, int n, int *frag_start, int *frag_end)
{
	if (*frag_start >= 0 && i - *frag_end > MERGE_GAP)
	{
		append_fragment(p, p->image.data, *frag_start, *frag_end);
		*frag_start = -1;
	}
	if (*frag_start < 0)
		*frag_start = i;
	*frag_end = i + n;
}

/*
 * Fragments for the bytes of [start, end) that differ between the page as
 * it is and its image: single bytes up to the first aligned word, whole
 * words in between (the hot loop), single bytes after the last one.
 */
static void
delta_region(MinidbWalPage *p, const char *old, int start, int end)
{
	const char *image = p->image.data;
	int			frag_start = -1;
	int			frag_end = -1;
	int			wstart = Min(TYPEALIGN(sizeof(uint64), start), end);
	int			wend = Max(wstart, end - end % (int) sizeof(uint64));
	int			i;

	for (i = start; i < wstart; i++)
		if (old[i] != image[i])
			note_difference(p, i, 1, &frag_start, &frag_end);
	for (i = wstart; i < wend; i += sizeof(uint64))
	{
		if (likely(*(const uint64 *) (old + i) == *(const uint64 *) (image + i)))
			continue;
		note_difference(p, i, sizeof(uint64), &frag_start, &frag_end);
	}
	for (i = wend; i < end; i++)
		if (old[i] != image[i])
			note_difference(p, i, 1, &frag_start, &frag_end);
	if (frag_start >= 0)
		append_fragment(p, image, frag_start, frag_end);
}

static void
compute_delta(MinidbWalPage *p, const char *old)
{
	PageHeader	hdr = (PageHeader) p->image.data;

	p->deltalen = 0;
	delta_region(p, old, 0, hdr->pd_lower);
	delta_region(p, old, hdr->pd_upper, BLCKSZ);
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
minidb_wal_finish(MinidbWalState *state)
{
	XLogRecPtr	lsn = InvalidXLogRecPtr;

	/* deltas need the unchanged pages: compute them before applying */
	if (state->logged)
		for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
		{
			MinidbWalPage *p = &state->pages[i];

			if (BufferIsValid(p->buffer) &&
				!(p->flags & MINIDB_WAL_FULL_IMAGE))
				compute_delta(p, BufferGetPage(p->buffer));
		}

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
		if (!state->logged)
			continue;
		if (p->flags & MINIDB_WAL_FULL_IMAGE)
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
		lsn = XLogInsert(RM_GENERIC_ID, 0);
		for (int i = 0; i < MINIDB_WAL_MAX_PAGES; i++)
			if (BufferIsValid(state->pages[i].buffer))
				PageSetLSN(BufferGetPage(state->pages[i].buffer), lsn);
	}
	END_CRIT_SECTION();
	pfree(state);
	return lsn;
}

void
minidb_wal_abort(MinidbWalState *state)
{
	pfree(state);
}
