/*-------------------------------------------------------------------------
 *
 * minidb_logical.c
 *	  Logical decoding of minidb tables: LOGICAL records and rm_decode.
 *
 * minidb's page records (PREPEND, MOVE, DELTA, ...) describe page bytes,
 * not row changes: an INSERT is a byte delta of its page, an in-place
 * UPDATE may log only the middle of the new version.  Logical decoding
 * needs rows.  So, with the library preloaded and wal_level = logical,
 * every INSERT, UPDATE and DELETE of a table that PostgreSQL decodes
 * (RelationIsLogicallyLogged: permanent, not a catalog) logs one more
 * record of minidb's resource manager, LOGICAL (minidb_xlog.h), right
 * after its page change: the new row, and the old row's replica identity
 * where heap would log it (ExtractReplicaIdentity's rules), in heap's WAL
 * tuple format.  Replay ignores it.  The resource manager's rm_decode
 * (PostgreSQL calls it for every record of the manager while decoding)
 * queues each as a heap-shaped change into the reorder buffer, as
 * heap_decode does for heap's records, so output plugins (test_decoding,
 * pgoutput and logical replication) see minidb rows as they see heap's:
 * TOAST chunks (the TOAST table is a heap table) are reassembled by the
 * reorder buffer, replication origins are honoured.  Every other record of
 * the manager only tells the reorder buffer about its transaction.
 *
 * The LOGICAL record belongs to the (sub)transaction that made the change
 * and follows the page change, so the change and its LOGICAL record commit
 * or abort together (a rolled-back subtransaction drops both); a write
 * that fails before its page change logs neither.  A speculative insertion
 * (INSERT ... ON CONFLICT) is logged as a plain INSERT when it is
 * confirmed, with the row as stored, and not at all when it is
 * super-deleted.
 *
 * Without the library minidb logs generic WAL, which decoding skips
 * without a word: minidb_logical_check_writable refuses those writes when
 * wal_level = logical.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/heapam_xlog.h"
#include "access/heaptoast.h"
#include "access/htup_details.h"
#include "access/xlog.h"
#include "access/xloginsert.h"
#include "catalog/catalog.h"
#include "catalog/pg_class.h"
#include "nodes/bitmapset.h"
#include "replication/decode.h"
#include "replication/logical.h"
#include "replication/reorderbuffer.h"
#include "replication/snapbuild.h"
#include "utils/datum.h"
#include "utils/rel.h"
#include "utils/relcache.h"

#include "minidb_wal.h"
#include "minidb_xlog.h"
#include "minidb_logical.h"

/*
 * The reorder buffer's API moved: relfilenodes became relfilelocators in
 * 16, a change's tuples plain HeapTuples in 17, Get became Alloc in 18.
 */
#if PG_VERSION_NUM >= 160000
#define REL_FILE(rel)			((rel)->rd_locator)
#define FILE_DB(f)				((f).dbOid)
#define CHANGE_FILE(change)		((change)->data.tp.rlocator)
#else
#define REL_FILE(rel)			((rel)->rd_node)
#define FILE_DB(f)				((f).dbNode)
#define CHANGE_FILE(change)		((change)->data.tp.relnode)
#endif
#if PG_VERSION_NUM >= 170000
typedef HeapTuple RBTuple;
#define RBTUPLE_HEAP(t)			(t)
#else
typedef ReorderBufferTupleBuf *RBTuple;
#define RBTUPLE_HEAP(t)			(&(t)->tuple)
#endif
#if PG_VERSION_NUM >= 180000
#define rb_alloc_change			ReorderBufferAllocChange
#define rb_alloc_tuple			ReorderBufferAllocTupleBuf
#else
#define rb_alloc_change			ReorderBufferGetChange
#define rb_alloc_tuple			ReorderBufferGetTupleBuf
#endif

/* ----------------------------------------------------------------
 * The writer's side
 * ----------------------------------------------------------------
 */

/* Does a row change of rel log a LOGICAL record? */
bool
minidb_logical_wanted(Relation rel)
{
	return minidb_custom_wal && RelationIsLogicallyLogged(rel);
}

/*
 * Refuse a row change that logical decoding would lose: wal_level =
 * logical, a table it decodes, and the library not preloaded (generic WAL,
 * which decoding skips).  The transient table of a rewrite (ALTER TABLE,
 * REFRESH MATERIALIZED VIEW) is not decoded, on heap either.
 */
void
minidb_logical_check_writable(Relation rel)
{
	if (minidb_custom_wal || !RelationIsLogicallyLogged(rel) ||
		OidIsValid(rel->rd_rel->relrewrite))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("cannot write to minidb table \"%s\" while wal_level is logical and minidb_am is not preloaded",
					RelationGetRelationName(rel)),
			 errdetail("Without the library in shared_preload_libraries, minidb logs generic WAL, which logical decoding skips: the change would be lost to every logical replication slot and subscriber."),
			 errhint("Add minidb_am to shared_preload_libraries (on the primary and its standbys) and restart, or set wal_level to replica.")));
}

/*
 * What heap's ExtractReplicaIdentity logs of an old row: nothing, its
 * replica identity columns (others NULL) when key_required, or the whole
 * row (REPLICA IDENTITY FULL), TOAST values inlined.  *copy: the result
 * is a new tuple.
 */
static HeapTuple
old_row(Relation rel, HeapTuple tp, bool key_required, bool *copy)
{
	TupleDesc	desc = RelationGetDescr(rel);
	char		replident = rel->rd_rel->relreplident;
	Bitmapset  *idattrs;
	HeapTuple	key_tuple;
	Datum	   *values;
	bool	   *nulls;

	*copy = false;
	if (replident == REPLICA_IDENTITY_NOTHING)
		return NULL;
	if (replident == REPLICA_IDENTITY_FULL)
	{
		if (HeapTupleHasExternal(tp))
		{
			*copy = true;
			tp = toast_flatten_tuple(tp, desc);
		}
		return tp;
	}
	if (!key_required)
		return NULL;
	idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	if (bms_is_empty(idattrs))
		return NULL;

	values = palloc(sizeof(Datum) * desc->natts);
	nulls = palloc(sizeof(bool) * desc->natts);
	heap_deform_tuple(tp, desc, values, nulls);
	for (int i = 0; i < desc->natts; i++)
		if (!bms_is_member(i + 1 - FirstLowInvalidHeapAttributeNumber, idattrs))
			nulls[i] = true;
	key_tuple = heap_form_tuple(desc, values, nulls);
	*copy = true;
	bms_free(idattrs);
	pfree(values);
	pfree(nulls);
	if (HeapTupleHasExternal(key_tuple))
	{
		HeapTuple	flat = toast_flatten_tuple(key_tuple, desc);

		heap_freetuple(key_tuple);
		key_tuple = flat;
	}
	return key_tuple;
}

/*
 * Does an UPDATE from oldtup to newtup (the caller's, before TOAST) need
 * the old key?  heap_update's rule: a replica identity column changed, or
 * one of the old row's is stored externally (HeapDetermineColumnsInfo).
 */
static bool
update_needs_key(Relation rel, HeapTuple oldtup, HeapTuple newtup)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *idattrs;
	bool		needed = false;
	int			x = -1;

	if (rel->rd_rel->relreplident == REPLICA_IDENTITY_NOTHING ||
		rel->rd_rel->relreplident == REPLICA_IDENTITY_FULL)
		return false;			/* old_row decides without it */
	idattrs = RelationGetIndexAttrBitmap(rel, INDEX_ATTR_BITMAP_IDENTITY_KEY);
	while (!needed && (x = bms_next_member(idattrs, x)) >= 0)
	{
		AttrNumber	attnum = x + FirstLowInvalidHeapAttributeNumber;
		Form_pg_attribute att;
		bool		null1;
		bool		null2;
		Datum		d1;
		Datum		d2;

		if (attnum <= 0)
			continue;
		att = TupleDescAttr(desc, attnum - 1);
		d1 = heap_getattr(oldtup, attnum, desc, &null1);
		d2 = heap_getattr(newtup, attnum, desc, &null2);
		if (null1 != null2 ||
			(!null1 && !datumIsEqual(d1, d2, att->attbyval, att->attlen)))
			needed = true;
		else if (!null1 && att->attlen == -1 &&
				 VARATT_IS_EXTERNAL(DatumGetPointer(d1)))
			needed = true;
	}
	bms_free(idattrs);
	return needed;
}

/* Append a tuple as heap logs one: uint32 length, xl_heap_header, data */
static void
append_tuple(StringInfo buf, HeapTuple tup)
{
	xl_heap_header xlhdr;
	uint32		len = SizeOfHeapHeader + tup->t_len - SizeofHeapTupleHeader;

	xlhdr.t_infomask2 = tup->t_data->t_infomask2;
	xlhdr.t_infomask = tup->t_data->t_infomask;
	xlhdr.t_hoff = tup->t_data->t_hoff;
	appendBinaryStringInfo(buf, (char *) &len, sizeof(len));
	appendBinaryStringInfo(buf, (char *) &xlhdr, SizeOfHeapHeader);
	appendBinaryStringInfo(buf, (char *) tup->t_data + SizeofHeapTupleHeader,
						   tup->t_len - SizeofHeapTupleHeader);
}

static void
log_logical(Relation rel, uint8 action, uint8 flags, HeapTuple *tuples,
			int ntuples)
{
	xl_minidb_logical xlrec;
	StringInfoData buf;

	if (ntuples > PG_UINT16_MAX)
		elog(ERROR, "minidb: %d rows in one LOGICAL record", ntuples);
	xlrec.node = REL_FILE(rel);
	xlrec.ntuples = (uint16) ntuples;
	xlrec.action = action;
	xlrec.flags = flags;
	initStringInfo(&buf);
	appendBinaryStringInfo(&buf, (char *) &xlrec, SizeOfMinidbLogical);
	for (int i = 0; i < ntuples; i++)
		append_tuple(&buf, tuples[i]);

	XLogBeginInsert();
	XLogRegisterData(buf.data, buf.len);
	/* as heap's row changes: the origin, for filter_by_origin */
	XLogSetRecordFlags(XLOG_INCLUDE_ORIGIN);
	XLogInsert(MINIDB_RMGR_ID, XLOG_MINIDB_LOGICAL);
	pfree(buf.data);
}

/*
 * The rows one INSERT, or one multi_insert call, stored (TOAST pointers
 * and all).  The reorder buffer keeps the statement's TOAST chunks until
 * the last of them.
 */
void
minidb_logical_log_insert(Relation rel, HeapTuple *tuples, int ntuples)
{
	if (!minidb_logical_wanted(rel) || ntuples <= 0)
		return;
	log_logical(rel, XLML_INSERT, XLML_CLEAR_TOAST, tuples, ntuples);
}

/*
 * An UPDATE: oldtup is the version it superseded, newtup the caller's new
 * row before TOAST (for heap's key rule), stored the new version as stored.
 */
void
minidb_logical_log_update(Relation rel, HeapTuple oldtup, HeapTuple newtup,
						  HeapTuple stored)
{
	HeapTuple	tuples[2];
	HeapTuple	old;
	bool		copy;
	int			n = 0;

	if (!minidb_logical_wanted(rel))
		return;
	old = old_row(rel, oldtup, update_needs_key(rel, oldtup, newtup), &copy);
	if (old)
		tuples[n++] = old;
	tuples[n++] = stored;
	log_logical(rel, XLML_UPDATE, (old ? XLML_HAS_OLD : 0) | XLML_CLEAR_TOAST,
				tuples, n);
	if (copy)
		heap_freetuple(old);
}

/* A DELETE of the version oldtup (a move to another partition included) */
void
minidb_logical_log_delete(Relation rel, HeapTuple oldtup)
{
	HeapTuple	old;
	bool		copy;

	if (!minidb_logical_wanted(rel))
		return;
	old = oldtup ? old_row(rel, oldtup, true, &copy) : NULL;
	log_logical(rel, XLML_DELETE, (old ? XLML_HAS_OLD : 0) | XLML_CLEAR_TOAST,
				old ? &old : NULL, old ? 1 : 0);
	if (old && copy)
		heap_freetuple(old);
}

/* ----------------------------------------------------------------
 * Decoding
 * ----------------------------------------------------------------
 */

/* decode.c's DecodeXLogTuple: one logged tuple into a reorder buffer tuple */
static RBTuple
decode_tuple(ReorderBuffer *rb, const char **data, const char *end)
{
	uint32		len;
	xl_heap_header xlhdr;
	RBTuple		rbtuple;
	HeapTuple	tuple;
	HeapTupleHeader header;
	Size		datalen;

	if (end - *data < (ptrdiff_t) sizeof(len))
		elog(ERROR, "minidb: LOGICAL record is too short");
	memcpy(&len, *data, sizeof(len));
	*data += sizeof(len);
	if (len < SizeOfHeapHeader || end - *data < (ptrdiff_t) len)
		elog(ERROR, "minidb: LOGICAL record holds a tuple of %u bytes past its end",
			 len);
	memcpy(&xlhdr, *data, SizeOfHeapHeader);
	datalen = len - SizeOfHeapHeader;

	rbtuple = rb_alloc_tuple(rb, datalen);
	tuple = RBTUPLE_HEAP(rbtuple);
	tuple->t_len = datalen + SizeofHeapTupleHeader;
	header = tuple->t_data;
	ItemPointerSetInvalid(&tuple->t_self);
	tuple->t_tableOid = InvalidOid;
	memset(header, 0, SizeofHeapTupleHeader);
	memcpy((char *) header + SizeofHeapTupleHeader, *data + SizeOfHeapHeader,
		   datalen);
	header->t_infomask = xlhdr.t_infomask;
	header->t_infomask2 = xlhdr.t_infomask2;
	header->t_hoff = xlhdr.t_hoff;
	*data += len;
	return rbtuple;
}

static void
decode_logical(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	XLogReaderState *r = buf->record;
	const char *data = XLogRecGetData(r);
	const char *end = data + XLogRecGetDataLen(r);
	xl_minidb_logical xlrec;
	int			i = 0;

	if (XLogRecGetDataLen(r) < SizeOfMinidbLogical)
		elog(ERROR, "minidb: LOGICAL record is too short");
	memcpy(&xlrec, data, SizeOfMinidbLogical);
	data += SizeOfMinidbLogical;

	/* only our database; not an origin the plugin filters out */
	if (FILE_DB(xlrec.node) != ctx->slot->data.database)
		return;
	if (ctx->callbacks.filter_by_origin_cb != NULL &&
		filter_by_origin_cb_wrapper(ctx, XLogRecGetOrigin(r)))
		return;

	if (xlrec.action == XLML_INSERT)
	{
		for (i = 0; i < xlrec.ntuples; i++)
		{
			ReorderBufferChange *change = rb_alloc_change(ctx->reorder);

			change->action = REORDER_BUFFER_CHANGE_INSERT;
			change->origin_id = XLogRecGetOrigin(r);
			CHANGE_FILE(change) = xlrec.node;
			change->data.tp.newtuple = decode_tuple(ctx->reorder, &data, end);
			change->data.tp.clear_toast_afterwards =
				(xlrec.flags & XLML_CLEAR_TOAST) && i + 1 == xlrec.ntuples;
			ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(r),
									 buf->origptr, change, false);
		}
	}
	else if (xlrec.action == XLML_UPDATE || xlrec.action == XLML_DELETE)
	{
		ReorderBufferChange *change = rb_alloc_change(ctx->reorder);
		int			nexpected = (xlrec.action == XLML_UPDATE ? 1 : 0) +
			((xlrec.flags & XLML_HAS_OLD) ? 1 : 0);

		if (xlrec.ntuples != nexpected)
			elog(ERROR, "minidb: LOGICAL record of action %u holds %u tuples",
				 xlrec.action, xlrec.ntuples);
		change->action = xlrec.action == XLML_UPDATE ?
			REORDER_BUFFER_CHANGE_UPDATE : REORDER_BUFFER_CHANGE_DELETE;
		change->origin_id = XLogRecGetOrigin(r);
		CHANGE_FILE(change) = xlrec.node;
		if (xlrec.flags & XLML_HAS_OLD)
			change->data.tp.oldtuple = decode_tuple(ctx->reorder, &data, end);
		if (xlrec.action == XLML_UPDATE)
			change->data.tp.newtuple = decode_tuple(ctx->reorder, &data, end);
		change->data.tp.clear_toast_afterwards = true;
		ReorderBufferQueueChange(ctx->reorder, XLogRecGetXid(r), buf->origptr,
								 change, false);
	}
	else
		elog(ERROR, "minidb: LOGICAL record of unknown action %u",
			 xlrec.action);
	if (data != end)
		elog(ERROR, "minidb: LOGICAL record has %zu bytes after its tuples",
			 (Size) (end - data));
}

/*
 * rm_decode of minidb's resource manager: heap_decode's frame.  Page
 * records carry no row changes for decoding (their rows are in the LOGICAL
 * record that follows each), so they only make the transaction known.
 */
void
minidb_decode(LogicalDecodingContext *ctx, XLogRecordBuffer *buf)
{
	uint8		info = XLogRecGetInfo(buf->record) & ~XLR_INFO_MASK;
	TransactionId xid = XLogRecGetXid(buf->record);

	ReorderBufferProcessXid(ctx->reorder, xid, buf->origptr);
	if (info != XLOG_MINIDB_LOGICAL)
		return;
	if (SnapBuildCurrentState(ctx->snapshot_builder) < SNAPBUILD_FULL_SNAPSHOT)
		return;
	if (SnapBuildProcessChange(ctx->snapshot_builder, xid, buf->origptr) &&
		!ctx->fast_forward)
		decode_logical(ctx, buf);
}
