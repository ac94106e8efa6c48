/*-------------------------------------------------------------------------
 *
 * minidb_lock.h
 *	  Row locks on minidb records: modes, lockers, waiting.
 *
 * A record holds its row lockers (MinidbLockers, chain.h): nobody, one
 * transaction with one of heap's four lock modes, or a MultiXactId whose
 * members carry their own modes.  The
 * record's newest version stands for its in-progress writer: a version of
 * another transaction that has not ended holds an implicit lock in the mode
 * of the change it made (minidb_head_lock_mode).  A lock covers the row, so
 * it is carried across updates in place without copying, and it survives
 * its own transaction's update and the rollback of that update.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_LOCK_H
#define MINIDB_LOCK_H

#include "access/multixact.h"
#include "access/tableam.h"
#include "nodes/lockoptions.h"
#include "storage/lmgr.h"
#include "utils/rel.h"

#include "chain.h"

/*
 * Whom a locker or writer must wait for: one transaction, or the members
 * of a multixact whose lock conflicts with the mode wanted.
 */
typedef struct MinidbWaitFor
{
	TransactionId xid;			/* an xid, or a MultiXactId when is_multi */
	bool		is_multi;
	LockTupleMode mode;			/* the mode the waiter wants */
} MinidbWaitFor;

/*
 * A TID that names the newest version of a row, as this transaction locked
 * it.  A heap TID names one version, and when tuple_lock follows a row to a
 * newer version it hands the caller that version's TID, which the executor
 * then uses to re-fetch the row it locked (EvalPlanQual of UPDATE, DELETE
 * and MERGE), to update it, and to lock it again without following
 * anything.  A minidb TID names the row, whose versions share it; a plain
 * TID means the version the caller's snapshot sees (the one its scan
 * returned).  So when tuple_lock locks a newer version than that, it hands
 * back the row's TID with MINIDB_TID_NEWEST set in the offset, and every
 * callback that takes a TID masks the bit off and reads it as "the version
 * this transaction locked".  Offsets never reach 0x8000 (MaxOffsetNumber is
 * 2048 for 8 kB pages), and the special offsets heap uses for moved
 * partitions and speculative tokens are never combined with it.  Such TIDs
 * stay in the executor: slots, index entries and system columns always get
 * plain ones.
 */
#define MINIDB_TID_NEWEST		0x8000

static inline bool
minidb_tid_is_newest(ItemPointer tid)
{
	return (ItemPointerGetOffsetNumberNoCheck(tid) & MINIDB_TID_NEWEST) != 0;
}

/* The row's plain TID */
static inline ItemPointerData
minidb_tid_plain(ItemPointer tid)
{
	ItemPointerData plain = *tid;

	if (minidb_tid_is_newest(tid))
		ItemPointerSetOffsetNumber(&plain,
								   ItemPointerGetOffsetNumberNoCheck(tid) &
								   ~MINIDB_TID_NEWEST);
	return plain;
}

static inline void
minidb_tid_mark_newest(ItemPointer tid)
{
	ItemPointerSetOffsetNumber(tid, ItemPointerGetOffsetNumberNoCheck(tid) |
							   MINIDB_TID_NEWEST);
}

/* Lock modes: MINIDB_LOCK_* <-> LockTupleMode */
static inline uint16
minidb_lock_from_mode(LockTupleMode mode)
{
	return (uint16) mode + 1;
}

static inline LockTupleMode
minidb_mode_from_lock(uint16 lockmode)
{
	Assert(lockmode != MINIDB_LOCK_NONE && lockmode <= MINIDB_LOCK_MAX);
	return (LockTupleMode) (lockmode - 1);
}

/* Do two row-lock modes conflict?  (heap's table, through lock.h) */
extern bool minidb_modes_conflict(LockTupleMode a, LockTupleMode b);

/*
 * The lock mode a head version written by a transaction still in progress
 * holds implicitly: a tombstone or a key-changing move is an exclusive
 * update, any other update a no-key one.
 */
extern LockTupleMode minidb_head_lock_mode(const MinidbVersionHeader *head,
										   bool only_version);

/*
 * The strongest lock this transaction (any of its subtransactions) holds on
 * the record, or -1 when it holds none.
 */
extern int	minidb_our_lock_mode(const MinidbLockers *lk);

/*
 * Does a running transaction other than ours hold a lock that conflicts
 * with mode?  If so, *wf says whom to wait for.
 */
extern bool minidb_lockers_conflict(const MinidbLockers *lk,
									LockTupleMode mode, MinidbWaitFor *wf);

/* Are there lockers that may still be running (ours included)? */
extern bool minidb_lockers_live(const MinidbLockers *lk);

/*
 * Has the record lockers, all of them ended, and nothing else in its xmax
 * that must stay (an updater that has not aborted)?  Then an UPDATE in
 * place drops them: heap's new tuple gets no xmax.
 */
extern bool minidb_lockers_ended(const MinidbLockers *lk);

/*
 * The locker fields with this transaction's lock in mode added: a single
 * locker, or a MultiXactId of the running lockers and us.
 */
extern void minidb_lockers_add(const MinidbLockers *old, LockTupleMode mode,
							   MinidbLockers *lk);
/* The xmax a V3 record's end takes: xid, or a multixact with the lockers */
extern TransactionId minidb_end_xmax(const MinidbLockers *lk, TransactionId xid,
									 LockTupleMode mode, bool *is_multi);

/*
 * Waiting.  minidb_acquire_tuplock takes the heavyweight tuple lock that
 * queues waiters fairly (heap_acquire_tuplock); minidb_wait_for waits for
 * the transactions of *wf.  Both follow wait_policy: block, skip (return
 * false) or error (55P03).
 */
extern bool minidb_acquire_tuplock(Relation rel, ItemPointer tid,
								   LockTupleMode mode,
								   LockWaitPolicy wait_policy,
								   bool *have_tuplock);
extern void minidb_release_tuplock(Relation rel, ItemPointer tid,
								   LockTupleMode mode, bool *have_tuplock);
extern bool minidb_wait_for(Relation rel, ItemPointer tid,
							const MinidbWaitFor *wf,
							LockWaitPolicy wait_policy, XLTW_Oper oper);

/* ----------------------------------------------------------------
 * May this transaction change or lock the row?  (heap's
 * HeapTupleSatisfiesUpdate and the conflict tests around it)
 * ----------------------------------------------------------------
 */
typedef struct MinidbRowRequest
{
	CommandId	cid;
	Snapshot	snapshot;		/* MVCC: a newer committed version than the
								 * snapshot sees is a concurrent update; NULL:
								 * take the newest version */
	Snapshot	crosscheck;		/* RI checks under REPEATABLE READ, or NULL */
	LockTupleMode mode;			/* the lock (or update) mode wanted */
	bool		locking;		/* tuple_lock rather than update/delete */
	/*
	 * A lock whose TID names the newest version (MINIDB_TID_NEWEST): the
	 * version ON CONFLICT's arbiter check found, or one tuple_lock handed
	 * back, rather than the one the caller's scan saw
	 */
	bool		named_newest;
	/* following the "moved" marker of a running transaction (for locks) */
	TransactionId prior_xmin;
} MinidbRowRequest;

typedef struct MinidbRowCheck
{
	TM_Result	result;			/* TM_Ok, TM_BeingModified or a failure */
	MinidbWaitFor wait;			/* TM_BeingModified: whom to wait for */
	bool		have_target;
	MinidbVersionRef target;	/* the row version changed or locked */
	MinidbVersionRef head;		/* the newest version that did not abort */
	bool		head_running;	/* head is a running transaction's that a
								 * lock in req->mode may pass */
	bool		passed_move;	/* ... or a no-key move FOR KEY SHARE passed */
	bool		newer_than_snapshot;	/* target is newer than the version
										 * the snapshot sees (accepted) */
	int			our_mode;		/* strongest lock we held on entry, or -1 */
} MinidbRowCheck;

extern void minidb_check_row(Relation rel, ItemPointer tid, char *rec,
							 uint32 len, Buffer buffer,
							 const MinidbRowRequest *req,
							 TM_FailureData *tmfd, MinidbRowCheck *rc);
/* After a TM_Ok check: do other lockers hold a conflicting lock? */
extern void minidb_check_lockers(const char *rec, LockTupleMode mode,
								 MinidbRowCheck *rc);
/* Set a record's lockers, WAL-logged */
extern void minidb_set_lockers(Relation rel, Buffer buffer, OffsetNumber off,
							   const MinidbLockers *lk);
/* Add this transaction's lock in mode to the record at tid, WAL-logged */
extern void minidb_add_row_lock(Relation rel, Buffer buffer, ItemPointer tid,
								LockTupleMode mode);

/* The table AM's tuple_lock */
extern TM_Result minidb_tuple_lock(Relation rel, ItemPointer tid,
								   Snapshot snapshot, TupleTableSlot *slot,
								   CommandId cid, LockTupleMode mode,
								   LockWaitPolicy wait_policy, uint8 flags,
								   TM_FailureData *tmfd);

#endif							/* MINIDB_LOCK_H */
