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
#include "utils/rel.h"

#include "chain.h"
#include "minidb_tuple.h"

void
minidb_tuplebuf_init(MinidbTupleBuf *buf, MemoryContext cxt)
{
	memset(buf, 0, sizeof(*buf));
	buf->cxt = cxt;
}

/* minidb_write_tuple_inline (minidb_tuple.h), out of line */
void
minidb_write_tuple(HeapTupleHeader td, const MinidbVersionData *v,
				 TransactionId xmax, ItemPointer tid)
{
	minidb_write_tuple_inline(td, v, xmax, tid);
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
static inline void
set_record_lockers(HeapTupleHeader td, const char *rec)
{
	MinidbLockers lk;

	/* most records have none: no V3 xmax field, no V1/V2 lock mode */
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3 ?
		!((uint8) rec[0] & MINIDB_R3_XMAX) :
		minidb_record_header(rec)->rh_lockmode == MINIDB_LOCK_NONE)
		return;
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
void
minidb_tuplebuf_grow(MinidbTupleBuf *buf, Size len)
{
	Size		newsize = Max(len, 256);

	if (buf->data)
		pfree(buf->data);
	buf->data = MemoryContextAlloc(buf->cxt, newsize);
	buf->size = newsize;
}

HeapTuple
minidb_materialize_data(MinidbTupleBuf *buf, const MinidbVersionData *v,
						TransactionId xmax, ItemPointer tid, Oid tableoid)
{
	Size		len = minidb_materialized_size(v);

	if (len > buf->size)
		minidb_tuplebuf_grow(buf, len);
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
	HeapTuple	tuple;

	if (likely((ref->vh->vh_flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_FULL))
		minidb_version_get_buf(rec, ref, &v, NULL);
	else
	{
		/* an older version stored as a difference is rebuilt in buf->delta */
		MemoryContext old = MemoryContextSwitchTo(buf->cxt);

		minidb_version_get_buf(rec, ref, &v, &buf->delta);
		MemoryContextSwitchTo(old);
	}
	tuple = minidb_materialize_data(buf, &v, xmax, tid, tableoid);
	set_record_lockers(tuple->t_data, rec);
	return tuple;
}

/*
 * v materialized into a fresh palloc'd heap tuple, one chunk like
 * heap_copytuple's (freed with heap_freetuple)
 */
static HeapTuple
copy_version(const MinidbVersionData *v, TransactionId xmax, ItemPointer tid,
			 Oid tableoid)
{
	Size		len = minidb_materialized_size(v);
	HeapTuple	tuple = (HeapTuple) palloc(HEAPTUPLESIZE + len);
	HeapTupleHeader td = (HeapTupleHeader) ((char *) tuple + HEAPTUPLESIZE);

	minidb_write_tuple_inline(td, v, xmax, tid);
	fill_tuple(tuple, td, len, tid, tableoid);
	return tuple;
}

/*
 * minidb_materialize_plain into one palloc'd chunk of its own, for a slot
 * that keeps the tuple: the same version (no xmax, no lockers), without
 * minidb_materialize_copy's walk to it.
 */
HeapTuple
minidb_materialize_plain_copy(const MinidbVersionData *v, ItemPointer tid,
							  Oid tableoid)
{
	return copy_version(v, InvalidTransactionId, tid, tableoid);
}

/* The version at ref of rec, with its record's lockers, as copy_version */
HeapTuple
minidb_materialize_copy(const char *rec, const MinidbVersionRef *ref,
						TransactionId xmax, ItemPointer tid, Oid tableoid)
{
	MinidbVersionData v;
	HeapTuple	tuple;

	minidb_version_get(rec, ref, &v);
	tuple = copy_version(&v, xmax, tid, tableoid);
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

/*
 * Walk a data version's attributes over its data, as heap_deform_tuple
 * would, with every step bounded: NULL if they tile the data exactly and
 * the data flags say what the data holds, else what is wrong (palloc'd).
 * minidb_verify checks every version so, and readers every row they hand
 * out (minidb_check_tuple_layout): a V3 version's data offset follows from
 * natts and the flags alone, so their damage passes validation (V1 and V2
 * records keep vh_hoff, which validation checks against them).
 */
char *
minidb_attributes_damage(TupleDesc desc, const MinidbVersionData *v)
{
	const char *dp = v->data;
	uint32		len = v->datalen;
	uint32		off = 0;
	bool		hasnull = (v->flags & MINIDB_V_HASNULL) != 0;
	bool		anynull = false;
	bool		varwidth = false;
	bool		external = false;

	if (v->natts > desc->natts)
		return psprintf("%u attributes, but the table has %d", v->natts,
						desc->natts);
	for (int i = 0; i < v->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (hasnull && att_isnull(i, v->bitmap))
		{
			anynull = true;
			continue;
		}
		if (att->attlen > 0)
		{
			off = att_align_nominal(off, att->attalign);
			if ((uint64) off + att->attlen > len)
				return psprintf("attribute %d (%d bytes at %u) runs past the data's end %u",
								i + 1, att->attlen, off, len);
			off += att->attlen;
			continue;
		}
		varwidth = true;
		if (att->attlen == -2)
		{
			size_t		n;

			off = att_align_nominal(off, att->attalign);
			if (off >= len)
				return psprintf("attribute %d starts at %u, past the data's end %u",
								i + 1, off, len);
			n = strnlen(dp + off, len - off);
			if (n == len - off)
				return psprintf("attribute %d: a C string without its end", i + 1);
			off += n + 1;
			continue;
		}
		if (att->attlen != -1)
			return psprintf("attribute %d has length %d", i + 1, att->attlen);
		if (off >= len)
			return psprintf("attribute %d starts at %u, past the data's end %u",
							i + 1, off, len);
		off = att_align_pointer(off, att->attalign, -1, dp + off);
		if (off >= len)
			return psprintf("attribute %d starts at %u, past the data's end %u",
							i + 1, off, len);
		if (VARATT_IS_EXTERNAL(dp + off))
		{
			if ((uint64) off + VARHDRSZ_EXTERNAL > len)
				return psprintf("attribute %d: a TOAST pointer at %u runs past the data's end %u",
								i + 1, off, len);
			if (VARTAG_EXTERNAL(dp + off) != VARTAG_ONDISK)
				return psprintf("attribute %d: TOAST pointer of kind %u, not an on-disk one",
								i + 1, VARTAG_EXTERNAL(dp + off));
			if ((uint64) off + VARSIZE_EXTERNAL(dp + off) > len)
				return psprintf("attribute %d: a TOAST pointer at %u runs past the data's end %u",
								i + 1, off, len);
			external = true;
			off += VARSIZE_EXTERNAL(dp + off);
		}
		else if (VARATT_IS_SHORT(dp + off))
		{
			if ((uint64) off + VARSIZE_SHORT(dp + off) > len)
				return psprintf("attribute %d (%u bytes at %u) runs past the data's end %u",
								i + 1, (uint32) VARSIZE_SHORT(dp + off), off, len);
			off += VARSIZE_SHORT(dp + off);
		}
		else
		{
			uint32		size;

			if ((uint64) off + VARHDRSZ > len)
				return psprintf("attribute %d: a length word at %u runs past the data's end %u",
								i + 1, off, len);
			size = VARSIZE_4B(dp + off);
			if (size < VARHDRSZ || (uint64) off + size > len)
				return psprintf("attribute %d (%u bytes at %u) runs past the data's end %u",
								i + 1, size, off, len);
			off += size;
		}
	}
	if (off != len)
		return psprintf("the attributes end at %u, the data at %u", off, len);
	if (hasnull && !anynull)
		return psprintf("null bitmap flagged, but none of the %u attributes is null",
						v->natts);
	if (varwidth != ((v->flags & MINIDB_V_HASVARWIDTH) != 0))
		return psprintf("variable-width flag is %s, but the data has %s variable-width value",
						varwidth ? "clear" : "set", varwidth ? "a" : "no");
	if (external != ((v->flags & MINIDB_V_HASEXTERNAL) != 0))
		return psprintf("external-value flag is %s, but the data has %s TOAST pointer",
						external ? "clear" : "set", external ? "a" : "no");
	return NULL;
}

/*
 * minidb_check_tuple_layout (minidb_tuple.h) when its shortcut did not
 * accept the tuple; in assert-enabled builds, also when it did, to prove
 * that the shortcut never accepts what this refuses.
 *
 * A version about to be handed out as tuple (materialized from a record of
 * rel) in a slot of descriptor desc (the relation's, or during a table
 * rewrite its old one): its attributes must lie within its data
 * (minidb_attributes_damage), else ERRCODE_DATA_CORRUPTED naming the
 * relation and TID.  Deforming a tuple whose natts or null bitmap flag was
 * damaged would read past it.
 */
void
minidb_check_tuple_layout_full(Relation rel, TupleDesc desc, HeapTuple tuple)
{
	MinidbVersionData v;
	char	   *why;

	minidb_version_from_tuple(tuple, InvalidTransactionId, 0, &v);
	why = minidb_attributes_damage(desc, &v);
	/* the shortcut must never accept what the full check refuses */
	Assert(why == NULL || !minidb_tuple_layout_plainly_valid(desc, tuple));
	if (why == NULL)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupted minidb record in relation \"%s\" at TID (%u,%u)",
					RelationGetRelationName(rel),
					ItemPointerGetBlockNumberNoCheck(&tuple->t_self),
					ItemPointerGetOffsetNumberNoCheck(&tuple->t_self)),
			 errdetail("The version read, field \"data\": %s.", why)));
}
