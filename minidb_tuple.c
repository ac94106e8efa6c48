/*-------------------------------------------------------------------------
 *
 * minidb_tuple.c
 *	  Converting between heap tuples and minidb versions.
 *
 * A version keeps the tuple data exactly as heap does (null bitmap and
 * aligned attributes), so the server's form/deform and TOAST routines
 * apply.  Materializing a version means writing a HeapTupleHeader in front
 * of a copy of its bitmap and data, into memory the caller owns.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "utils/memutils.h"

#include "chain.h"
#include "minidb_tuple.h"

void
minidb_tuplebuf_init(MinidbTupleBuf *buf, MemoryContext cxt)
{
	memset(buf, 0, sizeof(*buf));
	buf->cxt = cxt;
}

/* Heap tuple length needed to hold version v */
Size
minidb_materialized_size(const MinidbVersionData *v)
{
	Size		hoff = SizeofHeapTupleHeader;

	if (v->flags & MINIDB_V_HASNULL)
		hoff += BITMAPLEN(v->natts);
	return MAXALIGN(hoff) + v->datalen;
}

/*
 * Write version v as a heap tuple at td (which has room for
 * minidb_materialized_size(v) bytes).  xmax is the xmin of the next newer version,
 * if any, so that the system column shows who ended this version.
 */
void
minidb_write_tuple(HeapTupleHeader td, const MinidbVersionData *v,
				 TransactionId xmax, ItemPointer tid)
{
	Size		hoff = SizeofHeapTupleHeader;
	uint16		infomask = HEAP_XMAX_INVALID;

	if (v->flags & MINIDB_V_HASNULL)
		hoff += BITMAPLEN(v->natts);
	hoff = MAXALIGN(hoff);

	memset(td, 0, hoff);			/* padding to t_hoff included, as heap_form_tuple */
	if (v->flags & MINIDB_V_HASNULL)
	{
		infomask |= HEAP_HASNULL;
		memcpy(td->t_bits, v->bitmap, BITMAPLEN(v->natts));
	}
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
 * A version no newer version has ended shows the row's lockers as its
 * xmax, as heap shows a locked tuple's: the locker (or multixact) with
 * heap's lock-only infomask bits for its mode.  Like heap's, the value
 * stays after the locker ends, until VACUUM forgets it.
 */
void
minidb_tuple_set_lockers(HeapTupleHeader td, const MinidbLockers *lk)
{
	uint16		bits;

	if (!(td->t_infomask & HEAP_XMAX_INVALID) ||
		lk->mode == MINIDB_LOCK_NONE || !TransactionIdIsValid(lk->xid) ||
		lk->with_updater)
		return;
	switch (lk->mode)
	{
		case MINIDB_LOCK_KEYSHARE:
			bits = HEAP_XMAX_KEYSHR_LOCK;
			break;
		case MINIDB_LOCK_SHARE:
			bits = HEAP_XMAX_SHR_LOCK;
			break;
		default:
			bits = HEAP_XMAX_EXCL_LOCK;
			break;
	}
	td->t_infomask &= ~HEAP_XMAX_INVALID;
	td->t_infomask |= HEAP_XMAX_LOCK_ONLY | bits;
	if (lk->multi)
		td->t_infomask |= HEAP_XMAX_IS_MULTI;
	else if (lk->mode == MINIDB_LOCK_EXCLUSIVE)
		td->t_infomask2 |= HEAP_KEYS_UPDATED;
	HeapTupleHeaderSetXmax(td, lk->xid);
}

/* The same, with the lockers of rec */
static void
set_record_lockers(HeapTupleHeader td, const char *rec)
{
	MinidbLockers lk;

	minidb_record_get_lockers(rec, &lk);
	minidb_tuple_set_lockers(td, &lk);
}

static void
fill_tuple(HeapTuple tuple, HeapTupleHeader td, Size len, ItemPointer tid,
		   Oid tableoid)
{
	tuple->t_data = td;
	tuple->t_len = len;
	tuple->t_self = *tid;
	tuple->t_tableOid = tableoid;
}

/*
 * Materialize version v into buf, growing it only when a larger version
 * comes along: in steady state no allocation happens per row.
 */
HeapTuple
minidb_materialize_data(MinidbTupleBuf *buf, const MinidbVersionData *v,
						TransactionId xmax, ItemPointer tid, Oid tableoid)
{
	Size		len = minidb_materialized_size(v);

	if (len > buf->size)
	{
		Size		newsize = Max(len, 256);

		if (buf->data)
			pfree(buf->data);
		buf->data = MemoryContextAlloc(buf->cxt, newsize);
		buf->size = newsize;
	}
	minidb_write_tuple((HeapTupleHeader) buf->data, v, xmax, tid);
	fill_tuple(&buf->tuple, (HeapTupleHeader) buf->data, len, tid, tableoid);
	return &buf->tuple;
}

/* The same for a version found by the fast walker, read in place */
HeapTuple
minidb_materialize(MinidbTupleBuf *buf, const char *rec,
				   const MinidbVersionRef *ref, TransactionId xmax,
				   ItemPointer tid, Oid tableoid)
{
	MinidbVersionData v;
	MemoryContext old = MemoryContextSwitchTo(buf->cxt);
	HeapTuple	tuple;

	/* an older version stored as a difference is rebuilt in buf->delta */
	minidb_version_get_buf(rec, ref, &v, &buf->delta);
	MemoryContextSwitchTo(old);
	tuple = minidb_materialize_data(buf, &v, xmax, tid, tableoid);
	set_record_lockers(tuple->t_data, rec);
	return tuple;
}

/* Materialize into a fresh palloc'd heap tuple (one chunk, like heap_copytuple) */
HeapTuple
minidb_materialize_copy(const char *rec, const MinidbVersionRef *ref,
						TransactionId xmax, ItemPointer tid, Oid tableoid)
{
	MinidbVersionData v;
	Size		len;
	HeapTuple	tuple;

	minidb_version_get(rec, ref, &v);
	len = minidb_materialized_size(&v);
	tuple = (HeapTuple) palloc(HEAPTUPLESIZE + len);
	minidb_write_tuple((HeapTupleHeader) ((char *) tuple + HEAPTUPLESIZE), &v,
					 xmax, tid);
	fill_tuple(tuple, (HeapTupleHeader) ((char *) tuple + HEAPTUPLESIZE), len,
			   tid, tableoid);
	set_record_lockers(tuple->t_data, rec);
	if ((v.flags & MINIDB_V_ENC_MASK) != MINIDB_V_ENC_FULL)
		pfree((char *) v.data);	/* rebuilt for us */
	return tuple;
}

/* Describe a (formed, possibly toasted) heap tuple as a new version */
void
minidb_version_from_tuple(HeapTuple tuple, TransactionId xmin, CommandId cid,
						  MinidbVersionData *v)
{
	HeapTupleHeader td = tuple->t_data;
	uint16		flags = MINIDB_V_ENC_FULL;

	if (HeapTupleHasNulls(tuple))
		flags |= MINIDB_V_HASNULL;
	if (HeapTupleHasVarWidth(tuple))
		flags |= MINIDB_V_HASVARWIDTH;
	if (HeapTupleHasExternal(tuple))
		flags |= MINIDB_V_HASEXTERNAL;

	v->xmin = xmin;
	v->cid = cid;
	v->flags = flags;
	v->natts = HeapTupleHeaderGetNatts(td);
	v->bitmap = (flags & MINIDB_V_HASNULL) ? td->t_bits : NULL;
	v->data = (char *) td + td->t_hoff;
	v->datalen = tuple->t_len - td->t_hoff;
}

/* A tombstone (DELETE) or moved marker (non-in-place UPDATE) */
void
minidb_marker_version(TransactionId xmin, CommandId cid, uint16 flag,
					  MinidbVersionData *v)
{
	Assert(flag == MINIDB_V_TOMBSTONE || flag == MINIDB_V_MOVED);
	memset(v, 0, sizeof(*v));
	v->xmin = xmin;
	v->cid = cid;
	v->flags = flag;
}
