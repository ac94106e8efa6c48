/*-------------------------------------------------------------------------
 *
 * minidb_logical.h
 *	  Logical decoding of minidb tables (minidb_logical.c).
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_LOGICAL_H
#define MINIDB_LOGICAL_H

#include "access/htup.h"
#include "utils/rel.h"

struct LogicalDecodingContext;
struct XLogRecordBuffer;

/* The writer's side: is a row change to rel to be logged for decoding? */
extern bool minidb_logical_wanted(Relation rel);
extern void minidb_logical_check_writable(Relation rel);
extern void minidb_logical_log_insert(Relation rel, HeapTuple *tuples,
									  int ntuples);
extern void minidb_logical_log_update(Relation rel, HeapTuple oldtup,
									  HeapTuple newtup, HeapTuple stored);
extern void minidb_logical_log_delete(Relation rel, HeapTuple oldtup);

/* The resource manager's rm_decode */
extern void minidb_decode(struct LogicalDecodingContext *ctx,
						  struct XLogRecordBuffer *buf);

#endif							/* MINIDB_LOGICAL_H */
