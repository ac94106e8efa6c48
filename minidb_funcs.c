/*-------------------------------------------------------------------------
 *
 * minidb_funcs.c
 *	  SQL-callable introspection of minidb tables.
 *
 * minidb_chain(rel, tid) shows every version of the record at tid: its
 * position (0 = newest), creating xid and command, flags, length, and
 * whether the current snapshot sees it.  It reads raw record headers, so
 * it is for the table's owner (or a superuser), and it checks everything a
 * user can pass: relation kind and access method, TID range, NULLs.
 *
 * minidb_row_locks(rel) lists the rows that running transactions hold,
 * with who holds them and how: what pgrowlocks shows for heap (which
 * refuses other access methods), for whoever may read the table.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/multixact.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/procarray.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "pg_compat.h"
#include "chain.h"
#include "minidb_page.h"
#include "btree_view.h"
#include "minidb_visibility.h"
#include "minidb_lock.h"
#include "minidb_am.h"

PG_FUNCTION_INFO_V1(minidb_chain);
PG_FUNCTION_INFO_V1(minidb_row_locks);

/* ERROR unless the current user owns relid (or is a superuser) */
static void
check_owner(Oid relid)
{
	char	   *relname;

	/* raises undefined_table for an OID that names no relation */
	if (minidb_class_ownercheck(relid, GetUserId()))
		return;
	relname = get_rel_name(relid);
	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	aclcheck_error(ACLCHECK_NOT_OWNER,
				   get_relkind_objtype(get_rel_relkind(relid)), relname);
}

/*
 * Open rel for reading raw records: owner or superuser, minidb only.  The
 * owner is checked by OID before the relation is opened, so that nobody
 * else can take a lock on it (or queue behind an exclusive one, holding up
 * everybody after them); and again once locked, since the owner may have
 * changed while we waited (ALTER TABLE ... OWNER TO takes an exclusive
 * lock).
 */
Relation
minidb_open_owned(Oid relid, const char *caller)
{
	Relation	rel;

	check_owner(relid);
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	check_owner(relid);
	minidb_check_relation(rel, caller);
	return rel;
}

static void
check_tid(Relation rel, ItemPointer tid)
{
	BlockNumber nblocks = RelationGetNumberOfBlocks(rel);

	if (ItemPointerGetBlockNumberNoCheck(tid) >= nblocks)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("block %u is out of range for relation \"%s\"",
						ItemPointerGetBlockNumberNoCheck(tid),
						RelationGetRelationName(rel)),
				 errdetail("The relation has %u blocks.", nblocks)));
	if (ItemPointerGetOffsetNumberNoCheck(tid) == InvalidOffsetNumber)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid offset 0 in TID (%u,0)",
						ItemPointerGetBlockNumberNoCheck(tid))));
}

static const char *
flags_text(uint16 flags)
{
	StringInfoData buf;

	initStringInfo(&buf);
	if (flags & MINIDB_V_XMIN_COMMITTED)
		appendStringInfoString(&buf, "committed,");
	if (flags & MINIDB_V_XMIN_ABORTED)
		appendStringInfoString(&buf, "aborted,");
	if (flags & MINIDB_V_FROZEN)
		appendStringInfoString(&buf, "frozen,");
	if (flags & MINIDB_V_TOMBSTONE)
		appendStringInfoString(&buf, "tombstone,");
	if (flags & MINIDB_V_MOVED)
		appendStringInfoString(&buf, "moved,");
	if (flags & MINIDB_V_KEYS_UPDATED)
		appendStringInfoString(&buf, "keys-updated,");
	/* V3: a difference from the newer version; the row's end; combo cid */
	if ((flags & MINIDB_V_ENC_MASK) == MINIDB_V_ENC_DELTA)
		appendStringInfoString(&buf, "delta,");
	if (flags & MINIDB_V_VIRTUAL)
		appendStringInfoString(&buf, "end,");
	if (flags & MINIDB_V_XMIN_MULTI)
		appendStringInfoString(&buf, "multixact,");
	if (flags & MINIDB_V_COMBOCID)
		appendStringInfoString(&buf, "combocid,");
	if (buf.len > 0)
		buf.data[--buf.len] = '\0';
	return buf.data;
}

typedef struct ChainRows
{
	Relation	rel;
	ItemPointer tid;
	Tuplestorestate *store;
	TupleDesc	desc;
} ChainRows;

/* The view callback: one output row per version */
static void
chain_rows_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	ChainRows  *cr = (ChainRows *) arg;
	MinidbVersionWalk walk;
	MinidbVersionRef ref;
	MinidbVersionRef vis;
	int			visible;

	visible = minidb_find_visible(cr->rel, cr->tid, rec, len,
								  GetActiveSnapshot(), buffer, &vis, NULL);
	minidb_walk_begin(&walk, cr->rel, cr->tid, rec, len);
	while (minidb_walk_next(&walk, &ref))
	{
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = Int32GetDatum(ref.index);
		values[1] = TransactionIdGetDatum(ref.vh->vh_xmin);
		values[2] = CommandIdGetDatum(ref.vh->vh_cid);
		values[3] = CStringGetTextDatum(flags_text(ref.vh->vh_flags));
		values[4] = Int32GetDatum(minidb_ref_size(&ref));
		values[5] = BoolGetDatum(ref.index == visible);
		tuplestore_putvalues(cr->store, cr->desc, values, nulls);
	}
}

Datum
minidb_chain(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ItemPointer tid = (ItemPointer) PG_GETARG_POINTER(1);
	ChainRows	cr;
	Buffer		pin = InvalidBuffer;

	InitMaterializedSRF(fcinfo, 0);
	cr.rel = minidb_open_owned(PG_GETARG_OID(0), "minidb_chain");
	cr.tid = tid;
	cr.store = rsinfo->setResult;
	cr.desc = rsinfo->setDesc;
	check_tid(cr.rel, tid);
	if (minidb_view_record(cr.rel, tid, &pin, chain_rows_cb, &cr) !=
		MINIDB_VIEW_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("no record at TID (%u,%u) in relation \"%s\"",
						ItemPointerGetBlockNumber(tid),
						ItemPointerGetOffsetNumber(tid),
						RelationGetRelationName(cr.rel))));
	ReleaseBuffer(pin);
	relation_close(cr.rel, AccessShareLock);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * minidb_row_locks
 * ----------------------------------------------------------------
 */

/*
 * pgrowlocks' names for the modes: a lone locker's, and a multixact
 * member's (before 16 it names key-share and share locks without "For").
 */
static const char *const single_names[] = {
	[LockTupleKeyShare] = "For Key Share",
	[LockTupleShare] = "For Share",
	[LockTupleNoKeyExclusive] = "For No Key Update",
	[LockTupleExclusive] = "For Update",
};
static const char *const member_names[] = {
	[LockTupleKeyShare] = MINIDB_PGROWLOCKS_MEMBER_PREFIX "Key Share",
	[LockTupleShare] = MINIDB_PGROWLOCKS_MEMBER_PREFIX "Share",
	[LockTupleNoKeyExclusive] = "For No Key Update",
	[LockTupleExclusive] = "For Update",
};

/* One row's holders, read under the page lock */
typedef struct HeldRow
{
	ItemPointerData tid;
	TransactionId locker;		/* xid or multixact, or invalid */
	bool		is_multi;
	uint16		lockmode;
	TransactionId writer;		/* a running writer of the head, or invalid */
	LockTupleMode writer_mode;
} HeldRow;

/* ERROR unless the current user may read relid (checked before locking) */
static void
check_select(Oid relid)
{
	char	   *relname = get_rel_name(relid);

	if (relname == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	if (pg_class_aclcheck(relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK)
		aclcheck_error(ACLCHECK_NO_PRIV,
					   get_relkind_objtype(get_rel_relkind(relid)), relname);
}

/*
 * Into *ref, the version written by superseder just above below (the
 * settled version), which a running transaction's subtransactions may have
 * superseded several times since; *ref is left alone if none is found.
 */
static void
superseding_version(Relation rel, ItemPointer tid, char *rec, uint32 len,
					const MinidbVersionRef *below, TransactionId superseder,
					MinidbVersionRef *ref)
{
	MinidbVersionWalk walk;
	MinidbVersionRef v;
	int			from = ref->index;

	/* the last one found, newest first, is the one just above below */
	minidb_walk_begin(&walk, rel, tid, rec, len);
	while (minidb_walk_next(&walk, &v) && v.index < below->index)
	{
		if (v.index >= from &&
			TransactionIdEquals(v.vh->vh_xmin, superseder))
			minidb_ref_copy(ref, &v);
	}
}

/* Collect the held rows of one page */
static int
held_rows_of_page(Relation rel, BlockNumber blkno,
				  BufferAccessStrategy strategy, HeldRow *held)
{
	Buffer		buffer = ReadBufferExtended(rel, MAIN_FORKNUM, blkno,
											RBM_NORMAL, strategy);
	Page		page = BufferGetPage(buffer);
	int			n = 0;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	minidb_page_check(rel, buffer);
	{
		OffsetNumber maxoff = minidb_page_maxoff(page);

		for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
		{
			MinidbVersionRef head;
			MinidbVersionRef below;
			TransactionId superseder;
			MinidbLockers lk;
			HeldRow    *h = &held[n];
			uint32		len;
			char	   *rec;
			int			nheads;

			rec = minidb_page_record(rel, buffer, off, &len);
			if (rec == NULL)
				continue;
			ItemPointerSet(&h->tid, blkno, off);
			nheads = minidb_row_heads(rel, &h->tid, rec, len, buffer, &head,
									  &below, &superseder);
			minidb_record_get_lockers(rec, &lk);
			h->writer = InvalidTransactionId;
			if (nheads == 2 &&
				!TransactionIdIsCurrentTransactionId(head.vh->vh_xmin) &&
				TransactionIdIsInProgress(head.vh->vh_xmin))
			{
				/*
				 * heap's xmax of the version other snapshots see: the
				 * subtransaction that superseded it, which need not be the
				 * head's
				 */
				superseding_version(rel, &h->tid, rec, len, &below,
									superseder, &head);
				h->writer = superseder;
				h->writer_mode = minidb_head_lock_mode(head.vh, false);
			}
			h->is_multi = lk.multi;
			h->lockmode = lk.mode;
			h->locker = minidb_lockers_live(&lk) ? lk.xid :
				InvalidTransactionId;

			/*
			 * An update in place is a key update only through a FOR UPDATE
			 * lock of its transaction.  Heap keeps one xmax, in the
			 * stronger mode of the two, when one xid holds the lock and
			 * made the update: a lone lock of the writer's is folded into
			 * the writer.  Beside a lock of another subtransaction (a
			 * multixact) the update's member shows its own mode.
			 */
			if (TransactionIdIsValid(h->writer))
			{
				if (!lk.multi && TransactionIdEquals(h->locker, h->writer))
					h->locker = InvalidTransactionId;
				else if (!(head.vh->vh_flags & MINIDB_V_NODATA_MASK))
					h->writer_mode = LockTupleNoKeyExclusive;
			}
			if (TransactionIdIsValid(h->locker) ||
				TransactionIdIsValid(h->writer))
				n++;
		}
	}
	UnlockReleaseBuffer(buffer);
	return n;
}

/* One holder of a row, as an output row lists it */
typedef struct Holder
{
	TransactionId xid;
	LockTupleMode mode;
	bool		is_update;		/* a running writer rather than a lock */
} Holder;

static LockTupleMode
mode_of_status(MultiXactStatus status)
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
		default:
			return LockTupleExclusive;
	}
}

/*
 * The output row of one held row.  As pgrowlocks shows heap's xmax: a
 * multixact lists all of its members, finished ones too; a lock held
 * beside a running UPDATE is a multixact on heap, so it is one here.
 */
static void
put_held_row(Tuplestorestate *store, TupleDesc desc, const HeldRow *h)
{
	MultiXactMember *members = NULL;
	Holder	   *holders;
	int			nmembers = 0;
	int			n = 0;
	bool		multi;
	Datum	   *xids;
	Datum	   *modes;
	Datum	   *pids;
	Datum		values[6];
	bool		nulls[6] = {0};

	if (TransactionIdIsValid(h->locker) && h->is_multi)
		nmembers = Max(GetMultiXactIdMembers((MultiXactId) h->locker, &members,
											 false, false), 0);
	holders = palloc(sizeof(Holder) * (nmembers + 2));
	for (int i = 0; i < nmembers; i++)
	{
		holders[n].xid = members[i].xid;
		holders[n].mode = mode_of_status(members[i].status);
		holders[n++].is_update = false;
	}
	if (TransactionIdIsValid(h->locker) && !h->is_multi)
	{
		holders[n].xid = h->locker;
		holders[n].mode = minidb_mode_from_lock(h->lockmode);
		holders[n++].is_update = false;
	}
	if (TransactionIdIsValid(h->writer))
	{
		holders[n].xid = h->writer;
		holders[n].mode = h->writer_mode;
		holders[n++].is_update = true;
	}
	if (n == 0)
		return;
	multi = h->is_multi || n > 1;

	xids = palloc(sizeof(Datum) * n);
	modes = palloc(sizeof(Datum) * n);
	pids = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		const char *name;

		if (holders[i].is_update)
			name = holders[i].mode == LockTupleExclusive ? "Update" :
				"No Key Update";
		else
			name = (multi ? member_names : single_names)[holders[i].mode];
		xids[i] = TransactionIdGetDatum(holders[i].xid);
		modes[i] = CStringGetTextDatum(name);
		pids[i] = Int32GetDatum(BackendXidGetPid(holders[i].xid));
	}

	values[0] = PointerGetDatum(&h->tid);
	values[1] = TransactionIdGetDatum(TransactionIdIsValid(h->locker) ?
									  h->locker : h->writer);
	values[2] = BoolGetDatum(multi);
	values[3] = PointerGetDatum(construct_array(xids, n, XIDOID,
												sizeof(TransactionId), true,
												TYPALIGN_INT));
	values[4] = PointerGetDatum(construct_array(modes, n, TEXTOID, -1, false,
												TYPALIGN_INT));
	values[5] = PointerGetDatum(construct_array(pids, n, INT4OID,
												sizeof(int32), true,
												TYPALIGN_INT));
	tuplestore_putvalues(store, desc, values, nulls);
	if (members)
		pfree(members);
}

/*
 * minidb_row_locks(rel): the rows running transactions hold, one row each:
 * locked_row, locker (the record's xid or multixact, or the running writer
 * of its head), multi, and per holder its xid, mode and backend pid.  The
 * modes are pgrowlocks': a lock, or the "Update" / "No Key Update" a
 * running UPDATE or DELETE of the row holds.  Needs SELECT on the table.
 */
Datum
minidb_row_locks(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Oid			relid = PG_GETARG_OID(0);
	BufferAccessStrategy strategy = GetAccessStrategy(BAS_BULKREAD);
	HeldRow    *held = palloc(sizeof(HeldRow) * MaxHeapTuplesPerPage);
	Relation	rel;
	BlockNumber nblocks;

	InitMaterializedSRF(fcinfo, 0);
	check_select(relid);
	rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	minidb_check_relation(rel, "minidb_row_locks");
	nblocks = RelationGetNumberOfBlocks(rel);
	for (BlockNumber blkno = 0; blkno < nblocks; blkno++)
	{
		int			n;

		CHECK_FOR_INTERRUPTS();
		n = held_rows_of_page(rel, blkno, strategy, held);
		for (int i = 0; i < n; i++)
			put_held_row(rsinfo->setResult, rsinfo->setDesc, &held[i]);
	}
	FreeAccessStrategy(strategy);
	relation_close(rel, AccessShareLock);
	return (Datum) 0;
}
