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

#if PG_VERSION_NUM >= 160000	/* 16: RelFileNode became RelFileLocator */
typedef RelFileLocator MemoRelFile;
#define MEMO_REL_FILE(rel)			((rel)->rd_locator)
#define MEMO_REL_FILE_EQUALS(a, b)	RelFileLocatorEquals(a, b)
#define MEMO_REL_NUMBER(rel)		((rel)->rd_locator.relNumber)
#else
typedef RelFileNode MemoRelFile;
#define MEMO_REL_FILE(rel)			((rel)->rd_node)
#define MEMO_REL_FILE_EQUALS(a, b)	RelFileNodeEquals(a, b)
#define MEMO_REL_NUMBER(rel)		((rel)->rd_node.relNode)
#endif

/* ----------------------------------------------------------------
 * Reserves remembered
 *
 * A writer asks whether a page has room with its records' reserve kept
 * (minidb_page.h), which, unless the page has room to spare, means
 * reading the first bytes of every record on it: for every UPDATE of a
 * small table's rows and every INSERT at the end of a table, the same
 * page's records read again.  So this backend remembers the reserve of
 * the pages it summed, each with the LSN its page had then.  In a
 * relation that is WAL-logged every change to a minidb page sets its LSN
 * to the end of its WAL record, past any LSN the page had (all but hint
 * bits, which no reserve depends on; and a hint written with
 * wal_log_hints or checksums only moves the LSN), so a page at the LSN of
 * a memo is the page that was summed.  A writer that keeps the memo
 * through its own change (an INSERT, an in-place prepend) has its room
 * check note the change to come (MinidbReserveChange) and, once the
 * change is logged, calls minidb_reserve_change_end, which moves the memo
 * to the new LSN with the changed record's part of the reserve replaced;
 * after any other change the memo names an older LSN, and the next writer
 * sums the page again (a page written once, as by an UPDATE of a large
 * table's row, takes the bound instead: memo_wanted).  No memo is kept for a relation not WAL-logged (in
 * this transaction: see RelationNeedsWAL) nor for a page without an LSN.
 * A -DMINIDB_CHECK_FAST_PATH build checks each reserve taken from a memo,
 * and each memo moved, against the sum.
 *
 * A small direct-mapped table: a memo another page takes over only costs
 * a sum.
 * ----------------------------------------------------------------
 */
#define RESERVE_MEMOS	64

typedef struct ReserveMemo
{
	XLogRecPtr	lsn;			/* the page's when summed; invalid: empty */
	BlockNumber blkno;
	MemoRelFile file;
	Size		reserve;
} ReserveMemo;

static ReserveMemo reserve_memos[RESERVE_MEMOS];

/* The memo slot of the page of buffer, or NULL where none may be kept */
static inline ReserveMemo *
memo_slot(Relation rel, Buffer buffer, BlockNumber *blkno)
{
	if (!RelationNeedsWAL(rel) ||
		XLogRecPtrIsInvalid(PageGetLSN(BufferGetPage(buffer))))
		return NULL;
	*blkno = BufferGetBlockNumber(buffer);
	return &reserve_memos[(MEMO_REL_NUMBER(rel) * 31 + *blkno) %
						  RESERVE_MEMOS];
}

/* Does memo slot m name block blkno of rel (whatever its LSN)? */
static inline bool
memo_names(const ReserveMemo *m, Relation rel, BlockNumber blkno)
{
	return m->blkno == blkno &&
		MEMO_REL_FILE_EQUALS(m->file, MEMO_REL_FILE(rel));
}

/* Is m the memo of the page of buffer (blkno) as it is? */
static inline bool
memo_holds(const ReserveMemo *m, Relation rel, Buffer buffer,
		   BlockNumber blkno)
{
	return m->lsn == PageGetLSN(BufferGetPage(buffer)) &&
		memo_names(m, rel, blkno);
}

static inline void
memo_check(const ReserveMemo *m, Relation rel, Buffer buffer)
{
#ifdef MINIDB_CHECK_FAST_PATH
	Size		sum = minidb_page_reserve(BufferGetPage(buffer));

	if (m->reserve != sum)
		elog(ERROR, "remembered reserve %zu of block %u of \"%s\" is not its sum %zu",
			 m->reserve, m->blkno, RelationGetRelationName(rel), sum);
#endif
}

/*
 * The reserve of the page of a locked buffer, remembered;  *m its memo
 * slot (NULL: none) with *blkno.  MINIDB_RESERVE_UNKNOWN when not
 * remembered.
 */
static Size
memo_reserve(Relation rel, Buffer buffer, ReserveMemo **m,
			 BlockNumber *blkno)
{
	*m = memo_slot(rel, buffer, blkno);
	if (*m == NULL || !memo_holds(*m, rel, buffer, *blkno))
		return MINIDB_RESERVE_UNKNOWN;
	memo_check(*m, rel, buffer);
	return (*m)->reserve;
}

/*
 * Is the page's reserve worth summing exactly, to be remembered?  When its
 * slot names the page already: a page this backend writes again and
 * again.  Another page's first writer (an UPDATE of a row of a large
 * table) takes the bound, which stops early on a page with room, and the
 * slot names the page from then on (memo_keep).
 */
static inline bool
memo_wanted(const ReserveMemo *m, Relation rel, BlockNumber blkno)
{
	return m && memo_names(m, rel, blkno);
}

/*
 * Note the page of buffer in m, with its reserve when known (summed from
 * the page as it is)
 */
static void
memo_keep(ReserveMemo *m, Relation rel, Buffer buffer, BlockNumber blkno,
		  Size reserve)
{
	if (m == NULL)
		return;
	m->lsn = reserve == MINIDB_RESERVE_UNKNOWN ? InvalidXLogRecPtr :
		PageGetLSN(BufferGetPage(buffer));
	m->blkno = blkno;
	m->file = MEMO_REL_FILE(rel);
	m->reserve = reserve;
}

/*
 * Is the reserve of the page of a locked buffer at most limit, its reserve
 * remembered?  With rc, when it is and the memo holds the page's reserve,
 * ready for minidb_reserve_change_end after a change of the record at off
 * (InvalidOffsetNumber: a record added); rc is left alone otherwise.
 */
static bool
memo_reserve_within(Relation rel, Buffer buffer, Size limit,
					MinidbReserveChange *rc, OffsetNumber off)
{
	Page		page = BufferGetPage(buffer);
	ReserveMemo *m;
	BlockNumber blkno;
	Size		reserve = memo_reserve(rel, buffer, &m, &blkno);
	bool		room;

	room = minidb_page_reserve_within(page, limit,
									  memo_wanted(m, rel, blkno) ?
									  &reserve : NULL);
	memo_keep(m, rel, buffer, blkno, reserve);
	/* (no room: the page is not written, or only after a prune) */
	if (rc && room && reserve != MINIDB_RESERVE_UNKNOWN)
	{
		rc->lsn = PageGetLSN(page);
		rc->reserve = reserve;
		if (off != InvalidOffsetNumber)
			rc->reserve -= minidb_page_item_reserve(page, off);
	}
	return room;
}

/*
 * minidb_page_room_for_insert for a locked buffer, its reserve remembered;
 * rc (if given) is set for minidb_reserve_change_end, to follow a change
 * that adds a record (and nothing else).
 */
static bool
buffer_room_for_insert(Relation rel, Buffer buffer, Size needed,
					   MinidbReserveChange *rc)
{
	Page		page = BufferGetPage(buffer);
	Size		limit;

	if (rc)
		rc->lsn = InvalidXLogRecPtr;
	if (!minidb_page_insert_limit(page, needed, &limit))
		return false;
	return minidb_page_reserve_clearly_within(page, limit) ||
		memo_reserve_within(rel, buffer, limit, rc, InvalidOffsetNumber);
}

/*
 * minidb_page_room_for_replace for a locked buffer, its reserve remembered;
 * newreserve is the new record's own (see minidb_page_replace_limit); rc is
 * set for minidb_reserve_change_end, to follow a change that
 * replaces the record at off (and nothing else) by one of newlen bytes.
 * (A page with room to spare needs no reserve, and none is remembered.)
 */
bool
minidb_buffer_room_for_replace(Relation rel, Buffer buffer, OffsetNumber off,
							   uint32 newlen, Size newreserve,
							   MinidbReserveChange *rc)
{
	Page		page = BufferGetPage(buffer);
	Size		limit;

	rc->lsn = InvalidXLogRecPtr;
	if (!minidb_page_replace_limit(page, off, newlen, newreserve, &limit))
		return false;
	return minidb_page_reserve_clearly_within(page, limit) ||
		memo_reserve_within(rel, buffer, limit, rc, off);
}

/*
 * Before a logged change that replaces the record at off of a locked buffer
 * (and nothing else) without a room check of its own: a row lock, which
 * spends room its record kept.  rc takes the page's remembered reserve, if
 * the memo holds the page as it is, for minidb_reserve_change_end.  Else
 * the next writer of the page (the foreign-key check's lock falls between
 * two UPDATEs of the row) would sum the page's reserve again.
 */
void
minidb_reserve_change_begin(Relation rel, Buffer buffer, OffsetNumber off,
							MinidbReserveChange *rc)
{
	ReserveMemo *m;
	BlockNumber blkno;
	Size		reserve = memo_reserve(rel, buffer, &m, &blkno);

	rc->lsn = InvalidXLogRecPtr;
	if (reserve == MINIDB_RESERVE_UNKNOWN)
		return;
	rc->lsn = PageGetLSN(BufferGetPage(buffer));
	rc->reserve = reserve - minidb_page_item_reserve(BufferGetPage(buffer),
													 off);
}

/*
 * After the change a room check noted in rc, logged: the memo moves to the
 * page's new LSN, with the part of the record now at off.
 */
void
minidb_reserve_change_end(const MinidbReserveChange *rc, Relation rel,
						  Buffer buffer, OffsetNumber off)
{
	Page		page = BufferGetPage(buffer);
	ReserveMemo *m;
	BlockNumber blkno;

	if (XLogRecPtrIsInvalid(rc->lsn))
		return;
	m = memo_slot(rel, buffer, &blkno);
	/* our memo, as the room check left it, and the change logged since */
	if (m == NULL || m->lsn != rc->lsn || !memo_names(m, rel, blkno) ||
		PageGetLSN(page) <= rc->lsn)
	{
		if (m)
			m->lsn = InvalidXLogRecPtr;
		return;
	}
	m->lsn = PageGetLSN(page);
	m->reserve = rc->reserve + minidb_page_item_reserve(page, off);
	memo_check(m, rel, buffer);
}

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

/*
 * Lock a candidate page; true if it has "needed" bytes free for a record
 * (rc: see buffer_room_for_insert)
 */
static bool
candidate_has_room(Relation rel, Buffer buffer, Size needed, bool wait,
				   MinidbReserveChange *rc)
{
	Page		page = BufferGetPage(buffer);

	if (wait)
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	else if (!ConditionalLockBuffer(buffer))
		return false;
	if (PageIsNew(page))
		return true;
	minidb_page_check(rel, buffer);
	if (buffer_room_for_insert(rel, buffer, needed, rc))
		return true;
	if (prune_for_room(rel, buffer, needed))
		return true;
	RecordPageWithFreeSpace(rel, BufferGetBlockNumber(buffer),
							minidb_page_free_for_insert(page));
	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	return false;
}

/*
 * The free space a page needs to take a record that takes room bytes
 * (minidb_page_record_room), fillfactor kept: heap's rule
 * (RelationGetBufferForTuple) in minidb's units.  A page counts as "nearly
 * empty" when the space it lacks is slight (a few line pointers' worth); a
 * record that would not fit beside the fillfactor's reserve on such a page
 * asks for no more than that, so a low fillfactor never asks for more than
 * a page can hold (the FSM refuses requests above a page) nor extends the
 * relation for every large record.
 */
static Size
needed_for_record(Relation rel, Size room)
{
	Size		keep_free = RelationGetTargetPageFreeSpace(rel,
														   HEAP_DEFAULT_FILLFACTOR);
	Size		nearly_empty = MINIDB_PAGE_ROOM_MAX -
		(MaxHeapTuplesPerPage / 8 * sizeof(ItemIdData));

	if (room + keep_free > nearly_empty)
		return Max(room, nearly_empty);
	return room + keep_free;
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
 * An exclusively locked buffer with room for the record rec of len bytes,
 * and for the reserve its format keeps (minidb_page_record_room: the one
 * place that sizes a new record for its page).
 * otherBuffer, if valid, is already locked by the caller and is never
 * returned; to stay clear of deadlocks we only try-lock existing pages
 * while holding it, and fall back to a new page.  *is_new tells the caller
 * to initialize the page (through minidb_write_page).  rc (if given) is set
 * for minidb_reserve_change_end, to follow the caller's adding the record
 * (and nothing else) when the page's reserve is remembered.
 */
Buffer
minidb_buffer_for_insert(Relation rel, const char *rec, uint32 len,
						 BulkInsertState bistate, Buffer otherBuffer,
						 bool *is_new, MinidbReserveChange *rc)
{
	Size		room = minidb_page_record_room(rec, len);
	BlockNumber target = InvalidBlockNumber;
	BlockNumber other = BufferIsValid(otherBuffer) ?
		BufferGetBlockNumber(otherBuffer) : InvalidBlockNumber;
	bool		wait = !BufferIsValid(otherBuffer);
	Size		needed;
	Buffer		buffer;
	int			tries;

	if (rc)
		rc->lsn = InvalidXLogRecPtr;

	/* (a new page is taken as it comes: it must have the room) */
	if (room > MINIDB_PAGE_ROOM_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("row is too big: size %u, maximum size %zu", len,
						minidb_max_record_len(minidb_record_format_of(rec)))));
	needed = needed_for_record(rel, room);

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
			if (candidate_has_room(rel, buffer, needed, wait, rc))
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
