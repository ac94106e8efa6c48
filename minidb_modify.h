/*-------------------------------------------------------------------------
 *
 * minidb_modify.h
 *	  Writing minidb tables: INSERT, UPDATE, DELETE (table AM callbacks).
 *
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_MODIFY_H
#define MINIDB_MODIFY_H

#include "access/tableam.h"

#include "pg_compat.h"

extern void minidb_tuple_insert(Relation rel, TupleTableSlot *slot,
								CommandId cid, int options,
								BulkInsertState bistate);
extern void minidb_tuple_insert_speculative(Relation rel,
											TupleTableSlot *slot,
											CommandId cid, int options,
											BulkInsertState bistate,
											uint32 specToken);
extern void minidb_tuple_complete_speculative(Relation rel,
											  TupleTableSlot *slot,
											  uint32 specToken,
											  bool succeeded);
extern void minidb_multi_insert(Relation rel, TupleTableSlot **slots,
								int nslots, CommandId cid, int options,
								BulkInsertState bistate);
extern TM_Result minidb_tuple_delete(Relation rel, ItemPointer tid,
									 CommandId cid, Snapshot snapshot,
									 Snapshot crosscheck, bool wait,
									 TM_FailureData *tmfd, bool changingPart);
extern TM_Result minidb_tuple_update(Relation rel, ItemPointer otid,
									 TupleTableSlot *slot, CommandId cid,
									 Snapshot snapshot, Snapshot crosscheck,
									 bool wait, TM_FailureData *tmfd,
									 LockTupleMode *lockmode,
									 MinidbUpdateIndexes *update_indexes);

#endif							/* MINIDB_MODIFY_H */
