/*-------------------------------------------------------------------------
 *
 * minidb_vacuum.c
 *	  VACUUM for minidb tables.
 *
 * The shape is heap's lazy VACUUM (vacuumlazy.c), for version chains:
 *
 *	1. scan: every page not skipped through the visibility map is locked
 *	   exclusively and, in ONE WAL-logged change, each record is pruned to
 *	   the removal horizon (minidb_prune_plan), versions older than the
 *	   freeze cutoff are frozen, stale row lockers are forgotten, and dead
 *	   records (effective head a committed tombstone or moved marker beyond
 *	   the horizon, or every version aborted) become LP_DEAD line pointers
 *	   whose TIDs are collected.  A page whose records are all committed,
 *	   one version deep and visible to everyone is marked all-visible (and
 *	   all-frozen when every version is frozen) in the visibility map.
 *	2. vacuum indexes: index_bulk_delete on every index, with the server's
 *	   own TID membership test (vac_bulkdel_one_index: a sorted array and
 *	   bsearch).  When maintenance_work_mem fills up, phases 2 and 3 run
 *	   and the scan continues: several index passes.
 *	3. vacuum heap: the collected LP_DEAD items become LP_UNUSED (one
 *	   WAL-logged change per page).
 *	4. index cleanup, truncation of empty pages at the end, statistics:
 *	   relpages, reltuples, relallvisible, relfrozenxid and relminmxid
 *	   (vac_update_relstats), the cumulative statistics, the free space map.
 *
 * Phase 1 and 3 decide, then act, as heap's pruning does: the page's plan
 * (a MinidbPagePlan: what each record keeps and freezes, which items die)
 * is made from the page under its lock, with the conflict horizon a hot
 * standby needs (the newest xmin whose versions it removes or freezes),
 * then carried out in one WAL record (minidb_apply_plan: a compact PRUNE
 * record preloaded, generic WAL otherwise) made under the buffer's
 * exclusive lock, so cancelling VACUUM (statement_timeout, pg_cancel_backend)
 * at any CHECK_FOR_INTERRUPTS leaves every page consistent: at worst some
 * dead records stay LP_DEAD with their index entries, which readers skip
 * and the next VACUUM finishes.
 *
 * A minidb page needs no cleanup lock: readers keep no pointers into a
 * page once they release its content lock (the view contract), so an
 * exclusive content lock is enough to move records around.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/genam.h"
#include "access/multixact.h"
#include "access/transam.h"
#include "access/visibilitymap.h"
#include "access/xact.h"
#include "catalog/storage.h"
#include "commands/dbcommands.h"
#include "commands/progress.h"
#include "commands/vacuum.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/autovacuum.h"
#include "storage/bufmgr.h"
#include "storage/freespace.h"
#include "storage/lmgr.h"
#include "storage/procarray.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pg_rusage.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_visibility.h"
#include "minidb_prune.h"
#include "minidb_ddl.h"

/* The same thresholds heap uses (vacuumlazy.c) */
#define REL_TRUNCATE_MINIMUM	1000
#define REL_TRUNCATE_FRACTION	16
#define VACUUM_TRUNCATE_LOCK_CHECK_INTERVAL		20	/* ms */
#define VACUUM_TRUNCATE_LOCK_WAIT_INTERVAL		50	/* ms */
#define VACUUM_TRUNCATE_LOCK_TIMEOUT			5000	/* ms */
#define SKIP_PAGES_THRESHOLD	((BlockNumber) 32)

typedef enum VacPhase
{
	VAC_PHASE_UNKNOWN,
	VAC_PHASE_SCAN,
	VAC_PHASE_VACUUM_INDEX,
	VAC_PHASE_VACUUM_HEAP,
	VAC_PHASE_INDEX_CLEANUP,
	VAC_PHASE_TRUNCATE
} VacPhase;

typedef struct MinidbVacState
{
	Relation	rel;
	char	   *relname;
	char	   *relnamespace;
	BufferAccessStrategy bstrategy;
	bool		verbose;
	bool		aggressive;
	bool		skipwithvm;
	bool		do_index_vacuuming;
	bool		do_index_cleanup;
	bool		do_truncate;
	bool		failsafe;
	int			nindexes;
	Relation   *indrels;
	IndexBulkDeleteResult **indstats;
	char	  **indnames;		/* for the report */

	/* parallel index vacuuming (vacuumparallel.c), or NULL */
	ParallelVacuumState *pvs;

	/* cutoffs */
	TransactionId OldestXmin;
	TransactionId FreezeLimit;
	MultiXactId OldestMxact;
	MultiXactId MultiXactCutoff;
	GlobalVisState *vistest;

	/* what relfrozenxid / relminmxid can become */
	TransactionId NewRelfrozenXid;
	MultiXactId NewRelminMxid;
	bool		skippedallvis;	/* skipped a page that was not all-frozen */
	bool		unknown_xids;	/* a damaged record: its xids are unknown */

	/* dead items awaiting index vacuuming */
	MinidbDeadItems *dead_items;

	/* error context */
	VacPhase	phase;
	BlockNumber blkno;

	/* counters */
	BlockNumber rel_pages;
	BlockNumber scanned_pages;
	BlockNumber skipped_allvis;
	BlockNumber skipped_frozen;
	BlockNumber removed_pages;
	BlockNumber nonempty_pages;
	BlockNumber vm_set_visible;
	BlockNumber vm_set_frozen;
	BlockNumber vm_frozen_was_visible;	/* set all-frozen, all-visible before */
	BlockNumber frozen_pages;	/* pages with versions frozen */
	int			num_index_scans;
	double		live_records;
	double		recently_dead;	/* versions and records not yet removable */
	double		versions_pruned;
	double		versions_frozen;
	double		records_dead;	/* made LP_DEAD */
	double		records_removed;	/* made LP_UNUSED */
	double		versions_dead;	/* row versions of the records that died */
	BlockNumber lpdead_item_pages;	/* pages with dead items (heap's) */
	int64		lpdead_items;	/* dead items: records that died */
	double		lockers_cleared;
	double		damaged_records;
	/* where the first damaged records are, for the report */
#define MINIDB_VAC_DAMAGED_SHOWN	10
	int			ndamaged_tids;
	ItemPointerData damaged_tids[MINIDB_VAC_DAMAGED_SHOWN];
} MinidbVacState;

/* What VACUUM does, or would do, to one record */
typedef struct RecordResult
{
	bool		damaged;
	bool		dead;			/* dead to everyone: LP_DEAD */
	TransactionId dead_xid;		/* with dead: the xid that ended it */
	bool		needs_write;	/* prune, freeze or a stale locker */
	bool		all_visible;	/* afterwards: one committed data version that
								 * every snapshot sees */
	bool		all_frozen;		/* ... and it is frozen, with no row locker */
	bool		live;			/* the row exists for new snapshots */
	int			npruned;
	int			nfrozen;
	int			nrecently_dead; /* versions kept for older snapshots */
	bool		clear_locker;
	bool		set_locker;		/* replace the locker by new_locker */
	bool		set_end_xid;	/* a V3 end's multixact becomes new_locker,
								 * its updater */
	TransactionId new_locker;
	uint16		new_lockmode;
	bool		new_is_multi;
	bool		unhinted;		/* a version without hint bits */
	int			nversions;		/* versions before the change */
	TransactionId horizon;		/* newest xmin that removal or freezing
								 * rests on: standby conflicts */
	TransactionId head_xmin;	/* all_visible: the head's xmin, if normal
								 * and not frozen before this VACUUM */
	TransactionId oldest_xid;	/* oldest unfrozen xid left, or invalid */
	MultiXactId oldest_multi;	/* a row-locking multi left, or invalid */
} RecordResult;

/* What one page holds, as VACUUM sees it */
typedef struct PageResult
{
	bool		needs_write;
	bool		all_visible;
	bool		all_frozen;
	bool		hastup;			/* a record that stays */
	bool		unhinted;		/* a version without hint bits */
	TransactionId cutoff;		/* newest head xmin: standby conflicts */
	MinidbPagePlan plan;		/* what the write does */
	RecordResult recs[MaxHeapTuplesPerPage + 1];
} PageResult;

static void freeze_multi_locker(MinidbVacState *vs, const MinidbLockers *lk,
								RecordResult *r);
static void freeze_end_multi(MinidbVacState *vs, const MinidbLockers *lk,
							 TransactionId updater, RecordResult *r);

static void
track_oldest_xid(TransactionId *oldest, TransactionId xid)
{
	if (!TransactionIdIsNormal(xid))
		return;
	if (!TransactionIdIsValid(*oldest) || TransactionIdPrecedes(xid, *oldest))
		*oldest = xid;
}

/*
 * Decide what VACUUM does to one record, on the page in the buffer
 * (setting hint bits through it): actions[] gets the record's part of the
 * page's plan (MINIDB_PLAN_KEEP / MINIDB_PLAN_FREEZE per version), r the
 * outcome.  Nothing is changed here: minidb_page_execute_plan does it.
 */
static void
vacuum_record(MinidbVacState *vs, char *rec, uint32 len, Buffer buffer,
			  RecordResult *r, uint8 *actions)
{
	bool		keep[MINIDB_MAX_PAGE_VERSIONS];
	MinidbLockers lk;
	TransactionId end_updater = InvalidTransactionId;
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged = false;
	bool		head_frozen = false;
	MinidbPruneResult rp;
	int			n;
	int			nkeep;
	int			k = 0;

	memset(r, 0, sizeof(*r));
	r->head_xmin = InvalidTransactionId;
	r->oldest_xid = InvalidTransactionId;
	r->oldest_multi = InvalidMultiXactId;
	r->horizon = InvalidTransactionId;

	/* a record on a page holds at most MINIDB_MAX_PAGE_VERSIONS */
	if (minidb_record_nversions(rec, len) > MINIDB_MAX_PAGE_VERSIONS)
	{
		r->damaged = true;
		return;
	}
	nkeep = minidb_prune_plan(rec, len, vs->vistest, buffer, keep, &rp);
	if (nkeep < 0)
	{
		r->damaged = true;
		return;
	}
	n = rp.nversions;
	r->nversions = n;
	if (minidb_record_is_dead(rec, len, vs->vistest, buffer, &r->dead_xid))
	{
		r->dead = true;
		r->needs_write = true;
		r->horizon = r->dead_xid;
		return;
	}
	if (nkeep == 0)				/* all aborted, found dead since: keep one */
	{
		keep[0] = true;
		nkeep = 1;
	}

	r->npruned = n - nkeep;
	r->nrecently_dead = nkeep - 1;
	r->horizon = rp.horizon;	/* the versions below the floor go */

	/* freeze what is older than the cutoff; see what stays unfrozen */
	if (!minidb_chain_iter_init(&it, rec, len, &err))
	{
		r->damaged = true;
		return;
	}
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionHeader *vh = ref.vh;
		bool		was_frozen;
		bool		frozen;
		bool		committed;

		actions[ref.index] = keep[ref.index] ? MINIDB_PLAN_KEEP : 0;
		if ((vh->vh_flags & MINIDB_V_VIRTUAL) && keep[ref.index])
			end_updater = vh->vh_xmin;	/* a V3 end that stays */
		if (!keep[ref.index])
			continue;
		was_frozen = frozen = (vh->vh_flags & MINIDB_V_FROZEN) != 0;
		committed = frozen || minidb_xid_committed(vh, buffer);
		if (!(vh->vh_flags & MINIDB_V_HINT_MASK))
			r->unhinted = true;
		if (!frozen && committed &&
			TransactionIdPrecedes(vh->vh_xmin, vs->FreezeLimit))
		{
			/* a standby snapshot that does not see it yet must not either */
			r->nfrozen++;
			frozen = true;
			actions[ref.index] |= MINIDB_PLAN_FREEZE;
			if (!TransactionIdIsValid(r->horizon) ||
				TransactionIdFollows(vh->vh_xmin, r->horizon))
				r->horizon = vh->vh_xmin;
		}
		if (!frozen)
			track_oldest_xid(&r->oldest_xid, vh->vh_xmin);
		if (k == 0)
		{
			/* the effective head */
			bool		marker = (vh->vh_flags & MINIDB_V_NODATA_MASK) != 0;

			/*
			 * Counted as heap counts its tuples: a version being inserted
			 * is not live yet, the one it replaces still is (and is not
			 * dead); a committed marker ends the row.
			 */
			if (committed)
				r->live = !marker;
			else
			{
				r->live = (nkeep >= 2);
				r->nrecently_dead = Max(nkeep - 2, 0);
			}
			r->all_visible = (nkeep == 1 && rp.floor >= 0 && !marker);
			head_frozen = frozen;
			/* frozen in this pass, its xmin still counts for standbys */
			if (r->all_visible && !was_frozen)
				r->head_xmin = vh->vh_xmin;
		}
		k++;
	}
	if (damaged)
	{
		r->damaged = true;
		return;
	}

	/*
	 * The row lockers: forget them once they cannot be running any more.
	 * A V3 end by a multixact keeps its updater as the xmax; the
	 * multixact goes when it grows old (heap's FreezeMultiXactId).
	 */
	minidb_get_lockers(rec, &lk);
	if (lk.with_updater && TransactionIdIsValid(end_updater))
		freeze_end_multi(vs, &lk, end_updater, r);
	else if (TransactionIdIsValid(lk.xid))
	{
		bool		stale;

		if (lk.multi)
			stale = !MultiXactIdIsValid(lk.xid) ||
				MultiXactIdPrecedes(lk.xid, vs->OldestMxact) ||
				!MultiXactIdIsRunning(lk.xid, true);
		else
			stale = lk.mode == MINIDB_LOCK_NONE ||
				!TransactionIdIsInProgress(lk.xid);
		if (stale)
			r->clear_locker = true;
		else if (lk.multi)
			freeze_multi_locker(vs, &lk, r);
		else
			track_oldest_xid(&r->oldest_xid, lk.xid);
	}

	r->all_frozen = r->all_visible && head_frozen &&
		(r->clear_locker || !TransactionIdIsValid(lk.xid));
	r->needs_write = r->npruned > 0 || r->nfrozen > 0 || r->clear_locker ||
		r->set_locker || r->set_end_xid;
}

/*
 * A row-locking multixact some of whose lockers still run: when it is older
 * than the multixact cutoff, or a member is older than the xid cutoff,
 * replace it by a new multixact of the running lockers, as heap's
 * FreezeMultiXactId does, so that relfrozenxid and relminmxid can move
 * past the old one; otherwise keep it.
 */
static void
freeze_multi_locker(MinidbVacState *vs, const MinidbLockers *lk,
					RecordResult *r)
{
	MultiXactMember *members;
	MultiXactMember *running;
	int			nmembers;
	int			nrunning = 0;
	uint16		strongest = MINIDB_LOCK_NONE;
	bool		replace = MultiXactIdPrecedes(lk->xid, vs->MultiXactCutoff);

	nmembers = Max(GetMultiXactIdMembers((MultiXactId) lk->xid,
										 &members, false, true), 0);
	for (int i = 0; i < nmembers; i++)
		replace |= TransactionIdPrecedes(members[i].xid, vs->FreezeLimit);
	if (!replace)
	{
		r->oldest_multi = lk->xid;
		for (int i = 0; i < nmembers; i++)
			track_oldest_xid(&r->oldest_xid, members[i].xid);
		if (nmembers > 0)
			pfree(members);
		return;
	}
	running = palloc(sizeof(MultiXactMember) * Max(nmembers, 1));
	for (int i = 0; i < nmembers; i++)
	{
		uint16		mode;

		if (!TransactionIdIsInProgress(members[i].xid))
			continue;
		running[nrunning++] = members[i];
		switch (members[i].status)
		{
			case MultiXactStatusForKeyShare:
				mode = MINIDB_LOCK_KEYSHARE;
				break;
			case MultiXactStatusForShare:
				mode = MINIDB_LOCK_SHARE;
				break;
			case MultiXactStatusForNoKeyUpdate:
				mode = MINIDB_LOCK_NOKEYEXCL;
				break;
			default:
				mode = MINIDB_LOCK_EXCLUSIVE;
				break;
		}
		strongest = Max(strongest, mode);
	}
	if (nrunning == 0)
		r->clear_locker = true;
	else
	{
		/* lockers stay a multixact, even one alone (heap does the same) */
		r->set_locker = true;
		r->new_lockmode = strongest;
		r->new_is_multi = true;
		r->new_locker = (TransactionId)
			MultiXactIdCreateFromMembers(nrunning, running);
		r->oldest_multi = r->new_locker;
		for (int i = 0; i < nrunning; i++)
			track_oldest_xid(&r->oldest_xid, running[i].xid);
	}
	pfree(running);
	if (nmembers > 0)
		pfree(members);
}

/*
 * A V3 record whose row a multixact of lockers and an updater ended: when
 * the multixact is older than the multixact cutoff or a member is older
 * than the xid cutoff, the end's xmax becomes the updater alone (the row
 * has ended, its lockers hold nothing any more), as FreezeMultiXactId
 * keeps only a multixact's updater; otherwise the multixact stays.
 */
static void
freeze_end_multi(MinidbVacState *vs, const MinidbLockers *lk,
				 TransactionId updater, RecordResult *r)
{
	MultiXactMember *members;
	int			nmembers;
	bool		replace = MultiXactIdPrecedes(lk->xid, vs->MultiXactCutoff);

	nmembers = Max(GetMultiXactIdMembers((MultiXactId) lk->xid, &members,
										 false, false), 0);
	for (int i = 0; i < nmembers; i++)
		replace |= TransactionIdPrecedes(members[i].xid, vs->FreezeLimit);
	if (replace)
	{
		r->set_end_xid = true;
		r->new_locker = updater;
		r->new_lockmode = MINIDB_LOCK_NONE;
		track_oldest_xid(&r->oldest_xid, updater);
	}
	else
	{
		r->oldest_multi = lk->xid;
		for (int i = 0; i < nmembers; i++)
			track_oldest_xid(&r->oldest_xid, members[i].xid);
	}
	if (nmembers > 0)
		pfree(members);
}

/*
 * Look at every item of a locked page: fills pr, with the plan of the
 * page's write (pr->plan, pr->needs_write), and counts nothing.
 * dead_to_unused: dead items become unused at once (no indexes), so they
 * do not keep the page from being all-visible.
 */
static void
analyze_page(MinidbVacState *vs, Buffer buffer, bool dead_to_unused,
			 PageResult *pr)
{
	Page		page = BufferGetPage(buffer);
	OffsetNumber maxoff;
	uint8		actions[MINIDB_MAX_PAGE_VERSIONS];

	pr->needs_write = false;
	pr->all_visible = true;
	pr->all_frozen = true;
	pr->hastup = false;
	pr->unhinted = false;
	pr->cutoff = InvalidTransactionId;
	minidb_plan_init(&pr->plan);

	minidb_page_check(vs->rel, buffer);
	maxoff = minidb_page_maxoff(page);
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		RecordResult *r = &pr->recs[off];
		const char *why;
		char	   *rec;
		uint32		len;

		memset(r, 0, sizeof(*r));
		/* unused and dead items have no storage; with some, a flag is damaged */
		if (!ItemIdIsUsed(lp) && ItemIdGetOffset(lp) == 0 &&
			ItemIdGetLength(lp) == 0)
			continue;
		if (ItemIdIsDead(lp) && ItemIdGetOffset(lp) == 0 &&
			ItemIdGetLength(lp) == 0)
		{
			if (dead_to_unused)
			{
				pr->plan.unused[pr->plan.nunused++] = off;
				pr->needs_write = true;
			}
			else
				pr->all_visible = false;
			continue;
		}
		/* a damaged line pointer (or a redirect, which minidb never makes) */
		if (minidb_page_item(page, off, &rec, &len, &why) != MINIDB_ITEM_RECORD)
			r->damaged = true;
		else
			vacuum_record(vs, rec, len, buffer, r, actions);
		if (r->damaged)
		{
			pr->all_visible = false;
			pr->hastup = true;
			continue;
		}
		if (r->dead)
		{
			if (dead_to_unused)
				pr->plan.unused[pr->plan.nunused++] = off;
			else
			{
				pr->plan.dead[pr->plan.ndead++] = off;
				pr->all_visible = false;
			}
			minidb_plan_note_xid(&pr->plan, r->horizon);
			pr->needs_write = true;
			continue;
		}
		if (r->needs_write)
		{
			uint8		rflags = 0;
			uint8	   *a;

			if (r->clear_locker)
				rflags |= MINIDB_RPLAN_CLEAR_LOCKER;
			if (r->set_locker)
				rflags |= MINIDB_RPLAN_SET_LOCKER |
					(r->new_is_multi ? MINIDB_RPLAN_LOCKER_MULTI : 0);
			if (r->set_end_xid)
				rflags |= MINIDB_RPLAN_SET_END_XID;
			a = minidb_plan_add_record(&pr->plan, off, r->nversions, rflags);
			pr->plan.records[pr->plan.nrecords - 1].locker = r->new_locker;
			pr->plan.records[pr->plan.nrecords - 1].lockmode = r->new_lockmode;
			memcpy(a, actions, r->nversions);
			minidb_plan_note_xid(&pr->plan, r->horizon);
			pr->needs_write = true;
		}
		pr->hastup = true;
		pr->unhinted |= r->unhinted;
		pr->all_visible &= r->all_visible;
		pr->all_frozen &= r->all_frozen;
		if (TransactionIdIsNormal(r->head_xmin) &&
			(!TransactionIdIsValid(pr->cutoff) ||
			 TransactionIdFollows(r->head_xmin, pr->cutoff)))
			pr->cutoff = r->head_xmin;
	}
	if (!pr->all_visible)
		pr->all_frozen = false;
	/* unused items at the end of the array go, as heap's VACUUM cuts them */
	if (pr->plan.nunused > 0)
		pr->plan.flags |= MINIDB_PLAN_TRUNCATE_LP;
}

/* Room for a new record on a page that is all-zero now */
static Size
free_on_empty_page(void)
{
	static Size free = 0;

	if (free == 0)
	{
		PGAlignedBlock page;

		minidb_page_init(page.data);
		free = minidb_page_free_for_insert(page.data);
	}
	return free;
}

static void
dead_items_add(MinidbVacState *vs, BlockNumber blkno, OffsetNumber off)
{
	MinidbDeadItems *d = vs->dead_items;

	Assert(d->num_items < d->max_items);
	ItemPointerSet(&d->items[d->num_items], blkno, off);
	d->num_items++;
}

/*
 * Mark the page all-visible (and all-frozen) if pr says so, or make sure
 * the map says nothing when the page is not.  Buffer locked exclusively.
 */
static void
update_vm(MinidbVacState *vs, BlockNumber blkno, Buffer buffer,
		  Buffer vmbuffer, PageResult *pr)
{
	Relation	rel = vs->rel;
	Page		page = BufferGetPage(buffer);
	uint8		status = visibilitymap_get_status(rel, blkno, &vmbuffer);

	if (pr->all_visible)
	{
		uint8		flags = VISIBILITYMAP_ALL_VISIBLE;

		if (pr->all_frozen)
			flags |= VISIBILITYMAP_ALL_FROZEN;
		if (!PageIsAllVisible(page) || (status & flags) != flags)
		{
			/*
			 * The map's WAL record replays as "set PD_ALL_VISIBLE on the
			 * page and the bits in the map".  Its cutoff xid (the newest
			 * head xmin, frozen in this pass or not) makes standbys cancel
			 * queries that do not see every row of the page yet: they must
			 * not skip the page's visibility checks.  With minidb's
			 * resource manager it is minidb's own VISIBLE record, whose
			 * replay masks our pages as ours; with generic WAL a generic
			 * record, without a horizon (minidb_wal_set_visible says why).
			 */
			if (!PageIsAllVisible(page) && status != 0)
				visibilitymap_clear(rel, blkno, vmbuffer,
									VISIBILITYMAP_VALID_BITS);
			if (minidb_custom_wal)
				minidb_log_visible(rel, buffer, vmbuffer, pr->cutoff, flags);
			else if (RelationNeedsWAL(rel))
				minidb_wal_set_visible(rel, buffer, vmbuffer, flags);
			else
			{
				PageSetAllVisible(page);
				MarkBufferDirty(buffer);
				visibilitymap_set(rel, blkno, buffer, InvalidXLogRecPtr,
								  vmbuffer, pr->cutoff, flags);
			}
			if (!(status & VISIBILITYMAP_ALL_VISIBLE))
				vs->vm_set_visible++;
			if (pr->all_frozen && !(status & VISIBILITYMAP_ALL_FROZEN))
			{
				vs->vm_set_frozen++;
				if (status & VISIBILITYMAP_ALL_VISIBLE)
					vs->vm_frozen_was_visible++;
			}
		}
	}
	else if (status != 0 && !PageIsAllVisible(page))
	{
		/* never true for pages we marked; heap repairs it the same way */
		visibilitymap_clear(rel, blkno, vmbuffer, VISIBILITYMAP_VALID_BITS);
	}
}

/* Fold a record's outcome into the counters and the new relfrozenxid */
static void
count_record(MinidbVacState *vs, RecordResult *r)
{
	if (r->damaged)
	{
		vs->damaged_records += 1;
		vs->unknown_xids = true;
		return;
	}
	vs->versions_pruned += r->npruned;
	vs->versions_frozen += r->nfrozen;
	vs->recently_dead += r->nrecently_dead;
	if (r->clear_locker)
		vs->lockers_cleared += 1;
	if (r->live)
		vs->live_records += 1;
	if (TransactionIdIsValid(r->oldest_xid) &&
		TransactionIdPrecedes(r->oldest_xid, vs->NewRelfrozenXid))
		vs->NewRelfrozenXid = r->oldest_xid;
	if (MultiXactIdIsValid(r->oldest_multi) &&
		MultiXactIdPrecedes(r->oldest_multi, vs->NewRelminMxid))
		vs->NewRelminMxid = r->oldest_multi;
}

/*
 * The row versions a dead record held, counted as heap counts the tuples
 * it removes: the data versions, not the tombstone or "moved" marker that
 * ended the row (heap has no tuple for it).
 */
static void
count_dead_versions(MinidbVacState *vs, RecordResult *r)
{
	vs->versions_dead += TransactionIdIsValid(r->dead_xid) ?
		Max(r->nversions - 1, 0) : r->nversions;
}

/*
 * Phase 1 for one page: prune, freeze, mark dead records, set the map.
 */
static void
scan_page(MinidbVacState *vs, BlockNumber blkno, Buffer *vmbuffer,
		  PageResult *pr)
{
	Relation	rel = vs->rel;
	bool		no_indexes = (vs->nindexes == 0);
	Buffer		buffer;
	Page		page;
	Size		freespace;
	int			ndeaditems = 0;
	double		frozen_before = vs->versions_frozen;

	visibilitymap_pin(rel, blkno, vmbuffer);
	buffer = ReadBufferExtended(rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
								vs->bstrategy);
	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	minidb_page_check(rel, buffer);
	page = BufferGetPage(buffer);
	vs->scanned_pages++;

	if (PageIsNew(page))
	{
		/* left by an extension that crashed; inserts initialize it */
		if (visibilitymap_get_status(rel, blkno, vmbuffer) != 0)
			visibilitymap_clear(rel, blkno, *vmbuffer,
								VISIBILITYMAP_VALID_BITS);
		UnlockReleaseBuffer(buffer);
		RecordPageWithFreeSpace(rel, blkno, free_on_empty_page());
		return;
	}

	analyze_page(vs, buffer, no_indexes, pr);
	if (PageIsAllVisible(page) && !pr->all_visible)
		pr->needs_write = true; /* the write clears the mark */

	/*
	 * Without minidb's resource manager hint bits reach the page only in
	 * WAL-logged changes (minidb_set_hint): a page about to be marked
	 * all-visible gets them in a write of its own, once.
	 */
	if (!minidb_custom_wal && RelationNeedsWAL(rel) && pr->all_visible &&
		pr->unhinted)
		pr->needs_write = true;

	if (pr->needs_write)
	{
		for (int i = 0; i < pr->plan.ndead; i++)
		{
			vs->records_dead += 1;
			count_dead_versions(vs, &pr->recs[pr->plan.dead[i]]);
		}
		for (int i = 0; i < pr->plan.nunused; i++)
		{
			if (ItemIdIsNormal(PageGetItemId(page, pr->plan.unused[i])))
			{
				vs->records_dead += 1;
				ndeaditems++;	/* no indexes: dead and gone at once */
				count_dead_versions(vs, &pr->recs[pr->plan.unused[i]]);
			}
			vs->records_removed += 1;
		}
		minidb_apply_plan(rel, buffer, &pr->plan);
	}
	if (!no_indexes)
	{
		/* the dead items, new or left by an earlier, interrupted VACUUM */
		OffsetNumber maxoff = minidb_page_maxoff(page);

		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
			if (ItemIdIsDead(PageGetItemId(page, off)) && !pr->recs[off].damaged)
			{
				dead_items_add(vs, blkno, off);
				ndeaditems++;
			}
	}
	if (ndeaditems > 0)
	{
		vs->lpdead_item_pages++;
		vs->lpdead_items += ndeaditems;
	}

	for (OffsetNumber off = FirstOffsetNumber;
		 off <= minidb_page_maxoff(page); off++)
		if ((ItemIdIsNormal(PageGetItemId(page, off)) || pr->recs[off].damaged) &&
			!pr->recs[off].dead)
		{
			if (pr->recs[off].damaged &&
				vs->ndamaged_tids < MINIDB_VAC_DAMAGED_SHOWN)
			{
				ItemPointerSet(&vs->damaged_tids[vs->ndamaged_tids],
							   blkno, off);
				vs->ndamaged_tids++;
			}
			count_record(vs, &pr->recs[off]);
		}
	if (vs->versions_frozen > frozen_before)
		vs->frozen_pages++;
	if (pr->hastup)
		vs->nonempty_pages = blkno + 1;

	update_vm(vs, blkno, buffer, *vmbuffer, pr);
	freespace = minidb_page_free_for_insert(page);
	UnlockReleaseBuffer(buffer);
	RecordPageWithFreeSpace(rel, blkno, freespace);
}

/* Phase 2: remove the collected TIDs from every index */
static void
vacuum_indexes(MinidbVacState *vs)
{
	vs->phase = VAC_PHASE_VACUUM_INDEX;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_VACUUM_INDEX);
	if (vs->pvs)
		minidb_parallel_bulkdel_all_indexes(vs->pvs, vs->dead_items,
											(long) vs->rel->rd_rel->reltuples,
											vs->num_index_scans);
	else
	{
		for (int i = 0; i < vs->nindexes; i++)
		{
			IndexVacuumInfo ivinfo;

			ivinfo.index = vs->indrels[i];
			minidb_ivinfo_set_heaprel(&ivinfo, vs->rel);
			ivinfo.analyze_only = false;
			ivinfo.report_progress = false;
			ivinfo.estimated_count = true;
			ivinfo.message_level = DEBUG2;
			ivinfo.num_heap_tuples = vs->rel->rd_rel->reltuples;
			ivinfo.strategy = vs->bstrategy;
			vs->indstats[i] = minidb_bulkdel_one_index(&ivinfo, vs->indstats[i],
													   vs->dead_items);
		}
	}
	vs->num_index_scans++;
	pgstat_progress_update_param(PROGRESS_VACUUM_NUM_INDEX_VACUUMS,
								 vs->num_index_scans);
}

/* Phase 3: the collected LP_DEAD items become LP_UNUSED */
static void
vacuum_heap(MinidbVacState *vs, PageResult *pr)
{
	MinidbDeadItems *d = vs->dead_items;
	Buffer		vmbuffer = InvalidBuffer;
	BlockNumber vacuumed = 0;
	int			i = 0;

	vs->phase = VAC_PHASE_VACUUM_HEAP;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_VACUUM_HEAP);
	while (i < d->num_items)
	{
		BlockNumber blkno = ItemPointerGetBlockNumber(&d->items[i]);
		Buffer		buffer;
		Page		page;
		Size		freespace;

		minidb_vacuum_delay_point();
		vs->blkno = blkno;
		visibilitymap_pin(vs->rel, blkno, &vmbuffer);
		buffer = ReadBufferExtended(vs->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
									vs->bstrategy);
		LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
		page = BufferGetPage(buffer);
		minidb_plan_init(&pr->plan);
		for (; i < d->num_items &&
			 ItemPointerGetBlockNumber(&d->items[i]) == blkno; i++)
		{
			OffsetNumber off = ItemPointerGetOffsetNumber(&d->items[i]);

			/* only VACUUM makes LP_DEAD items, and only one runs at a time */
			if (off > minidb_page_maxoff(page) ||
				!ItemIdIsDead(PageGetItemId(page, off)))
				elog(ERROR, "minidb VACUUM expected an LP_DEAD item at (%u,%u) of \"%s\"",
					 blkno, off, RelationGetRelationName(vs->rel));
			pr->plan.unused[pr->plan.nunused++] = off;
			vs->records_removed += 1;
		}
		pr->plan.flags |= MINIDB_PLAN_TRUNCATE_LP;
		minidb_apply_plan(vs->rel, buffer, &pr->plan);

		/* the page may be all-visible now */
		analyze_page(vs, buffer, false, pr);
		if (!pr->needs_write)
			update_vm(vs, blkno, buffer, vmbuffer, pr);
		freespace = minidb_page_free_for_insert(page);
		UnlockReleaseBuffer(buffer);
		RecordPageWithFreeSpace(vs->rel, blkno, freespace);
		pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_VACUUMED,
									 ++vacuumed);
	}
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	minidb_dead_items_reset(d);
	minidb_progress_dead_items(d, false);
}

/* Switch to the failsafe when relfrozenxid is dangerously old */
static void
check_failsafe(MinidbVacState *vs)
{
	if (vs->failsafe)
		return;
	if (minidb_vacuum_xid_failsafe_check(vs->rel->rd_rel->relfrozenxid,
										 vs->rel->rd_rel->relminmxid))
	{
		vs->failsafe = true;
		vs->do_index_vacuuming = false;
		vs->do_index_cleanup = false;
		vs->do_truncate = false;
		VacuumCostActive = false;
		VacuumCostBalance = 0;
		ereport(WARNING,
				(errmsg("bypassing nonessential maintenance of table \"%s.%s.%s\" as a failsafe after %d index scans",
						get_database_name(MyDatabaseId),
						vs->relnamespace, vs->relname, vs->num_index_scans),
				 errdetail("The table's relfrozenxid or relminmxid is too far in the past."),
				 errhint("Consider increasing configuration parameter \"maintenance_work_mem\" or \"autovacuum_work_mem\".\n"
						 "You might also need to consider other ways for VACUUM to keep up with the allocation of transaction IDs.")));
	}
}

/* Phases 2 and 3, when there is anything to do */
static void
vacuum_dead_items(MinidbVacState *vs, PageResult *pr)
{
	if (vs->dead_items->num_items == 0)
		return;
	check_failsafe(vs);
	if (!vs->do_index_vacuuming)
	{
		/* INDEX_CLEANUP off, or the failsafe: the items stay LP_DEAD */
		minidb_dead_items_reset(vs->dead_items);
		return;
	}
	vacuum_indexes(vs);
	vacuum_heap(vs, pr);
	vs->phase = VAC_PHASE_SCAN;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_SCAN_HEAP);
}

static bool
vm_skippable(MinidbVacState *vs, uint8 status)
{
	if (vs->aggressive)
		return (status & VISIBILITYMAP_ALL_FROZEN) != 0;
	return (status & VISIBILITYMAP_ALL_VISIBLE) != 0;
}

/* Phase 1 over the whole relation, with phases 2 and 3 when memory fills */
static void
scan_relation(MinidbVacState *vs)
{
	Buffer		vmbuffer = InvalidBuffer;
	PageResult *pr = palloc(sizeof(PageResult));
	BlockNumber blkno = 0;
	BlockNumber rel_pages = vs->rel_pages;

	vs->phase = VAC_PHASE_SCAN;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_SCAN_HEAP);
	pgstat_progress_update_param(PROGRESS_VACUUM_TOTAL_HEAP_BLKS, rel_pages);
	minidb_progress_dead_items(vs->dead_items, true);

	while (blkno < rel_pages)
	{
		BlockNumber end = blkno;
		bool		unfrozen = false;

		/*
		 * Skip runs of pages the map lets us skip, as heap does: only runs
		 * of SKIP_PAGES_THRESHOLD or more (short ones do not pay for the
		 * lost readahead), and never the last page (so that truncation
		 * knows whether it holds anything).
		 */
		if (vs->skipwithvm)
		{
			while (end < rel_pages - 1)
			{
				uint8		status = visibilitymap_get_status(vs->rel, end,
															  &vmbuffer);

				if (!vm_skippable(vs, status))
					break;
				if (!(status & VISIBILITYMAP_ALL_FROZEN))
					unfrozen = true;
				end++;
			}
			if (end - blkno >= SKIP_PAGES_THRESHOLD)
			{
				if (unfrozen)
					vs->skippedallvis = true;
				for (BlockNumber b = blkno; b < end; b++)
				{
					if (VM_ALL_FROZEN(vs->rel, b, &vmbuffer))
						vs->skipped_frozen++;
					else
						vs->skipped_allvis++;
				}
				/*
				 * nonempty_pages is left alone, as heap does: truncation
				 * checks the pages at the end again before it cuts them.
				 */
				blkno = end;
				pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED,
											 blkno);
				continue;
			}
		}

		/* scan blkno .. end (end is not skippable, or the last page) */
		for (; blkno <= end && blkno < rel_pages; blkno++)
		{
			minidb_vacuum_delay_point();
			vs->blkno = blkno;
			if (vs->dead_items->max_items - vs->dead_items->num_items <
				MaxHeapTuplesPerPage)
			{
				if (BufferIsValid(vmbuffer))
				{
					ReleaseBuffer(vmbuffer);
					vmbuffer = InvalidBuffer;
				}
				vacuum_dead_items(vs, pr);
			}
			scan_page(vs, blkno, &vmbuffer, pr);
			pgstat_progress_update_param(PROGRESS_VACUUM_HEAP_BLKS_SCANNED,
										 blkno + 1);
			minidb_progress_dead_items(vs->dead_items, false);
		}
	}
	if (BufferIsValid(vmbuffer))
		ReleaseBuffer(vmbuffer);
	vacuum_dead_items(vs, pr);
	pfree(pr);
}

/* Phase 4a: index cleanup */
static void
cleanup_indexes(MinidbVacState *vs, double reltuples, bool estimated)
{
	vs->phase = VAC_PHASE_INDEX_CLEANUP;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_INDEX_CLEANUP);
	if (vs->pvs)
	{
		parallel_vacuum_cleanup_all_indexes(vs->pvs, (long) reltuples,
											vs->num_index_scans, estimated);
		return;
	}
	for (int i = 0; i < vs->nindexes; i++)
	{
		IndexVacuumInfo ivinfo;

		ivinfo.index = vs->indrels[i];
		minidb_ivinfo_set_heaprel(&ivinfo, vs->rel);
		ivinfo.analyze_only = false;
		ivinfo.report_progress = false;
		ivinfo.estimated_count = estimated;
		ivinfo.message_level = DEBUG2;
		ivinfo.num_heap_tuples = reltuples;
		ivinfo.strategy = vs->bstrategy;
		vs->indstats[i] = vac_cleanup_one_index(&ivinfo, vs->indstats[i]);
	}
}

/*
 * The end of parallel mode: the index statistics the workers kept in
 * shared memory come back to vs->indstats (heap's dead_items_cleanup).
 * Before any catalog update, which parallel mode forbids.
 */
static void
end_parallel(MinidbVacState *vs)
{
	if (vs->pvs == NULL)
		return;
	parallel_vacuum_end(vs->pvs, vs->indstats);
	vs->pvs = NULL;
	vs->dead_items = minidb_dead_items_end_parallel(vs->dead_items);
}

/* The indexes' pg_class statistics, after a cleanup that counted */
static void
update_index_stats(MinidbVacState *vs)
{
	for (int i = 0; i < vs->nindexes; i++)
	{
		IndexBulkDeleteResult *istat = vs->indstats[i];

		if (istat == NULL || istat->estimated_count)
			continue;
		minidb_vac_update_relstats(vs->indrels[i], istat->num_pages,
								   istat->num_index_tuples, 0, 0, false,
								   InvalidTransactionId, InvalidMultiXactId,
								   NULL, NULL, false);
	}
}

/* ----------------------------------------------------------------
 * Phase 4b: truncating empty pages at the end (heap's lazy_truncate_heap)
 * ----------------------------------------------------------------
 */
static bool
should_truncate(MinidbVacState *vs)
{
	BlockNumber freeable;

	if (!vs->do_truncate || vs->failsafe ||
		minidb_old_snapshot_threshold_enabled())
		return false;
	freeable = vs->rel_pages - vs->nonempty_pages;
	return freeable > 0 &&
		(freeable >= REL_TRUNCATE_MINIMUM ||
		 freeable >= vs->rel_pages / REL_TRUNCATE_FRACTION);
}

/* Pages from the end that hold no used line pointer, checked backwards */
static BlockNumber
count_nondeletable_pages(MinidbVacState *vs, bool *lock_waiter_detected)
{
	BlockNumber blkno = vs->rel_pages;
	instr_time	starttime;

	INSTR_TIME_SET_CURRENT(starttime);
	while (blkno > vs->nonempty_pages)
	{
		Buffer		buffer;
		Page		page;
		bool		hastup = false;

		if ((blkno % 32) == 0)
		{
			instr_time	now;
			instr_time	elapsed;

			INSTR_TIME_SET_CURRENT(now);
			elapsed = now;
			INSTR_TIME_SUBTRACT(elapsed, starttime);
			if ((INSTR_TIME_GET_MICROSEC(elapsed) / 1000) >=
				VACUUM_TRUNCATE_LOCK_CHECK_INTERVAL)
			{
				if (LockHasWaitersRelation(vs->rel, AccessExclusiveLock))
				{
					ereport(vs->verbose ? INFO : DEBUG2,
							(errmsg("table \"%s\": suspending truncate due to conflicting lock request",
									vs->relname)));
					*lock_waiter_detected = true;
					return blkno;
				}
				starttime = now;
			}
		}
		CHECK_FOR_INTERRUPTS();
		blkno--;
		buffer = ReadBufferExtended(vs->rel, MAIN_FORKNUM, blkno, RBM_NORMAL,
									vs->bstrategy);
		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		page = BufferGetPage(buffer);
		if (!PageIsNew(page) && !PageIsEmpty(page))
		{
			OffsetNumber maxoff = minidb_page_maxoff(page);

			/* even LP_DEAD keeps the page: its index entries may remain */
			for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
				if (ItemIdIsUsed(PageGetItemId(page, off)))
				{
					hastup = true;
					break;
				}
		}
		UnlockReleaseBuffer(buffer);
		if (hastup)
			return blkno + 1;
	}
	return vs->nonempty_pages;
}

static void
truncate_relation(MinidbVacState *vs)
{
	BlockNumber orig_rel_pages = vs->rel_pages;
	BlockNumber new_rel_pages;
	bool		lock_waiter_detected;

	vs->phase = VAC_PHASE_TRUNCATE;
	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_TRUNCATE);
	do
	{
		int			lock_retry = 0;

		/*
		 * AccessExclusiveLock without waiting for it, as heap: waiting
		 * could block everybody behind us, or deadlock.
		 */
		lock_waiter_detected = false;
		while (!ConditionalLockRelation(vs->rel, AccessExclusiveLock))
		{
			CHECK_FOR_INTERRUPTS();
			if (++lock_retry > (VACUUM_TRUNCATE_LOCK_TIMEOUT /
								VACUUM_TRUNCATE_LOCK_WAIT_INTERVAL))
			{
				ereport(vs->verbose ? INFO : DEBUG2,
						(errmsg("\"%s\": stopping truncate due to conflicting lock request",
								vs->relname)));
				return;
			}
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 VACUUM_TRUNCATE_LOCK_WAIT_INTERVAL,
							 WAIT_EVENT_VACUUM_TRUNCATE);
			ResetLatch(MyLatch);
		}

		/* grown meanwhile: the new pages presumably hold records */
		new_rel_pages = RelationGetNumberOfBlocks(vs->rel);
		if (new_rel_pages != orig_rel_pages)
		{
			UnlockRelation(vs->rel, AccessExclusiveLock);
			return;
		}
		new_rel_pages = count_nondeletable_pages(vs, &lock_waiter_detected);
		if (new_rel_pages >= orig_rel_pages)
		{
			UnlockRelation(vs->rel, AccessExclusiveLock);
			return;
		}
		RelationTruncate(vs->rel, new_rel_pages);
		UnlockRelation(vs->rel, AccessExclusiveLock);

		vs->removed_pages += orig_rel_pages - new_rel_pages;
		vs->rel_pages = new_rel_pages;
		ereport(vs->verbose ? INFO : DEBUG2,
				(errmsg("table \"%s\": truncated %u to %u pages",
						vs->relname, orig_rel_pages, new_rel_pages)));
		orig_rel_pages = new_rel_pages;
	} while (new_rel_pages > vs->nonempty_pages && lock_waiter_detected);
}

/* ----------------------------------------------------------------
 * The entry point
 * ----------------------------------------------------------------
 */
static void
vacuum_error_callback(void *arg)
{
	MinidbVacState *vs = (MinidbVacState *) arg;

	switch (vs->phase)
	{
		case VAC_PHASE_SCAN:
			if (BlockNumberIsValid(vs->blkno))
				errcontext("while scanning block %u of minidb relation \"%s.%s\"",
						   vs->blkno, vs->relnamespace, vs->relname);
			break;
		case VAC_PHASE_VACUUM_HEAP:
			if (BlockNumberIsValid(vs->blkno))
				errcontext("while vacuuming block %u of minidb relation \"%s.%s\"",
						   vs->blkno, vs->relnamespace, vs->relname);
			break;
		case VAC_PHASE_VACUUM_INDEX:
			errcontext("while vacuuming indexes of minidb relation \"%s.%s\"",
					   vs->relnamespace, vs->relname);
			break;
		case VAC_PHASE_INDEX_CLEANUP:
			errcontext("while cleaning up indexes of minidb relation \"%s.%s\"",
					   vs->relnamespace, vs->relname);
			break;
		case VAC_PHASE_TRUNCATE:
			errcontext("while truncating minidb relation \"%s.%s\" to %u blocks",
					   vs->relnamespace, vs->relname, vs->nonempty_pages);
			break;
		case VAC_PHASE_UNKNOWN:
			break;
	}
}

/*
 * The dead items' array, sized as heap sizes it.  Where heap vacuums
 * indexes in parallel (vacuumlazy.c's dead_items_alloc: PARALLEL not 0,
 * which autovacuum always is, at least two indexes, index vacuuming on,
 * not a temporary table), so does minidb, through the server's parallel
 * vacuum (vacuumparallel.c): its workers run index_bulk_delete and
 * index_vacuum_cleanup on the indexes with the dead items in shared
 * memory, which is where the array lives then.  The scan of the table
 * stays in this process, as heap's does.  parallel_vacuum_init decides
 * how many workers (none, and so no parallel mode, when the indexes are
 * smaller than min_parallel_index_scan_size or workers are not allowed).
 */
static void
dead_items_alloc(MinidbVacState *vs, int nworkers)
{
	int			vac_work_mem = AmAutoVacuumWorkerProcess() &&
		autovacuum_work_mem != -1 ? autovacuum_work_mem : maintenance_work_mem;
	int64		max_items;

	if (vs->nindexes > 0)
	{
		max_items = MINIDB_MAXDEADITEMS(vac_work_mem * 1024L);
		max_items = Min(max_items, INT_MAX);
		max_items = Min(max_items, MINIDB_MAXDEADITEMS(MaxAllocSize));
		if ((BlockNumber) (max_items / MaxHeapTuplesPerPage) > vs->rel_pages)
			max_items = (int64) vs->rel_pages * MaxHeapTuplesPerPage;
		max_items = Max(max_items, MaxHeapTuplesPerPage);
	}
	else
		max_items = MaxHeapTuplesPerPage;	/* one pass, nothing kept */

	if (nworkers >= 0 && vs->nindexes > 1 && vs->do_index_vacuuming)
	{
		if (RelationUsesLocalBuffers(vs->rel))
		{
			/* heap's warning, when PARALLEL n was asked for */
			if (nworkers > 0)
				ereport(WARNING,
						(errmsg("disabling parallel option of vacuum on \"%s\" --- cannot vacuum temporary tables in parallel",
								vs->relname)));
		}
		else
			vs->pvs = minidb_parallel_vacuum_init(vs->rel, vs->indrels,
												  vs->nindexes, nworkers,
												  (int) max_items, vac_work_mem,
												  vs->verbose ? INFO : DEBUG2,
												  vs->bstrategy);
		if (vs->pvs)
		{
			vs->dead_items = minidb_dead_items_parallel(vs->pvs,
														(int) max_items);
			return;
		}
	}
	vs->dead_items = minidb_dead_items_create((int) max_items);
}

/*
 * The report of VACUUM (VERBOSE) and of autovacuum's log_autovacuum_min_duration:
 * heap's lines in heap's words (heap_vacuum_rel in vacuumlazy.c), so that log
 * analyzers and greps see minidb tables as they see heap's -- a "tuple" is a
 * row version, as on heap: "removed" counts the versions pruned and those
 * of the records that died (not the tombstone or marker that ended a row),
 * "remain" the live rows and the versions not yet removable -- then
 * minidb's own lines, each starting with "minidb".
 */
static void
report(MinidbVacState *vs, struct VacuumParams *params, TimestampTz starttime,
	   PGRUsage *ru0, PgStat_Counter startreadtime,
	   PgStat_Counter startwritetime, WalUsage *startwalusage,
	   BufferUsage *startbufferusage, BlockNumber orig_rel_pages,
	   double new_rel_tuples, BlockNumber new_rel_allvisible,
	   BlockNumber new_rel_allfrozen, TransactionId old_relfrozenxid,
	   MultiXactId old_relminmxid, bool frozenxid_updated,
	   bool minmulti_updated)
{
	long		secs_dur;
	int			usecs_dur;
	WalUsage	walusage;
	BufferUsage bufferusage;
	StringInfoData buf;
	const char *msgfmt;
	double		read_rate = 0;
	double		write_rate = 0;

	TimestampDifference(starttime, GetCurrentTimestamp(), &secs_dur, &usecs_dur);
	memset(&walusage, 0, sizeof(WalUsage));
	WalUsageAccumDiff(&walusage, &pgWalUsage, startwalusage);
	memset(&bufferusage, 0, sizeof(BufferUsage));
	BufferUsageAccumDiff(&bufferusage, &pgBufferUsage, startbufferusage);

	initStringInfo(&buf);
	if (vs->verbose)
		msgfmt = _("finished vacuuming \"%s.%s.%s\": index scans: %d\n");
	else if (params->is_wraparound)
		msgfmt = vs->aggressive ?
			_("automatic aggressive vacuum to prevent wraparound of table \"%s.%s.%s\": index scans: %d\n") :
			_("automatic vacuum to prevent wraparound of table \"%s.%s.%s\": index scans: %d\n");
	else
		msgfmt = vs->aggressive ?
			_("automatic aggressive vacuum of table \"%s.%s.%s\": index scans: %d\n") :
			_("automatic vacuum of table \"%s.%s.%s\": index scans: %d\n");
	appendStringInfo(&buf, msgfmt, get_database_name(MyDatabaseId),
					 vs->relnamespace, vs->relname, vs->num_index_scans);
	appendStringInfo(&buf, _("pages: %u removed, %u remain, %u scanned (%.2f%% of total)"),
					 vs->removed_pages, vs->rel_pages, vs->scanned_pages,
					 orig_rel_pages == 0 ? 100.0 :
					 100.0 * vs->scanned_pages / orig_rel_pages);
	if (MINIDB_VACUUM_REPORT_EAGER)
		appendStringInfo(&buf, _(", %u eagerly scanned"), 0);	/* never */
	appendStringInfoChar(&buf, '\n');
	appendStringInfo(&buf, _("tuples: %lld removed, %lld remain, %lld are dead but not yet removable\n"),
					 (long long) (vs->versions_pruned + vs->versions_dead),
					 (long long) new_rel_tuples,
					 (long long) vs->recently_dead);
	appendStringInfo(&buf, _("removable cutoff: %u, which was %d XIDs old when operation ended\n"),
					 vs->OldestXmin,
					 (int32) (ReadNextTransactionId() - vs->OldestXmin));
	if (frozenxid_updated)
		appendStringInfo(&buf, _("new relfrozenxid: %u, which is %d XIDs ahead of previous value\n"),
						 vs->NewRelfrozenXid,
						 (int32) (vs->NewRelfrozenXid - old_relfrozenxid));
	if (minmulti_updated)
		appendStringInfo(&buf, _("new relminmxid: %u, which is %d MXIDs ahead of previous value\n"),
						 vs->NewRelminMxid,
						 (int32) (vs->NewRelminMxid - old_relminmxid));
	if (MINIDB_VACUUM_REPORT_FROZEN)
		appendStringInfo(&buf, _("frozen: %u pages from table (%.2f%% of total) had %lld tuples frozen\n"),
						 vs->frozen_pages,
						 orig_rel_pages == 0 ? 100.0 :
						 100.0 * vs->frozen_pages / orig_rel_pages,
						 (long long) vs->versions_frozen);
	if (MINIDB_VACUUM_REPORT_VM)
		appendStringInfo(&buf, _("visibility map: %u pages set all-visible, %u pages set all-frozen (%u were all-visible)\n"),
						 vs->vm_set_visible, vs->vm_set_frozen,
						 vs->vm_frozen_was_visible);
	if (vs->do_index_vacuuming)
	{
		if (vs->nindexes == 0 || vs->num_index_scans == 0)
			appendStringInfoString(&buf, _("index scan not needed: "));
		else
			appendStringInfoString(&buf, _("index scan needed: "));
		msgfmt = _("%u pages from table (%.2f%% of total) had %lld dead item identifiers removed\n");
	}
	else
	{
		if (!vs->failsafe)
			appendStringInfoString(&buf, _("index scan bypassed: "));
		else
			appendStringInfoString(&buf, _("index scan bypassed by failsafe: "));
		msgfmt = _("%u pages from table (%.2f%% of total) have %lld dead item identifiers\n");
	}
	appendStringInfo(&buf, msgfmt, vs->lpdead_item_pages,
					 orig_rel_pages == 0 ? 100.0 :
					 100.0 * vs->lpdead_item_pages / orig_rel_pages,
					 (long long) vs->lpdead_items);
	for (int i = 0; i < vs->nindexes; i++)
	{
		IndexBulkDeleteResult *istat = vs->indstats[i];

		if (!istat)
			continue;
		appendStringInfo(&buf, _("index \"%s\": pages: %u in total, %u newly deleted, %u currently deleted, %u reusable\n"),
						 vs->indnames[i], istat->num_pages,
						 istat->pages_newly_deleted, istat->pages_deleted,
						 istat->pages_free);
	}
	if (track_io_timing)
		appendStringInfo(&buf, _("I/O timings: read: %.3f ms, write: %.3f ms\n"),
						 (double) (pgStatBlockReadTime - startreadtime) / 1000,
						 (double) (pgStatBlockWriteTime - startwritetime) / 1000);
	if (secs_dur > 0 || usecs_dur > 0)
	{
		read_rate = (double) BLCKSZ * (bufferusage.shared_blks_read + bufferusage.local_blks_read) /
			(1024 * 1024) / (secs_dur + usecs_dur / 1000000.0);
		write_rate = (double) BLCKSZ * (bufferusage.shared_blks_dirtied + bufferusage.local_blks_dirtied) /
			(1024 * 1024) / (secs_dur + usecs_dur / 1000000.0);
	}
	appendStringInfo(&buf, _("avg read rate: %.3f MB/s, avg write rate: %.3f MB/s\n"),
					 read_rate, write_rate);
	appendStringInfo(&buf, MINIDB_VACUUM_REPORT_READS ?
					 _("buffer usage: %lld hits, %lld reads, %lld dirtied\n") :
					 _("buffer usage: %lld hits, %lld misses, %lld dirtied\n"),
					 (long long) (bufferusage.shared_blks_hit + bufferusage.local_blks_hit),
					 (long long) (bufferusage.shared_blks_read + bufferusage.local_blks_read),
					 (long long) (bufferusage.shared_blks_dirtied + bufferusage.local_blks_dirtied));
	appendStringInfo(&buf, _("WAL usage: %lld records, %lld full page images, %llu bytes"),
					 (long long) walusage.wal_records,
					 (long long) walusage.wal_fpi,
					 (unsigned long long) walusage.wal_bytes);
	if (MINIDB_VACUUM_REPORT_WAL_BUFFERS_FULL)
		appendStringInfo(&buf, _(", %lld buffers full"),
						 (long long) minidb_wal_buffers_full(&walusage));
	appendStringInfoChar(&buf, '\n');
	appendStringInfo(&buf, _("system usage: %s"), pg_rusage_show(ru0));

	/* minidb's own lines */
	appendStringInfo(&buf, "\nminidb records: %.0f live, %.0f dead found, %.0f removed; versions: %.0f pruned, %.0f frozen; row lockers cleared: %.0f",
					 vs->live_records, vs->records_dead, vs->records_removed,
					 vs->versions_pruned, vs->versions_frozen,
					 vs->lockers_cleared);
	appendStringInfo(&buf, "\nminidb pages: %u skipped all-visible, %u skipped all-frozen; visibility map: %u pages set all-visible, %u set all-frozen; %u all-visible, %u all-frozen in total",
					 vs->skipped_allvis, vs->skipped_frozen,
					 vs->vm_set_visible, vs->vm_set_frozen,
					 new_rel_allvisible, new_rel_allfrozen);
	if (vs->damaged_records > 0)
	{
		appendStringInfo(&buf, "\nminidb damaged records left alone: %.0f, at",
						 vs->damaged_records);
		for (int i = 0; i < vs->ndamaged_tids; i++)
			appendStringInfo(&buf, "%s (%u,%u)", i > 0 ? "," : "",
							 ItemPointerGetBlockNumber(&vs->damaged_tids[i]),
							 ItemPointerGetOffsetNumber(&vs->damaged_tids[i]));
		if (vs->damaged_records > vs->ndamaged_tids)
			appendStringInfoString(&buf, ", ...");
		appendStringInfoString(&buf, " (minidb_force_kill makes them dead)");
	}
	ereport(vs->verbose ? INFO : LOG,
			(errmsg_internal("%s", buf.data)));
	pfree(buf.data);
}

void
minidb_relation_vacuum(Relation rel, struct VacuumParams *params,
					   BufferAccessStrategy bstrategy)
{
	MinidbVacState *vs = palloc0(sizeof(MinidbVacState));
	ErrorContextCallback errcallback;
	TimestampTz starttime = GetCurrentTimestamp();
	BlockNumber orig_rel_pages;
	BlockNumber new_rel_allvisible;
	BlockNumber new_rel_allfrozen;
	TransactionId old_relfrozenxid = rel->rd_rel->relfrozenxid;
	MultiXactId old_relminmxid = rel->rd_rel->relminmxid;
	double		new_live;
	bool		frozenxid_updated = false;
	bool		minmulti_updated = false;
	bool		instrument;
	PGRUsage	ru0;
	PgStat_Counter startreadtime = 0;
	PgStat_Counter startwritetime = 0;
	WalUsage	startwalusage = pgWalUsage;
	BufferUsage startbufferusage = pgBufferUsage;

	vs->rel = rel;
	vs->relname = pstrdup(RelationGetRelationName(rel));
	vs->relnamespace = get_namespace_name(RelationGetNamespace(rel));
	vs->bstrategy = bstrategy;
	vs->verbose = (params->options & VACOPT_VERBOSE) != 0;
	instrument = vs->verbose ||
		(AmAutoVacuumWorkerProcess() && params->log_min_duration >= 0);
	if (instrument)
	{
		pg_rusage_init(&ru0);
		if (track_io_timing)
		{
			startreadtime = pgStatBlockReadTime;
			startwritetime = pgStatBlockWriteTime;
		}
	}

	pgstat_progress_start_command(PROGRESS_COMMAND_VACUUM,
								  RelationGetRelid(rel));

	vs->aggressive = minidb_vacuum_get_cutoffs(rel, params,
											   &vs->OldestXmin, &vs->OldestMxact,
											   &vs->FreezeLimit,
											   &vs->MultiXactCutoff);
	vs->skipwithvm = true;
	if (params->options & VACOPT_DISABLE_PAGE_SKIPPING)
	{
		vs->aggressive = true;
		vs->skipwithvm = false;
	}
	vs->vistest = GlobalVisTestFor(rel);
	vs->NewRelfrozenXid = vs->OldestXmin;
	vs->NewRelminMxid = vs->OldestMxact;
	vs->do_index_vacuuming = (params->index_cleanup != VACOPTVALUE_DISABLED);
	vs->do_index_cleanup = (params->index_cleanup != VACOPTVALUE_DISABLED);
	vs->do_truncate = (params->truncate != VACOPTVALUE_DISABLED);
	vs->blkno = InvalidBlockNumber;

	errcallback.callback = vacuum_error_callback;
	errcallback.arg = vs;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;

	/* heap's words (vacuumlazy.c), so that logs read the same */
	if (vs->verbose)
	{
		if (vs->aggressive)
			ereport(INFO,
					(errmsg("aggressively vacuuming \"%s.%s.%s\"",
							get_database_name(MyDatabaseId),
							vs->relnamespace, vs->relname)));
		else
			ereport(INFO,
					(errmsg("vacuuming \"%s.%s.%s\"",
							get_database_name(MyDatabaseId),
							vs->relnamespace, vs->relname)));
	}

	vac_open_indexes(rel, RowExclusiveLock, &vs->nindexes, &vs->indrels);
	vs->indstats = palloc0(sizeof(IndexBulkDeleteResult *) *
						   Max(vs->nindexes, 1));
	if (instrument && vs->nindexes > 0)
	{
		vs->indnames = palloc(sizeof(char *) * vs->nindexes);
		for (int i = 0; i < vs->nindexes; i++)
			vs->indnames[i] = pstrdup(RelationGetRelationName(vs->indrels[i]));
	}

	/* the page count after the cutoffs: no page we miss holds older xids */
	vs->rel_pages = orig_rel_pages = RelationGetNumberOfBlocks(rel);
	check_failsafe(vs);
	dead_items_alloc(vs, params->nworkers);

	scan_relation(vs);

	new_live = vac_estimate_reltuples(rel, vs->rel_pages, vs->scanned_pages,
									  vs->live_records);
	if (vs->do_index_cleanup && vs->nindexes > 0)
		cleanup_indexes(vs, new_live, vs->scanned_pages < vs->rel_pages);
	end_parallel(vs);
	if (vs->do_index_cleanup)
		update_index_stats(vs);
	vac_close_indexes(vs->nindexes, vs->indrels, NoLock);

	if (should_truncate(vs))
		truncate_relation(vs);
	vs->phase = VAC_PHASE_UNKNOWN;
	FreeSpaceMapVacuum(rel);

	pgstat_progress_update_param(PROGRESS_VACUUM_PHASE,
								 PROGRESS_VACUUM_PHASE_FINAL_CLEANUP);

	/*
	 * relfrozenxid: the oldest unfrozen xid left on the pages we scanned,
	 * valid for the whole table only when every page we skipped was
	 * all-frozen and no record was too damaged to read.
	 */
	if (vs->skippedallvis || vs->unknown_xids)
	{
		vs->NewRelfrozenXid = InvalidTransactionId;
		vs->NewRelminMxid = InvalidMultiXactId;
	}
	visibilitymap_count(rel, &new_rel_allvisible, &new_rel_allfrozen);
	if (new_rel_allvisible > vs->rel_pages)
		new_rel_allvisible = vs->rel_pages;
	minidb_vac_update_relstats(rel, vs->rel_pages, new_live,
							   new_rel_allvisible, new_rel_allfrozen,
							   vs->nindexes > 0, vs->NewRelfrozenXid,
							   vs->NewRelminMxid, &frozenxid_updated,
							   &minmulti_updated, false);
	minidb_pgstat_report_vacuum(RelationGetRelid(rel), rel->rd_rel->relisshared,
								(PgStat_Counter) Max(new_live, 0),
								(PgStat_Counter) vs->recently_dead, starttime);
	pgstat_progress_end_command();
	error_context_stack = errcallback.previous;

	if (instrument &&
		(vs->verbose || params->log_min_duration == 0 ||
		 TimestampDifferenceExceeds(starttime, GetCurrentTimestamp(),
									params->log_min_duration)))
		report(vs, params, starttime, &ru0, startreadtime, startwritetime,
			   &startwalusage, &startbufferusage, orig_rel_pages,
			   Max(new_live, 0) + vs->recently_dead, new_rel_allvisible,
			   new_rel_allfrozen, old_relfrozenxid, old_relminmxid,
			   frozenxid_updated, minmulti_updated);
	if (vs->dead_items)
	{
		minidb_dead_items_reset(vs->dead_items);
		pfree(vs->dead_items);
	}
	pfree(vs->indstats);
	pfree(vs);
}
