/*-------------------------------------------------------------------------
 *
 * minidb_page.c
 *	  The page layer: page changes as functions of (page, arguments).
 *
 * Every change to a minidb page is a function of (page, arguments): add a
 * record, replace a record, carry out a pruning plan.  The primary applies
 * them to a locked buffer's page (compact WAL records, minidb_xlog.c) or to
 * a page image (WAL-logged writes, minidb_wal.c), and replay applies the
 * same functions to the standby's page, which is why primary and standby
 * end with the same layout.  This file calls nothing above it: no WAL, no
 * visibility rules, no buffers beyond the page check.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "storage/bufmgr.h"
#include "storage/bufpage.h"

#include "chain.h"
#include "minidb_page.h"

void
minidb_page_init(Page page)
{
	MinidbPageOpaque opaque;

	PageInit(page, BLCKSZ, sizeof(MinidbPageOpaqueData));
	opaque = MinidbPageGetOpaque(page);
	opaque->md_magic = MINIDB_PAGE_MAGIC;
	opaque->md_flags = 0;
}

/* ----------------------------------------------------------------
 * Reading records off a page
 *
 * Every read of "the record at this line pointer" goes through
 * minidb_page_item (which says what is wrong) or minidb_page_get_record
 * (which raises it), on a page minidb_page_check has accepted as a whole.
 * So a damaged page raises ERRCODE_DATA_CORRUPTED naming relation, block
 * and offset, and nothing reads past the line pointer array, outside the
 * page's tuple space, or past MaxHeapTuplesPerPage items (the bound of
 * every per-page array).
 * ----------------------------------------------------------------
 */

/* What is wrong with a page's header and special area, or NULL */
const char *
minidb_page_damage(Page page)
{
	PageHeader	ph = (PageHeader) page;

	if (ph->pd_special != BLCKSZ - MAXALIGN(sizeof(MinidbPageOpaqueData)) ||
		MinidbPageGetOpaque(page)->md_magic != MINIDB_PAGE_MAGIC)
		return "not a minidb page";
	if (ph->pd_lower < SizeOfPageHeaderData || ph->pd_lower > ph->pd_upper ||
		ph->pd_upper > ph->pd_special)
		return "pd_lower and pd_upper do not frame its free space";
	if (PageGetMaxOffsetNumber(page) > MaxHeapTuplesPerPage)
		return "more line pointers than a page holds";
	return NULL;
}

/*
 * Two line pointers of records that start at the same byte: one of them was
 * damaged into a copy of the other, and the record it named would silently
 * read as the other row.  Line pointers of records that reach outside the
 * page are left to minidb_page_item.  Returns the later of the two (and the
 * earlier in *first), or InvalidOffsetNumber.
 *
 * Records are added downwards, and a record that grows in place moves the
 * ones below it down (PageIndexTupleOverwrite): on most pages every record
 * starts below the one before it, and then none can share a start.  Only
 * a page where that fails (line pointers reused after pruning) takes the
 * map of starts.
 */
OffsetNumber
minidb_page_shared_record(Page page, OffsetNumber *first)
{
	uint64		seen[BLCKSZ / MAXIMUM_ALIGNOF / 64];
	OffsetNumber maxoff = minidb_page_maxoff(page);
	uint32		below = PG_UINT32_MAX;
	ItemId		lps = PageGetItemId(page, FirstOffsetNumber);
	ItemId		step;
	OffsetNumber off;

	/*
	 * Every read checks its page: the line pointer array as an array, one
	 * load and one test of the flags per line pointer
	 */
	for (step = lps; step < lps + maxoff; step++)
	{
		uint32		start = ItemIdGetOffset(step);

		if (ItemIdIsNormal(step))
		{
			if (start >= below)
				break;
			below = start;
		}
	}
	if (step >= lps + maxoff)
		return InvalidOffsetNumber;

	memset(seen, 0, sizeof(seen));
	for (off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		uint32		unit = ItemIdGetOffset(lp) / MAXIMUM_ALIGNOF;

		if (!ItemIdIsNormal(lp) || ItemIdGetOffset(lp) >= BLCKSZ)
			continue;
		if (seen[unit / 64] & (UINT64CONST(1) << (unit % 64)))
		{
			for (OffsetNumber o = FirstOffsetNumber; o < off; o++)
			{
				ItemId		other = PageGetItemId(page, o);

				if (ItemIdIsNormal(other) &&
					ItemIdGetOffset(other) == ItemIdGetOffset(lp))
				{
					*first = o;
					return off;
				}
			}
		}
		seen[unit / 64] |= UINT64CONST(1) << (unit % 64);
	}
	return InvalidOffsetNumber;
}

/*
 * Refuse a page that is not a sound minidb page, or two of whose line
 * pointers name the same record.  New (all-zero) pages are legal: a crash
 * may leave them after a relation extension.
 */
void
minidb_page_check(Relation rel, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);
	const char *why;
	OffsetNumber off;
	OffsetNumber first;

	if (PageIsNew(page))
		return;
	if ((why = minidb_page_damage(page)) != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("page %u of relation \"%s\" is damaged: %s",
						BufferGetBlockNumber(buffer),
						RelationGetRelationName(rel), why)));
	if ((off = minidb_page_shared_record(page, &first)) != InvalidOffsetNumber)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("damaged line pointer in relation \"%s\" at TID (%u,%u)",
						RelationGetRelationName(rel),
						BufferGetBlockNumber(buffer), off),
				 errdetail("Line pointers %u and %u name the same record, at offset %u.",
						   first, off, ItemIdGetOffset(PageGetItemId(page, off)))));
}

/*
 * minidb_page_check, for a page known to be partly sound already: its
 * header and special area passed minidb_page_damage, and its line pointers
 * before off are all normal and name records that start each below the
 * one before, the last of them at below.  Should the line pointers from
 * off on go on descending from there, no two of the page's line pointers
 * can name one record (see minidb_page_shared_record), and the page
 * passes without a second look at the ones before off; otherwise it takes
 * the whole check.  For a scan that checked the first part of the page as
 * it read it (collect_page).
 */
void
minidb_page_check_rest(Relation rel, Buffer buffer, OffsetNumber off,
					   uint32 below)
{
	Page		page = BufferGetPage(buffer);
	OffsetNumber maxoff = minidb_page_maxoff(page);

	Assert(!PageIsNew(page) && minidb_page_damage(page) == NULL);
	Assert(off >= FirstOffsetNumber);
	for (; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);

		if (!ItemIdIsNormal(lp))
			continue;
		if (ItemIdGetOffset(lp) >= below)
		{
			minidb_page_check(rel, buffer);
			return;
		}
		below = ItemIdGetOffset(lp);
	}
}

/*
 * The last line pointer of a page, 0 for a new page; never more than
 * MaxHeapTuplesPerPage, the bound of every per-page array, even on a page
 * that was not checked (minidb_page_check refuses a page with more).
 */
OffsetNumber
minidb_page_maxoff(Page page)
{
	if (PageIsNew(page))
		return InvalidOffsetNumber;
	return Min(PageGetMaxOffsetNumber(page), MaxHeapTuplesPerPage);
}

/*
 * What the item at off of a checked page holds: a record (*rec, *len), no
 * record (past the last line pointer, unused or dead), or damage, with
 * what is wrong in *why: a line pointer that reaches outside the page's
 * tuple space, is not MAXALIGNed, is shorter than a record header, or is a
 * redirect (minidb makes none).
 */
MinidbItem
minidb_page_item(Page page, OffsetNumber off, char **rec, uint32 *len,
				 const char **why)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		lp;
	uint32		lpoff;
	uint32		lplen;

	if (off < FirstOffsetNumber || off > minidb_page_maxoff(page))
		return MINIDB_ITEM_NONE;
	lp = PageGetItemId(page, off);
	if (ItemIdIsRedirected(lp))
	{
		*why = "a redirect line pointer";
		return MINIDB_ITEM_DAMAGED;
	}
	lpoff = ItemIdGetOffset(lp);
	lplen = ItemIdGetLength(lp);
	if (!ItemIdIsNormal(lp))
	{
		/*
		 * Unused and dead items keep no storage here (ItemIdSetUnused and
		 * ItemIdSetDead clear both fields): a record's line pointer whose
		 * flags were damaged would otherwise hide the row without a word.
		 */
		if (lpoff != 0 || lplen != 0)
		{
			*why = psprintf("%s line pointer with storage (offset %u, length %u)",
							ItemIdIsDead(lp) ? "a dead" : "an unused",
							lpoff, lplen);
			return MINIDB_ITEM_DAMAGED;
		}
		return MINIDB_ITEM_NONE;
	}
	/* the fixed end too: pd_special may have changed since the check */
	if (lpoff != MAXALIGN(lpoff) || lpoff < ph->pd_upper ||
		lpoff + lplen > ph->pd_special ||
		lpoff + lplen > BLCKSZ - MAXALIGN(sizeof(MinidbPageOpaqueData)))
	{
		*why = psprintf("line pointer (offset %u, length %u) outside the page's tuple space %u..%u",
						lpoff, lplen, ph->pd_upper, ph->pd_special);
		return MINIDB_ITEM_DAMAGED;
	}
	if (lplen < MINIDB_R3_INFO_PREFIX)
	{
		*why = psprintf("line pointer length %u is shorter than a record header",
						lplen);
		return MINIDB_ITEM_DAMAGED;
	}
	*rec = (char *) page + lpoff;
	*len = lplen;
	return MINIDB_ITEM_RECORD;
}

typedef struct ItemSpan
{
	OffsetNumber off;
	uint32		start;
	uint32		end;
} ItemSpan;

static int
item_span_cmp(const void *a, const void *b)
{
	const ItemSpan *x = a;
	const ItemSpan *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/*
 * Before a page is compacted (PageRepairFragmentation, which refuses a
 * page whose items reach outside the tuple space or overlap, naming no
 * item): raise ERRCODE_DATA_CORRUPTED naming the relation and the TID of
 * the first such item.  For pruning and VACUUM, which read only the
 * records they change.
 */
void
minidb_page_check_items(Relation rel, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);
	PageHeader	ph = (PageHeader) page;
	OffsetNumber maxoff = minidb_page_maxoff(page);
	ItemSpan	spans[MaxHeapTuplesPerPage];
	int			n = 0;
	OffsetNumber bad = InvalidOffsetNumber;
	OffsetNumber other = InvalidOffsetNumber;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		uint32		lpoff = ItemIdGetOffset(lp);
		uint32		lplen = ItemIdGetLength(lp);

		if (!ItemIdIsUsed(lp) || !ItemIdHasStorage(lp))
			continue;
		if (lpoff < ph->pd_upper || lpoff + MAXALIGN(lplen) > ph->pd_special ||
			lpoff != MAXALIGN(lpoff))
		{
			bad = off;
			break;
		}
		spans[n].off = off;
		spans[n].start = lpoff;
		spans[n].end = lpoff + MAXALIGN(lplen);
		n++;
	}
	if (bad == InvalidOffsetNumber)
	{
		qsort(spans, n, sizeof(ItemSpan), item_span_cmp);
		for (int i = 1; i < n && bad == InvalidOffsetNumber; i++)
			if (spans[i].start < spans[i - 1].end)
			{
				bad = Max(spans[i].off, spans[i - 1].off);
				other = Min(spans[i].off, spans[i - 1].off);
			}
	}
	if (bad == InvalidOffsetNumber)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("damaged line pointer in relation \"%s\" at TID (%u,%u)",
					RelationGetRelationName(rel), BufferGetBlockNumber(buffer),
					bad),
			 OffsetNumberIsValid(other) ?
			 errdetail("Its record (offset %u, length %u) overlaps that of line pointer %u.",
					   ItemIdGetOffset(PageGetItemId(page, bad)),
					   ItemIdGetLength(PageGetItemId(page, bad)), other) :
			 errdetail("Its record (offset %u, length %u) lies outside the page's tuple space %u..%u.",
					   ItemIdGetOffset(PageGetItemId(page, bad)),
					   ItemIdGetLength(PageGetItemId(page, bad)),
					   ph->pd_upper, ph->pd_special)));
}

/*
 * Where a pointer into a record on a shared or local buffer's page points:
 * the buffer and the item whose record holds it.  For reporting damage
 * found inside a record by code that was handed only its bytes; false for
 * private copies.  The buffer must be pinned (it is: its bytes are being
 * read).
 */
bool
minidb_page_locate(const void *ptr, Buffer *buffer, OffsetNumber *off)
{
	const char *p = (const char *) ptr;
	Buffer		b = InvalidBuffer;

	if (p >= BufferBlocks && p < BufferBlocks + (Size) NBuffers * BLCKSZ)
		b = (Buffer) ((p - BufferBlocks) / BLCKSZ) + 1;
	else
	{
		for (int i = 0; i < NLocBuffer; i++)
			if (LocalBufferBlockPointers[i] != NULL &&
				p >= (char *) LocalBufferBlockPointers[i] &&
				p < (char *) LocalBufferBlockPointers[i] + BLCKSZ)
				b = -(i + 1);
	}
	if (b == InvalidBuffer ||
		!minidb_page_item_holding(BufferGetPage(b), ptr, off))
		return false;
	*buffer = b;
	return true;
}

/*
 * The item of page (a buffer's, or an image of one) whose record holds
 * ptr, a pointer into the page; false when there is none, or when the
 * page is new or damaged (its line pointers cannot be trusted).
 */
bool
minidb_page_item_holding(Page page, const void *ptr, OffsetNumber *off)
{
	const char *p = (const char *) ptr;
	OffsetNumber maxoff;

	if (PageIsNew(page) || minidb_page_damage(page) != NULL)
		return false;
	maxoff = minidb_page_maxoff(page);
	for (OffsetNumber o = FirstOffsetNumber; o <= maxoff; o++)
	{
		ItemId		lp = PageGetItemId(page, o);

		if (ItemIdIsNormal(lp) && p >= (char *) page + ItemIdGetOffset(lp) &&
			p < (char *) page + ItemIdGetOffset(lp) + ItemIdGetLength(lp))
		{
			*off = o;
			return true;
		}
	}
	return false;
}

/*
 * The record a normal line pointer of page names, for counting reserves:
 * NULL when the line pointer is damaged (readers report that; the reserve
 * counts it as MINIDB_LEGACY_RESERVE).
 */
static inline const char *
reserve_record(Page page, ItemId lp, uint32 upper, uint32 special)
{
	uint32		lpoff = ItemIdGetOffset(lp);
	uint32		lplen = ItemIdGetLength(lp);

	if (unlikely(lpoff < upper || lplen < MINIDB_R3_INFO_PREFIX ||
				 lpoff + lplen > special))
		return NULL;
	return (const char *) page + lpoff;
}

/*
 * The page's reserve, or with bound_only an upper bound of it read off each
 * record's first byte: MINIDB_SLOT_RESERVE for a V3 record (what v3_reserve
 * returns at most), MINIDB_LEGACY_RESERVE for any other.  A damaged line
 * pointer counts MINIDB_LEGACY_RESERVE either way.  The bound's walk stops
 * once what it counted, with the most the remaining line pointers could
 * add, is at most stop, and returns that sum: a bound still, and all that
 * page_reserve_within needs to know.
 */
static pg_attribute_always_inline Size
page_reserve_sum(Page page, bool bound_only, Size stop)
{
	OffsetNumber maxoff = minidb_page_maxoff(page);
	Size		reserve = 0;

	/*
	 * Writers looking for room run this for every UPDATE: the page's bounds
	 * and each line pointer are read once (the compiler cannot tell that
	 * the records' bytes read here do not overlap them), and the line
	 * pointers are walked as the array they are.  The bound starts as if
	 * every line pointer kept MINIDB_LEGACY_RESERVE and comes down by what
	 * each V3 record keeps less.
	 */
	uint32		upper = ((PageHeader) page)->pd_upper;
	uint32		special = ((PageHeader) page)->pd_special;
	ItemId		lps = PageGetItemId(page, FirstOffsetNumber);

	if (bound_only)
		reserve = (Size) maxoff * MINIDB_LEGACY_RESERVE;
	for (ItemId lp = lps; lp < lps + maxoff; lp++)
	{
		const char *rec;

		if (!ItemIdIsNormal(lp))
		{
			if (bound_only)
				reserve -= MINIDB_LEGACY_RESERVE;
			continue;
		}
		rec = reserve_record(page, lp, upper, special);
		if (!bound_only)
			reserve += rec ? minidb_record_reserve_quick(rec,
														 ItemIdGetLength(lp)) :
				MINIDB_LEGACY_RESERVE;
		/* (V1 and V2 records' first bytes have other low bits) */
		else if (rec &&
				 ((uint8) rec[0] & MINIDB_R3_FORMAT_MASK) == MINIDB_FORMAT_V3)
		{
			reserve -= MINIDB_LEGACY_RESERVE - MINIDB_SLOT_RESERVE;
			if (reserve <= stop)
				return reserve;
		}
	}
	return reserve;
}

/*
 * Space the page keeps for its records' ends and locks (see minidb_page.h):
 * what each record may still grow by (minidb_record_reserve: at most 8
 * bytes for a V3 record, nothing once its xmax and successor fields are
 * there; a marker for a V1 or V2 record).  Reads the start of every record:
 * a few microseconds per page; writers looking for room ask
 * page_reserve_within, which mostly does without.
 */
Size
minidb_page_reserve(Page page)
{
	return page_reserve_sum(page, false, 0);
}

/*
 * What the line pointer at off adds to the page's reserve, as
 * minidb_page_reserve counts it: for a writer that keeps a page's reserve
 * through its change of the record at off (minidb_hio.c).
 */
Size
minidb_page_item_reserve(Page page, OffsetNumber off)
{
	ItemId		lp = PageGetItemId(page, off);
	const char *rec;

	if (off > minidb_page_maxoff(page) || !ItemIdIsNormal(lp))
		return 0;
	rec = reserve_record(page, lp, ((PageHeader) page)->pd_upper,
						 ((PageHeader) page)->pd_special);
	if (rec == NULL)
		return MINIDB_LEGACY_RESERVE;
	return minidb_record_reserve_quick(rec, ItemIdGetLength(lp));
}

/*
 * Is the page's reserve at most limit?  Most pages being written have room
 * to spare, which a bound tells without reading every record's header:
 * first the line pointer count times the most any record keeps, then
 * page_reserve_sum's bound.  minidb_page_reserve sums it only when both are
 * over.  (The sanitizer build checks the bound it used against the sum.)
 *
 * With known non-NULL, the caller may know the reserve (*known is not
 * MINIDB_RESERVE_UNKNOWN: it is used as it is) or wants it: where the first
 * bound does not answer, the reserve is summed exactly and left in *known.
 */
bool
minidb_page_reserve_within(Page page, Size limit, Size *known)
{
	Size		bound;

	if (minidb_page_reserve_clearly_within(page, limit))
		return true;
	if (known && *known != MINIDB_RESERVE_UNKNOWN)
		return *known <= limit;
	if (known)
	{
		*known = minidb_page_reserve(page);
		return *known <= limit;
	}
	bound = page_reserve_sum(page, true, limit);
#ifdef MINIDB_CHECK_FAST_PATH
	if (minidb_page_reserve(page) > bound)
		elog(ERROR, "minidb page reserve %zu over its bound %zu",
			 minidb_page_reserve(page), bound);
#endif
	if (bound <= limit)
		return true;
	return minidb_page_reserve(page) <= limit;
}

/*
 * Room for a new record (minidb_page_record_room: its bytes and its own
 * reserve) with its line pointer, the reserve of the page's records kept:
 * what the free space map records.
 */
Size
minidb_page_free_for_insert(Page page)
{
	Size		space = PageGetFreeSpace(page);	/* minus one line pointer */
	Size		reserve = minidb_page_reserve(page);

	if (PageGetMaxOffsetNumber(page) >= MaxHeapTuplesPerPage)
		return 0;
	return space > reserve ? space - reserve : 0;
}

/*
 * Room for a new record taking needed bytes (minidb_page_record_room, plus
 * any room the caller keeps free), its line pointer and the page's reserve
 * kept: minidb_page_free_for_insert(page) >= needed, without summing the
 * reserve when the page clearly has room.  In two steps for a writer that
 * may know the reserve (minidb_hio.c): whether the bytes fit, and if so
 * the most the reserve may be (*limit), then minidb_page_reserve_within.
 */
bool
minidb_page_insert_limit(Page page, Size needed, Size *limit)
{
	Size		space = PageGetFreeSpace(page);	/* minus one line pointer */

	Assert(needed > 0);
	if (PageGetMaxOffsetNumber(page) >= MaxHeapTuplesPerPage)
		return false;
	if (space < needed)
		return false;
	*limit = space - needed;
	return true;
}

bool
minidb_page_room_for_insert(Page page, Size needed)
{
	Size		limit;

	return minidb_page_insert_limit(page, needed, &limit) &&
		minidb_page_reserve_within(page, limit, NULL);
}

/*
 * Room for the record at off to become newlen bytes keeping newreserve
 * (minidb_record_reserve of the new record, or a bound of it such as
 * minidb_format_reserve), reserves kept.  The page's reserve counts the
 * record as it is; a new record that keeps more asks for the difference
 * as well: a V3 record whose moving UPDATE aborted holds its xmax and
 * successor fields (reserve 0), and the prepend that drops them makes a
 * record that keeps 8 bytes again.
 */
bool
minidb_page_replace_limit(Page page, OffsetNumber off, uint32 newlen,
						  Size newreserve, Size *limit)
{
	ItemId		lp = PageGetItemId(page, off);
	Size		avail = PageGetExactFreeSpace(page) +
		MAXALIGN(ItemIdGetLength(lp));
	Size		oldreserve = minidb_page_item_reserve(page, off);
	Size		needed = MAXALIGN(newlen);

	if (newreserve > oldreserve)
		needed += newreserve - oldreserve;
	if (avail < needed)
		return false;
	*limit = avail - needed;
	return true;
}

bool
minidb_page_room_for_replace(Page page, OffsetNumber off, uint32 newlen,
							 Size newreserve)
{
	Size		limit;

	return minidb_page_replace_limit(page, off, newlen, newreserve, &limit) &&
		minidb_page_reserve_within(page, limit, NULL);
}

/*
 * The last look before a write's critical section: will the page take a
 * new item of addlen bytes (0: none), then len bytes in place of the
 * record at off?  PageAddItem's and
 * PageIndexTupleOverwrite's own test, counting a new line pointer for the
 * item as the room checks do.  Those checks keep every record's reserve,
 * so that a DELETE, a row lock or the end a moving UPDATE writes always
 * fits; but a page whose header frames less free space than that reserve
 * (pd_upper or pd_lower damaged while every record still lies inside the
 * page, which no read notices) would make the change fail inside the
 * critical section, a PANIC.  Raise ERRCODE_DATA_CORRUPTED naming the
 * relation and block instead, before anything has changed.
 */
void
minidb_page_ensure_room(Relation rel, Buffer buffer, OffsetNumber off,
						uint32 len, uint32 addlen)
{
	PageHeader	ph = (PageHeader) BufferGetPage(buffer);
	Size		free = (ph->pd_upper > ph->pd_lower) ?
		ph->pd_upper - ph->pd_lower : 0;
	Size		old = MAXALIGN(ItemIdGetLength(PageGetItemId((Page) ph, off)));
	Size		need = 0;

	if (addlen > 0)
		need += MAXALIGN(addlen) + sizeof(ItemIdData);
	if (MAXALIGN(len) > old)
		need += MAXALIGN(len) - old;
	if (likely(need <= free))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("no room for a change of the record in relation \"%s\" at TID (%u,%u)",
					RelationGetRelationName(rel), BufferGetBlockNumber(buffer),
					off),
			 errdetail("The change needs %zu bytes and the page has %zu free, less than the room its records keep for their ends: its header or a record is damaged.",
					   need, free),
			 errhint("minidb_verify lists such pages; VACUUM FULL rewrites the table.")));
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
 * The record at off of a locked buffer's page that minidb_page_check has
 * accepted, or NULL when the item holds none; a damaged line pointer
 * raises ERRCODE_DATA_CORRUPTED naming relation, block and offset.
 */
char *
minidb_page_record(Relation rel, Buffer buffer, OffsetNumber off,
				   uint32 *len)
{
	const char *why;
	char	   *rec;

	/* the common case first (a -DMINIDB_CHECK_FAST_PATH build checks it) */
	rec = minidb_page_record_plain(BufferGetPage(buffer), off, len);
	if (likely(rec != NULL))
	{
#ifdef MINIDB_CHECK_FAST_PATH
		char	   *item;
		uint32		itemlen;

		if (minidb_page_item(BufferGetPage(buffer), off, &item, &itemlen,
							 &why) != MINIDB_ITEM_RECORD ||
			item != rec || itemlen != *len)
			elog(ERROR, "minidb_page_record_plain took item %u of block %u of \"%s\" for a record minidb_page_item does not see",
				 off, BufferGetBlockNumber(buffer),
				 RelationGetRelationName(rel));
#endif
		return rec;
	}
	switch (minidb_page_item(BufferGetPage(buffer), off, &rec, len, &why))
	{
		case MINIDB_ITEM_RECORD:
			return rec;
		case MINIDB_ITEM_NONE:
			return NULL;
		case MINIDB_ITEM_DAMAGED:
			break;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("damaged line pointer in relation \"%s\" at TID (%u,%u)",
					RelationGetRelationName(rel),
					BufferGetBlockNumber(buffer), off),
			 errdetail("%s.", why)));
	return NULL;				/* keep compiler quiet */
}

/*
 * Before a write rewrites every version of the record at off of a locked
 * buffer from a page image (minidb_write_page, a private copy of the page):
 * damage in versions no read visited raises ERRCODE_DATA_CORRUPTED naming
 * relation, block and offset here, where the record lies on the buffer's
 * page; found in the copy, it could name none.
 */
void
minidb_page_record_validate(Relation rel, Buffer buffer, OffsetNumber off)
{
	uint32		len;
	char	   *rec = minidb_page_record(rel, buffer, off, &len);
	MinidbChainError err;

	if (rec && !minidb_record_validate(rec, len, &err))
		minidb_record_damaged(rec, &err);
}

/*
 * The record at off of a page image a write is changing (minidb_write_page
 * hands it out; the caller found the record on the buffer's page, checked,
 * before): ERROR if it is not there, which cannot happen.
 */
char *
minidb_image_record(Page image, OffsetNumber off, uint32 *len)
{
	const char *why = "no record";
	char	   *rec;

	/* the common case first (a -DMINIDB_CHECK_FAST_PATH build checks it) */
	rec = minidb_page_record_plain(image, off, len);
	if (likely(rec != NULL))
	{
#ifdef MINIDB_CHECK_FAST_PATH
		char	   *item;
		uint32		itemlen;

		if (minidb_page_item(image, off, &item, &itemlen, &why) !=
			MINIDB_ITEM_RECORD || item != rec || itemlen != *len)
			elog(ERROR, "minidb_page_record_plain took item %u of a page image for a record minidb_page_item does not see",
				 off);
#endif
		return rec;
	}
	if (minidb_page_item(image, off, &rec, len, &why) != MINIDB_ITEM_RECORD)
		elog(ERROR, "minidb page image has no record at offset %u: %s",
			 off, why);
	return rec;
}

/* The same, checking the page first */
char *
minidb_page_get_record(Relation rel, Buffer buffer, OffsetNumber off,
					   uint32 *len)
{
	minidb_page_check(rel, buffer);
	return minidb_page_record(rel, buffer, off, len);
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
	minidb_page_check(rel, buffer);
	return minidb_page_checked_record_at(rel, buffer, tid, len);
}

/*
 * The same on a page this backend has checked with minidb_page_record_at
 * and kept pinned since (it may have let the buffer's lock go: the page
 * stayed in memory, and what changed it meanwhile were writers, which keep
 * a page whole), without checking the page again.
 */
char *
minidb_page_checked_record_at(Relation rel, Buffer buffer, ItemPointer tid,
							  uint32 *len)
{
	char	   *rec = minidb_page_record(rel, buffer,
										 ItemPointerGetOffsetNumber(tid), len);

	if (rec == NULL)
		elog(ERROR, "no minidb record at (%u,%u) in relation \"%s\"",
			 ItemPointerGetBlockNumber(tid), ItemPointerGetOffsetNumber(tid),
			 RelationGetRelationName(rel));
	return rec;
}

/* ----------------------------------------------------------------
 * Prepending a version
 * ----------------------------------------------------------------
 */

/*
 * The change itself, on primary and in replay alike, in two steps so that
 * the primary allocates nothing inside its critical section.
 *
 * minidb_prepend_build: the record at off pruned to keep[] (if given), with
 * v prepended in format (see minidb_record_prepend_ex); palloc'd, its
 * length in *newlen.  The row lockers stay under a new data version: a
 * lock covers every version of the row, and it outlives its own
 * transaction's update (and that update's rollback to a savepoint), as
 * heap keeps a locker beside the updater in a multixact; once they all
 * ended the writer drops them (extra->drop_lockers, logged with the change).
 */
char *
minidb_prepend_build(Page page, OffsetNumber off, const bool *keep,
					 const MinidbVersionData *v, int format,
					 const MinidbRecordEnd *extra, uint32 *newlen)
{
	ItemId		lp = PageGetItemId(page, off);
	uint32		len = ItemIdGetLength(lp);
	const char *rec = (const char *) PageGetItem(page, lp);
	char	   *pruned = NULL;
	uint32		newsize;
	char	   *buf;

	if (keep)
	{
		int			nnewest;

		/*
		 * Pruning before an UPDATE mostly keeps the newest versions of a V3
		 * record, as they are stored: then the new record is built straight
		 * from the page's.  The cheap bound of the unpruned record's new
		 * length bounds the pruned one's, which is no longer.
		 */
		if ((format == 0 || format == minidb_record_format_of(rec)) &&
			(nnewest = minidb_record_kept_newest(rec, len, keep)) > 0)
		{
			newsize = MAXALIGN(minidb_record_prepend_size(len, v));
			buf = palloc(newsize);
			*newlen = minidb_record_prepend_newest(buf, newsize, rec, len,
												   nnewest, v, extra);
			return buf;
		}
		/* otherwise pruning rewrites a copy of the record first */
		pruned = palloc(MAXALIGN(len));
		memcpy(pruned, rec, len);
		len = minidb_record_prune(pruned, len, keep);
		rec = pruned;
	}

	/*
	 * In the record's own format the cheap upper bound of its new length
	 * (the fuzzer checks that it is one) spares sizing the write twice;
	 * the builder refuses to write past the buffer's end.  It reads the
	 * record and writes into a buffer of its own, so an unpruned record is
	 * read where it lies on the page.
	 */
	if (format == 0 || format == minidb_record_format_of(rec))
		newsize = minidb_record_prepend_size(len, v);
	else
		newsize = minidb_record_prepend_size_ex(rec, len, v, format, extra);
	buf = palloc(MAXALIGN(newsize));
	*newlen = minidb_record_prepend_ex(buf, MAXALIGN(newsize), rec, len, v,
									   format, extra);
	if (pruned)
		pfree(pruned);
	return buf;
}

/*
 * The record at off with its row lockers set (or cleared); palloc'd.
 *
 * Setting lockers grows a record by at most MINIDB_SLOT_RESERVE (the room
 * its page keeps for it; the fuzzer checks that bound), so a lock is
 * built in one pass into a buffer that long, the builder refusing to write
 * past its end, instead of being sized first (a second parse of the whole
 * record, a third of a row lock's cost).  Clearing them, or keeping a
 * row's end, is sized first.
 */
char *
minidb_lockers_build(Page page, OffsetNumber off, const MinidbLockers *lk,
					 uint32 *newlen)
{
	ItemId		lp = PageGetItemId(page, off);
	uint32		len = ItemIdGetLength(lp);
	const char *rec = (const char *) PageGetItem(page, lp);
	uint32		newsize;
	char	   *buf;

	if (lk != NULL && TransactionIdIsValid(lk->xid) && !lk->with_updater)
		newsize = len + MINIDB_SLOT_RESERVE;
	else
		newsize = minidb_record_set_lockers_size(rec, len, lk);
	buf = palloc(MAXALIGN(newsize));
	*newlen = minidb_record_set_lockers(buf, MAXALIGN(newsize), rec, len, lk);
#ifdef MINIDB_CHECK_FAST_PATH
	if (*newlen != minidb_record_set_lockers_size(rec, len, lk))
		elog(ERROR, "row lock build of %u bytes and its size %u disagree",
			 *newlen, minidb_record_set_lockers_size(rec, len, lk));
#endif
	return buf;
}

/*
 * minidb_prepend_place: put the built record in place of the old one; the
 * version it superseded is prunable once xmin is old enough.
 */
void
minidb_prepend_place(Page page, OffsetNumber off, const char *rec,
					 uint32 len, TransactionId xmin)
{
	minidb_page_replace_record(page, off, rec, len);
	PageSetPrunable(page, xmin);
}

/*
 * A damaged record, found by the record layer (err) at tid: raise
 * ERRCODE_DATA_CORRUPTED naming the relation, block and offset.
 */
void
minidb_report_corruption(Relation rel, ItemPointer tid,
						 const MinidbChainError *err)
{
	if (err->version < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
						RelationGetRelationName(rel),
						ItemPointerGetBlockNumberNoCheck(tid),
						ItemPointerGetOffsetNumberNoCheck(tid)),
				 errdetail("Record header field \"%s\": %s.",
						   err->field, err->detail)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
					RelationGetRelationName(rel),
					ItemPointerGetBlockNumberNoCheck(tid),
					ItemPointerGetOffsetNumberNoCheck(tid)),
			 errdetail("Version %d, field \"%s\": %s.",
					   err->version, err->field, err->detail)));
}

/*
 * Walking every version of a record, newest first, for callers that want
 * damage raised (ERRCODE_DATA_CORRUPTED, naming relation and TID): the
 * walk checks each version before yielding it, and the tail at the end.
 */
void
minidb_walk_begin(MinidbVersionWalk *w, Relation rel, ItemPointer tid,
				  char *rec, uint32 len)
{
	MinidbChainError err;

	w->rel = rel;
	w->tid = *tid;
	if (!minidb_chain_iter_init(&w->it, rec, len, &err))
		minidb_report_corruption(rel, tid, &err);
}

bool
minidb_walk_next(MinidbVersionWalk *w, MinidbVersionRef *ref)
{
	MinidbChainError err;
	bool		damaged = false;

	if (minidb_chain_iter_next(&w->it, ref, &err, &damaged))
		return true;
	if (damaged)
		minidb_report_corruption(w->rel, &w->tid, &err);
	return false;
}

/* ----------------------------------------------------------------
 * Pruning plans
 *
 * Pruning (minidb_prune.c) and VACUUM (minidb_vacuum.c) decide what to do
 * to a page from the visibility rules, then carry the decision out here:
 * plan, then execute, as pruneheap.c's heap_page_prune and
 * heap_page_prune_execute.  Replay of the compact PRUNE record executes the
 * logged plan on the standby's page (minidb_xlog.c).  The plan names each
 * record's versions by index, newest first, as the record holds them
 * before the change.
 * ----------------------------------------------------------------
 */

/* Start an empty plan */
void
minidb_plan_init(MinidbPagePlan *plan)
{
	plan->conflict_xid = InvalidTransactionId;
	plan->prune_xid = InvalidTransactionId;
	plan->flags = 0;
	plan->nrecords = 0;
	plan->nactions = 0;
	plan->ndead = 0;
	plan->nunused = 0;
	plan->nremoved = 0;
}

/*
 * Add a record with nversions versions to a plan; returns its actions
 * (one per version, MINIDB_PLAN_KEEP by default) to fill in.
 */
uint8 *
minidb_plan_add_record(MinidbPagePlan *plan, OffsetNumber off,
					   int nversions, uint8 flags)
{
	MinidbRecordPlan *rp;
	uint8	   *actions;

	if (plan->nrecords >= MaxHeapTuplesPerPage || nversions < 1 ||
		plan->nactions + nversions > MINIDB_MAX_PAGE_VERSIONS)
		elog(ERROR, "minidb pruning plan overflows (record %d, %d versions)",
			 plan->nrecords, nversions);
	rp = &plan->records[plan->nrecords++];
	rp->off = off;
	rp->nversions = (uint16) nversions;
	rp->first = (uint16) plan->nactions;
	rp->flags = flags;
	rp->locker = InvalidTransactionId;
	rp->lockmode = MINIDB_LOCK_NONE;
	actions = plan->actions + plan->nactions;
	memset(actions, MINIDB_PLAN_KEEP, nversions);
	plan->nactions += nversions;
	return actions;
}

/* Let xid, if normal and newer, be the plan's conflict horizon */
void
minidb_plan_note_xid(MinidbPagePlan *plan, TransactionId xid)
{
	if (TransactionIdIsNormal(xid) &&
		(!TransactionIdIsValid(plan->conflict_xid) ||
		 TransactionIdFollows(xid, plan->conflict_xid)))
		plan->conflict_xid = xid;
}

/* Does the plan change anything? */
bool
minidb_plan_is_empty(const MinidbPagePlan *plan)
{
	return plan->nrecords == 0 && plan->ndead == 0 && plan->nunused == 0 &&
		!(plan->flags & (MINIDB_PLAN_SET_PRUNE_XID | MINIDB_PLAN_TRUNCATE_LP));
}

/* The item at off, which the plan says is a record; ERROR otherwise */
static ItemId
plan_item(Page page, OffsetNumber off, bool normal)
{
	ItemId		lp;

	if (off < FirstOffsetNumber || off > PageGetMaxOffsetNumber(page))
		elog(ERROR, "minidb pruning plan names offset %u of a page with %u items",
			 off, (unsigned int) PageGetMaxOffsetNumber(page));
	lp = PageGetItemId(page, off);
	if (normal && (!ItemIdIsNormal(lp) ||
				   ItemIdGetLength(lp) < MINIDB_R3_INFO_PREFIX))
		elog(ERROR, "minidb pruning plan names offset %u, which holds no record",
			 off);
	return lp;
}

/* The row lockers a record plan sets, or clears */
static void
plan_lockers(const MinidbRecordPlan *rp, MinidbLockers *lk)
{
	lk->xid = InvalidTransactionId;
	lk->mode = MINIDB_LOCK_NONE;
	lk->multi = false;
	lk->with_updater = false;
	if (rp->flags & MINIDB_RPLAN_SET_LOCKER)
	{
		lk->xid = rp->locker;
		lk->mode = rp->lockmode;
		lk->multi = (rp->flags & MINIDB_RPLAN_LOCKER_MULTI) != 0;
	}
}

/* Carry out one record's part of a plan; true if the record shrank */
static bool
execute_record(Page page, const MinidbRecordPlan *rp, const uint8 *actions)
{
	ItemId		lp = plan_item(page, rp->off, true);
	char	   *rec = (char *) PageGetItem(page, lp);
	uint32		len = ItemIdGetLength(lp);
	uint32		newlen = len;
	bool		keep[MINIDB_MAX_PAGE_VERSIONS];
	bool		prune = false;
	bool		freeze = false;
	int			nversions = minidb_record_nversions(rec, len);

	if (nversions != rp->nversions)
		elog(ERROR, "minidb record at offset %u holds %d versions, its pruning plan %u",
			 rp->off, nversions, rp->nversions);
	for (int i = 0; i < rp->nversions; i++)
	{
		keep[i] = (actions[i] & MINIDB_PLAN_KEEP) != 0;
		prune |= !keep[i];
		freeze |= (actions[i] & MINIDB_PLAN_FREEZE) != 0;
	}

	/* freeze first: the plan numbers the versions before pruning */
	if (freeze)
	{
		MinidbChainIter it;
		MinidbVersionRef ref;
		MinidbChainError err;
		bool		damaged = false;

		if (!minidb_chain_iter_init(&it, rec, len, &err))
			damaged = true;
		else
			while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
				if ((actions[ref.index] & MINIDB_PLAN_FREEZE) &&
					!(ref.vh->vh_flags & MINIDB_V_VIRTUAL))
					ref.vh->vh_flags |= MINIDB_V_FROZEN;
		if (damaged)
			elog(ERROR, "minidb record at offset %u to freeze is damaged: version %d, field \"%s\": %s",
				 rp->off, err.version, err.field, err.detail);
	}
	/* then prune (an aborted end goes), then the lockers */
	if (prune)
	{
		if (!minidb_record_prune_fits(rec, len, keep))
			elog(ERROR, "minidb pruning plan would grow the record at offset %u",
				 rp->off);
		newlen = minidb_record_prune(rec, len, keep);
		if (newlen == 0)
			elog(ERROR, "minidb pruning plan keeps no version of the record at offset %u",
				 rp->off);
	}
	if (rp->flags & MINIDB_RPLAN_SET_END_XID)
		minidb_record_set_end_xid(rec, newlen, rp->locker);
	else if (rp->flags & (MINIDB_RPLAN_CLEAR_LOCKER | MINIDB_RPLAN_SET_LOCKER))
	{
		MinidbLockers lk;

		plan_lockers(rp, &lk);
		if (minidb_record_set_lockers_size(rec, newlen, &lk) > newlen)
			elog(ERROR, "minidb pruning plan would grow the record at offset %u",
				 rp->off);
		newlen = minidb_record_set_lockers(rec, newlen, rec, newlen, &lk);
	}
	if (newlen != len)
	{
		/* shorter in place; PageRepairFragmentation moves it */
		ItemIdSetNormal(lp, ItemIdGetOffset(lp), newlen);
		return true;
	}
	return false;
}

/*
 * Carry out a plan on a page: freeze, forget lockers and prune each planned
 * record in place, mark the dead items LP_DEAD and the unused ones
 * LP_UNUSED, then compact the page (PageRepairFragmentation) if anything
 * shrank or went, truncate the line pointer array if asked, and set
 * pd_prune_xid.  The same plan on the same page gives the same bytes,
 * hint bits aside: that is what replay relies on.
 */
void
minidb_page_execute_plan(Page page, const MinidbPagePlan *plan)
{
	bool		repair = false;

	for (int i = 0; i < plan->nrecords; i++)
	{
		const MinidbRecordPlan *rp = &plan->records[i];

		if ((int) rp->first + rp->nversions > plan->nactions)
			elog(ERROR, "minidb pruning plan is inconsistent");
		repair |= execute_record(page, rp, plan->actions + rp->first);
	}
	for (int i = 0; i < plan->ndead; i++)
	{
		ItemId		lp = plan_item(page, plan->dead[i], false);

		repair |= ItemIdHasStorage(lp);
		ItemIdSetDead(lp);
	}
	for (int i = 0; i < plan->nunused; i++)
	{
		ItemId		lp = plan_item(page, plan->unused[i], false);

		repair |= ItemIdHasStorage(lp);
		ItemIdSetUnused(lp);
	}
	if (repair)
		PageRepairFragmentation(page);
	if (plan->flags & MINIDB_PLAN_TRUNCATE_LP)
		PageTruncateLinePointerArray(page);
	if (plan->flags & MINIDB_PLAN_SET_PRUNE_XID)
		((PageHeader) page)->pd_prune_xid = plan->prune_xid;
}
