/*-------------------------------------------------------------------------
 *
 * minidb_lock.c
 *	  Row locks on minidb records: the lock-mode table, lockers held as an
 *	  xid or a MultiXactId, and waiting.
 *
 * The four row-lock modes and their conflicts are heap's (heapam.c's
 * tupleLockExtraInfo): FOR KEY SHARE conflicts only with FOR UPDATE, FOR
 * SHARE with the two exclusive modes, FOR NO KEY UPDATE with all but FOR KEY
 * SHARE, FOR UPDATE with everything.  The conflict test goes through the
 * heavyweight lock table (DoLockModesConflict on the modes heap uses for the
 * tuple lock), so the two can never disagree.
 *
 * Unlike heap, a minidb record's updaters in place are not in its locker
 * field: an update is a version of its own, and a newest version whose
 * transaction is still running is that transaction's implicit lock.  So a
 * lock covers every version of the row: it needs no carrying forward when
 * the row is updated in place, and it stays when the locking transaction
 * updates the row itself (or rolls that update back to a savepoint).  Once
 * they all ended, an update in place drops them (minidb_lockers_ended), as
 * heap's new tuple then gets no xmax.  What
 * ends a row -- a DELETE or a moving UPDATE -- takes the xmax field of a V3
 * record, as in heap: when lockers other than the ender must stay, it is a
 * multixact of them and the ender (minidb_end_xmax), whose update member
 * the readers of the lockers skip.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "storage/lock.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"

#include "pg_compat.h"
#include "chain.h"
#include "minidb_hio.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_visibility.h"
#include "minidb_tuple.h"
#include "minidb_lock.h"

/* Per mode: the heavyweight tuple lock, and the multixact status */
static const struct
{
	LOCKMODE	hwlock;
	MultiXactStatus lockstatus;
}			mode_info[MaxLockTupleMode + 1] =
{
	[LockTupleKeyShare] = {AccessShareLock, MultiXactStatusForKeyShare},
	[LockTupleShare] = {RowShareLock, MultiXactStatusForShare},
	[LockTupleNoKeyExclusive] = {ExclusiveLock, MultiXactStatusForNoKeyUpdate},
	[LockTupleExclusive] = {AccessExclusiveLock, MultiXactStatusForUpdate},
};

/* The row-lock mode a multixact member's status stands for */
static LockTupleMode
mode_from_status(MultiXactStatus status)
{
	switch (status)
	{
		case MultiXactStatusForKeyShare:
			return LockTupleKeyShare;
		case MultiXactStatusForShare:
			return LockTupleShare;
		case MultiXactStatusForNoKeyUpdate:
		case MultiXactStatusNoKeyUpdate:
			return LockTupleNoKeyExclusive;
		case MultiXactStatusForUpdate:
		case MultiXactStatusUpdate:
			return LockTupleExclusive;
	}
	elog(ERROR, "unrecognized multixact status %d", (int) status);
	return LockTupleExclusive;	/* keep compiler quiet */
}

bool
minidb_modes_conflict(LockTupleMode a, LockTupleMode b)
{
	return DoLockModesConflict(mode_info[a].hwlock, mode_info[b].hwlock);
}

LockTupleMode
minidb_head_lock_mode(const MinidbVersionHeader *head, bool only_version)
{
	if (head->vh_flags & MINIDB_V_TOMBSTONE)
		return LockTupleExclusive;
	/*
	 * A move, or an update in place (which never changes an indexed column,
	 * keys included), is a no-key update unless it changed a key or its
	 * transaction held the row FOR UPDATE: see MINIDB_V_KEYS_UPDATED.
	 */
	if (head->vh_flags & MINIDB_V_KEYS_UPDATED)
		return LockTupleExclusive;
	if (head->vh_flags & MINIDB_V_MOVED)
		return LockTupleNoKeyExclusive;
	return only_version ? LockTupleExclusive : LockTupleNoKeyExclusive;
}

static bool
has_lockers(const MinidbLockers *lk)
{
	return lk->mode != MINIDB_LOCK_NONE && TransactionIdIsValid(lk->xid);
}

/*
 * The lock-only members of the record's multixact (none when all ended);
 * the member that ended the row, when the multixact holds one, is not a
 * locker.
 */
static int
multi_members(const MinidbLockers *lk, MultiXactMember **members)
{
	int			n = GetMultiXactIdMembers((MultiXactId) lk->xid, members,
										  false, !lk->with_updater);
	int			kept = 0;

	for (int i = 0; i < n; i++)
		if (!ISUPDATE_from_mxstatus((*members)[i].status))
			(*members)[kept++] = (*members)[i];
	if (n > 0 && kept == 0)
		pfree(*members);
	return kept;
}

int
minidb_our_lock_mode(const MinidbLockers *lk)
{
	MultiXactMember *members;
	int			best = -1;
	int			n;

	if (!has_lockers(lk))
		return -1;
	if (!lk->multi)
		return TransactionIdIsCurrentTransactionId(lk->xid) ?
			(int) minidb_mode_from_lock(lk->mode) : -1;

	n = multi_members(lk, &members);
	for (int i = 0; i < n; i++)
		if (TransactionIdIsCurrentTransactionId(members[i].xid))
			best = Max(best, (int) mode_from_status(members[i].status));
	if (n > 0)
		pfree(members);
	return best;
}

/* Is xid another transaction that has not ended? */
static bool
running_other(TransactionId xid)
{
	return !TransactionIdIsCurrentTransactionId(xid) &&
		TransactionIdIsInProgress(xid);
}

bool
minidb_lockers_conflict(const MinidbLockers *lk, LockTupleMode mode,
						MinidbWaitFor *wf)
{
	MultiXactMember *members;
	bool		conflict = false;
	int			n;

	if (!has_lockers(lk))
		return false;
	wf->xid = lk->xid;
	wf->mode = mode;
	wf->is_multi = lk->multi;
	if (!wf->is_multi)
		return running_other(lk->xid) &&
			minidb_modes_conflict(mode, minidb_mode_from_lock(lk->mode));

	n = multi_members(lk, &members);
	for (int i = 0; i < n && !conflict; i++)
		conflict = running_other(members[i].xid) &&
			minidb_modes_conflict(mode, mode_from_status(members[i].status));
	if (n > 0)
		pfree(members);
	return conflict;
}

bool
minidb_lockers_live(const MinidbLockers *lk)
{
	MultiXactMember *members;
	bool		live = false;
	int			n;

	if (!has_lockers(lk))
		return false;
	if (!lk->multi)
		return TransactionIdIsCurrentTransactionId(lk->xid) ||
			TransactionIdIsInProgress(lk->xid);
	if (!lk->with_updater)
		return MultiXactIdIsRunning((MultiXactId) lk->xid, true);
	n = multi_members(lk, &members);
	for (int i = 0; i < n && !live; i++)
		live = TransactionIdIsCurrentTransactionId(members[i].xid) ||
			TransactionIdIsInProgress(members[i].xid);
	if (n > 0)
		pfree(members);
	return live;
}

/*
 * Does the multixact of lk hold the row's updater (the transaction that
 * ended it), running or committed?  Then it must stay in the record's xmax
 * beside any new locker, or the row's end would go with it: heap's
 * compute_new_xmax_infomask keeps a committed update in the multixact it
 * expands, and resets only an aborted one.  Unlike the readers' question
 * (minidb_multixact_updater: which member updates), an aborted updater
 * answers no here.
 */
static bool
updater_stays(const MinidbLockers *lk)
{
	TransactionId updater;

	if (!has_lockers(lk) || !lk->multi || !lk->with_updater)
		return false;
	updater = minidb_multixact_updater((MultiXactId) lk->xid);
	return TransactionIdIsValid(updater) &&
		(TransactionIdIsInProgress(updater) ||
		 TransactionIdDidCommit(updater));
}

/*
 * heap_update gives the new tuple no xmax when the old one's lockers are
 * gone (HeapTupleSatisfiesUpdate set HEAP_XMAX_INVALID, or it waited for
 * them and none remains), and the old xmax when any remains; a running
 * locker, ours included, remains.
 */
bool
minidb_lockers_ended(const MinidbLockers *lk)
{
	return has_lockers(lk) && !minidb_lockers_live(lk) && !updater_stays(lk);
}

void
minidb_lockers_add(const MinidbLockers *old, LockTupleMode mode,
				   MinidbLockers *lk)
{
	TransactionId xid = GetCurrentTransactionId();
	MultiXactStatus status = mode_info[mode].lockstatus;
	uint16		newlock = minidb_lock_from_mode(mode);

	lk->multi = false;
	lk->with_updater = false;
	lk->xid = xid;
	lk->mode = newlock;
	if (!minidb_lockers_live(old) && !updater_stays(old))
		return;					/* nobody else: a single locker */

	if (!old->multi)
	{
		if (TransactionIdEquals(old->xid, xid))
		{
			lk->mode = Max(old->mode, newlock);	/* an upgrade */
			return;
		}
		/* another transaction, or another subtransaction of ours */
		MultiXactIdSetOldestMember();
		lk->xid = (TransactionId)
			MultiXactIdCreate(old->xid,
							  mode_info[minidb_mode_from_lock(old->mode)].lockstatus,
							  xid, status);
	}
	else
	{
		MultiXactIdSetOldestMember();
		lk->xid = (TransactionId)
			MultiXactIdExpand((MultiXactId) old->xid, xid, status);
		/* the row's ender stays a member: MultiXactIdExpand keeps updates */
		lk->with_updater = old->with_updater;
	}
	/* for a multixact the mode is only the strongest, as a hint */
	lk->mode = Max(old->mode, newlock);
	lk->multi = true;
}

/*
 * The xmax of a V3 record whose row updater (xid, its change in mode)
 * ends: xid alone, or a multixact of the lockers that must stay and xid,
 * as heap's compute_new_xmax_infomask.  A locker that is xid itself is
 * covered by the change; other running lockers stay (a lock of an earlier
 * subtransaction of ours too: it must outlive the rollback of this one).
 */
TransactionId
minidb_end_xmax(const MinidbLockers *lk, TransactionId xid,
				LockTupleMode mode, bool *is_multi)
{
	MultiXactStatus status = (mode == LockTupleExclusive) ?
		MultiXactStatusUpdate : MultiXactStatusNoKeyUpdate;

	*is_multi = false;
	if (!minidb_lockers_live(lk) ||
		(!lk->multi && TransactionIdEquals(lk->xid, xid)))
		return xid;
	MultiXactIdSetOldestMember();
	*is_multi = true;
	if (!lk->multi)
		return (TransactionId)
			MultiXactIdCreate(lk->xid,
							  mode_info[minidb_mode_from_lock(lk->mode)].lockstatus,
							  xid, status);
	return (TransactionId) MultiXactIdExpand((MultiXactId) lk->xid, xid,
											 status);
}

/* ----------------------------------------------------------------
 * Waiting
 * ----------------------------------------------------------------
 */
static void
report_lock_not_available(Relation rel)
{
	ereport(ERROR,
			(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
			 errmsg("could not obtain lock on row in relation \"%s\"",
					RelationGetRelationName(rel))));
}

bool
minidb_acquire_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode,
					   LockWaitPolicy wait_policy, bool *have_tuplock)
{
	if (*have_tuplock)
		return true;
	switch (wait_policy)
	{
		case LockWaitBlock:
			LockTuple(rel, tid, mode_info[mode].hwlock);
			break;
		case LockWaitSkip:
			if (!minidb_conditional_lock_tuple(rel, tid, mode_info[mode].hwlock))
				return false;
			break;
		case LockWaitError:
			if (!minidb_conditional_lock_tuple(rel, tid, mode_info[mode].hwlock))
				report_lock_not_available(rel);
			break;
	}
	*have_tuplock = true;
	return true;
}

void
minidb_release_tuplock(Relation rel, ItemPointer tid, LockTupleMode mode,
					   bool *have_tuplock)
{
	if (*have_tuplock)
		UnlockTuple(rel, tid, mode_info[mode].hwlock);
	*have_tuplock = false;
}

/* Wait for one transaction under wait_policy; false when skipping */
static bool
wait_for_xid(Relation rel, ItemPointer tid, TransactionId xid,
			 LockWaitPolicy wait_policy, XLTW_Oper oper)
{
	switch (wait_policy)
	{
		case LockWaitBlock:
			XactLockTableWait(xid, rel, tid, oper);
			return true;
		case LockWaitSkip:
			return minidb_conditional_xact_lock_table_wait(xid);
		case LockWaitError:
			if (!minidb_conditional_xact_lock_table_wait(xid))
				report_lock_not_available(rel);
			return true;
	}
	return true;				/* keep compiler quiet */
}

bool
minidb_wait_for(Relation rel, ItemPointer tid, const MinidbWaitFor *wf,
				LockWaitPolicy wait_policy, XLTW_Oper oper)
{
	MultiXactMember *members;
	bool		ok = true;
	int			n;

	if (!wf->is_multi)
		return wait_for_xid(rel, tid, wf->xid, wait_policy, oper);

	/* the members whose locks conflict with ours, one after the other */
	n = GetMultiXactIdMembers((MultiXactId) wf->xid, &members, false, true);
	for (int i = 0; i < n && ok; i++)
	{
		if (!running_other(members[i].xid) ||
			!minidb_modes_conflict(wf->mode,
								   mode_from_status(members[i].status)))
			continue;
		ok = wait_for_xid(rel, tid, members[i].xid, wait_policy, oper);
	}
	if (n > 0)
		pfree(members);
	return ok;
}

/* ----------------------------------------------------------------
 * May this transaction change or lock the row?
 * ----------------------------------------------------------------
 */

static void
row_fail(MinidbRowCheck *rc, TM_Result result, TM_FailureData *tmfd,
		 ItemPointer ctid, TransactionId xmax, CommandId cmax)
{
	rc->result = result;
	tmfd->ctid = *ctid;
	tmfd->xmax = xmax;
	tmfd->cmax = cmax;
}

static bool
version_visible_to(MinidbVersionHeader *vh, Snapshot snapshot, Buffer buffer)
{
	MinidbVisArg va;

	minidb_vis_arg_init(&va, snapshot, buffer);
	return va.fn(vh, 0, &va);
}

/*
 * The head is this transaction's own version.  Made by the current command
 * (or a later one): the row was changed under the command's feet
 * (TM_SelfModified), or it is new to the command (TM_Invisible: a row it
 * inserted, or for a lock that names the newest version, a version it
 * wrote itself -- what ON CONFLICT DO UPDATE turns into "cannot affect row
 * a second time", as it does for heap's new tuple).  A lock of the version
 * the caller's scan saw, which the current command has superseded in place
 * since (a BEFORE ROW trigger's, when a join or a second writable CTE
 * reaches the row again), finds it self-modified, as heap finds the old
 * tuple.  Deleted or moved by an earlier command: there is no row here for
 * this command.  True when the check failed.
 */
static bool
own_head_fails(const MinidbRowRequest *req, MinidbVersionHeader *vh,
			   bool only_version, ItemPointer tid, TM_FailureData *tmfd,
			   MinidbRowCheck *rc)
{
	bool		marker = (vh->vh_flags & MINIDB_V_NODATA_MASK) != 0;
	CommandId	cid = minidb_version_cid(vh);

	if (cid >= req->cid)
	{
		if (!marker && (only_version ||
						(req->locking && req->named_newest && cid == req->cid)))
			row_fail(rc, TM_Invisible, tmfd, tid, vh->vh_xmin, cid);
		else
			row_fail(rc, TM_SelfModified, tmfd, tid, vh->vh_xmin, cid);
		return true;
	}
	if (marker)
	{
		row_fail(rc, TM_Invisible, tmfd, tid, vh->vh_xmin, cid);
		return true;
	}
	return false;
}

/*
 * The head belongs to a transaction still running.  A writer always waits
 * for it (versions are prepended in commit order): for the subtransaction
 * that superseded the settled version below (superseder, see
 * minidb_row_heads), or the head's when there is none.  A locker waits only
 * when its mode conflicts with the head's change, as heap lets FOR KEY
 * SHARE pass a no-key update in progress; it then locks the version below.
 * A record with no settled version below a running head was inserted (or
 * moved here) by that transaction: reached by following its "moved" marker
 * (which a lock could pass, so a no-key move), the row holds what the
 * marker held; otherwise the row is not there yet for anyone else.  True
 * when the caller must wait.
 */
static bool
running_head_blocks(const MinidbRowRequest *req, MinidbVersionHeader *vh,
					bool only_version, TransactionId superseder,
					MinidbRowCheck *rc)
{
	LockTupleMode held;

	held = minidb_head_lock_mode(vh, only_version &&
								 !TransactionIdIsValid(req->prior_xmin));
	if (!req->locking || minidb_modes_conflict(req->mode, held))
	{
		rc->result = TM_BeingModified;
		/* whom heap would wait for: see minidb_row_heads */
		rc->wait.xid = superseder;
		rc->wait.is_multi = false;
		rc->wait.mode = req->mode;
		return true;
	}
	return false;
}

/*
 * Is the change that wrote version vh, ending the version below it, one of
 * another transaction's that did not abort and that mode conflicts with?
 * A version's flags say how its change ended the version below
 * (minidb_head_lock_mode): heap's test of an xmax along the update chain
 * (test_lockmode_for_conflict).  Asked only of versions whose writers have
 * ended (settled), where "did not abort" means committed.
 */
static bool
conflicting_settled_change(MinidbVersionHeader *vh, Buffer buffer,
						   LockTupleMode mode)
{
	return minidb_modes_conflict(mode, minidb_head_lock_mode(vh, false)) &&
		!TransactionIdIsCurrentTransactionId(vh->vh_xmin) &&
		!minidb_xid_aborted(vh, buffer);
}

/* committed_conflict_between's "to": down to the record's oldest version */
#define TO_OLDEST	INT_MAX

/*
 * Does a committed change of another transaction that conflicts with mode
 * lie among the settled versions from (the index) down to, not including,
 * version to?  Its writer into *xmax.
 */
static bool
committed_conflict_between(Relation rel, ItemPointer tid, char *rec,
						   uint32 len, Buffer buffer, LockTupleMode mode,
						   int from, int to, TransactionId *xmax)
{
	MinidbVersionWalk walk;
	MinidbVersionRef ref;

	minidb_walk_begin(&walk, rel, tid, rec, len);
	while (minidb_walk_next(&walk, &ref) && ref.index < to)
	{
		if (ref.index >= from &&
			conflicting_settled_change(ref.vh, buffer, mode))
		{
			*xmax = ref.vh->vh_xmin;
			return true;
		}
	}
	return false;
}

/*
 * What became of the version the request's snapshot sees: heap's tuple
 * that the caller's scan returned, whose xmax and update chain say what
 * happened to it since.  Asked only by the rare checks below (before a
 * wait, on a tombstone, FOR KEY SHARE over newer versions), never on the
 * common path.
 */
typedef struct SeenVersion
{
	MinidbVersionRef seen;		/* the version the snapshot sees */
	bool		ended;			/* a newer version did not abort ... */
	MinidbVersionRef ender;		/* ... the one just above seen: heap's xmax */
	bool		conflict;		/* a committed change that conflicts with
								 * req->mode lies between from and seen ... */
	TransactionId conflict_xmax;	/* ... the newest one's writer */
} SeenVersion;

/*
 * Fill *sv for the request, with "from" the settled version the request
 * would otherwise take: one walk of the versions above the one seen.  False
 * when the request has no MVCC snapshot or its snapshot sees no row.
 */
static bool
seen_version(Relation rel, ItemPointer tid, char *rec, uint32 len,
			 Buffer buffer, const MinidbRowRequest *req, int from,
			 SeenVersion *sv)
{
	MinidbVersionWalk walk;
	MinidbVersionRef ref;

	if (req->snapshot == NULL || !IsMVCCSnapshot(req->snapshot) ||
		minidb_snapshot_version(rel, tid, rec, len, req->snapshot, buffer,
								&sv->seen) < 0)
		return false;
	sv->ended = false;
	sv->conflict = false;
	minidb_walk_begin(&walk, rel, tid, rec, len);
	while (minidb_walk_next(&walk, &ref) && ref.index < sv->seen.index)
	{
		if (!sv->conflict && ref.index >= from &&
			conflicting_settled_change(ref.vh, buffer, req->mode))
		{
			sv->conflict = true;
			sv->conflict_xmax = ref.vh->vh_xmin;
		}
		if (!minidb_xid_aborted(ref.vh, buffer))
		{
			minidb_ref_copy(&sv->ender, &ref);
			sv->ended = true;
		}
	}
	return true;
}

/*
 * The head is another transaction's change in progress, which the request
 * would wait for.  Heap would not, when the version its caller saw was
 * superseded by a committed change the request conflicts with: the tuple's
 * xmax is then that committed updater, and heap_update and heap_delete
 * return TM_Updated at once, as heap_lock_tuple does ("sleeping cannot
 * possibly do any good"), or its walk of the update chain on meeting the
 * change (FOR KEY SHARE, which passes no-key updates).  Under REPEATABLE
 * READ that is 40001; under READ COMMITTED EvalPlanQual locks the newest
 * version, which does wait.  Such a change lies between the settled version
 * below the head (index below) and the version the snapshot sees.  A lock
 * of at least FOR SHARE that this transaction holds proves there is none
 * (see the end of minidb_check_row).  True when that decided the check.
 */
static bool
superseded_under_snapshot(Relation rel, ItemPointer tid, char *rec,
						  uint32 len, Buffer buffer,
						  const MinidbRowRequest *req, int below,
						  TM_FailureData *tmfd, MinidbRowCheck *rc)
{
	SeenVersion sv;

	if (rc->our_mode >= (int) LockTupleShare ||
		!seen_version(rel, tid, rec, len, buffer, req, below, &sv) ||
		!sv.conflict)
		return false;
	row_fail(rc, TM_Updated, tmfd, tid, sv.conflict_xmax, InvalidCommandId);
	return true;
}

/*
 * The row was deleted, committed, but the version the snapshot sees was
 * first superseded by an UPDATE in place: heap's tuple carries that updater
 * in its xmax, and heap_update, heap_delete and heap_lock_tuple report
 * TM_Updated ("concurrent update" under REPEATABLE READ), not TM_Deleted.
 * FOR KEY SHARE passes a no-key update and meets the DELETE, as heap's walk
 * of the update chain does.  True when that decided the check.
 */
static bool
updated_before_delete(Relation rel, ItemPointer tid, char *rec, uint32 len,
					  Buffer buffer, const MinidbRowRequest *req,
					  TM_FailureData *tmfd, MinidbRowCheck *rc)
{
	SeenVersion sv;

	if (!seen_version(rel, tid, rec, len, buffer, req, rc->target.index,
					  &sv) ||
		!sv.ended || (sv.ender.vh->vh_flags & MINIDB_V_NODATA_MASK) ||
		!minidb_modes_conflict(req->mode,
							   minidb_head_lock_mode(sv.ender.vh, false)))
		return false;
	row_fail(rc, TM_Updated, tmfd, tid, sv.ender.vh->vh_xmin,
			 InvalidCommandId);
	return true;
}

/*
 * FOR KEY SHARE ignores no-key updates, committed ones included: heap locks
 * the version the caller's scan saw even when a committed UPDATE that left
 * the key alone has superseded it (heap_lock_tuple's "updated, but keys
 * intact" path), and returns that version without EvalPlanQual.  An update
 * in place changes no indexed column, keys included, and a "moved" marker
 * says whether its UPDATE changed a key; either is a key update when its
 * transaction held the row FOR UPDATE (MINIDB_V_KEYS_UPDATED).  So unless
 * the settled head is a tombstone or a key update superseded the version
 * the snapshot sees, a key-share lock takes that version.  True when that
 * decided the check.
 */
static bool
key_share_target(Relation rel, ItemPointer tid, char *rec, uint32 len,
				 Buffer buffer, const MinidbRowRequest *req,
				 MinidbVersionHeader *vh, MinidbRowCheck *rc)
{
	SeenVersion sv;

	if (!req->locking || req->mode != LockTupleKeyShare)
		return false;
	if ((vh->vh_flags & MINIDB_V_TOMBSTONE) ||
		(vh->vh_flags & MINIDB_V_KEYS_UPDATED))
		return false;
	if (!seen_version(rel, tid, rec, len, buffer, req, rc->target.index,
					  &sv) ||
		sv.conflict)
		return false;
	minidb_ref_copy(&rc->target, &sv.seen);
	if (vh->vh_flags & MINIDB_V_MOVED)
		rc->passed_move = true;
	return true;
}

void
minidb_check_row(Relation rel, ItemPointer tid, char *rec, uint32 len,
				 Buffer buffer, const MinidbRowRequest *req,
				 TM_FailureData *tmfd, MinidbRowCheck *rc)
{
	MinidbLockers lk;
	MinidbVersionRef below;
	MinidbVersionHeader *vh;
	TransactionId superseder;
	int			n;

	rc->result = TM_Ok;
	rc->head_running = false;
	rc->passed_move = false;
	rc->newer_than_snapshot = false;
	minidb_get_lockers(rec, &lk);
	rc->our_mode = minidb_our_lock_mode(&lk);
	/*
	 * A head hinted committed is all this needs: the settled version below
	 * the head (and whom to wait for) matter only while the head runs
	 */
	if (minidb_effective_head(rel, tid, rec, len, buffer, &rc->head) >= 0 &&
		(rc->head.vh->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN)))
		n = 1;
	else
		n = minidb_row_heads(rel, tid, rec, len, buffer, &rc->head, &below,
							 &superseder);
	rc->have_target = (n > 0);
	if (n == 0)
	{
		/* every version aborted: a super-deleted speculative insertion */
		row_fail(rc, TM_Invisible, tmfd, tid, InvalidTransactionId,
				 InvalidCommandId);
		return;
	}
	minidb_ref_copy(&rc->target, &rc->head);
	vh = rc->head.vh;

	if (TransactionIdIsCurrentTransactionId(vh->vh_xmin))
	{
		own_head_fails(req, vh, n == 1, tid, tmfd, rc);
		return;
	}
	if (!minidb_xid_committed(vh, buffer))
	{
		if (running_head_blocks(req, vh, n == 1, superseder, rc))
		{
			if (n > 1)
				superseded_under_snapshot(rel, tid, rec, len, buffer, req,
										  below.index, tmfd, rc);
			return;
		}
		rc->head_running = true;
		rc->passed_move = (vh->vh_flags & MINIDB_V_MOVED) != 0;
		if (n == 1)
			return;				/* locking the moved row's new record */
		minidb_ref_copy(&rc->target, &below);	/* settled: there before the head */
		vh = rc->target.vh;
	}
	if (key_share_target(rel, tid, rec, len, buffer, req, vh, rc))
		return;

	if (vh->vh_flags & MINIDB_V_TOMBSTONE)
	{
		if (!updated_before_delete(rel, tid, rec, len, buffer, req, tmfd, rc))
			row_fail(rc, TM_Deleted, tmfd, tid, vh->vh_xmin,
					 InvalidCommandId);
		return;
	}
	if (vh->vh_flags & MINIDB_V_MOVED)
	{
		ItemPointerData ctid;
		bool		moved_part;

		if (!minidb_record_get_successor(rec, &ctid, &moved_part))
			ItemPointerSetInvalid(&ctid);
		if (moved_part)
			ItemPointerSetMovedPartitions(&ctid);
		row_fail(rc, TM_Updated, tmfd, &ctid, vh->vh_xmin, InvalidCommandId);
		return;
	}

	/*
	 * A committed version the snapshot does not see is a concurrent update
	 * -- unless this transaction holds a lock of at least FOR SHARE: then no
	 * one has changed the row since the lock was taken, and it was taken on
	 * this version, after EvalPlanQual looked at it.  (FOR KEY SHARE lets
	 * no-key updates through, so it proves nothing.)
	 */
	if (req->snapshot && IsMVCCSnapshot(req->snapshot) &&
		!version_visible_to(vh, req->snapshot, buffer))
	{
		rc->newer_than_snapshot = true;
		if (rc->our_mode < (int) LockTupleShare)
		{
			row_fail(rc, TM_Updated, tmfd, tid, vh->vh_xmin,
					 InvalidCommandId);
			return;
		}
	}
	if (req->crosscheck != InvalidSnapshot &&
		!version_visible_to(vh, req->crosscheck, buffer))
		row_fail(rc, TM_Updated, tmfd, tid, vh->vh_xmin, InvalidCommandId);
}

void
minidb_check_lockers(const char *rec, LockTupleMode mode, MinidbRowCheck *rc)
{
	MinidbLockers lk;

	if (rc->result != TM_Ok)
		return;
	minidb_get_lockers(rec, &lk);
	if (minidb_lockers_conflict(&lk, mode, &rc->wait))
		rc->result = TM_BeingModified;
}

/*
 * Set the row lockers of the record at off of an exclusively locked buffer
 * (lk->xid invalid: none), WAL-logged: one LOCK record with the resource
 * manager, generic WAL otherwise.
 */
void
minidb_set_lockers(Relation rel, Buffer buffer, OffsetNumber off,
				   const MinidbLockers *lk)
{
	MinidbReserveChange rc;
	MinidbPageWrite w;
	Page		page;
	char	   *rec;
	uint32		len;

	/* the page's remembered reserve follows the change */
	minidb_reserve_change_begin(rel, buffer, off, &rc);
	if (minidb_custom_wal)
		minidb_log_lockers(rel, buffer, off, lk);
	else
	{
		minidb_page_record_validate(rel, buffer, off);
		minidb_write_begin(&w, rel);
		page = minidb_write_page(&w, buffer, false);
		rec = minidb_lockers_build(page, off, lk, &len);
		minidb_page_replace_record(page, off, rec, len);
		minidb_write_finish(&w);
		pfree(rec);
	}
	minidb_reserve_change_end(&rc, rel, buffer, off);
}

/*
 * Add this transaction's lock in mode to the record at tid, WAL-logged.
 * A V3 record without an xmax field grows by it (the room its page keeps
 * for it); an aborted end of the row goes (see minidb_record_set_lockers).
 * The caller has checked the page (minidb_page_record_at) under the
 * exclusive lock it holds.
 */
void
minidb_add_row_lock(Relation rel, Buffer buffer, ItemPointer tid,
					LockTupleMode mode)
{
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	MinidbLockers old;
	MinidbLockers lk;
	uint32		len;

	TransactionId ender;
	bool		keys_updated;
	char	   *rec = minidb_page_checked_record_at(rel, buffer, tid, &len);

	/*
	 * Before our xid goes into the record, even alone: another backend may
	 * put it into a multixact right after, and a lock-only multixact older
	 * than every running member's OldestMemberMXactId reads as having no
	 * members (GetMultiXactIdMembers), which would let writers past our
	 * lock.  heap_lock_tuple does the same.
	 */
	MultiXactIdSetOldestMember();

	/* the new lockers first: creating a multixact does I/O */
	minidb_get_lockers(rec, &old);
	if (minidb_record_get_single_ender(rec, &ender, &keys_updated) &&
		(TransactionIdIsInProgress(ender) || TransactionIdDidCommit(ender)))
	{
		/*
		 * The row was moved (or deleted) by a transaction that has not
		 * aborted, and our lock does not conflict with that: heap's
		 * FOR KEY SHARE past a no-key UPDATE.  The lock joins the ender in
		 * a multixact and the end stays; replacing the end by the lock
		 * would bring the old version back.  Our own change holds every
		 * lock we could take.
		 */
		if (TransactionIdIsCurrentTransactionId(ender))
			return;
		MultiXactIdSetOldestMember();
		lk.xid = (TransactionId)
			MultiXactIdCreate(ender,
							  keys_updated ? MultiXactStatusUpdate :
							  MultiXactStatusNoKeyUpdate,
							  GetCurrentTransactionId(),
							  mode_info[mode].lockstatus);
		lk.mode = minidb_lock_from_mode(mode);
		lk.multi = true;
		lk.with_updater = true;
	}
	else
		minidb_lockers_add(&old, mode, &lk);
	minidb_set_lockers(rel, buffer, off, &lk);
}

/* ----------------------------------------------------------------
 * tuple_lock
 * ----------------------------------------------------------------
 */

/*
 * Is the record at tid (on a locked buffer) still the successor a "moved"
 * marker created by prior_xmin pointed at?  Its oldest version was created
 * by the same UPDATE; if VACUUM removed the row and the line pointer was
 * reused, that no longer holds (heap's priorXmax check).
 */
static bool
is_successor_of(Relation rel, Buffer buffer, ItemPointer tid,
				TransactionId prior_xmin)
{
	uint32		len;
	char	   *rec;

	rec = minidb_page_get_record(rel, buffer, ItemPointerGetOffsetNumber(tid),
								 &len);
	return rec != NULL &&
		TransactionIdEquals(minidb_record_origin_xmin(rel, tid, rec, len),
							prior_xmin);
}

/* What locking one record found */
typedef struct LockStep
{
	TM_Result	result;
	HeapTuple	tuple;			/* TM_Ok (and TM_Invisible): the row */
	/* a "moved" marker the lock passed: lock the new record too */
	bool		follow_running;
	ItemPointerData successor;
	TransactionId marker_xmin;
	bool		newest;			/* locked a version newer than the snapshot's */
} LockStep;

/* How lock_record goes on from a row changed since the caller saw it */
typedef enum LockFollow
{
	LOCK_FOLLOW_NONE,			/* it does not: the change is the answer */
	LOCK_FOLLOW_NEWEST,			/* to the row's newest version */
	LOCK_FOLLOW_CHAIN			/* along the records a running move made */
} LockFollow;

/*
 * Following the records a move made, with LOCK_FOLLOW_CHAIN (heap's
 * heap_lock_updated_tuple): is the row's change since that move one the
 * lock conflicts with?  A committed DELETE ends the row (TM_Deleted); a
 * committed UPDATE that conflicts (a key update, heap's HEAP_KEYS_UPDATED,
 * against FOR KEY SHARE), in place or moving on, is TM_Updated, also one
 * made in place before a move that the lock passes.  Our own changes, and
 * moves that do not conflict, are followed.
 */
static bool
chain_conflict(Relation rel, ItemPointer tid, char *rec, uint32 len,
			   Buffer buffer, const MinidbRowRequest *req,
			   TM_FailureData *tmfd, MinidbRowCheck *rc)
{
	TransactionId xmax;

	if (rc->result == TM_Deleted)
		return true;
	if (rc->result == TM_Updated)
	{
		if (!ItemPointerIsValid(&tmfd->ctid) ||
			ItemPointerIndicatesMovedPartitions(&tmfd->ctid))
			return false;
		if (minidb_modes_conflict(req->mode,
								  minidb_head_lock_mode(rc->head.vh, false)))
			return true;

		/*
		 * A move the lock passes, committed: the changes made here before
		 * it (versions below the marker) are links of heap's chain too.
		 */
		if (committed_conflict_between(rel, tid, rec, len, buffer, req->mode,
									   rc->head.index + 1, TO_OLDEST, &xmax))
		{
			row_fail(rc, TM_Updated, tmfd, tid, xmax, InvalidCommandId);
			return true;
		}
		return false;
	}
	if (rc->result == TM_Ok &&
		committed_conflict_between(rel, tid, rec, len, buffer, req->mode,
								   rc->target.index, TO_OLDEST, &xmax))
	{
		row_fail(rc, TM_Updated, tmfd, tid, xmax, InvalidCommandId);
		return true;
	}
	return false;
}

/*
 * Lock the record at *tid in mode.  Waits (fair queue: the heavyweight tuple
 * lock first) as wait_policy says.  With LOCK_FOLLOW_NEWEST, a concurrent
 * update is followed to the row's newest version, in place or through
 * "moved" markers (updating *tid and req->snapshot), as heapam_tuple_lock
 * does; LOCK_FOLLOW_CHAIN stops at a change the lock conflicts with
 * (chain_conflict), and a record that is gone holds nothing (TM_Ok).
 */
static void
lock_record(Relation rel, ItemPointer tid, MinidbRowRequest *req,
			LockWaitPolicy wait_policy, LockFollow how, bool asked_newest,
			bool want_tuple, TM_FailureData *tmfd, LockStep *step)
{
	TransactionId prior_xmin = req->prior_xmin;
	bool		have_tuplock = false;
	bool		follow = (how != LOCK_FOLLOW_NONE);
	/* a record that went: the mover aborted (the chain), else deleted */
	TM_Result	gone = (how == LOCK_FOLLOW_CHAIN) ? TM_Ok : TM_Deleted;

	step->tuple = NULL;
	step->follow_running = false;
	step->newest = false;
	for (;;)
	{
		MinidbRowCheck rc;
		Buffer		buffer;
		uint32		len;
		char	   *rec;

		if (TransactionIdIsValid(prior_xmin) &&
			ItemPointerGetBlockNumber(tid) >= RelationGetNumberOfBlocks(rel))
		{
			step->result = gone;	/* the successor went with its page */
			break;
		}
		buffer = ReadBuffer(rel, ItemPointerGetBlockNumber(tid));
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		if (TransactionIdIsValid(prior_xmin) &&
			!is_successor_of(rel, buffer, tid, prior_xmin))
		{
			UnlockReleaseBuffer(buffer);
			step->result = gone;	/* the row we followed is gone */
			break;
		}
		rec = minidb_page_record_at(rel, buffer, tid, &len);
		minidb_check_row(rel, tid, rec, len, buffer, req, tmfd, &rc);

		/*
		 * A newer committed version in place: when following updates, lock
		 * that one.  So also under READ COMMITTED without the flag: that is
		 * INSERT ... ON CONFLICT, which found the row through a dirty
		 * snapshot and expects its newest version locked, as heap_lock_tuple
		 * locks the version at the TID whatever the snapshot.  Under
		 * REPEATABLE READ it stays TM_Updated (40001).
		 */
		if (rc.result == TM_Updated && ItemPointerEquals(&tmfd->ctid, tid) &&
			(follow || !IsolationUsesXactSnapshot()))
		{
			req->snapshot = NULL;
			step->newest = true;
			minidb_check_row(rel, tid, rec, len, buffer, req, tmfd, &rc);
		}
		if (rc.result == TM_Ok && rc.our_mode < (int) req->mode)
			minidb_check_lockers(rec, req->mode, &rc);

		if (rc.result == TM_BeingModified)
		{
			MinidbWaitFor wf = rc.wait;

			UnlockReleaseBuffer(buffer);

			/*
			 * Queue on the tuple lock -- unless we hold a lock on the row
			 * already: waiters queued there may be waiting for us
			 * (heap_lock_tuple's skip_tuple_lock).
			 */
			if ((rc.our_mode < 0 &&
				 !minidb_acquire_tuplock(rel, tid, req->mode, wait_policy,
										 &have_tuplock)) ||
				!minidb_wait_for(rel, tid, &wf, wait_policy, XLTW_Lock))
			{
				row_fail(&rc, TM_WouldBlock, tmfd, tid, wf.xid,
						 InvalidCommandId);
				step->result = TM_WouldBlock;
				break;
			}
			continue;
		}
		if (how == LOCK_FOLLOW_CHAIN &&
			chain_conflict(rel, tid, rec, len, buffer, req, tmfd, &rc))
		{
			UnlockReleaseBuffer(buffer);
			step->result = rc.result;
			break;
		}
		if (rc.result == TM_Updated && follow &&
			ItemPointerIndicatesMovedPartitions(&tmfd->ctid))
		{
			/* what heapam_tuple_lock says: there is no newer version here */
			UnlockReleaseBuffer(buffer);
			minidb_release_tuplock(rel, tid, req->mode, &have_tuplock);
			ereport(ERROR,
					(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
					 errmsg("tuple to be locked was already moved to another partition due to concurrent update")));
		}
		if (rc.result == TM_Updated && follow &&
			ItemPointerIsValid(&tmfd->ctid))
		{
			/* the row moved: lock it at its new record */
			UnlockReleaseBuffer(buffer);
			minidb_release_tuplock(rel, tid, req->mode, &have_tuplock);
			*tid = tmfd->ctid;
			prior_xmin = tmfd->xmax;
			req->snapshot = NULL;
			req->named_newest = false;
			step->newest = true;
			asked_newest = false;
			continue;
		}
		if (rc.result == TM_Invisible && want_tuple && rc.have_target &&
			!(rc.target.vh->vh_flags & MINIDB_V_NODATA_MASK))
		{
			/* as heap does, show the caller the row (ON CONFLICT reads xmin) */
			step->tuple = minidb_materialize_copy(rec, &rc.target,
												  InvalidTransactionId, tid,
												  RelationGetRelid(rel));
		}
		step->result = rc.result;
		if (rc.result != TM_Ok)
		{
			UnlockReleaseBuffer(buffer);
			break;
		}

		/*
		 * Did we lock a newer version than the caller's scan saw?  Then heap
		 * would have followed the row's update chain, and EvalPlanQual must
		 * look at it -- unless the caller named the newest version already
		 * (a TID we handed back before, marked MINIDB_TID_NEWEST).
		 */
		if (rc.newer_than_snapshot)
			step->newest = true;
		if (follow && step->newest && !asked_newest)
			tmfd->traversed = true;

		if (rc.passed_move)
		{
			bool		moved_part;

			step->follow_running =
				minidb_record_get_successor(rec, &step->successor,
											&moved_part);
			step->marker_xmin = rc.head.vh->vh_xmin;
		}
		if (rc.our_mode < (int) req->mode)
		{
			/*
			 * The record changes: find its versions again, by index (the
			 * page was checked above, and we wrote it since)
			 */
			int			before = minidb_record_nversions(rec, len);

			minidb_add_row_lock(rel, buffer, tid, req->mode);
			rec = minidb_page_checked_record_at(rel, buffer, tid, &len);
			minidb_ref_at(rel, tid, rec, len,
						  rc.target.index - (before - minidb_record_nversions(rec, len)),
						  &rc.target);
		}
		if (want_tuple)
			step->tuple = minidb_materialize_copy(rec, &rc.target,
												  InvalidTransactionId, tid,
												  RelationGetRelid(rel));
		UnlockReleaseBuffer(buffer);
		break;
	}
	minidb_release_tuplock(rel, tid, req->mode, &have_tuplock);
}

/*
 * Lock the row at *tid.  With TUPLE_LOCK_FLAG_FIND_LAST_VERSION, follow the
 * row to its newest version and lock that, updating *tid: what EvalPlanQual
 * relies on.  With TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS, a lock that
 * passes a move of the row (FOR KEY SHARE past a no-key UPDATE, running or
 * committed) also locks the row's new records, so that the lock holds
 * whichever way that UPDATE ends (heap_lock_updated_tuple); a change there
 * that the lock conflicts with fails it, as it fails heap's: a DELETE (the
 * row is gone: a foreign-key check must not pass) or a key update (under
 * READ COMMITTED the newest version is locked instead).
 */
TM_Result
minidb_tuple_lock(Relation rel, ItemPointer tid, Snapshot snapshot,
				  TupleTableSlot *slot, CommandId cid, LockTupleMode mode,
				  LockWaitPolicy wait_policy, uint8 flags,
				  TM_FailureData *tmfd)
{
	bool		follow = (flags & TUPLE_LOCK_FLAG_FIND_LAST_VERSION) != 0;
	bool		asked_newest = minidb_tid_is_newest(tid);
	ItemPointerData cur = minidb_tid_plain(tid);
	MinidbRowRequest req;
	LockStep	step;
	HeapTuple	tuple;
	bool		newest;

	tmfd->traversed = false;
	req.cid = cid;
	req.snapshot = snapshot;
	req.crosscheck = InvalidSnapshot;
	req.mode = mode;
	req.locking = true;
	req.named_newest = asked_newest;
	req.prior_xmin = InvalidTransactionId;
	lock_record(rel, &cur, &req, wait_policy,
				follow ? LOCK_FOLLOW_NEWEST : LOCK_FOLLOW_NONE, asked_newest,
				true, tmfd, &step);
	tuple = step.tuple;
	newest = step.newest || asked_newest;
	*tid = cur;
	if (step.result == TM_Ok && newest)
		minidb_tid_mark_newest(tid);

	while (step.result == TM_Ok && step.follow_running &&
		   (flags & TUPLE_LOCK_FLAG_LOCK_UPDATE_IN_PROGRESS))
	{
		ItemPointerData first = step.successor;
		TransactionId mover = step.marker_xmin;
		ItemPointerData next = first;
		TM_FailureData fd;

		req.snapshot = NULL;
		req.named_newest = false;
		req.prior_xmin = mover;
		fd.traversed = false;
		lock_record(rel, &next, &req, wait_policy, LOCK_FOLLOW_CHAIN, false,
					false, &fd, &step);
		/* the mover aborted: nothing to hold */
		if (step.result == TM_Invisible)
			step.result = TM_Ok;
		if (step.result == TM_Updated && follow)
		{
			/*
			 * A conflicting update along the chain: under READ COMMITTED
			 * heap goes on from there to the row's newest version, locks
			 * that, and EvalPlanQual looks at it (heapam_tuple_lock, once
			 * heap_lock_tuple has failed).
			 */
			if (tuple)
				heap_freetuple(tuple);
			cur = first;
			req.prior_xmin = mover;
			lock_record(rel, &cur, &req, wait_policy, LOCK_FOLLOW_NEWEST,
						false, true, tmfd, &step);
			tuple = step.tuple;
			*tid = cur;
			if (step.result == TM_Ok)
			{
				tmfd->traversed = true;
				minidb_tid_mark_newest(tid);
			}
			continue;
		}
		if (step.result != TM_Ok)
		{
			*tmfd = fd;
			if (tuple)
				heap_freetuple(tuple);
			return step.result;
		}
	}

	/*
	 * Following a concurrent update, heap hands over a version at another
	 * TID, which EvalPlanQual's TID quals (WHERE ctid = ..., a TID range)
	 * no longer match.  The row here kept its TID: the slot gets it marked
	 * as the newest version's, which those quals do not match either, and
	 * which every minidb callback takes for the row's TID.
	 */
	if (tuple && step.result == TM_Ok && tmfd->traversed)
		tuple->t_self = *tid;
	if (tuple)
		ExecStoreHeapTuple(tuple, slot, true);
	return step.result;
}
