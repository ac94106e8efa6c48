/*-------------------------------------------------------------------------
 *
 * minidb_visibility.h
 *	  Versions against snapshots; hint bits; SSI on versions.
 *
 * Does this version's xmin/cid satisfy this snapshot?  Which version does
 * a reader, a writer, a locker or a fetch by TID mean?
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_VISIBILITY_H
#define MINIDB_VISIBILITY_H

#include "access/xact.h"
#include "storage/predicate.h"
#include "utils/rel.h"
#include "utils/snapshot.h"

#include "chain.h"

typedef struct MinidbVisArg
{
	Snapshot	snapshot;
	Buffer		buffer;			/* for hint bits; InvalidBuffer if a copy */
	GlobalVisState *vistest;	/* for SNAPSHOT_NON_VACUUMABLE */
	MinidbVisibleFn fn;			/* the predicate for this snapshot */
	TransactionId newer_xmin;	/* xmin of the last version passed over */
	Relation	ssi_rel;		/* MVCC: report skipped writers to SSI */
} MinidbVisArg;

extern void minidb_visibility_init(void);
extern TransactionId minidb_multixact_updater(MultiXactId multi);
extern CommandId minidb_version_cid(const MinidbVersionHeader *vh);
extern CommandId minidb_marker_cid(const MinidbVersionHeader *head,
								   CommandId cmax, bool *combo);
extern void minidb_ref_at(Relation rel, ItemPointer tid, char *rec,
						  uint32 len, int index, MinidbVersionRef *ref);
extern MinidbVisibleFn minidb_visibility_fn(Snapshot snapshot);
extern void minidb_vis_arg_init(MinidbVisArg *va, Snapshot snapshot,
								Buffer buffer);
extern TransactionId minidb_record_origin_xmin(Relation rel, ItemPointer tid,
											   char *rec, uint32 len);
extern int	minidb_effective_head(Relation rel, ItemPointer tid, char *rec,
								  uint32 len, Buffer buffer,
								  MinidbVersionRef *ref);
pg_noreturn extern void minidb_report_bad_xid(const void *where, const char *field,
											  uint32 xid, bool multi);
extern void minidb_lockers_sane(const char *rec, const MinidbLockers *lk);
extern void minidb_get_lockers(const char *rec, MinidbLockers *lk);
extern bool minidb_xid_committed(MinidbVersionHeader *vh, Buffer buffer);
extern bool minidb_xid_aborted(MinidbVersionHeader *vh, Buffer buffer);
extern void minidb_set_hint(MinidbVersionHeader *vh, Buffer buffer,
							uint16 hint, TransactionId xid);

extern void minidb_ssi_conflict_out(Relation rel, TransactionId xid,
									Snapshot snapshot);
extern void minidb_ssi_version_tid(ItemPointer tid, TransactionId xmin,
								   ItemPointer vtid);
extern void minidb_ssi_lock_version_serializable(Relation rel,
												 ItemPointer tid,
												 Snapshot snapshot,
												 TransactionId xmin);

/*
 * A reader returns version xmin of the row at tid: its SIREAD lock, in
 * serializable transactions (the only ones PredicateLockTID locks for).
 */
static inline void
minidb_ssi_lock_version(Relation rel, ItemPointer tid, Snapshot snapshot,
						TransactionId xmin)
{
	if (IsolationIsSerializable())
		minidb_ssi_lock_version_serializable(rel, tid, snapshot, xmin);
}

/*
 * A serializable reader is about to read rows of rel: if another
 * transaction's commit has doomed it (as the pivot of a dangerous
 * structure), it fails here, as heap's fails at the first tuple it reads
 * after that: heap asks CheckForSerializableConflictOutNeeded, which
 * raises the error, of every tuple it examines (a page's in heapgetpage,
 * a HOT chain's in an index fetch).  minidb asks it once per fetch by TID
 * and once per page a scan reads.
 */
static inline void
minidb_ssi_check_doomed(Relation rel, Snapshot snapshot)
{
	if (IsolationIsSerializable())
		(void) CheckForSerializableConflictOutNeeded(rel, snapshot);
}
extern void minidb_ssi_check_in(Relation rel, ItemPointer tid,
								TransactionId xmin);
extern int	minidb_snapshot_version(Relation rel, ItemPointer tid, char *rec,
									uint32 len, Snapshot snapshot,
									Buffer buffer, MinidbVersionRef *ref);
extern int	minidb_row_heads(Relation rel, ItemPointer tid, char *rec,
							 uint32 len, Buffer buffer,
							 MinidbVersionRef *head, MinidbVersionRef *below,
							 TransactionId *superseder);
extern int	minidb_find_row_version(Relation rel, ItemPointer tid,
									bool newest, char *rec, uint32 len,
									Buffer buffer, MinidbVersionRef *ref,
									TransactionId *xmax);
extern bool minidb_row_version_is_head(const MinidbVersionData *v,
									   bool newest);
extern bool minidb_version_is_newest_committed(Relation rel, ItemPointer tid,
											   char *rec, uint32 len,
											   Buffer buffer,
											   const MinidbVersionRef *ref);

extern bool minidb_mvcc_sees_newest(MinidbVersionHeader *vh,
									Snapshot snapshot, Buffer buffer);

/* Visible version of a record under a snapshot; -1 none, error on damage */
extern int	minidb_find_visible(Relation rel, ItemPointer tid, char *rec,
								uint32 len, Snapshot snapshot, Buffer buffer,
								MinidbVersionRef *ref, TransactionId *xmax);

/*
 * What mvcc_sees (minidb_visibility.c) answers without asking anybody: a
 * frozen version, or one hinted committed below the snapshot's xmin, is
 * visible to an MVCC snapshot.  True means visible; false means only "not
 * decided here": the caller asks find_visible.  For a version that passed
 * the walkers' checks (hinted aborted is then never also committed or
 * frozen), so mvcc_sees would test the abort hint first to no effect.
 */
static pg_attribute_always_inline bool
minidb_mvcc_sees_hinted(TransactionId xmin, uint16 flags, Snapshot snapshot)
{
	if (flags & MINIDB_V_FROZEN)
		return true;
	/* transam's TransactionIdPrecedes for two normal xids */
	return (flags & MINIDB_V_XMIN_COMMITTED) &&
		TransactionIdIsNormal(xmin) &&
		TransactionIdIsNormal(snapshot->xmin) &&
		(int32) (xmin - snapshot->xmin) < 0;
}

/*
 * mvcc_sees' answer for a version this transaction wrote, without its
 * other tests: a version with no hints (an own xid is neither committed
 * nor frozen yet, nor aborted while it runs) and no combo command id,
 * seen when an earlier command wrote it.  False means only "not decided
 * here": the caller asks find_visible.
 */
static pg_attribute_always_inline bool
minidb_mvcc_sees_own(TransactionId xmin, CommandId cid, uint16 flags,
					 Snapshot snapshot)
{
	return !(flags & (MINIDB_V_HINT_MASK | MINIDB_V_COMBOCID)) &&
		cid < snapshot->curcid &&
		TransactionIdIsCurrentTransactionId(xmin);
}

#endif							/* MINIDB_VISIBILITY_H */
