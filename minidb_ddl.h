/*-------------------------------------------------------------------------
 *
 * minidb_ddl.h
 *	  Storage, index builds, rewrites, estimates, VACUUM (table AM callbacks).
 *
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_DDL_H
#define MINIDB_DDL_H

#include "access/tableam.h"
#include "catalog/index.h"
#include "commands/vacuum.h"

#include "pg_compat.h"

extern void minidb_relation_set_new_filenode(Relation rel,
											 const RelFileLocator *newrnode,
											 char persistence,
											 TransactionId *freezeXid,
											 MultiXactId *minmulti);
extern void minidb_relation_nontransactional_truncate(Relation rel);
extern void minidb_relation_copy_data(Relation rel,
									  const RelFileLocator *newrnode);
extern void minidb_relation_copy_for_cluster(Relation OldTable,
											 Relation NewTable,
											 Relation OldIndex,
											 bool use_sort,
											 TransactionId OldestXmin,
											 TransactionId *xid_cutoff,
											 MultiXactId *multi_cutoff,
											 double *num_tuples,
											 double *tups_vacuumed,
											 double *tups_recently_dead);
extern double minidb_index_build_range_scan(Relation table_rel,
											Relation index_rel,
											struct IndexInfo *index_info,
											bool allow_sync,
											bool anyvisible,
											bool progress,
											BlockNumber start_blockno,
											BlockNumber numblocks,
											IndexBuildCallback callback,
											void *callback_state,
											TableScanDesc scan);
extern void minidb_index_validate_scan(Relation table_rel,
									   Relation index_rel,
									   struct IndexInfo *index_info,
									   Snapshot snapshot,
									   struct ValidateIndexState *state);
extern bool minidb_relation_needs_toast_table(Relation rel);
extern uint64 minidb_tuple_record_len(HeapTuple tup);
extern HeapTuple minidb_toast_to_fit(Relation rel, HeapTuple tup,
									 int options);
extern void minidb_relation_estimate_size(Relation rel, int32 *attr_widths,
										  BlockNumber *pages, double *tuples,
										  double *allvisfrac);
extern TransactionId minidb_index_delete_tuples(Relation rel,
												TM_IndexDeleteOp *delstate);

/* minidb_vacuum.c */
extern void minidb_relation_vacuum(Relation rel, struct VacuumParams *params,
								   BufferAccessStrategy bstrategy);

#endif							/* MINIDB_DDL_H */
