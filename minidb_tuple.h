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
extern void minidb_check_tuple_layout(Relation rel, TupleDesc desc,
									  HeapTuple tuple);
extern Size minidb_materialized_size(const MinidbVersionData *v);
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
extern HeapTuple minidb_materialize_copy(const char *rec,
										 const MinidbVersionRef *ref,
										 TransactionId xmax, ItemPointer tid,
										 Oid tableoid);
extern void minidb_version_from_tuple(HeapTuple tuple, TransactionId xmin,
									  CommandId cid, MinidbVersionData *v);
extern void minidb_marker_version(TransactionId xmin, CommandId cid,
								  uint16 flag, MinidbVersionData *v);

#endif							/* MINIDB_TUPLE_H */
