/*-------------------------------------------------------------------------
 *
 * minidb_tuple.h
 *	  Versions to heap tuples (materialization) and back.
 *
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_TUPLE_H
#define MINIDB_TUPLE_H

#include "access/htup_details.h"
#include "access/tupdesc.h"
#include "access/tupmacs.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "chain.h"


/* A reusable output buffer for materialized tuples (no palloc per row) */
typedef struct MinidbTupleBuf
{
	HeapTupleData tuple;
	char	   *data;
	Size		size;
	MemoryContext cxt;
	MinidbDeltaBuf delta;		/* older versions rebuilt from differences */
} MinidbTupleBuf;

extern char *minidb_attributes_damage(TupleDesc desc,
									  const MinidbVersionData *v);
extern void minidb_check_tuple_layout_full(Relation rel, TupleDesc desc,
										   HeapTuple tuple);
/*
 * One attribute of minidb_tuple_layout_plainly_valid's pass: the attribute
 * at *off of the data dp[0..len) lies within it, a fixed-length value or an
 * in-line varlena (short or 4-byte header; *varwidth set); *off moves past
 * it.  False: not that plain case (or damage), for the caller's full check.
 */
static pg_attribute_always_inline bool
minidb_layout_attr_plain(Form_pg_attribute att, const char *dp, uint32 len,
						 uint32 *poff, bool *varwidth)
{
	uint32		off = *poff;

	if (att->attlen > 0)
	{
		off = att_align_nominal(off, att->attalign);
		off += att->attlen;
		*poff = off;
		return off <= len;
	}
	if (att->attlen != -1 || off >= len)
		return false;
	*varwidth = true;
	/* aligned unless a non-pad byte starts it, as deforming does */
	off = att_align_pointer(off, att->attalign, -1, dp + off);
	if (off >= len || VARATT_IS_EXTERNAL(dp + off))
		return false;
	if (VARATT_IS_SHORT(dp + off))
		off += VARSIZE_SHORT(dp + off);
	else
	{
		uint32		size;

		if ((uint64) off + VARHDRSZ > len)
			return false;
		size = VARSIZE_4B(dp + off);
		if (size < VARHDRSZ)
			return false;
		off += size;
	}
	*poff = off;
	return off <= len;
}

/*
 * The common case of minidb_attributes_damage in one pass over a
 * materialized tuple, without its messages: fixed-length attributes and
 * in-line varlenas (short or 4-byte headers), no cstrings, no TOAST
 * pointers.  True implies that minidb_attributes_damage finds nothing;
 * false sends the tuple through it, to find out what, if anything, is
 * wrong (a TOAST pointer or a cstring column is not damage).  Every read
 * runs this on every row it hands out, so it is kept branch-light.
 */
static pg_attribute_always_inline bool
minidb_tuple_layout_plainly_valid(TupleDesc desc, HeapTuple tuple)
{
	HeapTupleHeader td = tuple->t_data;
	int			natts = HeapTupleHeaderGetNatts(td);
	bool		hasnull = (td->t_infomask & HEAP_HASNULL) != 0;
	const bits8 *bp = td->t_bits;
	const char *dp = (const char *) td + td->t_hoff;
	uint32		len = tuple->t_len - td->t_hoff;
	uint32		off = 0;
	bool		anynull = false;
	bool		varwidth = false;

	if (natts > desc->natts)
		return false;
	for (int i = 0; i < natts; i++)
	{
		if (hasnull && att_isnull(i, bp))
		{
			anynull = true;
			continue;
		}
		if (!minidb_layout_attr_plain(TupleDescAttr(desc, i), dp, len, &off,
									  &varwidth))
			return false;
	}
	return off == len && anynull == hasnull &&
		varwidth == ((td->t_infomask & HEAP_HASVARWIDTH) != 0) &&
		!(td->t_infomask & HEAP_HASEXTERNAL);
}

/*
 * A version about to be handed out as tuple, in a slot of descriptor desc:
 * its attributes must lie within its data, else ERRCODE_DATA_CORRUPTED
 * (minidb_check_tuple_layout_full says what is wrong).  Inline, so that
 * the common case costs every row no call.
 */
static pg_attribute_always_inline void
minidb_check_tuple_layout(Relation rel, TupleDesc desc, HeapTuple tuple)
{
#ifndef USE_ASSERT_CHECKING
	if (likely(minidb_tuple_layout_plainly_valid(desc, tuple)))
		return;
#endif
	minidb_check_tuple_layout_full(rel, desc, tuple);
}

/* Heap tuple length needed to hold version v */
static inline Size
minidb_materialized_size(const MinidbVersionData *v)
{
	Size		hoff = SizeofHeapTupleHeader;

	if (v->flags & MINIDB_V_HASNULL)
		hoff += BITMAPLEN(v->natts);
	return MAXALIGN(hoff) + v->datalen;
}

extern void minidb_tuplebuf_grow(MinidbTupleBuf *buf, Size len);
/*
 * Write version v as a heap tuple at td (which has room for
 * minidb_materialized_size(v) bytes).  xmax is the xmin of the next newer version,
 * if any, so that the system column shows who ended this version.
 */
static pg_attribute_always_inline void
minidb_write_tuple_inline(HeapTupleHeader td, const MinidbVersionData *v,
						  TransactionId xmax, ItemPointer tid)
{
	Size		hoff = SizeofHeapTupleHeader;
	uint16		infomask = HEAP_XMAX_INVALID;

	/*
	 * Zeroed up to t_hoff, padding included, as heap_form_tuple leaves it:
	 * a constant-size clear of the fixed header (no call) and, with a null
	 * bitmap, of the bitmap and its padding.
	 */
	StaticAssertStmt(SizeofHeapTupleHeader <= MAXALIGN(SizeofHeapTupleHeader),
					 "the header is cleared whole");
	memset(td, 0, MAXALIGN(SizeofHeapTupleHeader));
	if (v->flags & MINIDB_V_HASNULL)
	{
		hoff = MAXALIGN(hoff + BITMAPLEN(v->natts));
		memset((char *) td + MAXALIGN(SizeofHeapTupleHeader), 0,
			   hoff - MAXALIGN(SizeofHeapTupleHeader));
		infomask |= HEAP_HASNULL;
		memcpy(td->t_bits, v->bitmap, BITMAPLEN(v->natts));
	}
	else
		hoff = MAXALIGN(hoff);
	if (v->flags & MINIDB_V_HASVARWIDTH)
		infomask |= HEAP_HASVARWIDTH;
	if (v->flags & MINIDB_V_HASEXTERNAL)
		infomask |= HEAP_HASEXTERNAL;
	if (v->flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN))
		infomask |= HEAP_XMIN_COMMITTED;
	if (TransactionIdIsValid(xmax))
		infomask &= ~HEAP_XMAX_INVALID;

	td->t_infomask = infomask;
	HeapTupleHeaderSetNatts(td, v->natts);
	td->t_hoff = hoff;
	HeapTupleHeaderSetXmin(td, v->xmin);
	HeapTupleHeaderSetXmax(td, xmax);
	HeapTupleHeaderSetCmin(td, v->cid);
	if (v->flags & MINIDB_V_COMBOCID)
		td->t_infomask |= HEAP_COMBOCID;	/* t_cid as heap keeps it */
	td->t_ctid = *tid;
	memcpy((char *) td + hoff, v->data, v->datalen);
}

/*
 * The newest reader's materialization of a version that
 * minidb_chain_single_plain accepted (no newer version, so no xmax; no
 * lockers): header and one copy of the data into buf, inline.
 */
static pg_attribute_always_inline HeapTuple
minidb_materialize_plain(MinidbTupleBuf *buf, const MinidbVersionData *v,
						 ItemPointer tid, Oid tableoid)
{
	Size		hoff = SizeofHeapTupleHeader;
	Size		len;
	HeapTuple	tuple = &buf->tuple;

	if (v->flags & MINIDB_V_HASNULL)
		hoff += BITMAPLEN(v->natts);
	len = MAXALIGN(hoff) + v->datalen;
	if (unlikely(len > buf->size))
		minidb_tuplebuf_grow(buf, len);
	minidb_write_tuple_inline((HeapTupleHeader) buf->data, v,
							  InvalidTransactionId, tid);
	tuple->t_data = (HeapTupleHeader) buf->data;
	tuple->t_len = len;
	tuple->t_self = *tid;
	tuple->t_tableOid = tableoid;
	return tuple;
}

extern void minidb_write_tuple(HeapTupleHeader td, const MinidbVersionData *v,
							   TransactionId xmax, ItemPointer tid);
extern void minidb_tuplebuf_init(MinidbTupleBuf *buf, MemoryContext cxt);
extern void minidb_tuple_set_lockers(HeapTupleHeader td,
									 const MinidbLockers *lk);
extern HeapTuple minidb_materialize_data(MinidbTupleBuf *buf,
										 const MinidbVersionData *v,
										 TransactionId xmax, ItemPointer tid,
										 Oid tableoid);
extern HeapTuple minidb_materialize(MinidbTupleBuf *buf, const char *rec,
									const MinidbVersionRef *ref,
									TransactionId xmax, ItemPointer tid,
									Oid tableoid);
extern HeapTuple minidb_materialize_plain_copy(const MinidbVersionData *v,
											   ItemPointer tid,
											   Oid tableoid);
extern HeapTuple minidb_materialize_copy(const char *rec,
										 const MinidbVersionRef *ref,
										 TransactionId xmax, ItemPointer tid,
										 Oid tableoid);
extern void minidb_version_from_tuple(HeapTuple tuple, TransactionId xmin,
									  CommandId cid, MinidbVersionData *v);
extern void minidb_marker_version(TransactionId xmin, CommandId cid,
								  uint16 flag, MinidbVersionData *v);

#endif							/* MINIDB_TUPLE_H */
