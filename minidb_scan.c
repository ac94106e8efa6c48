/*-------------------------------------------------------------------------
 *
 * minidb_scan.c
 *	  Reading minidb tables: sequential (serial and parallel), TID range,
 *	  bitmap, sample and ANALYZE scans, and fetches by TID.
 *
 * Scans work a page at a time: under the page's share lock every visible
 * version is materialized into a per-scan arena, the lock and pin are
 * dropped, and the rows are handed out from the arena.  The arena is
 * reused page after page, so a scan allocates nothing per row; a row stays
 * valid in its slot until the scan moves on, as heap's do.
 *
 * Fetches by TID go through the page-view layer (btree_view.c) and
 * materialize only the one visible version into a buffer owned by the
 * fetch, reused from call to call.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/tsmapi.h"
#include "access/valid.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "executor/tuptable.h"
#include "nodes/tidbitmap.h"
#include "pgstat.h"
#include "port/pg_bitutils.h"
#include "storage/bufmgr.h"
#include "storage/predicate.h"
#include "storage/procarray.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"

#include "chain.h"
#include "minidb_page.h"
#include "btree_view.h"
#include "minidb_visibility.h"
#include "minidb_tuple.h"
#include "minidb_lock.h"
#include "minidb_prune.h"
#include "minidb_scan.h"

/* ----------------------------------------------------------------
 * Collecting the visible rows of a page
 * ----------------------------------------------------------------
 */

/*
 * The arena a scan begins with: SCAN_FIRST_ARENA bytes after the
 * descriptor, in its chunk (minidb_scan_begin), so that a scan of a small
 * table allocates once (the descriptor is beyond the memory context's
 * chunk limit: a block of its own, which the arena shares).
 */
#define SCAN_FIRST_ARENA	BLCKSZ

static inline char *
scan_first_arena(MinidbScanDesc scan)
{
	return (char *) scan + MAXALIGN(sizeof(MinidbScanDescData));
}

/* Make room for len more bytes in the arena */
static char *
arena_reserve(MinidbScanDesc scan, Size len)
{
	MinidbPageRows *rows = &scan->rows;
	Size		need = rows->arena_used + MAXALIGN(len);

	if (need > rows->arena_size)
	{
		Size		newsize = Max(need, rows->arena_size * 2);

		if (rows->arena == scan_first_arena(scan))
		{
			/* repalloc's move, out of the descriptor's chunk */
			char	   *arena = MemoryContextAlloc(scan->cxt, newsize);

			memcpy(arena, rows->arena, rows->arena_used);
			rows->arena = arena;
		}
		else
			rows->arena = repalloc(rows->arena, newsize);
		rows->arena_size = newsize;
	}
	return rows->arena + rows->arena_used;
}

static void
rows_reset(MinidbPageRows *rows)
{
	rows->nrows = 0;
	rows->next = 0;
	rows->cur = -1;
	rows->arena_used = 0;
	rows->maxoff = InvalidOffsetNumber;
	rows->rewritten = false;
	rows->uniform = true;
	rows->keyed = true;
	rows->key_base = InvalidTransactionId;
	rows->ordered = false;
	rows->checked_desc = NULL;
}

/*
 * A version's cmin, as far as the page tells, or InvalidCommandId.  A
 * combo command id is resolved when it is the current transaction's, and
 * unknown otherwise.  A V3 record keeps the cmax of the row's end in the
 * cid of its newest data version (as heap's t_cid does): that version's
 * cmin is unknown (ended says the record has an end).
 */
static CommandId
version_cmin(const MinidbVersionHeader *vh, bool ended)
{
	if (vh->vh_flags & MINIDB_V_COMBOCID)
		return TransactionIdIsCurrentTransactionId(vh->vh_xmin) ?
			minidb_version_cid(vh) : InvalidCommandId;
	return ended ? InvalidCommandId : vh->vh_cid;
}

/* Does the V3 record rec have an end (its row deleted or moved)? */
static bool
v3_record_ended(const char *rec)
{
	uint8		info = (uint8) rec[0];
	uint8		xinfo = (uint8) rec[1];

	return minidb_record_format_of(rec) == MINIDB_FORMAT_V3 &&
		(info & MINIDB_R3_XMAX) && !(xinfo & MINIDB_R3X_LOCK_ONLY);
}

/*
 * The age of version vh, as far as its own header tells (no older version
 * known); ended as for version_cmin
 */
static inline void
version_age(const MinidbVersionHeader *vh, bool ended, MinidbRowAge *age)
{
	age->frozen = (vh->vh_flags & MINIDB_V_FROZEN) != 0;
	age->xmin = age->frozen ? FrozenTransactionId : vh->vh_xmin;
	age->cmin = age->frozen ? InvalidCommandId : version_cmin(vh, ended);
	age->prev_xmin = InvalidTransactionId;
	age->prev_cmin = InvalidCommandId;
}

/* The second part of a row's age: older, the version before its visible one */
static inline void
age_add_older(MinidbRowAge *age, const MinidbVersionHeader *older)
{
	if (older->vh_flags & MINIDB_V_NODATA_MASK)
		return;
	age->prev_xmin = (older->vh_flags & MINIDB_V_FROZEN) ?
		FrozenTransactionId : older->vh_xmin;
	age->prev_cmin = version_cmin(older, false);
}

/* When the visible version at ref (and the one before it) was written */
static void
row_age(MinidbScanDesc scan, char *rec, uint32 len,
		const MinidbVersionRef *ref, MinidbRowAge *age)
{
	MinidbChainIter it;
	MinidbChainError err;
	MinidbVersionRef r;
	bool		damaged = false;

	/* with an end, index 0 is its virtual marker and 1 the newest data */
	version_age(ref->vh, ref->index == 1 && v3_record_ended(rec), age);
	/*
	 * Most records hold one version: no iterator for them.  A version that
	 * ends where the record does is its last (V3 records of two or more
	 * versions end with their directory).
	 */
	if (ref->end >= len ||
		ref->index + 1 >= minidb_record_nversions(rec, len) ||
		!minidb_chain_iter_init(&it, rec, len, &err) ||
		ref->index + 1 >= it.nversions)
		return;
	while (minidb_chain_iter_next(&it, &r, &err, &damaged))
	{
		if (r.index < ref->index + 1)
			continue;
		age_add_older(age, r.vh);
		break;
	}
}

/* Are two ages the same (so that neither row is older)? */
static inline bool
ages_equal(const MinidbRowAge *a, const MinidbRowAge *b)
{
	return a->xmin == b->xmin && a->cmin == b->cmin &&
		a->prev_xmin == b->prev_xmin && a->prev_cmin == b->prev_cmin &&
		a->frozen == b->frozen;
}

/*
 * row_older as two numbers per row, compared in turn, for a page whose
 * rows' ages all have a known order (rows_age_keys): hi is the xmin,
 * relative to the page's first, above the cmin, or 0 for a frozen row; lo
 * is the version before it: 0 none, 1 frozen, else its xmin (relative)
 * above its cmin.  The xmins on a page lie within 2^31 of each other (the
 * wraparound horizon keeps them so), so that their circular order is the
 * order of their distances from any one of them, plus 2^31 (never 0).
 */
static inline bool
age_key_less(const MinidbAgeKey *a, const MinidbAgeKey *b)
{
	return a->hi < b->hi || (a->hi == b->hi && a->lo < b->lo);
}

static inline uint64
xid_key(TransactionId xid, TransactionId base)
{
	return (uint64) ((int64) (int32) (xid - base) + (INT64CONST(1) << 31));
}

/* xid_key's inverse */
static inline TransactionId
key_xid(uint64 key, TransactionId base)
{
	return base + (TransactionId) (key - (UINT64CONST(1) << 31));
}

/*
 * The key of age, the xids relative to base, or false where rows_age_keys
 * gives none: an xmin that is not a normal one, a cmin not known
 */
static pg_attribute_always_inline bool
age_key(const MinidbRowAge *age, TransactionId base, MinidbAgeKey *key)
{
	if (age->frozen)
	{
		key->hi = key->lo = 0;
		return true;
	}
	if (!TransactionIdIsNormal(age->xmin) || age->cmin == InvalidCommandId)
		return false;
	key->hi = xid_key(age->xmin, base) << 32 | age->cmin;
	if (!TransactionIdIsValid(age->prev_xmin))
		key->lo = 0;
	else if (age->prev_xmin == FrozenTransactionId)
		key->lo = 1;
	else if (!TransactionIdIsNormal(age->prev_xmin))
		return false;
	else
		key->lo = xid_key(age->prev_xmin, base) << 32 | age->prev_cmin;
	return true;
}

/*
 * An age that row_older orders as the age that gave key (age_key) is
 * ordered: the same, but for the cmin of a frozen version before the
 * row's, and the version before a frozen row, which no order looks at
 */
static void
age_of_key(const MinidbAgeKey *key, TransactionId base, MinidbRowAge *age)
{
	age->frozen = key->hi == 0;
	age->prev_xmin = InvalidTransactionId;
	age->prev_cmin = InvalidCommandId;
	if (age->frozen)
	{
		age->xmin = FrozenTransactionId;
		age->cmin = InvalidCommandId;
		return;
	}
	age->xmin = key_xid(key->hi >> 32, base);
	age->cmin = (CommandId) key->hi;
	if (key->lo == 1)
		age->prev_xmin = FrozenTransactionId;
	else if (key->lo != 0)
	{
		age->prev_xmin = key_xid(key->lo >> 32, base);
		age->prev_cmin = (CommandId) key->lo;
	}
}

/*
 * The rows kept so far as keys, as ages from now on: the row about to be
 * appended has no key.  A -DMINIDB_CHECK_FAST_PATH build, which keeps
 * both, checks that each age from a key is ordered as the row's own.
 */
static pg_noinline void
rows_keys_to_ages(MinidbPageRows *rows)
{
	for (int i = 0; i < rows->nrows; i++)
	{
		MinidbRowAge age;

		age_of_key(&rows->keys[i], rows->key_base, &age);
#ifdef MINIDB_CHECK_FAST_PATH
		{
			const MinidbRowAge *a = &rows->ages[i];

			if (age.frozen != a->frozen ||
				(!a->frozen &&
				 (age.xmin != a->xmin || age.cmin != a->cmin ||
				  age.prev_xmin != a->prev_xmin ||
				  (TransactionIdIsNormal(a->prev_xmin) &&
				   age.prev_cmin != a->prev_cmin))))
				elog(ERROR, "the age from row %d's key differs from its own", i);
		}
#endif
		rows->ages[i] = age;
	}
	rows->keyed = false;
	rows->uniform = false;
}

/*
 * Keep the age of the row about to be appended (rows->nrows).  On a page
 * whose rows can be ordered by keys (rows->keyed, as collect_page starts
 * every page but one CLUSTER or VACUUM FULL wrote), as its key, relative
 * to the xmin of the first row not frozen: what rows_age_keys would make
 * of the ages, made as they are read.  The first row that has none turns
 * the keys kept into ages.
 *
 * Ages: while all the page's rows are of one age, only the first is
 * stored: a page that one command wrote, or whose rows are all frozen,
 * needs no order and costs no per-row stores.  The first row of another
 * age stores the common one for the rows before it, and from then on
 * every row's.
 */
static pg_attribute_always_inline void
rows_add_age(MinidbPageRows *rows, const MinidbRowAge *age)
{
	int			n = rows->nrows;

	if (likely(rows->keyed))
	{
		if (!TransactionIdIsValid(rows->key_base) && !age->frozen)
			rows->key_base = age->xmin;
		if (likely(age_key(age, rows->key_base, &rows->keys[n])))
		{
#ifdef MINIDB_CHECK_FAST_PATH
			rows->ages[n] = *age;
#endif
			return;
		}
		rows_keys_to_ages(rows);
	}
	if (n == 0)
	{
		rows->ages[0] = *age;	/* rows_reset made the page uniform */
		return;
	}
	if (likely(rows->uniform))
	{
		if (ages_equal(age, &rows->ages[0]))
			return;
		for (int i = 1; i < n; i++)
			rows->ages[i] = rows->ages[0];
		rows->uniform = false;
	}
	rows->ages[n] = *age;
}

/* Append version v of the record rec at tid to the page's rows */
static void
rows_append(MinidbScanDesc scan, const char *rec, const MinidbVersionData *v,
			TransactionId xmax, ItemPointer tid)
{
	MinidbPageRows *rows = &scan->rows;
	Size		len = minidb_materialized_size(v);
	char	   *dst = arena_reserve(scan, len);

	minidb_write_tuple((HeapTupleHeader) dst, v, xmax, tid);
	{
		MinidbLockers lk;

		minidb_record_get_lockers(rec, &lk);
		if (lk.mode != MINIDB_LOCK_NONE)
			minidb_tuple_set_lockers((HeapTupleHeader) dst, &lk);
	}
	rows->offsets[rows->nrows] = ItemPointerGetOffsetNumber(tid);
	rows->starts[rows->nrows] = rows->arena_used;
	rows->lens[rows->nrows] = len;
	rows->nrows++;
	rows->arena_used += MAXALIGN(len);
}

/*
 * A version's data: in place, or rebuilt from its differences into the
 * scan's buffer (an older reader's version)
 */
static inline void
get_version(MinidbScanDesc scan, const char *rec, const MinidbVersionRef *ref,
			MinidbVersionData *v)
{
	MemoryContext old;

	if (likely((ref->vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_FULL))
	{
		minidb_version_get_buf(rec, ref, v, NULL);
		return;
	}
	old = MemoryContextSwitchTo(scan->cxt);
	minidb_version_get_buf(rec, ref, v, &scan->delta);
	MemoryContextSwitchTo(old);
}

/*
 * transam.c's TransactionIdPrecedes, inline: the scan asks it of nearly
 * every row, where the call cost more than the test
 */
static pg_attribute_always_inline bool
xid_precedes(TransactionId id1, TransactionId id2)
{
	if (!TransactionIdIsNormal(id1) || !TransactionIdIsNormal(id2))
		return id1 < id2;
	return (int32) (id1 - id2) < 0;
}

/*
 * The head (newest) version of a record, when a regular MVCC snapshot
 * sees it without asking anybody: a data version whose xmin is frozen, or
 * hinted committed and older than every transaction the snapshot still
 * counts as running (below its xmin).  That is mvcc_sees()'s answer for
 * it, by the same tests in the same order, and as the newest version it
 * is the one minidb_find_visible would return, with no newer version to
 * report as the row's xmax or to SSI.  Most rows of a table that is not
 * being written are read this way, as heap's page mode reads a page:
 * without the per-row visibility machinery.  The walker still checks the
 * record (header, the version, the tail) as on every read.
 */
typedef struct HeadSeen
{
	TransactionId snapshot_xmin;
	bool		sees;
} HeadSeen;

static bool
head_seen_cb(MinidbVersionHeader *vh, int index, void *arg)
{
	HeadSeen   *h = (HeadSeen *) arg;
	uint16		flags = vh->vh_flags;

	h->sees = index == 0 &&
		!(flags & (MINIDB_V_XMIN_ABORTED | MINIDB_V_NODATA_MASK |
				   MINIDB_V_VIRTUAL | MINIDB_V_XMIN_MULTI)) &&
		((flags & MINIDB_V_FROZEN) ||
		 ((flags & MINIDB_V_XMIN_COMMITTED) &&
		  xid_precedes(vh->vh_xmin, h->snapshot_xmin)));
	return true;				/* the head only */
}

/*
 * The bits of the bitmap byte of attributes 8 * b .. 8 * b + 7 that stand
 * for one of a row's natts attributes (a set bit: a value)
 */
static inline uint32
bitmap_byte(const bits8 *bitmap, int b, int natts)
{
	int			nbits = Min(natts - 8 * b, 8);

	return bitmap[b] & ((1U << nbits) - 1);
}

/*
 * How many of a row's natts attributes come before its first null, when
 * all after it are null too (-1 when a value follows a null).  A byte of
 * the bitmap at a time, not a bit: every row with a null of a scanned
 * page asks (pgbench's tellers and branches: one unset filler).
 */
static inline int
values_before_nulls(const bits8 *bitmap, int natts)
{
	int			b = 0;
	int			k;
	uint32		bits;

	/* a bitmap of one byte (most tables) in one step */
	if (natts <= 8)
	{
		bits = bitmap[0] & ((1U << natts) - 1);
		return (bits & (bits + 1)) != 0 ? -1 :
			pg_rightmost_one_pos32(bits + 1);
	}
	/* the leading bytes of values only */
	while (8 * (b + 1) <= natts && bitmap[b] == 0xFF)
		b++;
	if (8 * b == natts)
		return natts;
	/* the byte of the first null: its values must come before its nulls */
	bits = bitmap_byte(bitmap, b, natts);
	if ((bits & (bits + 1)) != 0)
		return -1;
	k = 8 * b + pg_rightmost_one_pos32(bits + 1);
	/* and no value after it */
	for (b++; 8 * b < natts; b++)
		if (bitmap_byte(bitmap, b, natts) != 0)
			return -1;
	return k;
}

/*
 * layout_valid's answer for the row of a plain version, known before the
 * row is written: a row without external or variable-width values whose
 * values are all among the leading fixed-width attributes of the
 * descriptor layout_prepare last saw (collect_page makes that the
 * relation's), any nulls after them (pgbench's tellers and branches: an
 * unset filler), must end exactly where those attributes do.  False
 * leaves the row to store_row's check.
 */
static pg_attribute_always_inline bool
plain_layout_check(MinidbScanDesc scan, const MinidbVersionData *v)
{
	int			nvalues = v->natts;

	if (v->flags & (MINIDB_V_HASEXTERNAL | MINIDB_V_HASVARWIDTH))
		return false;
	if (v->flags & MINIDB_V_HASNULL)
	{
		if (v->natts > scan->layout_desc->natts)
			return false;
		nvalues = values_before_nulls(v->bitmap, v->natts);
		if (nvalues < 0 || nvalues == v->natts)
			return false;		/* the bitmap's flag says there is a null */
	}
	return nvalues <= scan->layout_nfixed &&
		v->datalen == scan->layout_end[nvalues];
}

/*
 * What plain_layout_check's answer for a row without external or
 * variable-width values depends on, in one number: its data length, its
 * attribute count and, with nulls, the first byte of its bitmap (flagged
 * by bit 56).  A bitmap of more than one byte has no shape (0), nor, as
 * far as plain_layout_valid is concerned, a row of no data and no
 * attributes.
 */
static pg_attribute_always_inline uint64
row_shape(const MinidbVersionData *v)
{
	uint64		shape = (uint64) v->datalen | (uint64) v->natts << 32;

	if (!(v->flags & MINIDB_V_HASNULL))
		return shape;
	if (v->natts > 8)
		return 0;
	return shape | (uint64) (0x100 | v->bitmap[0]) << 48;
}

/*
 * plain_layout_check, answered without the check for a row of the shape
 * (row_shape) of the last row it passed since layout_prepare: the rows of
 * a page are nearly always of one shape.  A -DMINIDB_CHECK_FAST_PATH build
 * checks every such answer against plain_layout_check's.
 */
static pg_attribute_always_inline bool
plain_layout_valid(MinidbScanDesc scan, const MinidbVersionData *v)
{
	uint64		shape;

	if (v->flags & (MINIDB_V_HASEXTERNAL | MINIDB_V_HASVARWIDTH))
		return false;
	shape = row_shape(v);
	if (shape == scan->layout_shape && shape != 0)
	{
#ifdef MINIDB_CHECK_FAST_PATH
		if (!plain_layout_check(scan, v))
			elog(ERROR, "a row of the shape of one plain_layout_check passed fails it");
#endif
		return true;
	}
	if (!plain_layout_check(scan, v))
		return false;
	scan->layout_shape = shape;
	return true;
}

/* If the record at off is visible to the scan's snapshot, keep its row */
static void
collect_record(MinidbScanDesc scan, Buffer buffer, BlockNumber blkno,
			   OffsetNumber off)
{
	ItemPointerData tid;
	MinidbVersionRef ref;
	MinidbVersionData v;
	TransactionId xmax = InvalidTransactionId;
	uint32		len;
	char	   *rec;
	Snapshot	snapshot = scan->base.rs_snapshot;
	bool		seen = false;

	rec = minidb_page_record(scan->base.rs_rd, buffer, off, &len);
	if (rec == NULL)
		return;
	ItemPointerSet(&tid, blkno, off);
	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
	{
		HeadSeen	h;
		MinidbChainError err;

		h.snapshot_xmin = snapshot->xmin;
		h.sees = false;
		if (minidb_chain_find_visible(rec, len, head_seen_cb, &h, &ref,
									  &err) == -2)
			minidb_report_corruption(scan->base.rs_rd, &tid, &err);
		seen = h.sees;
	}
	if (!seen &&
		minidb_find_visible(scan->base.rs_rd, &tid, rec, len,
							snapshot, buffer, &ref, &xmax) < 0)
		return;
	/* SSI: a sequential scan locked the whole relation; the others the rows */
	if (scan->base.rs_flags & SO_TYPE_BITMAPSCAN)
		minidb_ssi_lock_version(scan->base.rs_rd, &tid,
								scan->base.rs_snapshot, ref.vh->vh_xmin);
	get_version(scan, rec, &ref, &v);
	if (scan->by_age)
	{
		MinidbRowAge age;

		row_age(scan, rec, len, &ref, &age);
		rows_add_age(&scan->rows, &age);
	}
	if (!plain_layout_valid(scan, &v))
		scan->rows.checked_desc = NULL; /* store_row checks this row */
	rows_append(scan, rec, &v, xmax, &tid);
}

/*
 * Ask the CPU for the cache line at p ahead of its use.  Always inline: a
 * call left to the compiler counts as one without effects (pure), and is
 * dropped.
 */
static pg_attribute_always_inline void
prefetch_byte(const char *p)
{
#if defined(__GNUC__) || defined(__clang__)
	__builtin_prefetch(p);
#endif
}

/*
 * memcpy(dst, src, len), with the short lengths of narrow rows copied
 * inline as two overlapping words instead of by a call per row
 */
static pg_attribute_always_inline void
copy_row_data(char *dst, const char *src, uint32 len)
{
	if (len >= sizeof(uint64) && len <= 2 * sizeof(uint64))
	{
		uint64		head;
		uint64		tail;

		memcpy(&head, src, sizeof(uint64));
		memcpy(&tail, src + len - sizeof(uint64), sizeof(uint64));
		memcpy(dst, &head, sizeof(uint64));
		memcpy(dst + len - sizeof(uint64), &tail, sizeof(uint64));
	}
	else
		memcpy(dst, src, len);
}

/*
 * minidb_write_tuple(td, v, InvalidTransactionId, tid) for the version of a
 * plain record, inline (every row of a scan takes it): the same bytes, as
 * an assert-enabled or -DMINIDB_CHECK_FAST_PATH build checks.
 */
static pg_attribute_always_inline void
write_plain_tuple(HeapTupleHeader td, const MinidbVersionData *v,
				  BlockNumber blkno, OffsetNumber off)
{
	uint16		infomask = HEAP_XMAX_INVALID;
	Size		hoff = MAXALIGN(SizeofHeapTupleHeader);

	memset(td, 0, MAXALIGN(SizeofHeapTupleHeader));
	if (v->flags & MINIDB_V_HASNULL)
	{
		StaticAssertStmt(MAXALIGN(SizeofHeapTupleHeader + 1) ==
						 MAXALIGN(SizeofHeapTupleHeader),
						 "a bitmap of one byte fits in the header's padding");
		infomask |= HEAP_HASNULL;
		if (v->natts <= 8)
			td->t_bits[0] = v->bitmap[0];	/* one byte, hoff unchanged */
		else
		{
			hoff = MAXALIGN(SizeofHeapTupleHeader + BITMAPLEN(v->natts));
			memset((char *) td + MAXALIGN(SizeofHeapTupleHeader), 0,
				   hoff - MAXALIGN(SizeofHeapTupleHeader));
			memcpy(td->t_bits, v->bitmap, BITMAPLEN(v->natts));
		}
	}
	if (v->flags & MINIDB_V_HASVARWIDTH)
		infomask |= HEAP_HASVARWIDTH;
	if (v->flags & MINIDB_V_HASEXTERNAL)
		infomask |= HEAP_HASEXTERNAL;
	if (v->flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
		infomask |= HEAP_XMIN_COMMITTED;
	td->t_infomask = infomask;
	HeapTupleHeaderSetNatts(td, v->natts);
	td->t_hoff = hoff;
	HeapTupleHeaderSetXmin(td, v->xmin);
	HeapTupleHeaderSetCmin(td, v->cid);
	if (v->flags & MINIDB_V_COMBOCID)
		td->t_infomask |= HEAP_COMBOCID;	/* t_cid as heap keeps it */
	/* set in place: a copy of a TID built on the stack stalls the store */
	ItemPointerSet(&td->t_ctid, blkno, off);
	copy_row_data((char *) td + hoff, v->data, v->datalen);
#if defined(USE_ASSERT_CHECKING) || defined(MINIDB_CHECK_FAST_PATH)
	{
		/* on the stack: scans allocate nothing per row (bench_scan counts) */
		PGAlignedBlock check;
		Size		size = minidb_materialized_size(v);

		if (size <= sizeof(check.data))
		{
			minidb_write_tuple((HeapTupleHeader) check.data, v,
							   InvalidTransactionId, &td->t_ctid);
			if (memcmp(check.data, td, size) != 0)
				elog(ERROR, "write_plain_tuple and minidb_write_tuple disagree");
		}
	}
#endif
}

/* head_seen_cb's test of a version, its flags and xmin given */
static pg_attribute_always_inline bool
version_seen(uint16 flags, TransactionId xmin, TransactionId snapshot_xmin)
{
	return (flags & MINIDB_V_FROZEN) ||
		((flags & MINIDB_V_XMIN_COMMITTED) &&
		 xid_precedes(xmin, snapshot_xmin));
}

/*
 * What plain_version needs for an MVCC scan's rows beyond the common one
 * (see there), and what it gives back
 */
typedef struct PlainAsk
{
	Snapshot	snapshot;
	Buffer		buffer;			/* the page's, share-locked */
	MinidbVersionHeader older;	/* out: the header of the version before
								 * the newest; vh_xmin invalid if none */
} PlainAsk;

/*
 * The snapshot sees newest version vh of a record whose shape the caller
 * has checked: by its hints, else, on a checked page, by the walker's
 * predicate (minidb_mvcc_sees_newest, which may raise an error for a
 * damaged xmin: on a page not yet checked, its own error must come
 * first).  vh lies on the share-locked page, where hint bits may be set.
 */
static pg_attribute_always_inline bool
newest_seen(const MinidbVersionHeader *vh, TransactionId snapshot_xmin,
			PlainAsk *ask, bool page_checked)
{
	return version_seen(vh->vh_flags, vh->vh_xmin, snapshot_xmin) ||
		(page_checked &&
		 minidb_mvcc_sees_newest((MinidbVersionHeader *) vh, ask->snapshot,
								 ask->buffer));
}

/*
 * plain_version for a record of several versions (see there): its shape
 * (minidb_v3_newest_plain), then whether the snapshot sees its newest
 * version.  The head's flags are read first, so that a record no shortcut
 * takes costs little more than that.  Inline: on a page being written
 * most records hold two versions or more, and the call cost a seventh of
 * what the record's read costs.
 */
static pg_attribute_always_inline bool
plain_newest_of_many(const char *rec, uint32 len,
					 TransactionId snapshot_xmin, bool page_checked,
					 MinidbVersionData *v, const MinidbVersionHeader **pvh,
					 PlainAsk *ask)
{
	const MinidbVersionHeader *vh;

	if (len < MINIDB_R3_PLAIN_START + MINIDB_VERSION_HDRSZ)
		return false;
	vh = (const MinidbVersionHeader *) (rec + MINIDB_R3_PLAIN_START);
	if (vh->vh_flags & (MINIDB_V_XMIN_ABORTED | MINIDB_V_NODATA_MASK |
						MINIDB_V_VIRTUAL | MINIDB_V_XMIN_MULTI))
		return false;
#ifdef MINIDB_CHECK_FAST_PATH
	{
		MinidbVersionData cv;
		MinidbVersionHeader co;
		bool		inl = minidb_v3_newest_of_many(rec, len, v, &ask->older);

		if (inl != minidb_v3_newest_plain(rec, len, &cv, &co) ||
			(inl &&
			 (cv.xmin != v->xmin || cv.cid != v->cid ||
			  cv.flags != v->flags || cv.natts != v->natts ||
			  cv.bitmap != v->bitmap || cv.data != v->data ||
			  cv.datalen != v->datalen ||
			  memcmp(&co, &ask->older, sizeof(co)) != 0)))
			elog(ERROR, "minidb_v3_newest_of_many and minidb_v3_newest_plain disagree");
		if (!inl)
			return false;
	}
#else
	if (!minidb_v3_newest_of_many(rec, len, v, &ask->older))
		return false;
#endif
	if (!newest_seen(vh, snapshot_xmin, ask, page_checked))
		return false;
	*pvh = vh;
	return true;
}

/*
 * The record of a page already checked whole (minidb_page_check) at off,
 * when its line pointer is a normal one inside the page's tuple space, as
 * plain_version reads it; else NULL
 */
static pg_attribute_always_inline const char *
plain_item(Page page, OffsetNumber off, uint32 *len)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		lp = PageGetItemId(page, off);
	uint32		lpoff = ItemIdGetOffset(lp);

	*len = ItemIdGetLength(lp);
	if (!ItemIdIsNormal(lp) || lpoff != MAXALIGN(lpoff) ||
		lpoff < ph->pd_upper || lpoff + *len > ph->pd_special)
		return NULL;
	return (const char *) page + lpoff;
}

/*
 * plain_version's answer for a record whose only optional field is a
 * lock-only xmax, of one version or several (minidb_v3_newest_locked):
 * its shape and lockers (*lk), then whether the snapshot sees its newest
 * version, asked of the walker's predicate if its hints do not say (the
 * page is checked).  The lockers change nothing in what an MVCC snapshot
 * sees of the row: the walker would return version 0, with no newer
 * version to report, and rows_append would show the lockers as the
 * tuple's xmax.  ask->older as plain_version gives it.
 */
static pg_attribute_always_inline bool
plain_locked(const char *rec, uint32 len, TransactionId snapshot_xmin,
			 MinidbVersionData *v, const MinidbVersionHeader **pvh,
			 PlainAsk *ask, MinidbLockers *lk)
{
	const MinidbVersionHeader *vh =
		(const MinidbVersionHeader *) (rec + MINIDB_R3_LOCKED_START);

#ifdef MINIDB_CHECK_FAST_PATH
	{
		MinidbVersionData cv;
		MinidbVersionHeader co;
		MinidbLockers cl;
		bool		inl = minidb_v3_locked_newest(rec, len, v, &ask->older, lk);

		if (inl != minidb_v3_newest_locked(rec, len, &cv, &co, &cl) ||
			(inl &&
			 (cv.xmin != v->xmin || cv.cid != v->cid ||
			  cv.flags != v->flags || cv.natts != v->natts ||
			  cv.bitmap != v->bitmap || cv.data != v->data ||
			  cv.datalen != v->datalen ||
			  co.vh_xmin != ask->older.vh_xmin ||
			  (TransactionIdIsValid(co.vh_xmin) &&
			   memcmp(&co, &ask->older, sizeof(co)) != 0) ||
			  cl.xid != lk->xid || cl.mode != lk->mode ||
			  cl.multi != lk->multi || cl.with_updater != lk->with_updater)))
			elog(ERROR, "minidb_v3_locked_newest and minidb_v3_newest_locked disagree");
		if (!inl)
			return false;
	}
#else
	if (!minidb_v3_locked_newest(rec, len, v, &ask->older, lk))
		return false;
#endif
	if (!newest_seen(vh, snapshot_xmin, ask, true))
		return false;
	*pvh = vh;
	return true;
}

/*
 * The record at off of a checked page, when it is the common one: a plain
 * line pointer inside the page's tuple space naming a V3 record of one
 * whole data version and no optional field (minidb_v3_plain_record), whose
 * version the reader takes without asking more: for an MVCC scan,
 * head_seen_cb's test (frozen, or hinted committed below the snapshot's
 * xmin, snapshot_xmin); for ANALYZE (analyze), analyze_single_version's
 * (hinted committed or frozen).  That record has no locker, no newer
 * version, no older one, and the version is its only one: *v is the row,
 * read without the walker, the callback and the record lookup per row.
 * False for anything else, which the caller hands to the walker (it also
 * reports damage).
 *
 * With ask given (an MVCC scan), more records take the shortcut: a version
 * its hints do not show seen is asked of the walker's predicate
 * (newest_seen: most versions of a page being written are committed, but
 * not hinted until their commit record is flushed), and a record of
 * several versions whose newest is stored whole, with no end, no lockers
 * and no token, gives its newest when the snapshot sees it
 * (plain_newest_of_many).  The predicate is asked on a checked page only
 * (below not given).  Either is the walker's answer, the row with no
 * xmax, as for an index scan's fetch_newest_cb.  ask->older is then a
 * copy of the header of the version before it, for the row's age (its
 * vh_xmin invalid for a record of one version).  A record of those shapes
 * but for a row lock left on it is left to collect_locked (plain_locked).
 *
 * below, when given, stands in for the shared-record test of a page not yet
 * checked (see collect_page): the record must start below *below, the
 * start of the record read before it, which moves down to this one's.
 * Line pointers whose records descend through the page, as records are
 * added to it, cannot name one record twice; false on the first that does
 * not descend, and the caller checks the whole page.
 */
static pg_attribute_always_inline bool
plain_version(Page page, OffsetNumber off, TransactionId snapshot_xmin,
			  uint32 *below, bool analyze, MinidbVersionData *v,
			  const MinidbVersionHeader **pvh, PlainAsk *ask)
{
	PageHeader	ph = (PageHeader) page;
	ItemId		lp = PageGetItemId(page, off);
	uint32		lpoff = ItemIdGetOffset(lp);
	uint32		lplen = ItemIdGetLength(lp);
	const char *rec;
	const MinidbVersionHeader *vh;
	uint32		dataoff;
	uint32		datalen;
	uint16		flags;

	if (!ItemIdIsNormal(lp) || lpoff != MAXALIGN(lpoff) ||
		lpoff < ph->pd_upper || lpoff + lplen > ph->pd_special)
		return false;
	if (below)
	{
		if (lpoff >= *below)
			return false;
		*below = lpoff;
	}
	rec = (const char *) page + lpoff;
	if (!minidb_v3_plain_record(rec, lplen, &vh, &dataoff, &datalen))
		return ask != NULL &&
			plain_newest_of_many(rec, lplen, snapshot_xmin, below == NULL,
								 v, pvh, ask);
	flags = vh->vh_flags;
	/* the helper refused a version hinted aborted and committed or frozen */
	if (analyze)
	{
		if (!(flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)))
			return false;
	}
	else if (ask == NULL ?
			 !version_seen(flags, vh->vh_xmin, snapshot_xmin) :
			 !newest_seen(vh, snapshot_xmin, ask, below == NULL))
		return false;
	if (ask)
		ask->older.vh_xmin = InvalidTransactionId;

	v->xmin = vh->vh_xmin;
	v->cid = vh->vh_cid;
	v->flags = flags;
	v->natts = vh->vh_natts;
	v->bitmap = (flags & MINIDB_V_HASNULL) ?
		(const bits8 *) (rec + MINIDB_R3_PLAIN_START + MINIDB_VERSION_HDRSZ) :
		NULL;
	v->data = rec + dataoff;
	v->datalen = datalen;
	*pvh = vh;
	return true;
}

/*
 * Where the leading fixed-width attributes of desc end (layout_end[n]: the
 * first n), computed once per scan and descriptor: the offsets
 * minidb_attributes_damage computes for a row without nulls
 */
static void
layout_prepare(MinidbScanDesc scan, TupleDesc desc)
{
	uint32		off = 0;
	int			n = 0;

	if (scan->layout_end == NULL || desc->natts > scan->layout_cap)
	{
		if (desc->natts < lengthof(scan->layout_end_inline))
		{
			/* a narrow table's: in the descriptor, no allocation */
			scan->layout_end = scan->layout_end_inline;
			scan->layout_cap = lengthof(scan->layout_end_inline) - 1;
		}
		else
		{
			if (scan->layout_end && scan->layout_end != scan->layout_end_inline)
				pfree(scan->layout_end);
			scan->layout_end = MemoryContextAlloc(scan->cxt,
												  sizeof(uint32) * (desc->natts + 1));
			scan->layout_cap = desc->natts;
		}
	}
	scan->layout_end[0] = 0;
	for (; n < desc->natts; n++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, n);

		if (att->attlen <= 0)
			break;
		off = att_align_nominal(off, att->attalign);
		off += att->attlen;
		scan->layout_end[n + 1] = off;
	}
	scan->layout_nfixed = n;
	scan->layout_desc = desc;
	scan->layout_shape = 0;		/* none yet */
}

/*
 * The key of the common row of a page whose rows have keys, straight from
 * its version's header vh and the one before it, older (vh_xmin invalid if
 * none): neither version frozen nor of a combo command id, both xmins
 * normal, the cmin known, and a row kept before it (the keys' base set).
 * That is age_key's answer for the row's age, which a
 * -DMINIDB_CHECK_FAST_PATH build checks.  False for any other row.
 */
static pg_attribute_always_inline bool
plain_row_key(const MinidbPageRows *rows, const MinidbVersionHeader *vh,
			  const MinidbVersionHeader *older, MinidbAgeKey *key)
{
	TransactionId base = rows->key_base;

	if (!rows->keyed || !TransactionIdIsValid(base) ||
		(vh->vh_flags & (MINIDB_V_FROZEN | MINIDB_V_COMBOCID)) ||
		!TransactionIdIsNormal(vh->vh_xmin) ||
		vh->vh_cid == InvalidCommandId)
		return false;
	key->hi = xid_key(vh->vh_xmin, base) << 32 | vh->vh_cid;
	if (!TransactionIdIsValid(older->vh_xmin))
	{
		key->lo = 0;
		return true;
	}
	if ((older->vh_flags & (MINIDB_V_FROZEN | MINIDB_V_COMBOCID |
							MINIDB_V_NODATA_MASK)) ||
		!TransactionIdIsNormal(older->vh_xmin))
		return false;
	key->lo = xid_key(older->vh_xmin, base) << 32 | older->vh_cid;
	return true;
}

/*
 * Keep the age of a plain row (collect_plain) whose version's header is vh
 * and the one before it older (vh_xmin invalid if none): as plain_row_key
 * makes it when it can, else through its age, as collect_record does
 */
static pg_attribute_always_inline void
plain_row_age(MinidbPageRows *rows, const MinidbVersionHeader *vh,
			  const MinidbVersionHeader *older)
{
	MinidbRowAge age;

	if (likely(plain_row_key(rows, vh, older, &rows->keys[rows->nrows])))
	{
#ifdef MINIDB_CHECK_FAST_PATH
		MinidbAgeKey key;

		version_age(vh, false, &age);
		if (TransactionIdIsValid(older->vh_xmin))
			age_add_older(&age, older);
		if (!age_key(&age, rows->key_base, &key) ||
			key.hi != rows->keys[rows->nrows].hi ||
			key.lo != rows->keys[rows->nrows].lo)
			elog(ERROR, "plain_row_key and age_key disagree");
		rows->ages[rows->nrows] = age;
#endif
		return;
	}
	version_age(vh, false, &age);
	if (TransactionIdIsValid(older->vh_xmin))
		age_add_older(&age, older);
	rows_add_age(rows, &age);
}

/*
 * What collect_plain needs of the scan for every row of a page, taken once
 * per page
 */
typedef struct PlainCollect
{
	PlainAsk	ask;			/* the snapshot, the page's buffer */
	TransactionId snapshot_xmin;
	bool		lock_rows;		/* SSI: each row (a bitmap scan), not the
								 * whole relation */
	bool		by_age;			/* scan->by_age */
} PlainCollect;

static void
plain_collect_init(MinidbScanDesc scan, Buffer buffer, PlainCollect *pc)
{
	pc->ask.snapshot = scan->base.rs_snapshot;
	pc->ask.buffer = buffer;
	pc->snapshot_xmin = scan->base.rs_snapshot->xmin;
	pc->lock_rows = (scan->base.rs_flags & SO_TYPE_BITMAPSCAN) != 0;
	pc->by_age = scan->by_age;
}

/*
 * Keep the row of version v (header vh) that plain_version or plain_locked
 * took at off, the way collect_record keeps it; its tuple, in the arena
 */
static pg_attribute_always_inline HeapTupleHeader
keep_plain_row(MinidbScanDesc scan, PlainCollect *pc,
			   const MinidbVersionData *v, const MinidbVersionHeader *vh,
			   BlockNumber blkno, OffsetNumber off)
{
	MinidbPageRows *rows = &scan->rows;
	HeapTupleHeader td;
	Size		size;

	/* SSI: a sequential scan locked the whole relation; the others the rows */
	if (pc->lock_rows)
	{
		ItemPointerData tid;

		ItemPointerSet(&tid, blkno, off);
		minidb_ssi_lock_version(scan->base.rs_rd, &tid,
								scan->base.rs_snapshot, v->xmin);
	}

	if (pc->by_age)
		plain_row_age(rows, vh, &pc->ask.older);
	if (!plain_layout_valid(scan, v))
		rows->checked_desc = NULL;	/* store_row checks this row */

	size = minidb_materialized_size(v);
	td = (HeapTupleHeader)
		(likely(rows->arena_used + MAXALIGN(size) <= rows->arena_size) ?
		 rows->arena + rows->arena_used :
		 arena_reserve(scan, size));
	write_plain_tuple(td, v, blkno, off);
	rows->offsets[rows->nrows] = off;
	rows->starts[rows->nrows] = rows->arena_used;
	rows->lens[rows->nrows] = size;
	rows->nrows++;
	rows->arena_used += MAXALIGN(size);
	return td;
}

/*
 * plain_version for an MVCC scan, its row kept the way collect_record keeps
 * it.  False for anything else, which the caller hands to collect_locked_rest,
 * then collect_record.
 */
static pg_attribute_always_inline bool
collect_plain(MinidbScanDesc scan, PlainCollect *pc, Page page,
			  BlockNumber blkno, OffsetNumber off, uint32 *below)
{
	MinidbVersionData v;
	const MinidbVersionHeader *vh;

	if (!plain_version(page, off, pc->snapshot_xmin, below, false, &v, &vh,
					   &pc->ask))
		return false;
	(void) keep_plain_row(scan, pc, &v, vh, blkno, off);
	return true;
}

/*
 * The record at off of a page checked whole, when it is a row that
 * collect_plain would take but for a row lock left on it (plain_locked),
 * kept as collect_record keeps it: the lockers shown as the tuple's xmax
 * (rows_append's minidb_tuple_set_lockers).  False for anything else.
 */
static pg_attribute_always_inline bool
collect_locked(MinidbScanDesc scan, PlainCollect *pc, Page page,
			   BlockNumber blkno, OffsetNumber off)
{
	MinidbVersionData v;
	const MinidbVersionHeader *vh;
	MinidbLockers lk;
	const char *rec;
	uint32		len;
	HeapTupleHeader td;

	rec = plain_item(page, off, &len);
	if (rec == NULL ||
		!plain_locked(rec, len, pc->snapshot_xmin, &v, &vh, &pc->ask, &lk))
		return false;
	td = keep_plain_row(scan, pc, &v, vh, blkno, off);
	minidb_tuple_set_lockers(td, &lk);
#ifdef MINIDB_CHECK_FAST_PATH
	{
		/* the bytes rows_append writes for the walker's version 0 */
		PGAlignedBlock check;
		Size		size = minidb_materialized_size(&v);
		MinidbLockers rl;

		if (size <= sizeof(check.data))
		{
			minidb_write_tuple((HeapTupleHeader) check.data, &v,
							   InvalidTransactionId, &td->t_ctid);
			minidb_record_get_lockers(rec, &rl);
			if (rl.mode != MINIDB_LOCK_NONE)
				minidb_tuple_set_lockers((HeapTupleHeader) check.data, &rl);
			if (memcmp(check.data, td, size) != 0)
				elog(ERROR, "collect_locked and rows_append write different tuples");
		}
	}
#endif
	return true;
}

/* Let go of the page a sequential scan kept pinned, if any */
static void
scan_release_held(MinidbScanDesc scan)
{
	if (BufferIsValid(scan->held))
	{
		minidb_checked_pin_forget(scan->held);
		ReleaseBuffer(scan->held);
		scan->held = InvalidBuffer;
	}
}

/*
 * Done with the pin of a page collect_page read whole and checked: a
 * sequential or TID range scan keeps it, as heap's keeps its current page,
 * until it moves on, so that an UPDATE or DELETE of one of its rows finds
 * it checked and pinned (minidb_checked_pin_share), and an open cursor
 * holds the pin heap's would (temp_buffers runs out as for heap); other
 * scans let it go.
 */
static void
scan_done_with_page(MinidbScanDesc scan, Buffer buffer, bool whole)
{
	scan_release_held(scan);
	if (whole &&
		(scan->base.rs_flags & (SO_TYPE_SEQSCAN | SO_TYPE_TIDRANGESCAN)) &&
		!PageIsNew(BufferGetPage(buffer)))
	{
		minidb_checked_pin_note(scan->base.rs_rd, buffer);
		scan->held = buffer;
	}
	else
		ReleaseBuffer(buffer);
}

/*
 * Ask for the record after next, off + 2, of a page whose last line
 * pointer is maxoff: its line pointer is read anyway.  Its start and end,
 * within the page (a mask: a sound record lies inside it, and the address
 * of any other is only a hint).
 */
static pg_attribute_always_inline void
prefetch_after_next(Page page, OffsetNumber off, OffsetNumber maxoff)
{
	if (off + 2 <= maxoff)
	{
		ItemId		next = PageGetItemId(page, off + 2);

		prefetch_byte((char *) page +
					  (ItemIdGetOffset(next) & (BLCKSZ - 1)));
		prefetch_byte((char *) page +
					  ((ItemIdGetOffset(next) +
						ItemIdGetLength(next)) & (BLCKSZ - 1)));
	}
}

/* collect_locked_rest's loop, inline for its constant choices */
static pg_attribute_always_inline void
collect_locked_loop(MinidbScanDesc scan, PlainCollect *pc, Buffer buffer,
					Page page, BlockNumber blkno, OffsetNumber off,
					OffsetNumber last)
{
	for (; off <= last; off++)
	{
		prefetch_after_next(page, off, last);
		if (collect_locked(scan, pc, page, blkno, off) ||
			collect_plain(scan, pc, page, blkno, off, NULL))
			continue;
		collect_record(scan, buffer, blkno, off);
	}
}

/*
 * Rows off to last of a page checked whole, when the record at off is a
 * row collect_plain would take but for a row lock left on it
 * (collect_locked): a foreign key's check locks the parent row FOR KEY
 * SHARE, so that most rows of a parent table checked often carry one.
 * Those rows are then tried first, and the page's other rows as
 * collect_whole_page takes them.  False, having kept nothing, when the
 * record at off is not such a row.  Out of line, so that collect_whole_page
 * is what it was for the pages without locked rows, and specialized, as
 * collect_page specializes that, for a sequential scan's constant choices.
 */
static pg_noinline bool
collect_locked_rest(MinidbScanDesc scan, const PlainCollect *pc,
					Buffer buffer, Page page, BlockNumber blkno,
					OffsetNumber off, OffsetNumber last)
{
	PlainCollect c = *pc;

	if (!collect_locked(scan, &c, page, blkno, off))
		return false;
	if (likely(c.by_age && !c.lock_rows))
	{
		/* stated again, for the compiler to fold into this copy */
		c.by_age = true;
		c.lock_rows = false;
		collect_locked_loop(scan, &c, buffer, page, blkno, off + 1, last);
	}
	else
		collect_locked_loop(scan, &c, buffer, page, blkno, off + 1, last);
	return true;
}

/*
 * collect_page's loop over a whole page under an MVCC snapshot (see
 * there), inline: collect_page instantiates it for a sequential scan's
 * constant choices (pc->by_age, not pc->lock_rows), so that no row tests
 * them
 */
static pg_attribute_always_inline void
collect_whole_page(MinidbScanDesc scan, PlainCollect *pc, Relation rel,
				   Buffer buffer, Page page, BlockNumber blkno,
				   OffsetNumber maxoff)
{
	uint32		below = BLCKSZ;
	bool		checked = false;

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		prefetch_after_next(page, off, maxoff);
		if (collect_plain(scan, pc, page, blkno, off,
						  checked ? NULL : &below))
			continue;
		if (!checked)
		{
			/*
			 * The line pointers before off were normal and their records
			 * descended (plain_version), the last one's start the bound
			 * for the rest
			 */
			minidb_page_check_rest(rel, buffer, off,
								   off > FirstOffsetNumber ?
								   ItemIdGetOffset(PageGetItemId(page, off - 1)) :
								   BLCKSZ);
			checked = true;
			if (collect_plain(scan, pc, page, blkno, off, NULL))
				continue;
		}
		/* a row lock left on the row: the rest of the page is read so */
		if (collect_locked_rest(scan, pc, buffer, page, blkno, off, maxoff))
			break;
		collect_record(scan, buffer, blkno, off);
	}
}

/*
 * Materialize the visible rows of block blkno into the arena: all of them,
 * or those at offsets[0..noffsets-1] when offsets is given.  Under an MVCC
 * snapshot the common record takes collect_plain, one tight loop over the
 * page; any other goes through collect_record.
 *
 * A whole page read under an MVCC snapshot checks it as minidb_page_check
 * does, in two parts: the header and special area first, then, in the
 * same pass as the records, that no two line pointers name one record:
 * while each record starts below the one before it (plain_version's
 * below), none can.  Before the first record collect_plain leaves to
 * collect_record, and on the first that does not descend, the rest of the
 * page is checked (minidb_page_check_rest: the line pointers left must go
 * on descending, else the page takes the whole minidb_page_check): so a
 * damaged page raises the same error, before any record's, as when the
 * check came first; until then only records that raise nothing were read.
 */
static void
collect_page(MinidbScanDesc scan, BlockNumber blkno,
			 const OffsetNumber *offsets, int noffsets)
{
	Relation	rel = scan->base.rs_rd;
	Snapshot	snapshot = scan->base.rs_snapshot;
	Buffer		buffer;
	Page		page;
	OffsetNumber maxoff;

	rows_reset(&scan->rows);
	buffer = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
								scan->strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (snapshot->snapshot_type != SNAPSHOT_MVCC || offsets != NULL ||
		PageIsNew(page) || minidb_page_damage(page) != NULL)
		minidb_page_check(rel, buffer);
	maxoff = minidb_page_maxoff(page);
	if (maxoff >= FirstOffsetNumber)
		minidb_ssi_check_doomed(rel, snapshot);
	scan->rows.maxoff = maxoff;
	scan->rows.rewritten = (MinidbPageGetOpaque(page)->md_flags &
							MINIDB_PAGE_REWRITTEN) != 0;
	scan->rows.keyed = !scan->rows.rewritten;	/* see rows_age_keys */
	/* rows that pass plain_layout_valid need no check when handed out */
	if (unlikely(scan->layout_desc != RelationGetDescr(rel)))
		layout_prepare(scan, RelationGetDescr(rel));
	scan->rows.checked_desc = RelationGetDescr(rel);

	if (snapshot->snapshot_type == SNAPSHOT_MVCC)
	{
		PlainCollect pc;

		plain_collect_init(scan, buffer, &pc);
		if (offsets == NULL)
		{
			if (likely(pc.by_age && !pc.lock_rows))
			{
				/* stated again, for the compiler to fold into this copy */
				pc.by_age = true;
				pc.lock_rows = false;
				collect_whole_page(scan, &pc, rel, buffer, page, blkno, maxoff);
			}
			else
				collect_whole_page(scan, &pc, rel, buffer, page, blkno, maxoff);
		}
		else
		{
			for (int i = 0; i < noffsets; i++)
				if (offsets[i] <= maxoff &&
					(offsets[i] < FirstOffsetNumber ||
					 (!collect_plain(scan, &pc, page, blkno, offsets[i], NULL) &&
					  !collect_locked_rest(scan, &pc, buffer, page, blkno,
										   offsets[i], offsets[i]))))
					collect_record(scan, buffer, blkno, offsets[i]);
		}
	}
	else if (offsets == NULL)
	{
		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
			collect_record(scan, buffer, blkno, off);
	}
	else
	{
		for (int i = 0; i < noffsets; i++)
			if (offsets[i] <= maxoff)
				collect_record(scan, buffer, blkno, offsets[i]);
	}

	LockBuffer(buffer, BUFFER_LOCK_UNLOCK);
	scan_done_with_page(scan, buffer, offsets == NULL);
}

/*
 * minidb_tuple_layout_plainly_valid for a row without nulls or external
 * values, of natts <= desc->natts attributes: the leading fixed-width
 * attributes at the offsets layout_prepare computed (they only grow, so
 * the last one in range bounds them all), then the others as it walks
 * them.  True implies that it, and so minidb_check_tuple_layout, would
 * pass the row; false leaves the row to minidb_check_tuple_layout.
 */
static pg_attribute_always_inline bool
layout_valid(MinidbScanDesc scan, TupleDesc desc, HeapTuple tuple, int natts)
{
	HeapTupleHeader td = tuple->t_data;
	const char *dp = (const char *) td + td->t_hoff;
	uint32		len = tuple->t_len - td->t_hoff;
	int			n = Min(natts, scan->layout_nfixed);
	uint32		off = scan->layout_end[n];
	bool		varwidth = false;

	if (off > len)
		return false;
	for (int i = n; i < natts; i++)
		if (!minidb_layout_attr_plain(TupleDescAttr(desc, i), dp, len, &off,
									  &varwidth))
			return false;
	return off == len &&
		varwidth == ((td->t_infomask & HEAP_HASVARWIDTH) != 0);
}

/*
 * ExecStoreHeapTuple(tuple, slot, false), inline, for the slots a scan
 * hands its rows out through: a heap tuple slot that does not own its
 * tuple.  tts_heap_clear's only work beyond the fields
 * tts_heap_store_tuple then sets is freeing an owned tuple, so the store
 * is those fields.  Any other slot takes ExecStoreHeapTuple; a
 * -DMINIDB_CHECK_FAST_PATH build stores through it too and checks that
 * the slot came out the same.
 */
static pg_attribute_always_inline void
store_heap_tuple(HeapTuple tuple, TupleTableSlot *slot)
{
	HeapTupleTableSlot *hslot = (HeapTupleTableSlot *) slot;
	ItemPointerData tid = tuple->t_self;	/* as just set: before any
											 * store to the slot */

	if (unlikely(slot->tts_ops != &TTSOpsHeapTuple || TTS_SHOULDFREE(slot)))
	{
		ExecStoreHeapTuple(tuple, slot, false);
		return;
	}
	slot->tts_nvalid = 0;
	hslot->tuple = tuple;
	hslot->off = 0;
	slot->tts_flags &= ~TTS_FLAG_EMPTY;
	slot->tts_tid = tid;
	slot->tts_tableOid = tuple->t_tableOid;
#ifdef MINIDB_CHECK_FAST_PATH
	{
		uint16		flags = slot->tts_flags;

		ExecStoreHeapTuple(tuple, slot, false);
		if (slot->tts_flags != flags || slot->tts_nvalid != 0 ||
			!ItemPointerEquals(&slot->tts_tid, &tid) ||
			slot->tts_tableOid != tuple->t_tableOid ||
			hslot->tuple != tuple || hslot->off != 0)
			elog(ERROR, "store_heap_tuple and ExecStoreHeapTuple disagree");
	}
#endif
}

/*
 * Point the scan's tuple at the materialized row td of the current block.
 * store_heap_tuple copies t_self into the slot from the values stored here
 * (ExecStoreHeapTuple's wider loads over the three recent 16-bit stores
 * waited for them to reach the cache: per row, most of its time).
 * t_tableOid, the same for every row, is set once, by minidb_scan_begin.
 */
static pg_attribute_always_inline void
set_scan_tuple(MinidbScanDesc scan, HeapTupleHeader td, uint32 len,
			   OffsetNumber off)
{
	HeapTuple	tuple = &scan->tuple;

	tuple->t_data = td;
	tuple->t_len = len;
	ItemPointerSet(&tuple->t_self, scan->cblock, off);
}

/*
 * Hand out the materialized row td (len bytes, at offset off of the current
 * block) through slot.  Its attributes must lie within its data
 * (minidb_check_tuple_layout).  A row without nulls or external values is
 * checked by layout_valid, without a walk of its leading fixed-width
 * attributes; a row it does not pass, and any other row, takes the whole
 * check (which also words the error).
 */
static pg_attribute_always_inline void
store_tuple(MinidbScanDesc scan, HeapTupleHeader td, uint32 len,
			OffsetNumber off, TupleTableSlot *slot)
{
	HeapTuple	tuple = &scan->tuple;
	TupleDesc	desc = slot->tts_tupleDescriptor;
	int			natts;

	set_scan_tuple(scan, td, len, off);
	if (unlikely(scan->layout_desc != desc))
		layout_prepare(scan, desc);
	natts = HeapTupleHeaderGetNatts(td);
	if (!(td->t_infomask & (HEAP_HASNULL | HEAP_HASEXTERNAL)) &&
		natts <= desc->natts &&
		layout_valid(scan, desc, tuple, natts))
		;						/* the whole check would pass */
	else
		minidb_check_tuple_layout(scan->base.rs_rd, desc, tuple);
	store_heap_tuple(tuple, slot);
}

/* store_tuple, out of line: the rows store_row cannot take as checked */
static pg_noinline void
store_tuple_checking(MinidbScanDesc scan, HeapTupleHeader td, uint32 len,
					 OffsetNumber off, TupleTableSlot *slot)
{
	store_tuple(scan, td, len, off, slot);
}

/*
 * Hand out row i of the current page through slot (in rows_order_by_age's
 * order, when it gave one).  When collect_page
 * found every row's attributes where the slot's descriptor puts them
 * (plain_layout_valid), the row goes straight to the slot; else
 * store_tuple checks it.
 */
static pg_attribute_always_inline void
store_row(MinidbScanDesc scan, int i, TupleTableSlot *slot)
{
	MinidbPageRows *rows = &scan->rows;
	HeapTupleHeader td;

	if (rows->ordered)
		i = rows->order[i];
	td = (HeapTupleHeader) (rows->arena + rows->starts[i]);

	if (likely(rows->checked_desc == slot->tts_tupleDescriptor))
	{
		set_scan_tuple(scan, td, rows->lens[i], rows->offsets[i]);
		store_heap_tuple(&scan->tuple, slot);
	}
	else
		store_tuple_checking(scan, td, rows->lens[i], rows->offsets[i], slot);
}

/* ----------------------------------------------------------------
 * Scan descriptors
 * ----------------------------------------------------------------
 */
TableScanDesc
minidb_scan_begin(Relation rel, Snapshot snapshot, int nkeys,
				  struct ScanKeyData *key, ParallelTableScanDesc pscan,
				  uint32 flags)
{
	MinidbScanDesc scan;

	RelationIncrementReferenceCount(rel);

	/* a scan of a small table is begun often: the large arrays stay unset */
	scan = (MinidbScanDesc) palloc(MAXALIGN(sizeof(MinidbScanDescData)) +
								   SCAN_FIRST_ARENA);
	memset(scan, 0, offsetof(MinidbScanDescData, rows));
	rows_reset(&scan->rows);
	scan->rows.arena = scan_first_arena(scan);
	scan->rows.arena_size = SCAN_FIRST_ARENA;
	scan->base.rs_rd = rel;
	scan->tuple.t_tableOid = RelationGetRelid(rel); /* set_scan_tuple's */
	scan->base.rs_snapshot = snapshot;
	scan->base.rs_nkeys = nkeys;
	scan->base.rs_flags = flags;
	scan->base.rs_parallel = pscan;
	scan->cxt = CurrentMemoryContext;
	scan->cbuf = InvalidBuffer;
	scan->held = InvalidBuffer;
	scan->startblock = 0;
	scan->numblocks = InvalidBlockNumber;
	scan->giving = InvalidBlockNumber;

	if (nkeys > 0)
	{
		scan->base.rs_key = (ScanKey) palloc(sizeof(ScanKeyData) * nkeys);
		memcpy(scan->base.rs_key, key, sizeof(ScanKeyData) * nkeys);
	}

	if (pscan)
		scan->nblocks = ((ParallelBlockTableScanDesc) pscan)->phs_nblocks;
	else
		scan->nblocks = RelationGetNumberOfBlocks(rel);

	if ((flags & SO_ALLOW_STRAT) && scan->nblocks > (BlockNumber) NBuffers / 4)
		scan->strategy = GetAccessStrategy(BAS_BULKREAD);

	if (pscan)
	{
		scan->pworker = palloc(sizeof(ParallelBlockTableScanWorkerData));
	}

	if ((flags & SO_TYPE_SEQSCAN) && snapshot && IsMVCCSnapshot(snapshot))
		PredicateLockRelation(rel, snapshot);
	/* see rows_order_by_age; minidb's own callers may want TID order */
	scan->by_age = (flags & SO_TYPE_SEQSCAN) != 0;
	/* as heap's initscan: a sequential scan counts at start and rescan */
	if (flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(rel);

	return (TableScanDesc) scan;
}

static inline void leave_page(MinidbScanDesc scan);

void
minidb_scan_rescan(TableScanDesc sscan, struct ScanKeyData *key,
				   bool set_params, bool allow_strat, bool allow_sync,
				   bool allow_pagemode)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;

	if (set_params)
	{
		if (allow_strat)
			scan->base.rs_flags |= SO_ALLOW_STRAT;
		else
			scan->base.rs_flags &= ~SO_ALLOW_STRAT;
	}
	if (key && scan->base.rs_nkeys > 0)
		memcpy(scan->base.rs_key, key,
			   sizeof(ScanKeyData) * scan->base.rs_nkeys);
	if (!scan->base.rs_parallel)
		scan->nblocks = RelationGetNumberOfBlocks(scan->base.rs_rd);
	scan->inited = false;
	scan->cblock = InvalidBlockNumber;
	if (scan->by_age)
		leave_page(scan);
	rows_reset(&scan->rows);
	scan_release_held(scan);
	if (scan->base.rs_flags & SO_TYPE_SEQSCAN)
		pgstat_count_heap_scan(scan->base.rs_rd);
}

void
minidb_scan_end(TableScanDesc sscan)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;

	if (BufferIsValid(scan->cbuf))
		ReleaseBuffer(scan->cbuf);
	scan_release_held(scan);
	if (scan->strategy)
		FreeAccessStrategy(scan->strategy);
	/* The arena may still back a slot the caller has not cleared: keep it */
	RelationDecrementReferenceCount(scan->base.rs_rd);
	if (scan->base.rs_flags & SO_TEMP_SNAPSHOT)
		UnregisterSnapshot(scan->base.rs_snapshot);
}

/* ----------------------------------------------------------------
 * Sequential and TID range scans
 * ----------------------------------------------------------------
 */

/* The next block to read in direction, or InvalidBlockNumber at the end */
static BlockNumber
next_block(MinidbScanDesc scan, ScanDirection direction)
{
	Relation	rel = scan->base.rs_rd;
	BlockNumber endblock;

	if (scan->base.rs_parallel)
	{
		ParallelBlockTableScanDesc pbscan =
			(ParallelBlockTableScanDesc) scan->base.rs_parallel;
		ParallelBlockTableScanWorker pbscanwork = scan->pworker;

		if (!scan->inited)
			table_block_parallelscan_startblock_init(rel, pbscanwork, pbscan);
		return table_block_parallelscan_nextpage(rel, pbscanwork, pbscan);
	}

	endblock = scan->numblocks == InvalidBlockNumber ? scan->nblocks :
		Min(scan->nblocks, scan->startblock + scan->numblocks);
	if (ScanDirectionIsBackward(direction))
	{
		if (!scan->inited)
			return endblock > scan->startblock ? endblock - 1 : InvalidBlockNumber;
		return scan->cblock > scan->startblock ? scan->cblock - 1 :
			InvalidBlockNumber;
	}
	if (!scan->inited)
		return scan->startblock < endblock ? scan->startblock : InvalidBlockNumber;
	return scan->cblock + 1 < endblock ? scan->cblock + 1 : InvalidBlockNumber;
}

/*
 * Step the scan to its next block and return it (InvalidBlockNumber at the
 * end, which also rewinds the scan).  Index builds read pages this way.
 */
BlockNumber
minidb_scan_advance_block(MinidbScanDesc scan, ScanDirection direction)
{
	BlockNumber blkno = next_block(scan, direction);

	scan->inited = (blkno != InvalidBlockNumber);
	scan->cblock = blkno;
	return blkno;
}

/*
 * Is row a's version older than row b's: written by an earlier transaction,
 * or by an earlier command of the same one?  Rows written by one command
 * are ordered by their versions before it, if any (the order in which the
 * command came to them, when it was a sequential scan), rows without one
 * first (inserted, or moved there by an UPDATE: their order among the
 * others is not known).  Frozen versions are older than all others and of one age: their
 * order is their place on the page (CLUSTER and VACUUM FULL freeze what
 * they write and write it in the order they mean).  On a page CLUSTER or
 * VACUUM FULL wrote, the rows it wrote keep their place (their versions'
 * ages need not follow it), and rows updated in place since, known by the
 * older version their record still holds, come after them.
 */
static bool
row_older(const MinidbPageRows *rows, int a, int b)
{
	const MinidbRowAge *ra = &rows->ages[a];
	const MinidbRowAge *rb = &rows->ages[b];
	int			pa,
				pb;

	if (rows->rewritten)
	{
		bool		ua = TransactionIdIsValid(ra->prev_xmin);
		bool		ub = TransactionIdIsValid(rb->prev_xmin);

		if (!ua || !ub)
			return !ua && ub;
	}
	if (ra->frozen || rb->frozen)
		return ra->frozen && !rb->frozen;
	if (ra->xmin != rb->xmin)
		return TransactionIdPrecedes(ra->xmin, rb->xmin);
	/* a cmin not known: keep their places (rows one transaction wrote) */
	if (ra->cmin == InvalidCommandId || rb->cmin == InvalidCommandId)
		return false;
	if (ra->cmin != rb->cmin)
		return ra->cmin < rb->cmin;
	/* 0: no older version, 1: a frozen one, 2: any other */
	pa = !TransactionIdIsValid(ra->prev_xmin) ? 0 :
		ra->prev_xmin == FrozenTransactionId ? 1 : 2;
	pb = !TransactionIdIsValid(rb->prev_xmin) ? 0 :
		rb->prev_xmin == FrozenTransactionId ? 1 : 2;
	if (pa != pb || pa < 2)
		return pa < pb;
	if (ra->prev_xmin != rb->prev_xmin)
		return TransactionIdPrecedes(ra->prev_xmin, rb->prev_xmin);
	return ra->prev_cmin < rb->prev_cmin;
}

/*
 * The keys of a page's rows, or false when row_older must decide: a page
 * CLUSTER or VACUUM FULL wrote, a version whose cmin is not known (row_older
 * leaves such rows where they are, which no key does), or an xmin that is
 * not a normal one.
 */
static bool
rows_age_keys(const MinidbPageRows *rows, MinidbAgeKey *keys)
{
	TransactionId base = InvalidTransactionId;

	if (rows->rewritten)
		return false;
	/* relative to the first row not frozen (the loop refuses it if need be) */
	for (int i = 0; i < rows->nrows; i++)
		if (!rows->ages[i].frozen)
		{
			base = rows->ages[i].xmin;
			break;
		}
	for (int i = 0; i < rows->nrows; i++)
		if (!age_key(&rows->ages[i], base, &keys[i]))
			return false;
	return true;
}

/*
 * Is row a before row b in the order of a page whose rows have keys: by
 * their keys, and rows of equal keys in their line pointer order.  That is
 * the order a stable sort by age_key_less gives, and as it is a total one
 * (no two rows are equal in it), any sort by it gives that same order.
 */
static pg_attribute_always_inline bool
row_key_before(const MinidbAgeKey *keys, int a, int b)
{
	if (age_key_less(&keys[a], &keys[b]))
		return true;
	if (age_key_less(&keys[b], &keys[a]))
		return false;
	return a < b;
}

/*
 * The order in which rows_order_by_age last gave one page of a relation,
 * kept in the relation's rd_amcache (so it goes when the relcache entry is
 * reset).  A small table whose rows are updated in place in no order, as
 * pgbench's tellers and branches are, is scanned again and again with few
 * of its rows changed in between: the rows in their last order are then
 * nearly in their new one, which sort_rows_by_key finds in about one pass,
 * where sorting them from line pointer order takes n log n comparisons.
 * It is only where the sort starts: the rows are sorted by their keys all
 * the same, so an order that no longer fits costs time, never a different
 * result.
 */
typedef struct MinidbLastOrder
{
	MinidbPageOrder page;		/* points at the arrays below */
	OffsetNumber offsets[MaxHeapTuplesPerPage];
	uint16		order[MaxHeapTuplesPerPage];
} MinidbLastOrder;

/* Whether po orders just the rows of rows (the same offsets) */
static bool
page_order_fits(const MinidbPageOrder *po, const MinidbPageRows *rows)
{
	return po->nrows == rows->nrows &&
		memcmp(po->offsets, rows->offsets,
			   rows->nrows * sizeof(OffsetNumber)) == 0;
}

/* Keep in po (whose arrays have room) order, an order of page blkno's rows */
static void
page_order_keep(MinidbPageOrder *po, BlockNumber blkno,
				const MinidbPageRows *rows, const uint16 *order)
{
	po->blkno = blkno;
	po->nrows = rows->nrows;
	memcpy(po->offsets, rows->offsets, rows->nrows * sizeof(OffsetNumber));
	memcpy(po->order, order, rows->nrows * sizeof(uint16));
}

/*
 * Where to start sorting the rows of page blkno of rel: their order of the
 * last time, when the page had just the same rows then (an update in
 * place keeps a row's offset), else line pointer order
 */
static void
rows_start_order(Relation rel, BlockNumber blkno,
				 const MinidbPageRows *rows, uint16 *order)
{
	const MinidbLastOrder *last = (const MinidbLastOrder *) rel->rd_amcache;

	if (last != NULL && last->page.blkno == blkno &&
		page_order_fits(&last->page, rows))
	{
		memcpy(order, last->page.order, rows->nrows * sizeof(uint16));
		return;
	}
	for (int i = 0; i < rows->nrows; i++)
		order[i] = i;
}

/* Keep the order of the rows of page blkno of rel, for rows_start_order */
static void
remember_order(Relation rel, BlockNumber blkno, const MinidbPageRows *rows,
			   const uint16 *order)
{
	MinidbLastOrder *last = (MinidbLastOrder *) rel->rd_amcache;

	if (last == NULL)
	{
		last = MemoryContextAlloc(CacheMemoryContext, sizeof(MinidbLastOrder));
		last->page.offsets = last->offsets;
		last->page.order = last->order;
		rel->rd_amcache = last;
	}
	page_order_keep(&last->page, blkno, rows, order);
}

/* The comparisons insert_in_order places a row by */
static pg_attribute_always_inline bool
key_before(const void *arg, int a, int b)
{
	return row_key_before((const MinidbAgeKey *) arg, a, b);
}

static pg_attribute_always_inline bool
older_than(const void *arg, int a, int b)
{
	return row_older((const MinidbPageRows *) arg, a, b);
}

/*
 * Put row into order[0..n-1], sorted by before, after the rows it does not
 * come before (binary search; order has room for n + 1).  Inlined with a
 * constant before, the comparisons are direct calls.
 */
static pg_attribute_always_inline void
insert_in_order(uint16 *order, int n, uint16 row,
				bool (*before) (const void *arg, int a, int b),
				const void *arg)
{
	int			lo = 0;
	int			hi = n;

	/* the first row of order[0..n-1] that row comes before, or n */
	while (lo < hi)
	{
		int			mid = (lo + hi) / 2;

		if (before(arg, row, order[mid]))
			hi = mid;
		else
			lo = mid + 1;
	}
	memmove(&order[lo + 1], &order[lo], (n - lo) * sizeof(uint16));
	order[lo] = row;
}

/*
 * Sort order[0..n-1], a permutation of a page's rows, by row_key_before;
 * in about one pass when it is nearly sorted already.  The pass keeps a
 * sorted run of it, and sets aside each row out of place there: of two
 * neighbours out of order, the one that does not follow the row kept
 * before them (a row updated since the order was taken is newer than all
 * the rows after it).  Each row set aside is then placed into the run by
 * binary search.  Rows in no order at all are mostly set aside, which
 * makes this an insertion sort.
 */
static void
sort_rows_by_key(const MinidbAgeKey *keys, uint16 *order, int n)
{
	uint16		aside[MaxHeapTuplesPerPage];
	int			nkept = 0;
	int			naside = 0;
	uint16		last = 0;		/* order[nkept - 1] once a row is kept */

	/* the run is written over order[], never ahead of the row read */
	for (int k = 0; k < n; k++)
	{
		uint16		row = order[k];

		if (nkept == 0 || row_key_before(keys, last, row))
			order[nkept++] = last = row;
		else if (nkept == 1 || row_key_before(keys, order[nkept - 2], row))
		{
			/* the row kept last is out of place, not this one */
			aside[naside++] = last;
			order[nkept - 1] = last = row;
		}
		else
			aside[naside++] = row;
	}
	for (int k = 0; k < naside; k++)
		insert_in_order(order, nkept++, aside[k], key_before, keys);
}

/*
 * Sort rows from row first on, the ones before it in order, by row_older:
 * an insertion sort of their indexes, each row placed by binary search
 * after the rows it is not older than.  For the pages whose rows have no
 * keys; row_older is no total order (it keeps the places of rows whose
 * cmin is not known), so this is the one way their order is taken.
 */
static void
sort_rows_by_age(const MinidbPageRows *rows, int first, uint16 *order)
{
	int			n = rows->nrows;

	for (int k = 0; k < n; k++)
		order[k] = k;
	for (int i = first; i < n; i++)
		insert_in_order(order, i, i, older_than, rows);
}

#ifdef MINIDB_CHECK_FAST_PATH
/*
 * The keys collect_page made for a page's rows (rows_add_age) must be
 * rows_age_keys's for their ages, which a -DMINIDB_CHECK_FAST_PATH build
 * keeps too, order every two rows as row_older does, and find the first
 * row out of order where the pass by row_older does (first)
 */
static void
check_rows_keys(const MinidbPageRows *rows, int first)
{
	MinidbAgeKey keys[MaxHeapTuplesPerPage];
	int			n = rows->nrows;
	int			i;

	if (!rows_age_keys(rows, keys) ||
		memcmp(keys, rows->keys, n * sizeof(MinidbAgeKey)) != 0)
		elog(ERROR, "the age keys made while collecting are not rows_age_keys's");
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++)
			if (age_key_less(&keys[a], &keys[b]) != row_older(rows, a, b))
				elog(ERROR, "the age keys of rows %d and %d disagree with row_older",
					 a, b);
	for (i = 1; i < n; i++)
		if (row_older(rows, i, i - 1))
			break;
	if (i != first)
		elog(ERROR, "the age keys find row %d out of order, row_older %d",
			 first, i);
}
#endif

/*
 * Sort order[] by the rows' keys, starting from the order this page of rel
 * (block blkno) last came out in, and remember the result; first is the
 * first row out of order.  A -DMINIDB_CHECK_FAST_PATH build checks the
 * order against sort_rows_by_age's.
 */
static void
sort_rows_keyed(Relation rel, BlockNumber blkno, const MinidbPageRows *rows,
				const MinidbAgeKey *keys, int first, uint16 *order)
{
	rows_start_order(rel, blkno, rows, order);
	sort_rows_by_key(keys, order, rows->nrows);
	remember_order(rel, blkno, rows, order);
#ifdef MINIDB_CHECK_FAST_PATH
	{
		uint16		check[MaxHeapTuplesPerPage];

		sort_rows_by_age(rows, first, check);
		if (memcmp(check, order, rows->nrows * sizeof(uint16)) != 0)
			elog(ERROR, "sort_rows_by_key and sort_rows_by_age disagree");
	}
#endif
}

/*
 * Put order[] in rows_order_by_age's order for a page whose rows have keys
 * (rows->keyed), sorting from the order this page of rel (block blkno) last
 * came out in; false when the rows are in order already
 */
static bool
rows_order_by_keys(Relation rel, BlockNumber blkno, MinidbPageRows *rows,
				   uint16 *order)
{
	int			n = rows->nrows;
	int			i;

	for (i = 1; i < n; i++)
		if (age_key_less(&rows->keys[i], &rows->keys[i - 1]))
			break;
#ifdef MINIDB_CHECK_FAST_PATH
	check_rows_keys(rows, i);
#endif
	if (i >= n)
		return false;
	sort_rows_keyed(rel, blkno, rows, rows->keys, i, order);
	return true;
}

/*
 * rows_order_by_keys for a page whose rows have ages (a page CLUSTER or
 * VACUUM FULL wrote, or a row with no key): by their keys all the same
 * when rows_age_keys gives them, else by row_older
 */
static bool
rows_order_by_ages(Relation rel, BlockNumber blkno, MinidbPageRows *rows,
				   uint16 *order)
{
	int			n = rows->nrows;
	int			i;
	MinidbAgeKey keys[MaxHeapTuplesPerPage];

	if (rows->uniform)
		return false;			/* one age: their order stands */

	/* of two rows of one age neither is older (a page one command wrote) */
	for (i = 1; i < n; i++)
		if (!ages_equal(&rows->ages[i], &rows->ages[i - 1]) &&
			row_older(rows, i, i - 1))
			break;
	if (i >= n)
		return false;

	if (rows_age_keys(rows, keys))
	{
#ifdef MINIDB_CHECK_FAST_PATH
		/* the keys must order every two rows as row_older does */
		for (int a = 0; a < n; a++)
			for (int b = 0; b < n; b++)
				if (age_key_less(&keys[a], &keys[b]) != row_older(rows, a, b))
					elog(ERROR, "the age keys of rows %d and %d disagree with row_older",
						 a, b);
#endif
		sort_rows_keyed(rel, blkno, rows, keys, i, order);
	}
	else
		sort_rows_by_age(rows, i, order);
	return true;
}

/*
 * A sequential scan returns a page's rows in the order their visible
 * versions were written, oldest first (a stable sort: rows written by one
 * command keep their line pointer order).  That is the order heap's scan
 * gives, because heap appends every new version at a new line pointer,
 * while minidb updates rows in place; with it, a table that was updated
 * reads back in heap's order without ORDER BY.  The order of rows without
 * ORDER BY is unspecified, but users and tests read it.  Rows are nearly
 * always in order already: one pass checks that.  Otherwise (a page whose
 * rows are updated in place, in no order: pgbench's tellers) they are
 * sorted by their keys when they have them (collect_page makes them for
 * nearly every page, rows_age_keys from the ages for the others), starting
 * from the order this page of rel (block blkno) last came out in, else by
 * row_older; the rows are then handed out in that order (rows->order).
 */
static void
rows_order_by_age(Relation rel, BlockNumber blkno, MinidbPageRows *rows)
{
	rows->ordered = rows->keyed ?
		rows_order_by_keys(rel, blkno, rows, rows->order) :
		rows_order_by_ages(rel, blkno, rows, rows->order);
}

/*
 * A page a sequential scan reads again must come out in the order it came
 * out in before: a scrollable cursor's FETCH BACKWARD, FETCH ABSOLUTE or
 * rewind reads the pages it passed again, under the same snapshot, and
 * must meet the rows it met (heap reads them in line pointer order, which
 * does not change).  The rows are the same ones, but their ages may not
 * be: a transaction that deletes or moves a row of another transaction's
 * stores its cmax where the version's cmin was (as heap stores t_cid), and
 * rows_order_by_age would place the row elsewhere.  So the scan keeps the
 * order it gave each page it left: a bit for every block it gave, and, for
 * the pages not given in line pointer order, their rows' offsets and the
 * order given (4 bytes a row, on the pages whose rows were updated in
 * place out of order), a MinidbPageOrder, as rows_start_order keeps one.
 */
static bool
page_given(MinidbScanDesc scan, BlockNumber blkno)
{
	return blkno < scan->given_cap &&
		(scan->given[blkno / BITS_PER_BYTE] & (1 << (blkno % BITS_PER_BYTE)));
}

/* The order the scan gave page blkno, or NULL: line pointer order */
static MinidbPageOrder *
given_order(MinidbScanDesc scan, BlockNumber blkno)
{
	int			hit = scan->orders_hit;

	/* a scan going back finds the one before the last it found */
	for (int d = 0; d < 2; d++)
		if (hit - d >= 0 && hit - d < scan->norders &&
			scan->orders[hit - d].blkno == blkno)
			return &scan->orders[scan->orders_hit = hit - d];
	for (int i = scan->norders - 1; i >= 0; i--)
		if (scan->orders[i].blkno == blkno)
			return &scan->orders[scan->orders_hit = i];
	return NULL;
}

/* Make given[] cover block blkno */
static void
given_cover(MinidbScanDesc scan, BlockNumber blkno)
{
	Size		had = (scan->given_cap + BITS_PER_BYTE - 1) / BITS_PER_BYTE;
	BlockNumber cap;
	Size		bytes;

	if (scan->given == NULL && blkno < 64)
	{
		scan->given = (bits8 *) &scan->given_inline;
		scan->given_cap = 64;
		return;
	}
	cap = Max(Max(scan->nblocks, blkno + 1), 128);
	bytes = (cap + BITS_PER_BYTE - 1) / BITS_PER_BYTE;
	if (scan->given == (bits8 *) &scan->given_inline)
	{
		scan->given = MemoryContextAlloc(scan->cxt, bytes);
		memcpy(scan->given, &scan->given_inline, had);
	}
	else if (scan->given)
		scan->given = repalloc(scan->given, bytes);
	else
		scan->given = MemoryContextAlloc(scan->cxt, bytes);
	memset(scan->given + had, 0, bytes - had);
	scan->given_cap = cap;
}

/* Note that the scan gave page blkno in rows' order */
static void
remember_given(MinidbScanDesc scan, BlockNumber blkno,
			   const MinidbPageRows *rows)
{
	MinidbPageOrder *go;

	if (blkno >= scan->given_cap)
		given_cover(scan, blkno);
	scan->given[blkno / BITS_PER_BYTE] |= 1 << (blkno % BITS_PER_BYTE);
	if (!rows->ordered)
		return;
	if (scan->orders == NULL)
	{
		scan->orders = scan->orders_inline;
		scan->orders_cap = lengthof(scan->orders_inline);
	}
	else if (scan->norders == scan->orders_cap)
	{
		MinidbPageOrder *more;

		more = MemoryContextAlloc(scan->cxt, 2 * scan->orders_cap *
								  sizeof(MinidbPageOrder));
		memcpy(more, scan->orders, scan->norders * sizeof(MinidbPageOrder));
		if (scan->orders != scan->orders_inline)
			pfree(scan->orders);
		scan->orders = more;
		scan->orders_cap *= 2;
	}
	go = &scan->orders[scan->norders];
	if (scan->norders == 0)
	{
		go->offsets = scan->first_offsets;
		go->order = scan->first_order;
	}
	else
	{
		go->offsets = MemoryContextAlloc(scan->cxt, rows->nrows *
										 (sizeof(OffsetNumber) + sizeof(uint16)));
		go->order = (uint16 *) (go->offsets + rows->nrows);
	}
	page_order_keep(go, blkno, rows, rows->order);
	scan->norders++;
}

/*
 * Give the rows of a page the scan gave before in the order it gave them:
 * false when they are not the same rows (a snapshot that is not MVCC), and
 * rows_order_by_age decides.
 */
static bool
order_as_given(MinidbScanDesc scan, BlockNumber blkno, MinidbPageRows *rows)
{
	MinidbPageOrder *go = given_order(scan, blkno);

	if (go == NULL)
	{
		rows->ordered = false;	/* line pointer order, as before */
		return true;
	}
	if (!page_order_fits(go, rows))
		return false;
	memcpy(rows->order, go->order, rows->nrows * sizeof(uint16));
	rows->ordered = true;
	return true;
}

/* A sequential scan's page in the order heap's would give it */
static void
scan_page_order(MinidbScanDesc scan, BlockNumber blkno)
{
	MinidbPageRows *rows = &scan->rows;

	if (page_given(scan, blkno) && order_as_given(scan, blkno, rows))
		return;
	rows_order_by_age(scan->base.rs_rd, blkno, rows);
	if (!page_given(scan, blkno))
		scan->giving = blkno;	/* kept when the scan leaves it */
}

/*
 * Keep the order of the page the scan is leaving, if it gave it first
 * (before its rows go: the next page, a rescan).  A scan that ends on its
 * first page, as one of a one-page table does, keeps nothing.
 */
static inline void
leave_page(MinidbScanDesc scan)
{
	if (scan->giving != InvalidBlockNumber)
	{
		remember_given(scan, scan->giving, &scan->rows);
		scan->giving = InvalidBlockNumber;
	}
}

/* Move to the next page with rows; false at the end of the scan */
bool
minidb_scan_next_page(MinidbScanDesc scan, ScanDirection direction)
{
	for (;;)
	{
		BlockNumber blkno = minidb_scan_advance_block(scan, direction);

		leave_page(scan);
		if (blkno == InvalidBlockNumber)
		{
			rows_reset(&scan->rows);
			scan_release_held(scan);
			return false;
		}
		collect_page(scan, blkno, NULL, 0);
		if (scan->by_age)
			scan_page_order(scan, blkno);
		if (scan->rows.nrows > 0)
			return true;
	}
}

/* Does the row in slot pass the scan keys (catalog-style scans)? */
static bool
row_passes_keys(MinidbScanDesc scan)
{
	if (scan->base.rs_nkeys == 0)
		return true;
	return minidb_heap_key_test(&scan->tuple, RelationGetDescr(scan->base.rs_rd),
								scan->base.rs_nkeys, scan->base.rs_key);
}

/*
 * The next row in direction.  rows.cur is the row handed out last, so a
 * change of direction (a scrollable cursor's FETCH BACKWARD) returns the row
 * before it, as heap does.
 */
static bool
scan_next(MinidbScanDesc scan, ScanDirection direction, TupleTableSlot *slot)
{
	bool		backward = ScanDirectionIsBackward(direction);
	MinidbPageRows *rows = &scan->rows;

	for (;;)
	{
		int			i = rows->cur + (backward ? -1 : 1);

		if (!scan->inited || i < 0 || i >= rows->nrows)
		{
			if (!minidb_scan_next_page(scan, direction))
			{
				ExecClearTuple(slot);
				return false;
			}
			i = backward ? rows->nrows - 1 : 0;
		}
		rows->cur = i;
		store_row(scan, i, slot);
		if (row_passes_keys(scan))
			return true;
	}
}

bool
minidb_scan_getnextslot(TableScanDesc sscan, ScanDirection direction,
						TupleTableSlot *slot)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	MinidbPageRows *rows = &scan->rows;

	/* the next row of the current page, forward, no keys: scan_next's way */
	if (likely(ScanDirectionIsForward(direction) && scan->inited &&
			   rows->cur + 1 < rows->nrows && sscan->rs_nkeys == 0))
		store_row(scan, ++rows->cur, slot);
	else if (!scan_next(scan, direction, slot))
		return false;
	pgstat_count_heap_getnext(sscan->rs_rd);	/* per row, as heap */
	return true;
}

void
minidb_scan_set_tidrange(TableScanDesc sscan, ItemPointer mintid,
						 ItemPointer maxtid)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	BlockNumber startblk = ItemPointerGetBlockNumberNoCheck(mintid);
	BlockNumber endblk = ItemPointerGetBlockNumberNoCheck(maxtid);

	MINIDB_SCAN_MINTID(sscan) = *mintid;
	MINIDB_SCAN_MAXTID(sscan) = *maxtid;
	if (ItemPointerCompare(mintid, maxtid) > 0 || startblk >= scan->nblocks)
	{
		scan->startblock = 0;
		scan->numblocks = 0;
		return;
	}
	scan->startblock = startblk;
	scan->numblocks = Min(endblk, scan->nblocks - 1) - startblk + 1;
}

bool
minidb_scan_getnextslot_tidrange(TableScanDesc sscan, ScanDirection direction,
								 TupleTableSlot *slot)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;

	while (scan_next(scan, direction, slot))
	{
		if (ItemPointerCompare(&slot->tts_tid, &MINIDB_SCAN_MINTID(sscan)) < 0)
		{
			if (ScanDirectionIsBackward(direction))
				break;
			continue;
		}
		if (ItemPointerCompare(&slot->tts_tid, &MINIDB_SCAN_MAXTID(sscan)) > 0)
		{
			if (ScanDirectionIsForward(direction))
				break;
			continue;
		}
		pgstat_count_heap_getnext(sscan->rs_rd);
		return true;
	}
	ExecClearTuple(slot);
	return false;
}

/* ----------------------------------------------------------------
 * Bitmap heap scans
 * ----------------------------------------------------------------
 */

/* The rows of one page of the bitmap: offsets[ntuples], or all if lossy */
static bool
bitmap_collect(MinidbScanDesc scan, BlockNumber blockno,
			   OffsetNumber *offsets, int ntuples)
{
	rows_reset(&scan->rows);
	scan->cblock = blockno;
	if (blockno >= scan->nblocks)
		return false;
	if (ntuples >= 0)
		collect_page(scan, blockno, offsets, ntuples);
	else
		collect_page(scan, blockno, NULL, 0);
	return scan->rows.nrows > 0;
}

#if PG_VERSION_NUM >= 180000	/* 18: the AM walks the bitmap itself */
bool
minidb_scan_bitmap_next_tuple(TableScanDesc sscan, TupleTableSlot *slot,
							  bool *recheck, uint64 *lossy_pages,
							  uint64 *exact_pages)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;

	while (scan->rows.next >= scan->rows.nrows)
	{
		TBMIterateResult tbmres;
		OffsetNumber offsets[TBM_MAX_TUPLES_PER_PAGE];
		int			ntuples = -1;

		if (!tbm_iterate(&sscan->st.rs_tbmiterator, &tbmres))
		{
			rows_reset(&scan->rows);
			return false;
		}
		if (!tbmres.lossy)
			ntuples = tbm_extract_page_tuple(&tbmres, offsets,
											 TBM_MAX_TUPLES_PER_PAGE);
		*recheck = tbmres.recheck;
		(void) bitmap_collect(scan, tbmres.blockno, offsets, ntuples);
		if (tbmres.lossy)
			(*lossy_pages)++;
		else
			(*exact_pages)++;
	}
	store_row(scan, scan->rows.next++, slot);
	pgstat_count_heap_fetch(sscan->rs_rd);
	return true;
}
#else
bool
minidb_scan_bitmap_next_block(TableScanDesc sscan,
							  struct TBMIterateResult *tbmres)
{
	return bitmap_collect((MinidbScanDesc) sscan, tbmres->blockno,
						  tbmres->offsets, tbmres->ntuples);
}

bool
minidb_scan_bitmap_next_tuple(TableScanDesc sscan,
							  struct TBMIterateResult *tbmres,
							  TupleTableSlot *slot)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;

	if (scan->rows.next >= scan->rows.nrows)
		return false;
	store_row(scan, scan->rows.next++, slot);
	pgstat_count_heap_fetch(sscan->rs_rd);
	return true;
}
#endif

/* ----------------------------------------------------------------
 * TABLESAMPLE
 * ----------------------------------------------------------------
 */
bool
minidb_scan_sample_next_block(TableScanDesc sscan,
							  struct SampleScanState *scanstate)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	BlockNumber blockno;

	if (scan->nblocks == 0)
		return false;
	if (tsm->NextSampleBlock)
		blockno = tsm->NextSampleBlock(scanstate, scan->nblocks);
	else if (!scan->inited)
		blockno = 0;
	else
		blockno = scan->cblock + 1 < scan->nblocks ? scan->cblock + 1 :
			InvalidBlockNumber;

	if (!BlockNumberIsValid(blockno))
	{
		scan->inited = false;
		scan->cblock = InvalidBlockNumber;
		rows_reset(&scan->rows);
		return false;
	}
	scan->inited = true;
	scan->cblock = blockno;
	collect_page(scan, blockno, NULL, 0);

	memset(scan->sample_visible, -1, sizeof(scan->sample_visible));
	for (int i = 0; i < scan->rows.nrows; i++)
		scan->sample_visible[scan->rows.offsets[i]] = i;
	return true;
}

bool
minidb_scan_sample_next_tuple(TableScanDesc sscan,
							  struct SampleScanState *scanstate,
							  TupleTableSlot *slot)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	TsmRoutine *tsm = scanstate->tsmroutine;
	OffsetNumber maxoff = scan->rows.maxoff;

	for (;;)
	{
		OffsetNumber off;

		CHECK_FOR_INTERRUPTS();
		off = tsm->NextSampleTuple(scanstate, scan->cblock, maxoff);
		if (!OffsetNumberIsValid(off))
		{
			ExecClearTuple(slot);
			return false;
		}
		if (off <= maxoff && scan->sample_visible[off] >= 0)
		{
			store_row(scan, scan->sample_visible[off], slot);
			pgstat_count_heap_getnext(sscan->rs_rd);
			return true;
		}
	}
}

/* ----------------------------------------------------------------
 * ANALYZE
 * ----------------------------------------------------------------
 */
/*
 * ANALYZE reads a block the way heap's does (heapam_scan_analyze_next_block
 * and _next_tuple): the block stays pinned and share-locked from
 * next_block until next_tuple has handed out its last row, and each call
 * sorts the records up to the next row it returns.  No pointer into the
 * page leaves the lock: a row is materialized into the scan's arena, which
 * the slot points at until the next call.  The page is checked as
 * collect_page checks it: the header and special area here, the
 * shared-record test folded into the plain rows' pass (analyze_below), and
 * the whole minidb_page_check before the first record that takes the
 * walker.
 */
static void
analyze_take_buffer(MinidbScanDesc scan, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);

	scan->cblock = BufferGetBlockNumber(buffer);
	scan->strategy = NULL;
	scan->cbuf = buffer;
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	scan->analyze_checked = false;
	if (PageIsNew(page) || minidb_page_damage(page) != NULL)
	{
		minidb_page_check(scan->base.rs_rd, buffer);
		scan->analyze_checked = true;
	}
	scan->analyze_below = BLCKSZ;
	scan->analyze_plain = 0;
	scan->analyze_off = FirstOffsetNumber;
	scan->analyze_maxoff = minidb_page_maxoff(page);
}

#if PG_VERSION_NUM >= 170000	/* 17: ANALYZE reads through a ReadStream */
bool
minidb_scan_analyze_next_block(TableScanDesc sscan, ReadStream *stream)
{
	Buffer		buffer = read_stream_next_buffer(stream, NULL);

	if (!BufferIsValid(buffer))
		return false;
	analyze_take_buffer((MinidbScanDesc) sscan, buffer);
	return true;
}
#else
bool
minidb_scan_analyze_next_block(TableScanDesc sscan, BlockNumber blockno,
							   BufferAccessStrategy bstrategy)
{
	analyze_take_buffer((MinidbScanDesc) sscan,
						ReadBufferExtended(sscan->rs_rd, MAIN_FORKNUM, blockno,
										   RBM_NORMAL, bstrategy));
	return true;
}
#endif

/*
 * Sort one record for ANALYZE: the row it holds for a sample (if any) and
 * how many live and dead versions it counts for, by heap's rules: a row
 * being updated or deleted by another transaction is still live, one being
 * inserted is not yet; versions a newer committed one supersedes are dead.
 */
static void
analyze_record(MinidbScanDesc scan, Buffer buffer, OffsetNumber off,
			   char *rec, uint32 len)
{
	MinidbVersionWalk walk;
	MinidbVersionRef ref;
	bool		have_row = false;
	bool		superseded = false;
	ItemPointerData tid;

	ItemPointerSet(&tid, BufferGetBlockNumber(buffer), off);
	minidb_walk_begin(&walk, scan->base.rs_rd, &tid, rec, len);
	while (minidb_walk_next(&walk, &ref))
	{
		MinidbVersionHeader *vh = ref.vh;
		bool		ours;

		if (minidb_xid_aborted(vh, buffer) || superseded)
		{
			/* an aborted marker is heap's aborted xmax: no tuple of its own */
			if (!(vh->vh_flags & MINIDB_V_NODATA_MASK))
				scan->analyze_dead += 1;
			continue;
		}

		/*
		 * A version hinted committed (or frozen) is neither this
		 * transaction's nor running: no look at the procarray for it, as
		 * heap's HeapTupleSatisfiesVacuum trusts its hint bits
		 */
		if (vh->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
			ours = false;
		else
		{
			ours = TransactionIdIsCurrentTransactionId(vh->vh_xmin);
			if (!ours && TransactionIdIsInProgress(vh->vh_xmin))
				continue;		/* look at what it replaces */
		}
		superseded = true;
		if (vh->vh_flags & MINIDB_V_NODATA_MASK)
		{
			/*
			 * The row version it ends counts as dead below, as heap counts
			 * the deleted tuple; a marker alone counts as heap's LP_DEAD.
			 */
			if (!ours && ref.index == minidb_record_nversions(rec, len) - 1)
				scan->analyze_dead += 1;
			continue;
		}
		if (!have_row)
		{
			MinidbVersionData v;

			get_version(scan, rec, &ref, &v);
			rows_append(scan, rec, &v, InvalidTransactionId, &tid);
			scan->analyze_live += 1;
			have_row = true;
		}
	}
}

/*
 * A record ANALYZE can sort without walking it: one data version, hinted
 * committed or frozen (and not aborted).  analyze_record would count it
 * live and keep it, and count nothing dead.  The walker still checks the
 * record as a read does (header, the version, the tail).
 */
static bool
analyze_head_cb(MinidbVersionHeader *vh, int index, void *arg)
{
	uint16		flags = vh->vh_flags;

	*(bool *) arg = index == 0 &&
		!(flags & (MINIDB_V_XMIN_ABORTED | MINIDB_V_NODATA_MASK |
				   MINIDB_V_VIRTUAL | MINIDB_V_XMIN_MULTI)) &&
		(flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN));
	return true;				/* the head only */
}

static bool
analyze_single_version(MinidbScanDesc scan, Buffer buffer, OffsetNumber off,
					   char *rec, uint32 len)
{
	MinidbVersionRef ref;
	MinidbChainError err;
	MinidbVersionData v;
	ItemPointerData tid;
	bool		committed = false;

	ItemPointerSet(&tid, BufferGetBlockNumber(buffer), off);
	if (minidb_chain_find_visible(rec, len, analyze_head_cb, &committed,
								  &ref, &err) == -2)
		minidb_report_corruption(scan->base.rs_rd, &tid, &err);
	/* a version that ends where the record does is its only one */
	if (!committed || ref.end < len)
		return false;
	get_version(scan, rec, &ref, &v);
	rows_append(scan, rec, &v, InvalidTransactionId, &tid);
	scan->analyze_live += 1;
	return true;
}

/*
 * The record at off, when plain_version takes it for ANALYZE: a live row,
 * handed out through slot.
 */
static pg_attribute_always_inline bool
analyze_plain_row(MinidbScanDesc scan, Page page, OffsetNumber off,
				  TupleTableSlot *slot)
{
	MinidbVersionData v;
	const MinidbVersionHeader *vh;
	HeapTupleHeader td;
	Size		size;

	if (!plain_version(page, off, InvalidTransactionId,
					   scan->analyze_checked ? NULL : &scan->analyze_below,
					   true, &v, &vh, NULL))
		return false;
	size = minidb_materialized_size(&v);
	scan->rows.arena_used = 0;	/* the slot's previous row is done */
	td = (HeapTupleHeader) (likely(MAXALIGN(size) <= scan->rows.arena_size) ?
							scan->rows.arena : arena_reserve(scan, size));
	write_plain_tuple(td, &v, scan->cblock, off);
	store_tuple(scan, td, size, off, slot);
	return true;
}

/*
 * Any other record at off (or line pointer without one): counted by
 * analyze_single_version or analyze_record, its row, if it has one,
 * handed out through slot.
 */
static pg_noinline bool
analyze_other_row(MinidbScanDesc scan, OffsetNumber off, double *liverows,
				  double *deadrows, TupleTableSlot *slot)
{
	Buffer		buffer = scan->cbuf;
	uint32		len;
	char	   *rec;

	rows_reset(&scan->rows);
	scan->analyze_live = scan->analyze_dead = 0;
	rec = minidb_page_record(scan->base.rs_rd, buffer, off, &len);
	if (rec)
	{
		if (!analyze_single_version(scan, buffer, off, rec, len))
			analyze_record(scan, buffer, off, rec, len);
	}
	else if (ItemIdIsDead(PageGetItemId(BufferGetPage(buffer), off)))
		scan->analyze_dead += 1;
	*liverows += scan->analyze_live;
	*deadrows += scan->analyze_dead;
	if (scan->rows.nrows == 0)
		return false;
	Assert(scan->rows.nrows == 1);
	store_row(scan, 0, slot);
	return true;
}

bool
minidb_scan_analyze_next_tuple(TableScanDesc sscan, TransactionId OldestXmin,
							   double *liverows, double *deadrows,
							   TupleTableSlot *slot)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	Page		page = BufferGetPage(scan->cbuf);

	while (scan->analyze_off <= scan->analyze_maxoff)
	{
		OffsetNumber off = scan->analyze_off++;

		if (analyze_plain_row(scan, page, off, slot))
		{
			scan->analyze_plain += 1;
			return true;
		}
		if (!scan->analyze_checked)
		{
			minidb_page_check(scan->base.rs_rd, scan->cbuf);
			scan->analyze_checked = true;
		}
		if (analyze_other_row(scan, off, liverows, deadrows, slot))
			return true;
	}
	*liverows += scan->analyze_plain;
	scan->analyze_plain = 0;
	UnlockReleaseBuffer(scan->cbuf);
	scan->cbuf = InvalidBuffer;
	ExecClearTuple(slot);
	return false;
}

/* ----------------------------------------------------------------
 * Fetching by TID
 * ----------------------------------------------------------------
 */
typedef struct FetchState
{
	Relation	rel;
	ItemPointer tid;
	Snapshot	snapshot;
	bool		newest;			/* the TID was marked MINIDB_TID_NEWEST */
	MinidbTupleBuf *buf;		/* reusable output, or NULL to palloc */
	HeapTuple	result;
	bool	   *all_dead;
} FetchState;

/* The view callback: find the visible version and materialize it */
static void
fetch_visible_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	FetchState *fs = (FetchState *) arg;
	MinidbVersionRef ref;
	TransactionId xmax;
	Oid			relid = RelationGetRelid(fs->rel);

	if (unlikely(fs->snapshot->snapshot_type == SNAPSHOT_ANY))
	{
		/* "the row version at this TID": see minidb_find_row_version */
		if (minidb_find_row_version(fs->rel, fs->tid, fs->newest, rec, len,
									buffer, &ref, &xmax) < 0)
			return;
	}
	else if (minidb_find_visible(fs->rel, fs->tid, rec, len, fs->snapshot,
								 buffer, &ref, &xmax) < 0)
	{
		if (fs->all_dead)
			*fs->all_dead = minidb_record_is_dead(rec, len,
												  GlobalVisTestFor(fs->rel),
												  buffer, NULL);
		return;
	}
	else
		minidb_ssi_lock_version(fs->rel, fs->tid, fs->snapshot,
								ref.vh->vh_xmin);
	if (fs->buf)
		fs->result = minidb_materialize(fs->buf, rec, &ref, xmax, fs->tid,
										relid);
	else
		fs->result = minidb_materialize_copy(rec, &ref, xmax, fs->tid, relid);

	/*
	 * A dirty snapshot (ON CONFLICT's arbiter check) that finds a version
	 * this transaction wrote in place over an older one of the row gets the
	 * TID marked as naming the newest version.  Heap finds the new tuple, at
	 * a TID of its own, and locking it when the current command wrote it
	 * fails with TM_Invisible, which ON CONFLICT DO UPDATE reports as
	 * "cannot affect row a second time"; the plain TID of the row means the
	 * version the caller's scan saw, and locking that finds it
	 * self-modified, as heap finds the old tuple (a BEFORE ROW trigger's
	 * lock when a join reaches the row again; see own_head_fails).  (Not
	 * only the current command's versions: a BEFORE trigger's statements
	 * move the command counter on, and the command's own id is not known
	 * here.)  A row inserted has one version and keeps its plain TID: an
	 * exclusion constraint's recheck compares it with the row's own.
	 */
	if (fs->snapshot->snapshot_type == SNAPSHOT_DIRTY &&
		!(ref.vh->vh_flags & MINIDB_V_NODATA_MASK) &&
		TransactionIdIsCurrentTransactionId(ref.vh->vh_xmin) &&
		minidb_record_nversions(rec, len) > 1)
		minidb_tid_mark_newest(&fs->result->t_self);
}

/* copy_lazy: copy the whole record out, then the fast walker */
static void
fetch_copy_lazy(FetchState *fs, Buffer *pin)
{
	MinidbViewStatus status;
	uint32		len;
	char	   *copy;

	copy = minidb_copy_record(fs->rel, fs->tid, pin, CurrentMemoryContext,
							  &len, &status);
	if (copy == NULL)
		return;
	fetch_visible_cb(copy, len, InvalidBuffer, fs);
	pfree(copy);
}

/* copy_eager: copy the whole record, decode every version, then pick */
static void
fetch_copy_eager(FetchState *fs, Buffer *pin)
{
	MinidbViewStatus status;
	MinidbVersionData *versions;
	MinidbChainError err;
	MinidbVisArg va;
	uint32		len;
	char	   *copy;
	int			n;
	int			idx;

	copy = minidb_copy_record(fs->rel, fs->tid, pin, CurrentMemoryContext,
							  &len, &status);
	if (copy == NULL)
		return;
	n = minidb_chain_decode_all(copy, len, &versions, &err);
	if (n < 0)
		minidb_report_corruption(fs->rel, fs->tid, &err);
	minidb_vis_arg_init(&va, fs->snapshot, InvalidBuffer);
	idx = minidb_chain_pick_visible(versions, n, va.fn, &va);
	if (idx >= 0 && !(versions[idx].flags & MINIDB_V_NODATA_MASK))
	{
		TransactionId xmax = idx > 0 ? versions[idx - 1].xmin :
			InvalidTransactionId;

		fs->result = minidb_materialize_data(fs->buf, &versions[idx], xmax,
											 fs->tid,
											 RelationGetRelid(fs->rel));
	}
	minidb_chain_free_all(versions, n);
	pfree(copy);
}

/*
 * The visible version at tid through the configured read path.  The
 * production path is view_lazy; the copy paths exist for the benchmark.
 */
static HeapTuple
fetch_visible(FetchState *fs, Buffer *pin, MinidbReadPath path)
{
	fs->result = NULL;
	if (fs->all_dead)
		*fs->all_dead = false;
	if (path == MINIDB_PATH_VIEW_LAZY || fs->buf == NULL)
		minidb_view_record(fs->rel, fs->tid, pin, fetch_visible_cb, fs);
	else if (path == MINIDB_PATH_COPY_LAZY)
		fetch_copy_lazy(fs, pin);
	else
		fetch_copy_eager(fs, pin);
	return fs->result;
}

/*
 * A first look at a V3 record's version 0, before its checks: would the
 * snapshot see it by its hints alone, or as this transaction's from an
 * earlier command (minidb_mvcc_sees_own)?  Only a filter (the bytes are within
 * the record, not yet checked): an old snapshot, which does not see
 * version 0, goes to the walker without paying for the shortcut's checks,
 * which the walker would make again.
 */
static pg_attribute_always_inline bool
fetch_head_own_or_hinted(const char *rec, uint32 len, Snapshot snapshot)
{
	MinidbVersionHeader vh;

	if (len < MINIDB_R3_PLAIN_START + MINIDB_VERSION_HDRSZ)
		return false;
	memcpy(&vh, rec + MINIDB_R3_PLAIN_START, sizeof(vh));
	return minidb_mvcc_sees_hinted(vh.vh_xmin, vh.vh_flags, snapshot) ||
		minidb_mvcc_sees_own(vh.vh_xmin, vh.vh_cid, vh.vh_flags, snapshot);
}

/*
 * The newest reader's fetch, the one most index scans make: a record
 * whose version 0 is stored whole, with no end and no lockers, that the
 * snapshot sees by its hints alone, or as this transaction's own from an
 * earlier command (the SELECT after an UPDATE), is materialized here, with
 * no xmax: one version (minidb_chain_single_plain) or many
 * (minidb_v3_newest_plain, which keeps the walker's checks of that read:
 * the header, version 0 and the tail), then minidb_mvcc_sees_hinted or
 * minidb_mvcc_sees_own.  Anything else goes through
 * fetch_visible_cb, which walks the record and asks the full predicate.
 * Inlined into the view.
 */
static pg_attribute_always_inline void
fetch_newest_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	FetchState *fs = (FetchState *) arg;
	MinidbVersionData v;

	if (likely(minidb_chain_single_plain(rec, len, &v) ||
			   (fetch_head_own_or_hinted(rec, len, fs->snapshot) &&
				minidb_v3_newest_plain(rec, len, &v, NULL))) &&
		likely(minidb_mvcc_sees_hinted(v.xmin, v.flags, fs->snapshot) ||
			   minidb_mvcc_sees_own(v.xmin, v.cid, v.flags, fs->snapshot)))
	{
		minidb_ssi_lock_version(fs->rel, fs->tid, fs->snapshot, v.xmin);
		fs->result = minidb_materialize_plain(fs->buf, &v, fs->tid,
											  RelationGetRelid(fs->rel));
		return;
	}
	fetch_visible_cb(rec, len, buffer, arg);
}

/*
 * fetch_row_version_cb's shortcut for a record whose only optional field
 * is a lock-only xmax (minidb_v3_newest_locked: a row a foreign key's
 * check left locked, fetched as the old row of an UPDATE).  The lockers
 * change nothing in which version minidb_find_row_version returns, so
 * minidb_row_version_is_head decides as for a plain record; the tuple
 * shows them as its xmax, as minidb_materialize_copy does.  A
 * -DMINIDB_CHECK_FAST_PATH build compares the tuple with the walker's.
 */
static bool
fetch_locked_head(char *rec, uint32 len, FetchState *fs)
{
	MinidbVersionData v;
	MinidbVersionHeader older;
	MinidbLockers lk;

	if (!minidb_v3_newest_locked(rec, len, &v, &older, &lk) ||
		!minidb_row_version_is_head(&v, fs->newest))
		return false;
	fs->result = minidb_materialize_plain_copy(&v, fs->tid,
											   RelationGetRelid(fs->rel));
	minidb_tuple_set_lockers(fs->result->t_data, &lk);
#ifdef MINIDB_CHECK_FAST_PATH
	{
		HeapTuple	fast = fs->result;

		fs->result = NULL;
		fetch_visible_cb(rec, len, InvalidBuffer, fs);
		if (fs->result == NULL || fs->result->t_len != fast->t_len ||
			memcmp(fs->result->t_data, fast->t_data, fast->t_len) != 0 ||
			!ItemPointerEquals(&fs->result->t_self, &fast->t_self))
			elog(ERROR, "fetch_locked_head and the walker disagree on the row version at (%u,%u)",
				 ItemPointerGetBlockNumber(fs->tid),
				 ItemPointerGetOffsetNumber(fs->tid));
		heap_freetuple(fs->result);
		fs->result = fast;
	}
#endif
	return true;
}

/*
 * SnapshotAny's fetch by TID ("the row version at this TID", which the
 * executor asks for the old row of every UPDATE): a record whose version 0
 * the newest reader's shortcuts accept, and that minidb_find_row_version
 * would return by its hints alone, is materialized here, as
 * fetch_newest_cb does; anything else goes through fetch_visible_cb.
 */
static void
fetch_row_version_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	FetchState *fs = (FetchState *) arg;
	MinidbVersionData v;

	if ((minidb_chain_single_plain(rec, len, &v) ||
		 minidb_v3_newest_plain(rec, len, &v, NULL)) &&
		minidb_row_version_is_head(&v, fs->newest))
	{
		fs->result = minidb_materialize_plain_copy(&v, fs->tid,
												   RelationGetRelid(fs->rel));
		return;
	}
	if (fetch_locked_head(rec, len, fs))
		return;
	fetch_visible_cb(rec, len, buffer, arg);
}

struct IndexFetchTableData *
minidb_index_fetch_begin(Relation rel)
{
	MinidbIndexFetchData *fetch = palloc0(sizeof(MinidbIndexFetchData));

	fetch->base.rel = rel;
	fetch->pin.buffer = InvalidBuffer;
	fetch->pin.blkno = InvalidBlockNumber;
	minidb_tuplebuf_init(&fetch->buf, CurrentMemoryContext);
	return &fetch->base;
}

void
minidb_index_fetch_reset(struct IndexFetchTableData *data)
{
	MinidbIndexFetchData *fetch = (MinidbIndexFetchData *) data;

	if (BufferIsValid(fetch->pin.buffer))
	{
		minidb_checked_pin_forget(fetch->pin.buffer);
		ReleaseBuffer(fetch->pin.buffer);
	}
	fetch->pin.buffer = InvalidBuffer;
	fetch->pin.blkno = InvalidBlockNumber;
}

void
minidb_index_fetch_end(struct IndexFetchTableData *data)
{
	minidb_index_fetch_reset(data);
	/* the tuple buffer may still back a slot: leave it to its context */
}

bool
minidb_index_fetch_tuple(struct IndexFetchTableData *data, ItemPointer tid,
						 Snapshot snapshot, TupleTableSlot *slot,
						 bool *call_again, bool *all_dead)
{
	MinidbIndexFetchData *fetch = (MinidbIndexFetchData *) data;
	FetchState	fs;

	*call_again = false;		/* one record per TID: nothing more to find */
	minidb_ssi_check_doomed(data->rel, snapshot);
	fs.rel = data->rel;
	fs.tid = tid;
	fs.snapshot = snapshot;
	fs.newest = false;
	fs.buf = &fetch->buf;
	fs.all_dead = all_dead;
	fs.result = NULL;
	if (all_dead)
		*all_dead = false;
	if (likely(minidb_read_path == MINIDB_PATH_VIEW_LAZY))
	{
		if (likely(snapshot->snapshot_type == SNAPSHOT_MVCC))
			minidb_view_record_pinned(data->rel, tid, &fetch->pin,
									  fetch_newest_cb, &fs);
		else
			minidb_view_record_pinned(data->rel, tid, &fetch->pin,
									  fetch_visible_cb, &fs);
	}
	else
	{
		/* the benchmark's copy paths; they pin through btree_view.c */
		if (BufferIsValid(fetch->pin.buffer))
			minidb_checked_pin_forget(fetch->pin.buffer);
		fetch_visible(&fs, &fetch->pin.buffer, minidb_read_path);
		if (BufferIsValid(fetch->pin.buffer))
			fetch->pin.blkno = BufferGetBlockNumber(fetch->pin.buffer);
	}
	if (fs.result == NULL)
		return false;
	/* index_fetch_heap counts the fetch, against the index, as for heap */
	minidb_check_tuple_layout(data->rel, slot->tts_tupleDescriptor,
							  fs.result);
	ExecStoreHeapTuple(fs.result, slot, false);
	return true;
}

bool
minidb_fetch_row_version(Relation rel, ItemPointer tid, Snapshot snapshot,
						 TupleTableSlot *slot)
{
	ItemPointerData plain = minidb_tid_plain(tid);
	FetchState	fs;
	Buffer		pin = InvalidBuffer;
	HeapTuple	tuple;

	minidb_ssi_check_doomed(rel, snapshot);
	fs.rel = rel;
	fs.tid = &plain;
	fs.snapshot = snapshot;
	fs.newest = minidb_tid_is_newest(tid);
	fs.buf = NULL;
	fs.all_dead = NULL;
	fs.result = NULL;
	if (snapshot->snapshot_type == SNAPSHOT_ANY)
	{
		minidb_view_record(rel, &plain, &pin, fetch_row_version_cb, &fs);
		tuple = fs.result;
	}
	else
		tuple = fetch_visible(&fs, &pin, MINIDB_PATH_VIEW_LAZY);
	if (BufferIsValid(pin))
		ReleaseBuffer(pin);
	if (tuple == NULL)
		return false;
	minidb_check_tuple_layout(rel, slot->tts_tupleDescriptor, tuple);
	ExecStoreHeapTuple(tuple, slot, true);
	return true;
}

bool
minidb_tuple_tid_valid(TableScanDesc sscan, ItemPointer tid)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	ItemPointerData plain = minidb_tid_plain(tid);

	return ItemPointerIsValid(&plain) &&
		ItemPointerGetBlockNumber(&plain) < scan->nblocks;
}

/* Does the snapshot see the very version the slot holds? */
typedef struct SatisfiesState
{
	Relation	rel;
	ItemPointer tid;
	Snapshot	snapshot;
	HeapTupleHeader td;
	bool		result;
} SatisfiesState;

static void
satisfies_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	SatisfiesState *ss = (SatisfiesState *) arg;
	MinidbVersionRef ref;

	if (minidb_find_visible(ss->rel, ss->tid, rec, len, ss->snapshot, buffer,
							&ref, NULL) < 0)
		return;
	ss->result = ref.vh->vh_xmin == HeapTupleHeaderGetRawXmin(ss->td) &&
		ref.vh->vh_cid == HeapTupleHeaderGetRawCommandId(ss->td);

	/*
	 * Under an MVCC snapshot, a version that a committed newer one has
	 * superseded does not count: heap's callers (ON CONFLICT's check under
	 * REPEATABLE READ) hold the newest version of the row, and a minidb
	 * fetch by TID may have handed them the one the snapshot sees.
	 */
	if (ss->result && IsMVCCSnapshot(ss->snapshot))
		ss->result = minidb_version_is_newest_committed(ss->rel, ss->tid, rec,
														len, buffer, &ref);
}

bool
minidb_tuple_satisfies_snapshot(Relation rel, TupleTableSlot *slot,
								Snapshot snapshot)
{
	SatisfiesState ss;
	HeapTuple	tuple;
	bool		shouldFree;
	Buffer		pin = InvalidBuffer;

	tuple = ExecFetchSlotHeapTuple(slot, false, &shouldFree);
	ss.rel = rel;
	ss.tid = &slot->tts_tid;
	ss.snapshot = snapshot;
	ss.td = tuple->t_data;
	ss.result = false;
	minidb_view_record(rel, &slot->tts_tid, &pin, satisfies_cb, &ss);
	if (BufferIsValid(pin))
		ReleaseBuffer(pin);
	if (shouldFree)
		heap_freetuple(tuple);
	return ss.result;
}

/* Follow "moved" markers to the newest version of a row */
typedef struct LatestState
{
	Relation	rel;
	ItemPointer tid;
	Snapshot	snapshot;
	TransactionId prior_xmin;	/* the marker that led here, if any */
	bool		visible;
	bool		same_row;		/* this record continues that row */
	ItemPointerData next;
	TransactionId next_xmin;
} LatestState;


static void
latest_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	LatestState *ls = (LatestState *) arg;
	MinidbVersionRef ref;
	ItemPointerData succ;
	bool		moved_part;

	ls->same_row = !TransactionIdIsValid(ls->prior_xmin) ||
		TransactionIdEquals(minidb_record_origin_xmin(ls->rel, ls->tid, rec, len),
							ls->prior_xmin);
	if (!ls->same_row)
		return;
	ls->visible = minidb_find_visible(ls->rel, ls->tid, rec, len,
									  ls->snapshot, buffer, &ref, NULL) >= 0;
	ItemPointerSetInvalid(&ls->next);
	if (minidb_effective_head(ls->rel, ls->tid, rec, len, buffer, &ref) >= 0 &&
		(ref.vh->vh_flags & MINIDB_V_MOVED) &&
		minidb_record_get_successor(rec, &succ, &moved_part))
	{
		ls->next = succ;
		ls->next_xmin = ref.vh->vh_xmin;
	}
}

void
minidb_get_latest_tid(TableScanDesc sscan, ItemPointer tid)
{
	MinidbScanDesc scan = (MinidbScanDesc) sscan;
	ItemPointerData cur = minidb_tid_plain(tid);
	Buffer		pin = InvalidBuffer;
	TransactionId prior_xmin = InvalidTransactionId;

	for (int hops = 0; hops < 1000; hops++)
	{
		LatestState ls;

		if (!ItemPointerIsValid(&cur) ||
			ItemPointerGetBlockNumber(&cur) >= scan->nblocks)
			break;
		ls.rel = sscan->rs_rd;
		ls.tid = &cur;
		ls.snapshot = sscan->rs_snapshot;
		ls.prior_xmin = prior_xmin;
		ls.visible = false;
		ItemPointerSetInvalid(&ls.next);
		if (minidb_view_record(sscan->rs_rd, &cur, &pin, latest_cb, &ls) !=
			MINIDB_VIEW_OK || !ls.same_row)
			break;
		if (ls.visible)
			*tid = cur;
		if (!ItemPointerIsValid(&ls.next))
			break;
		cur = ls.next;
		prior_xmin = ls.next_xmin;
	}
	if (BufferIsValid(pin))
		ReleaseBuffer(pin);
}
