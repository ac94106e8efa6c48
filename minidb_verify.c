/*-------------------------------------------------------------------------
 *
 * minidb_verify.c
 *	  minidb_verify(rel regclass, check_toast bool, check_indexes bool):
 *	  amcheck's verify_heapam for minidb tables (verify_heapam, pgstattuple
 *	  and pg_surgery refuse tables of other access methods).
 *
 * One row per problem, (blkno, offnum, version, field, msg), never stopping
 * at the first.  What is checked, page by page under a share lock:
 *
 *	- the page: a minidb page (special area, magic), pd_lower/pd_upper,
 *	  at most MaxHeapTuplesPerPage line pointers (minidb_page_damage);
 *	  a page the server refuses to read (a bad header or checksum) is one
 *	  row and the check goes on with the next page;
 *	- each line pointer: inside the page's tuple space, aligned, long enough
 *	  (minidb_page_item); no two records overlapping;
 *	- each record: every header field of the record and of every version,
 *	  and the tail (minidb_record_validate); the reference walker
 *	  (minidb_chain_decode_all), the iterator and the fast walker
 *	  (minidb_chain_find_visible) agree on every version, its place and its
 *	  bytes;
 *	- each version's xmin, unless frozen: within relfrozenxid .. the next
 *	  transaction ID, and its hint bits as the commit log says;
 *	- each data version's attributes: no more than the table has, laid out
 *	  exactly over its data (as amcheck checks heap's), external values
 *	  carrying on-disk TOAST pointers; its data flags as the data says;
 *	- the row lockers: a lock mode needs a valid locker and a locker a mode;
 *	  a locker xid within relfrozenxid .. the next transaction ID, a
 *	  multixact within relminmxid .. the next multixact, its members
 *	  assigned transactions holding lock modes;
 *	- a "moved" marker's successor TID: a record whose oldest version was
 *	  made by the marker's own transaction (checked while that transaction
 *	  is not yet behind every snapshot: after that, VACUUM may have removed
 *	  both);
 *	- with check_toast: every external value of every version some snapshot
 *	  may still read is fetched and decompressed;
 *	- with check_indexes (btree indexes, as amcheck's heapallindexed): every
 *	  row visible to the transaction's snapshot has an entry in every index
 *	  (whose predicate it satisfies) with the key its visible version gives,
 *	  and no entry points at an unused line pointer, past the end of the
 *	  table or into an empty page.
 *
 * Buffer locks are let go before anything reads another page, detoasts a
 * value or probes an index.  Each page is checked inside a subtransaction,
 * so that an error raised for damage (XX001, XX002, an internal error,
 * a file error) becomes a row and the check goes on; a cancel still
 * cancels.  CHECK_FOR_INTERRUPTS on every page and every 1024 index entries.
 *
 * Who may run it: superusers, the table's owner, and members of
 * pg_stat_scan_tables (the role PostgreSQL's pgstattuple and pg_visibility
 * grant theirs to), checked before the table is locked.  It takes
 * AccessShareLock on the table (and its indexes): writers and VACUUM go on
 * while it runs.  The rows it returns name places and transaction IDs,
 * never data.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/detoast.h"
#include "access/genam.h"
#include "access/multixact.h"
#include "access/relation.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_am.h"
#include "catalog/pg_authid.h"
#include "common/hashfn.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "chain.h"
#include "minidb_am.h"
#include "minidb_page.h"
#include "minidb_tuple.h"
#include "minidb_visibility.h"

PG_FUNCTION_INFO_V1(minidb_verify);

#define VERIFY_NCOLS	5

/* One index entry, as the index scan found it */
typedef struct IndexEntry
{
	ItemPointerData tid;
	uint8		state;			/* ENTRY_* */
	uint64		hash;			/* of the entry's values */
} IndexEntry;

#define ENTRY_UNSEEN	0		/* no visible row claimed it (yet) */
#define ENTRY_MATCHED	1		/* a visible row has this key */
#define ENTRY_REPORTED	2		/* reported as not matching its row */

typedef struct VerifyIndex
{
	Relation	index;
	IndexInfo  *info;
	ExprState  *predicate;
	IndexEntry *entries;
	int64		nentries;
} VerifyIndex;

/* What the per-page work leaves for after the page's lock */
typedef struct Successor
{
	OffsetNumber off;
	TransactionId xmin;
	const char *field;			/* the successor's, as the format names it */
	ItemPointerData successor;
} Successor;

typedef struct LaterVersion
{
	OffsetNumber off;
	int			version;
	HeapTuple	tuple;
} LaterVersion;

typedef struct VerifyState
{
	Relation	rel;
	TupleDesc	tupdesc;
	ReturnSetInfo *rsinfo;
	Snapshot	snapshot;
	GlobalVisState *vistest;
	BufferAccessStrategy strategy;
	bool		check_toast;
	bool		check_indexes;
	MemoryContext page_cxt;		/* reset after every page */
	ResourceOwner owner;

	/* transaction ID and multixact bounds, refreshed when out of range */
	TransactionId relfrozenxid;
	TransactionId next_xid;
	TransactionId oldest_xid;
	MultiXactId relminmxid;
	MultiXactId next_multi;
	MultiXactId oldest_multi;
	TransactionId cached_xid;	/* last commit log lookup */
	int			cached_status;

	/* the indexes (check_indexes) */
	VerifyIndex *indexes;
	int			nindexes;
	/* blocks whose check failed with an error, ascending (check_indexes) */
	BlockNumber *failed;
	int			nfailed;
	int			maxfailed;
	EState	   *estate;
	TupleTableSlot *slot;

	/* this page's */
	BlockNumber blkno;
	List	   *problems;
	List	   *successors;
	List	   *toast_versions;
	List	   *visible_rows;
} VerifyState;

typedef struct Problem
{
	BlockNumber blkno;
	int			offnum;			/* -1: NULL */
	int			version;		/* -1: NULL */
	const char *field;
	char	   *msg;
} Problem;

/* What the commit log says of a version's creator */
#define XS_COMMITTED	0
#define XS_ABORTED		1
#define XS_IN_PROGRESS	2
#define XS_UNKNOWN		3		/* out of bounds: reported */

static void problem(VerifyState *vs, int offnum, int version,
					const char *field, const char *fmt,...)
			pg_attribute_printf(5, 6);

/* ----------------------------------------------------------------
 * Rows
 * ----------------------------------------------------------------
 */
static void
problem(VerifyState *vs, int offnum, int version, const char *field,
		const char *fmt,...)
{
	MemoryContext old = MemoryContextSwitchTo(vs->page_cxt);
	Problem    *p = palloc(sizeof(Problem));
	StringInfoData buf;

	initStringInfo(&buf);
	for (;;)
	{
		va_list		args;
		int			needed;

		va_start(args, fmt);
		needed = appendStringInfoVA(&buf, fmt, args);
		va_end(args);
		if (needed == 0)
			break;
		enlargeStringInfo(&buf, needed);
	}
	p->blkno = vs->blkno;
	p->offnum = offnum;
	p->version = version;
	p->field = pstrdup(field);
	p->msg = buf.data;
	vs->problems = lappend(vs->problems, p);
	MemoryContextSwitchTo(old);
}

/* Write the rows found so far (outside any subtransaction) */
static void
flush_problems(VerifyState *vs)
{
	ListCell   *lc;

	foreach(lc, vs->problems)
	{
		Problem    *p = lfirst(lc);
		Datum		values[VERIFY_NCOLS];
		bool		nulls[VERIFY_NCOLS] = {0};

		values[0] = Int64GetDatum((int64) p->blkno);
		values[1] = Int32GetDatum(p->offnum);
		nulls[1] = p->offnum < 0;
		values[2] = Int32GetDatum(p->version);
		nulls[2] = p->version < 0;
		values[3] = CStringGetTextDatum(p->field);
		values[4] = CStringGetTextDatum(p->msg);
		tuplestore_putvalues(vs->rsinfo->setResult, vs->rsinfo->setDesc,
							 values, nulls);
	}
	vs->problems = NIL;
}

/* ----------------------------------------------------------------
 * Errors that mean damage
 *
 * Work that reads a page, a TOAST value or an index runs in a
 * subtransaction; an error it raises for damage is caught and becomes a
 * row.  Cancels, lack of resources, lock and serialization failures are
 * not damage: they end the call as they would any other.
 * ----------------------------------------------------------------
 */
static bool
is_damage(int sqlerrcode)
{
	int			category = ERRCODE_TO_CATEGORY(sqlerrcode);

	return category == ERRCODE_TO_CATEGORY(ERRCODE_INTERNAL_ERROR) ||
		category == ERRCODE_TO_CATEGORY(ERRCODE_SYSTEM_ERROR) ||
		category == ERRCODE_TO_CATEGORY(ERRCODE_DATA_EXCEPTION);
}

typedef void (*GuardedFn) (VerifyState *vs, void *arg);

/*
 * Run fn(vs, arg) in a subtransaction.  On an error that means damage: a
 * row at (offnum, version, field) with the error's message, and false.
 */
static bool
guarded(VerifyState *vs, GuardedFn fn, void *arg, int offnum, int version,
		const char *field)
{
	MemoryContext cxt = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = true;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(cxt);
	PG_TRY();
	{
		fn(vs, arg);
		ReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(cxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(cxt);
		CurrentResourceOwner = owner;
		if (!is_damage(edata->sqlerrcode))
			ReThrowError(edata);
		problem(vs, offnum, version, field, "%s: %s%s%s",
				unpack_sql_state(edata->sqlerrcode), edata->message,
				edata->detail ? " " : "", edata->detail ? edata->detail : "");
		FreeErrorData(edata);
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

/* ----------------------------------------------------------------
 * Transaction IDs and multixacts
 * ----------------------------------------------------------------
 */
static void
refresh_xid_bounds(VerifyState *vs)
{
	LWLockAcquire(XidGenLock, LW_SHARED);
	vs->next_xid = XidFromFullTransactionId(TransamVariables->nextXid);
	vs->oldest_xid = TransamVariables->oldestXid;
	LWLockRelease(XidGenLock);
}

/*
 * NULL if xid (normal) lies within the bounds a live version's or
 * locker's may: at or after relfrozenxid (and the cluster's oldest), before
 * the next transaction ID; else what is wrong.
 */
static char *
xid_out_of_bounds(VerifyState *vs, TransactionId xid)
{
	if (!TransactionIdPrecedes(xid, vs->next_xid) ||
		TransactionIdPrecedes(xid, vs->oldest_xid))
		refresh_xid_bounds(vs);
	if (!TransactionIdPrecedes(xid, vs->next_xid))
		return psprintf("transaction ID %u is not assigned yet (the next is %u)",
						xid, vs->next_xid);
	if (TransactionIdPrecedes(xid, vs->oldest_xid))
		return psprintf("transaction ID %u precedes the oldest one of the cluster, %u",
						xid, vs->oldest_xid);
	if (TransactionIdIsNormal(vs->relfrozenxid) &&
		TransactionIdPrecedes(xid, vs->relfrozenxid))
		return psprintf("transaction ID %u precedes the table's relfrozenxid %u",
						xid, vs->relfrozenxid);
	return NULL;
}

/* What the commit log says of xid, which passed xid_out_of_bounds */
static int
xid_status(VerifyState *vs, TransactionId xid)
{
	int			status = XS_UNKNOWN;

	if (xid == vs->cached_xid)
		return vs->cached_status;
	LWLockAcquire(XactTruncationLock, LW_SHARED);
	if (TransactionIdFollowsOrEquals(xid, TransamVariables->oldestClogXid))
	{
		if (TransactionIdIsCurrentTransactionId(xid) ||
			TransactionIdIsInProgress(xid))
			status = XS_IN_PROGRESS;
		else if (TransactionIdDidCommit(xid))
			status = XS_COMMITTED;
		else
			status = XS_ABORTED;
	}
	LWLockRelease(XactTruncationLock);
	vs->cached_xid = xid;
	vs->cached_status = status;
	return status;
}

/*
 * Check a version's xmin: bounds, and hint bits against the commit log.
 * Returns the creator's status (XS_UNKNOWN when out of bounds).
 */
static int
check_xmin(VerifyState *vs, OffsetNumber off, int version,
		   const MinidbVersionHeader *vh)
{
	TransactionId xmin = vh->vh_xmin;
	bool		virt = (vh->vh_flags & MINIDB_V_VIRTUAL) != 0;
	const char *f_xmin = virt ? "xmax" : "vh_xmin";
	const char *f_flags = virt ? "xinfo" : "vh_flags";
	char	   *why;
	int			status;

	if (vh->vh_flags & MINIDB_V_FROZEN)
		return XS_COMMITTED;
	/* a V3 end by a multixact: its updater, a member (check_lockers) */
	if ((vh->vh_flags & MINIDB_V_XMIN_MULTI) &&
		(vh->vh_flags & MINIDB_V_XMIN_ABORTED))
		return XS_ABORTED;
	if (!TransactionIdIsNormal(xmin))
		return XS_COMMITTED;	/* bootstrap or frozen xid */
	if ((why = xid_out_of_bounds(vs, xmin)) != NULL)
	{
		problem(vs, off, version, f_xmin, "%s", why);
		return XS_UNKNOWN;
	}
	status = xid_status(vs, xmin);
	if ((vh->vh_flags & MINIDB_V_XMIN_COMMITTED) && status != XS_COMMITTED &&
		status != XS_UNKNOWN)
		problem(vs, off, version, f_flags,
				"xmin %u is hinted committed, but the commit log says it %s",
				xmin, status == XS_ABORTED ? "did not commit" : "is in progress");
	if ((vh->vh_flags & MINIDB_V_XMIN_ABORTED) && status == XS_COMMITTED)
		problem(vs, off, version, f_flags,
				"xmin %u is hinted aborted, but the commit log says it committed",
				xmin);
	if (vh->vh_flags & MINIDB_V_XMIN_COMMITTED)
		return XS_COMMITTED;
	if (vh->vh_flags & MINIDB_V_XMIN_ABORTED)
		return XS_ABORTED;
	return status;
}

static void
refresh_multi_bounds(VerifyState *vs)
{
	ReadMultiXactIdRange(&vs->oldest_multi, &vs->next_multi);
}

/*
 * The row lockers of a record (which passed validation): false when they
 * are out of bounds (the record's walkers would look them up).  V1 and V2
 * keep them in rh_locker, rh_lockmode and rh_flags; V3 in its xmax field
 * (a lock-only xid, or a multixact whose members may include the row's
 * updater).
 */
static bool
check_lockers(VerifyState *vs, OffsetNumber off, const char *rec)
{
	bool		v3 = minidb_record_format_of(rec) == MINIDB_FORMAT_V3;
	const char *f_locker = v3 ? "xmax" : "rh_locker";
	const char *f_mode = v3 ? "info" : "rh_lockmode";
	const char *f_flags = v3 ? "xinfo" : "rh_flags";
	MinidbLockers lk;
	TransactionId locker;
	char	   *why;

	minidb_record_get_lockers(rec, &lk);
	locker = lk.xid;
	if (lk.multi)
	{
		MultiXactId multi = (MultiXactId) locker;
		MultiXactMember *members;
		int			n;
		int			updaters = 0;

		if (!MultiXactIdIsValid(multi))
		{
			problem(vs, off, -1, f_flags,
					"the locker is flagged a multixact, but there is no locker");
			return false;
		}
		if (lk.mode == MINIDB_LOCK_NONE)
			problem(vs, off, -1, f_mode,
					"multixact %u holds no lock mode", multi);
		if (!MultiXactIdPrecedes(multi, vs->next_multi) ||
			MultiXactIdPrecedes(multi, vs->oldest_multi))
			refresh_multi_bounds(vs);
		if (!MultiXactIdPrecedes(multi, vs->next_multi))
		{
			problem(vs, off, -1, f_locker,
					"multixact %u is not assigned yet (the next is %u)",
					multi, vs->next_multi);
			return false;
		}
		if (MultiXactIdPrecedes(multi, vs->oldest_multi))
		{
			problem(vs, off, -1, f_locker,
					"multixact %u precedes the oldest one of the cluster, %u",
					multi, vs->oldest_multi);
			return false;
		}
		if (MultiXactIdIsValid(vs->relminmxid) &&
			MultiXactIdPrecedes(multi, vs->relminmxid))
		{
			problem(vs, off, -1, f_locker,
					"multixact %u precedes the table's relminmxid %u",
					multi, vs->relminmxid);
			return false;
		}
		n = GetMultiXactIdMembers(multi, &members, false, false);
		for (int i = 0; i < n; i++)
		{
			if (TransactionIdIsNormal(members[i].xid) &&
				!TransactionIdPrecedes(members[i].xid, vs->next_xid))
				refresh_xid_bounds(vs);
			if (!TransactionIdIsNormal(members[i].xid) ||
				!TransactionIdPrecedes(members[i].xid, vs->next_xid))
				problem(vs, off, -1, f_locker,
						"multixact %u has member %u, which is not an assigned transaction ID",
						multi, members[i].xid);
			if (ISUPDATE_from_mxstatus(members[i].status))
				updaters++;
		}
		/* only a V3 row's end may hold its updater among the lockers */
		if (updaters > (lk.with_updater ? 1 : 0))
			problem(vs, off, -1, f_locker,
					"multixact %u has %d members with an update status%s",
					multi, updaters,
					lk.with_updater ? ", the row has one updater" :
					", but it only locks the row");
		if (n > 0)
			pfree(members);
		return true;
	}
	if (!TransactionIdIsValid(locker))
		return true;			/* no locker; validation checked the mode */
	if (lk.mode == MINIDB_LOCK_NONE)
		problem(vs, off, -1, f_mode, "locker %u holds no lock mode",
				locker);
	if (!TransactionIdIsNormal(locker))
		problem(vs, off, -1, f_locker,
				"locker %u is not a normal transaction ID", locker);
	else if ((why = xid_out_of_bounds(vs, locker)) != NULL)
		problem(vs, off, -1, f_locker, "%s", why);
	return true;
}

/* ----------------------------------------------------------------
 * Attributes
 * ----------------------------------------------------------------
 */

/* ----------------------------------------------------------------
 * The walkers
 * ----------------------------------------------------------------
 */
static bool
accept_index(MinidbVersionHeader *vh, int index, void *arg)
{
	return index == *(int *) arg;
}

static bool
accept_none(MinidbVersionHeader *vh, int index, void *arg)
{
	return false;
}

/*
 * A version as a reader sees it: a V3 end by a multixact shows its updater
 * (the server's minidb_multi_updater_hook; none left: aborted).
 */
static MinidbVersionData
reader_view(const MinidbVersionData *d)
{
	MinidbVersionData v = *d;

	if ((v.flags & MINIDB_V_XMIN_MULTI) && minidb_multi_updater_hook)
	{
		TransactionId upd = minidb_multi_updater_hook(v.xmin, NULL);

		if (TransactionIdIsValid(upd))
			v.xmin = upd;
		else
			v.flags = (v.flags & ~MINIDB_V_XMIN_COMMITTED) |
				MINIDB_V_XMIN_ABORTED;
	}
	return v;
}

/*
 * The reference walker found versions dec[0..n-1] in a record validation
 * accepted: the iterator must yield the same versions, the same bytes
 * (DELTA versions rebuilt), and the fast walker must find each where the
 * iterator did.  The headers readers see go to vhs[] (a V3 record's end:
 * its virtual marker).  Returns false (with a row) when they disagree.
 */
static bool
check_walkers(VerifyState *vs, OffsetNumber off, char *rec, uint32 len,
			  const MinidbVersionData *dec, int n, uint32 *offsets,
			  MinidbVersionHeader *vhs)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	MinidbDeltaBuf buf = {NULL, 0};
	bool		damaged = false;
	int			k = 0;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
	{
		problem(vs, off, err.version, err.field,
				"the iterator refuses a record the validator accepts: %s",
				err.detail);
		return false;
	}
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionData got;
		MinidbVersionData want;

		if (k >= n || ref.index != k)
		{
			problem(vs, off, ref.index, "walker",
					"the iterator yields version %d where the reference walker has %d of %d",
					ref.index, k, n);
			return false;
		}
		minidb_version_get_buf(rec, &ref, &got, &buf);
		want = reader_view(&dec[k]);
		if (!minidb_version_equal(&got, &want))
		{
			problem(vs, off, k, "walker",
					"the iterator and the reference walker read different bytes for version %d",
					k);
			return false;
		}
		vhs[k] = *ref.vh;
		offsets[k++] = ref.offset;
	}
	if (damaged || k != n)
	{
		problem(vs, off, damaged ? err.version : k, "walker",
				"the iterator ends after %d of %d versions%s%s", k, n,
				damaged ? ": " : "", damaged ? err.detail : "");
		return false;
	}

	/* the fast walker: each version where the iterator found it */
	for (int t = 0; t < n; t++)
	{
		int			got;
		bool		virt;

		/* every version of short chains; the ends and the middle of long */
		if (n > 16 && t >= 8 && t < n - 8 && t != n / 2)
			continue;
		got = minidb_chain_find_visible(rec, len, accept_index, &t, &ref, &err);
		virt = got >= 0 && ref.vh == &ref.virt.vh;
		if (got != t || ref.offset != offsets[t] ||
			(!virt && (char *) ref.vh != rec + offsets[t]) ||
			(virt && (ref.vh->vh_flags != vhs[t].vh_flags ||
					  ref.vh->vh_xmin != vhs[t].vh_xmin)))
		{
			problem(vs, off, t, "walker",
					"the fast walker finds version %d as %d at offset %u, the iterator at offset %u%s%s",
					t, got, got >= 0 ? ref.offset : 0, offsets[t],
					got == -2 ? ": " : "", got == -2 ? err.detail : "");
			return false;
		}
	}
	if (minidb_chain_find_visible(rec, len, accept_none, NULL, &ref, &err) != -1)
	{
		problem(vs, off, -1, "walker",
				"the fast walker does not end cleanly when no version is wanted");
		return false;
	}
	return true;
}

/* ----------------------------------------------------------------
 * Records
 * ----------------------------------------------------------------
 */

/* A record's status before its page is let go */
static void
check_record(VerifyState *vs, Buffer buffer, OffsetNumber off, char *rec,
			 uint32 len)
{
	MinidbChainError err;
	MinidbVersionData *dec;
	MinidbVersionHeader *vhs;
	uint32	   *offsets;
	int		   *status;
	int			n;
	int			nproblems = list_length(vs->problems);
	bool		sane = true;
	ItemPointerData succ;
	bool		moved_part;
	bool		v3 = minidb_record_format_of(rec) == MINIDB_FORMAT_V3;

	if (!minidb_record_validate(rec, len, &err))
	{
		problem(vs, off, err.version, err.field, "%s", err.detail);
		return;
	}
	/* before the walkers, which ask about a V3 end's multixact */
	if (!check_lockers(vs, off, rec))
		return;
	n = minidb_chain_decode_all(rec, len, &dec, &err);
	if (n < 0 || n != minidb_record_nversions(rec, len))
	{
		problem(vs, off, err.version, "walker",
				"the reference walker refuses a record the validator accepts: %s",
				n < 0 ? err.detail : "a different number of versions");
		return;
	}
	offsets = palloc(sizeof(uint32) * n);
	vhs = palloc(sizeof(MinidbVersionHeader) * n);
	if (!check_walkers(vs, off, rec, len, dec, n, offsets, vhs))
		return;

	status = palloc(sizeof(int) * n);
	for (int i = 0; i < n; i++)
	{
		const MinidbVersionHeader *vh = &vhs[i];
		char	   *why;

		status[i] = check_xmin(vs, off, i, vh);
		if (status[i] == XS_UNKNOWN)
			sane = false;
		if (!(vh->vh_flags & MINIDB_V_NODATA_MASK) &&
			(why = minidb_attributes_damage(vs->tupdesc, &dec[i])) != NULL)
		{
			problem(vs, off, i, "data", "%s", why);
			sane = false;
		}
	}
	if (!sane || list_length(vs->problems) != nproblems)
		return;					/* nothing more to trust */

	/* a moved marker whose transaction some snapshot may not see yet */
	if ((vhs[0].vh_flags & MINIDB_V_MOVED) &&
		minidb_record_get_successor(rec, &succ, &moved_part) &&
		status[0] == XS_COMMITTED &&
		!GlobalVisTestIsRemovableXid(vs->vistest, vhs[0].vh_xmin))
	{
		Successor  *s = MemoryContextAlloc(vs->page_cxt, sizeof(Successor));

		s->off = off;
		s->xmin = vhs[0].vh_xmin;
		s->field = v3 ? "successor" : "rh_successor";
		s->successor = succ;
		vs->successors = lappend(vs->successors, s);
	}

	/*
	 * TOAST: every data version some snapshot may still read: not aborted,
	 * and not superseded by a version every snapshot sees (the superseding
	 * transaction deleted its values, and VACUUM of the TOAST table may
	 * have removed them).
	 */
	if (vs->check_toast)
	{
		int			superseder = -1;

		for (int i = 0; i < n; i++)
		{
			bool		needed;

			if (status[i] == XS_ABORTED)
				continue;
			needed = superseder < 0 ||
				status[superseder] != XS_COMMITTED ||
				!GlobalVisTestIsRemovableXid(vs->vistest, dec[superseder].xmin);
			if (needed && (dec[i].flags & MINIDB_V_HASEXTERNAL))
			{
				LaterVersion *lv = palloc(sizeof(LaterVersion));
				ItemPointerData tid;
				Size		tlen = minidb_materialized_size(&dec[i]);

				ItemPointerSet(&tid, vs->blkno, off);
				lv->off = off;
				lv->version = i;
				lv->tuple = palloc(HEAPTUPLESIZE + tlen);
				lv->tuple->t_data = (HeapTupleHeader) ((char *) lv->tuple + HEAPTUPLESIZE);
				lv->tuple->t_len = tlen;
				lv->tuple->t_self = tid;
				lv->tuple->t_tableOid = RelationGetRelid(vs->rel);
				minidb_write_tuple(lv->tuple->t_data, &dec[i],
								   InvalidTransactionId, &tid);
				vs->toast_versions = lappend(vs->toast_versions, lv);
			}
			superseder = i;
		}
	}

	/* the row the transaction's snapshot sees, for the index checks */
	if (vs->check_indexes)
	{
		ItemPointerData tid;
		MinidbVersionRef ref;
		TransactionId xmax;
		int			idx;

		ItemPointerSet(&tid, vs->blkno, off);
		idx = minidb_find_visible(vs->rel, &tid, rec, len, vs->snapshot,
								  buffer, &ref, &xmax);
		if (idx >= 0)
		{
			LaterVersion *lv = palloc(sizeof(LaterVersion));

			lv->off = off;
			lv->version = idx;
			lv->tuple = minidb_materialize_copy(rec, &ref, xmax, &tid,
												RelationGetRelid(vs->rel));
			vs->visible_rows = lappend(vs->visible_rows, lv);
		}
	}
}

/*
 * The room the record at off (read cleanly) may still take for its row's
 * end without asking: what writers keep for it (minidb_page_item_reserve),
 * except for a V1 or V2 record whose newest version is a tombstone or a
 * moved marker already.  That marker took the record's room, yet writers
 * go on counting MINIDB_LEGACY_RESERVE for it; a later end does not add to
 * it (an aborted marker goes first, prune_plan_for in minidb_modify.c).
 * *legacy is set for a V1 or V2 record.
 */
static Size
end_room(Page page, OffsetNumber off, bool *legacy)
{
	char	   *rec;
	uint32		len;
	const char *why;
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	if (minidb_page_item(page, off, &rec, &len, &why) != MINIDB_ITEM_RECORD)
		return minidb_page_item_reserve(page, off);
	if (minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
		return minidb_page_item_reserve(page, off);
	*legacy = true;
	if (minidb_chain_iter_init(&it, rec, len, &err) &&
		minidb_chain_iter_next(&it, &ref, &err, &damaged) &&
		(ref.vh->vh_flags & MINIDB_V_NODATA_MASK))
		return 0;
	return minidb_page_item_reserve(page, off);
}

typedef struct ItemExtent
{
	OffsetNumber off;
	uint32		start;
	uint32		end;
} ItemExtent;

static int
extent_cmp(const void *a, const void *b)
{
	const ItemExtent *x = a;
	const ItemExtent *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The page's share-locked part */
static void
check_page_locked(VerifyState *vs, Buffer buffer)
{
	Page		page = BufferGetPage(buffer);
	OffsetNumber maxoff;
	const char *why;
	ItemExtent *extents;
	int			nextents = 0;
	bool		overlaps[MaxHeapTuplesPerPage + 1] = {0};
	int			nproblems = list_length(vs->problems);
	Size		reserve;
	bool		legacy = false;
	Size		allowance = 0;

	if (PageIsNew(page))
		return;
	if ((why = minidb_page_damage(page)) != NULL)
	{
		problem(vs, -1, -1, "page", "%s", why);
		return;
	}
	maxoff = minidb_page_maxoff(page);

	/* no two records share a byte */
	extents = palloc(sizeof(ItemExtent) * (maxoff + 1));
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		char	   *rec;
		uint32		len;

		if (minidb_page_item(page, off, &rec, &len, &why) == MINIDB_ITEM_RECORD)
		{
			extents[nextents].off = off;
			extents[nextents].start = rec - (char *) page;
			extents[nextents].end = extents[nextents].start + len;
			nextents++;
		}
	}
	qsort(extents, nextents, sizeof(ItemExtent), extent_cmp);
	for (int i = 1; i < nextents; i++)
	{
		/* the earlier extents that reach into this one */
		for (int j = i - 1; j >= 0; j--)
		{
			if (extents[j].end <= extents[i].start)
			{
				/* sorted by start: an earlier one may still be longer */
				continue;
			}
			overlaps[extents[i].off] = overlaps[extents[j].off] = true;
			problem(vs, extents[i].off, -1, "line pointer",
					"record at %u..%u overlaps the record at offset %u (%u..%u)",
					extents[i].start, extents[i].end, extents[j].off,
					extents[j].start, extents[j].end);
			problem(vs, extents[j].off, -1, "line pointer",
					"record at %u..%u overlaps the record at offset %u (%u..%u)",
					extents[j].start, extents[j].end, extents[i].off,
					extents[i].start, extents[i].end);
		}
	}

	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		char	   *rec;
		uint32		len;

		switch (minidb_page_item(page, off, &rec, &len, &why))
		{
			case MINIDB_ITEM_NONE:
				break;
			case MINIDB_ITEM_DAMAGED:
				problem(vs, off, -1, "line pointer", "%s", why);
				break;
			case MINIDB_ITEM_RECORD:
				if (!overlaps[off])
					check_record(vs, buffer, off, rec, len);
				break;
		}
	}

	/*
	 * Room for every record's end: a DELETE, a row lock or a moving UPDATE
	 * takes it without asking (see minidb_page_ensure_room).  Asked of a
	 * page whose records all read cleanly: a damaged one counts the most
	 * reserve, and is listed already.
	 *
	 * A page holding a V1 or V2 record may keep up to 16 bytes less
	 * (MINIDB_LEGACY_RESERVE - MINIDB_SLOT_RESERVE), once: until 2026-12-02
	 * an insert counted MINIDB_SLOT_RESERVE for its own record whatever its
	 * format, so the V1 or V2 record added last to a page could keep 16
	 * bytes less than its end may take (every other room check counted the
	 * records already there by their format).  Nothing on a page tells
	 * whether that build wrote it, so every such page gets the allowance;
	 * a page of V3 records only is held to its whole reserve.  A DELETE on
	 * a page that build left short raises XX001 (minidb_page_ensure_room)
	 * when it writes the V1 or V2 format; in the default format it writes
	 * a smaller V3 record.
	 */
	if (list_length(vs->problems) > nproblems)
		return;
	reserve = 0;
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		reserve += end_room(page, off, &legacy);
	if (legacy)
		allowance = MINIDB_LEGACY_RESERVE - MINIDB_SLOT_RESERVE;
	if (PageGetExactFreeSpace(page) + allowance < reserve)
		problem(vs, -1, -1, "page",
				"%zu bytes free (pd_lower %u, pd_upper %u), less than the %zu its records keep for their ends",
				PageGetExactFreeSpace(page), ((PageHeader) page)->pd_lower,
				((PageHeader) page)->pd_upper, reserve - allowance);
}

/*
 * A moved marker's successor, read after the marker's page is let go: a
 * record whose oldest version the marker's transaction made.
 */
static void
check_successor(VerifyState *vs, const Successor *s, BlockNumber nblocks)
{
	BlockNumber sblk = ItemPointerGetBlockNumberNoCheck(&s->successor);
	OffsetNumber soff = ItemPointerGetOffsetNumberNoCheck(&s->successor);
	Buffer		buffer;
	Page		page;
	char	   *rec;
	uint32		len;
	const char *why;
	MinidbChainError err;

	if (sblk >= nblocks)
	{
		problem(vs, s->off, 0, s->field,
				"successor (%u,%u) lies past the end of the table (%u blocks)",
				sblk, soff, nblocks);
		return;
	}
	buffer = ReadBufferExtended(vs->rel, MAIN_FORKNUM, sblk, RBM_NORMAL,
								vs->strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	if (PageIsNew(page))
		problem(vs, s->off, 0, s->field,
				"successor (%u,%u) lies on an empty page", sblk, soff);
	else if (minidb_page_damage(page) == NULL)
	{
		switch (minidb_page_item(page, soff, &rec, &len, &why))
		{
			case MINIDB_ITEM_NONE:
				problem(vs, s->off, 0, s->field,
						"successor (%u,%u) holds no record", sblk, soff);
				break;
			case MINIDB_ITEM_DAMAGED:
				break;			/* reported with its own page */
			case MINIDB_ITEM_RECORD:
				if (minidb_record_validate(rec, len, &err))
				{
					MinidbChainIter it;
					MinidbVersionRef ref;
					MinidbVersionHeader oldest_vh;
					MinidbVersionHeader *oldest = NULL;
					bool		damaged;

					minidb_chain_iter_init(&it, rec, len, &err);
					while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
					{
						oldest_vh = *ref.vh;
						oldest = &oldest_vh;
					}

					/*
					 * Pruning may have removed the successor's first
					 * version once a newer one is behind every snapshot.
					 */
					if (oldest && oldest->vh_xmin != s->xmin &&
						!(oldest->vh_flags & (MINIDB_V_XMIN_COMMITTED | MINIDB_V_FROZEN) &&
						  GlobalVisTestIsRemovableXid(vs->vistest, oldest->vh_xmin)))
						problem(vs, s->off, 0, s->field,
								"successor (%u,%u) was made by transaction %u, not by the moving update's %u",
								sblk, soff, oldest->vh_xmin, s->xmin);
				}
				break;
		}
	}
	UnlockReleaseBuffer(buffer);
}

/* TOAST: fetch and decompress every external value of a version */
typedef struct ToastArg
{
	struct varlena *value;
} ToastArg;

static void
detoast_one(VerifyState *vs, void *arg)
{
	struct varlena *v = detoast_attr(((ToastArg *) arg)->value);

	pfree(v);
}

static void
check_toast_version(VerifyState *vs, LaterVersion *lv)
{
	TupleDesc	desc = vs->tupdesc;
	Datum	   *values = palloc(sizeof(Datum) * desc->natts);
	bool	   *nulls = palloc(sizeof(bool) * desc->natts);

	heap_deform_tuple(lv->tuple, desc, values, nulls);
	for (int i = 0; i < desc->natts; i++)
	{
		ToastArg	ta;
		char		field[NAMEDATALEN + 16];

		if (nulls[i] || TupleDescAttr(desc, i)->attlen != -1 ||
			!VARATT_IS_EXTERNAL_ONDISK(DatumGetPointer(values[i])))
			continue;
		CHECK_FOR_INTERRUPTS();
		ta.value = (struct varlena *) DatumGetPointer(values[i]);
		snprintf(field, sizeof(field), "toast: %s",
				 NameStr(TupleDescAttr(desc, i)->attname));
		guarded(vs, detoast_one, &ta, lv->off, lv->version, field);
	}
}

/* ----------------------------------------------------------------
 * Indexes
 * ----------------------------------------------------------------
 */

/* A hash of index values, each detoasted, so that both sides compare */
static uint64
hash_values(TupleDesc desc, int natts, Datum *values, bool *isnull)
{
	uint64		h = 0;

	for (int i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		uint64		ch;

		if (isnull[i])
			ch = UINT64CONST(0x9e3779b97f4a7c15) + i;
		else if (att->attbyval)
		{
			Datum		d = values[i];

			ch = hash_bytes_extended((const unsigned char *) &d, sizeof(Datum), i);
		}
		else if (att->attlen > 0)
			ch = hash_bytes_extended((const unsigned char *) DatumGetPointer(values[i]),
									 att->attlen, i);
		else if (att->attlen == -1)
		{
			struct varlena *v = PG_DETOAST_DATUM_PACKED(values[i]);

			ch = hash_bytes_extended((const unsigned char *) VARDATA_ANY(v),
									 VARSIZE_ANY_EXHDR(v), i);
			if ((Pointer) v != DatumGetPointer(values[i]))
				pfree(v);
		}
		else
		{
			const char *s = DatumGetCString(values[i]);

			ch = hash_bytes_extended((const unsigned char *) s, strlen(s), i);
		}
		h = hash_combine64(h, ch);
	}
	return h;
}

static int
entry_cmp(const void *a, const void *b, void *arg)
{
	const IndexEntry *x = a;
	const IndexEntry *y = b;
	int			c = ItemPointerCompare((ItemPointer) &x->tid,
									   (ItemPointer) &y->tid);

	if (c != 0)
		return c;
	return x->hash < y->hash ? -1 : x->hash > y->hash;
}

/* Every entry of a btree index: its TID and the hash of its values */
static IndexEntry *
scan_index(VerifyState *vs, Relation index, int64 *nentries)
{
	IndexScanDesc scan;
	ItemPointer tid;
	int64		n = 0;
	int64		size = 1024;
	IndexEntry *entries = palloc_extended(sizeof(IndexEntry) * size,
										  MCXT_ALLOC_HUGE);
	Datum		values[INDEX_MAX_KEYS];
	bool		isnull[INDEX_MAX_KEYS];
	MemoryContext tmp = AllocSetContextCreate(CurrentMemoryContext,
											  "minidb_verify index values",
											  ALLOCSET_DEFAULT_SIZES);

	scan = minidb_index_beginscan(vs->rel, index, vs->snapshot, 0, 0);
	scan->xs_want_itup = true;
	scan->ignore_killed_tuples = false;
	index_rescan(scan, NULL, 0, NULL, 0);
	while ((tid = index_getnext_tid(scan, ForwardScanDirection)) != NULL)
	{
		MemoryContext old;

		if ((n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (n == size)
		{
			size *= 2;
			entries = repalloc_huge(entries, sizeof(IndexEntry) * size);
		}
		entries[n].tid = *tid;
		entries[n].state = ENTRY_UNSEEN;
		old = MemoryContextSwitchTo(tmp);
		index_deform_tuple(scan->xs_itup, scan->xs_itupdesc, values, isnull);
		entries[n].hash = hash_values(scan->xs_itupdesc,
									  scan->xs_itupdesc->natts, values, isnull);
		MemoryContextSwitchTo(old);
		MemoryContextReset(tmp);
		n++;
	}
	index_endscan(scan);
	MemoryContextDelete(tmp);
	qsort_interruptible(entries, n, sizeof(IndexEntry), entry_cmp, NULL);
	*nentries = n;
	return entries;
}

/* The first entry for tid, or -1 */
static int64
find_entries(VerifyIndex *vi, ItemPointer tid)
{
	int64		lo = 0;
	int64		hi = vi->nentries;

	while (lo < hi)
	{
		int64		mid = lo + (hi - lo) / 2;

		if (ItemPointerCompare(&vi->entries[mid].tid, tid) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < vi->nentries && ItemPointerEquals(&vi->entries[lo].tid, tid))
		return lo;
	return -1;
}

/* A visible row against every index: its entries must be there */
static void
check_row_entries(VerifyState *vs, void *arg)
{
	LaterVersion *lv = arg;
	ExprContext *econtext = GetPerTupleExprContext(vs->estate);
	ItemPointer tid = &lv->tuple->t_self;

	ExecStoreHeapTuple(lv->tuple, vs->slot, false);
	econtext->ecxt_scantuple = vs->slot;
	for (int i = 0; i < vs->nindexes; i++)
	{
		VerifyIndex *vi = &vs->indexes[i];
		Datum		values[INDEX_MAX_KEYS];
		bool		isnull[INDEX_MAX_KEYS];
		int64		first = find_entries(vi, tid);
		uint64		h;
		bool		matched = false;

		if (vi->predicate && !ExecQual(vi->predicate, econtext))
		{
			if (first >= 0)
				problem(vs, lv->off, lv->version,
						psprintf("index %s", RelationGetRelationName(vi->index)),
						"the row does not satisfy the index's predicate, but the index has an entry for it");
			continue;
		}
		FormIndexDatum(vi->info, vs->slot, vs->estate, values, isnull);
		h = hash_values(RelationGetDescr(vi->index), vi->info->ii_NumIndexAttrs,
						values, isnull);
		for (int64 e = first; e >= 0 && e < vi->nentries &&
			 ItemPointerEquals(&vi->entries[e].tid, tid); e++)
			if (vi->entries[e].hash == h)
			{
				vi->entries[e].state = ENTRY_MATCHED;
				matched = true;
			}
		if (matched)
			continue;
		if (first < 0)
			problem(vs, lv->off, lv->version,
					psprintf("index %s", RelationGetRelationName(vi->index)),
					"the row has no entry in the index");
		else
		{
			for (int64 e = first; e < vi->nentries &&
				 ItemPointerEquals(&vi->entries[e].tid, tid); e++)
				vi->entries[e].state = ENTRY_REPORTED;
			problem(vs, lv->off, lv->version,
					psprintf("index %s", RelationGetRelationName(vi->index)),
					"the index's entry for the row holds other values than its visible version");
		}
	}
	ExecClearTuple(vs->slot);
	ResetExprContext(econtext);
}

/*
 * A block whose check raised an error (listed as the page's problem): the
 * index entries that point into it are not looked at again, since reading
 * it may raise the same error (an invalid page header) outside any
 * subtransaction.  Blocks come in ascending order; the array lives in cxt.
 */
static void
note_failed_block(VerifyState *vs, MemoryContext cxt, BlockNumber blkno)
{
	if (vs->nfailed == vs->maxfailed)
	{
		vs->maxfailed = Max(16, vs->maxfailed * 2);
		vs->failed = vs->failed ?
			repalloc(vs->failed, vs->maxfailed * sizeof(BlockNumber)) :
			MemoryContextAlloc(cxt, vs->maxfailed * sizeof(BlockNumber));
	}
	vs->failed[vs->nfailed++] = blkno;
}

static int
block_cmp(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return (x > y) - (x < y);
}

static bool
block_failed(VerifyState *vs, BlockNumber blkno)
{
	return vs->nfailed > 0 &&
		bsearch(&blkno, vs->failed, vs->nfailed, sizeof(BlockNumber),
				block_cmp) != NULL;
}

/* What an index entry's TID names now: NULL if acceptable */
static const char *
entry_target_problem(VerifyState *vs, ItemPointer tid, BlockNumber nblocks,
					 Buffer *buffer)
{
	BlockNumber blk = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Page		page;
	char	   *rec;
	uint32		len;
	const char *why;

	if (blk >= nblocks)
		return psprintf("the index has an entry for (%u,%u), past the end of the table (%u blocks)",
						blk, off, nblocks);
	if (block_failed(vs, blk))
		return NULL;			/* reported with its page */
	if (!BufferIsValid(*buffer) || BufferGetBlockNumber(*buffer) != blk)
	{
		if (BufferIsValid(*buffer))
			ReleaseBuffer(*buffer);
		*buffer = ReadBufferExtended(vs->rel, MAIN_FORKNUM, blk, RBM_NORMAL,
									 vs->strategy);
	}
	LockBuffer(*buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(*buffer);
	why = NULL;
	if (PageIsNew(page))
		why = psprintf("the index has an entry for (%u,%u), on an empty page",
					   blk, off);
	else if (minidb_page_damage(page) == NULL &&
			 minidb_page_item(page, off, &rec, &len, &why) == MINIDB_ITEM_NONE &&
			 !(off <= minidb_page_maxoff(page) &&
			   ItemIdIsDead(PageGetItemId(page, off))))
		why = psprintf("the index has an entry for (%u,%u), which holds no record",
					   blk, off);
	else
		why = NULL;				/* a record, a dead item, or damage
								 * reported with its page */
	LockBuffer(*buffer, BUFFER_LOCK_UNLOCK);
	return why;
}

typedef struct Suspect
{
	int			index;
	IndexEntry	entry;
	const char *why;
} Suspect;

/*
 * The index entries no visible row claimed: each must name a record, a
 * dead item, or damage reported with its page.  Entries that do not are
 * checked again after a second scan of their index, so that VACUUM
 * removing them in the meantime (it may: we hold AccessShareLock) is not
 * reported.
 */
static void
check_unclaimed_entries(VerifyState *vs)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(vs->rel);
	Buffer		buffer = InvalidBuffer;
	List	   *suspects = NIL;
	ListCell   *lc;

	for (int i = 0; i < vs->nindexes; i++)
	{
		VerifyIndex *vi = &vs->indexes[i];

		for (int64 e = 0; e < vi->nentries; e++)
		{
			const char *why;

			if (vi->entries[e].state != ENTRY_UNSEEN)
				continue;
			if ((e & 1023) == 0)
				CHECK_FOR_INTERRUPTS();
			why = entry_target_problem(vs, &vi->entries[e].tid, nblocks,
									   &buffer);
			if (why)
			{
				Suspect    *s = palloc(sizeof(Suspect));

				s->index = i;
				s->entry = vi->entries[e];
				s->why = why;
				suspects = lappend(suspects, s);
			}
		}
	}
	if (BufferIsValid(buffer))
		ReleaseBuffer(buffer);
	buffer = InvalidBuffer;
	if (suspects == NIL)
		return;

	/* again, with every index scanned again */
	for (int i = 0; i < vs->nindexes; i++)
	{
		VerifyIndex *vi = &vs->indexes[i];
		bool		any = false;

		foreach(lc, suspects)
			any |= ((Suspect *) lfirst(lc))->index == i;
		if (!any)
			continue;
		pfree(vi->entries);
		vi->entries = scan_index(vs, vi->index, &vi->nentries);
	}
	nblocks = RelationGetNumberOfBlocks(vs->rel);
	foreach(lc, suspects)
	{
		Suspect    *s = lfirst(lc);
		VerifyIndex *vi = &vs->indexes[s->index];
		int64		e = find_entries(vi, &s->entry.tid);
		bool		still = false;
		const char *why;

		for (; e >= 0 && e < vi->nentries &&
			 ItemPointerEquals(&vi->entries[e].tid, &s->entry.tid); e++)
			still |= vi->entries[e].hash == s->entry.hash;
		if (!still)
			continue;
		why = entry_target_problem(vs, &s->entry.tid, nblocks, &buffer);
		if (why == NULL)
			continue;
		vs->blkno = ItemPointerGetBlockNumber(&s->entry.tid);
		problem(vs, ItemPointerGetOffsetNumber(&s->entry.tid), -1,
				psprintf("index %s", RelationGetRelationName(vi->index)),
				"%s", why);
	}
	if (BufferIsValid(buffer))
		ReleaseBuffer(buffer);
}

static void
open_indexes(VerifyState *vs)
{
	List	   *oids = RelationGetIndexList(vs->rel);
	ListCell   *lc;

	vs->indexes = palloc0(sizeof(VerifyIndex) * Max(list_length(oids), 1));
	vs->estate = CreateExecutorState();
	vs->slot = MakeSingleTupleTableSlot(vs->tupdesc, &TTSOpsHeapTuple);
	foreach(lc, oids)
	{
		Relation	index = index_open(lfirst_oid(lc), AccessShareLock);
		VerifyIndex *vi;

		if (index->rd_rel->relam != BTREE_AM_OID ||
			!index->rd_index->indisvalid)
		{
			ereport(NOTICE,
					(errmsg("skipping index \"%s\": %s",
							RelationGetRelationName(index),
							index->rd_rel->relam != BTREE_AM_OID ?
							"only btree indexes are checked" :
							"it is not valid")));
			index_close(index, AccessShareLock);
			continue;
		}
		vi = &vs->indexes[vs->nindexes++];
		vi->index = index;
		vi->info = BuildIndexInfo(index);
		vi->predicate = vi->info->ii_Predicate ?
			ExecPrepareQual(vi->info->ii_Predicate, vs->estate) : NULL;
		vi->entries = scan_index(vs, index, &vi->nentries);
	}
	list_free(oids);
}

static void
close_indexes(VerifyState *vs)
{
	for (int i = 0; i < vs->nindexes; i++)
	{
		pfree(vs->indexes[i].entries);
		index_close(vs->indexes[i].index, AccessShareLock);
	}
	if (vs->slot)
		ExecDropSingleTupleTableSlot(vs->slot);
	if (vs->estate)
		FreeExecutorState(vs->estate);
}

/* ----------------------------------------------------------------
 * Pages
 * ----------------------------------------------------------------
 */
static void
verify_block(VerifyState *vs, void *arg)
{
	Buffer		buffer;
	ListCell   *lc;

	buffer = ReadBufferExtended(vs->rel, MAIN_FORKNUM, vs->blkno, RBM_NORMAL,
								vs->strategy);
	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	check_page_locked(vs, buffer);
	UnlockReleaseBuffer(buffer);

	/* what reads other pages, TOAST values or indexes: without the lock */
	if (vs->successors != NIL)
	{
		BlockNumber nblocks = RelationGetNumberOfBlocks(vs->rel);

		foreach(lc, vs->successors)
			check_successor(vs, lfirst(lc), nblocks);
	}
	foreach(lc, vs->toast_versions)
		check_toast_version(vs, lfirst(lc));
	foreach(lc, vs->visible_rows)
	{
		LaterVersion *lv = lfirst(lc);

		CHECK_FOR_INTERRUPTS();
		guarded(vs, check_row_entries, lv, lv->off, lv->version, "index");
	}
}

/* Superusers, the table's owner, members of pg_stat_scan_tables */
static void
check_caller(Oid relid)
{
	if (has_privs_of_role(GetUserId(), ROLE_PG_STAT_SCAN_TABLES))
		return;
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (!minidb_class_ownercheck(relid, GetUserId()))
	{
		char	   *name = get_rel_name(relid);

		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to verify table \"%s\"",
						name ? name : "?"),
				 errhint("minidb_verify is for superusers, the table's owner and members of pg_stat_scan_tables.")));
	}
}

/*
 * minidb_verify(rel regclass, check_toast bool DEFAULT false,
 *				 check_indexes bool DEFAULT false)
 *	RETURNS TABLE(blkno bigint, offnum int, version int, field text, msg text)
 */
Datum
minidb_verify(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	VerifyState vs;
	BlockNumber nblocks;

	memset(&vs, 0, sizeof(vs));
	check_caller(relid);
	vs.rel = try_relation_open(relid, AccessShareLock);
	if (vs.rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	check_caller(relid);		/* the owner may have changed while we waited */
	minidb_check_relation(vs.rel, "minidb_verify");
	if (RELATION_IS_OTHER_TEMP(vs.rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot verify temporary tables of other sessions")));

	InitMaterializedSRF(fcinfo, 0);
	vs.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	vs.tupdesc = RelationGetDescr(vs.rel);
	vs.check_toast = PG_GETARG_BOOL(1);
	vs.check_indexes = PG_GETARG_BOOL(2);
	vs.snapshot = RegisterSnapshot(GetTransactionSnapshot());
	vs.vistest = GlobalVisTestFor(vs.rel);
	vs.strategy = GetAccessStrategy(BAS_BULKREAD);
	vs.page_cxt = AllocSetContextCreate(CurrentMemoryContext,
										"minidb_verify page",
										ALLOCSET_DEFAULT_SIZES);
	vs.relfrozenxid = vs.rel->rd_rel->relfrozenxid;
	vs.relminmxid = vs.rel->rd_rel->relminmxid;
	vs.cached_xid = InvalidTransactionId;
	refresh_xid_bounds(&vs);
	refresh_multi_bounds(&vs);

	if (vs.check_indexes)
		open_indexes(&vs);

	nblocks = RelationGetNumberOfBlocks(vs.rel);
	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		MemoryContext old;

		CHECK_FOR_INTERRUPTS();
		vs.blkno = blkno;
		old = MemoryContextSwitchTo(vs.page_cxt);
		if (!guarded(&vs, verify_block, NULL, -1, -1, "page") &&
			vs.check_indexes)
			note_failed_block(&vs, old, blkno);
		MemoryContextSwitchTo(old);
		flush_problems(&vs);
		vs.successors = vs.toast_versions = vs.visible_rows = NIL;
		MemoryContextReset(vs.page_cxt);
	}

	if (vs.check_indexes)
	{
		MemoryContext old = MemoryContextSwitchTo(vs.page_cxt);

		check_unclaimed_entries(&vs);
		MemoryContextSwitchTo(old);
		flush_problems(&vs);
		close_indexes(&vs);
	}

	MemoryContextDelete(vs.page_cxt);
	FreeAccessStrategy(vs.strategy);
	UnregisterSnapshot(vs.snapshot);
	relation_close(vs.rel, AccessShareLock);
	return (Datum) 0;
}
