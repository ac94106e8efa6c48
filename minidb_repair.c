/*-------------------------------------------------------------------------
 *
 * minidb_repair.c
 *	  Removing damaged records:
 *
 *	minidb_force_kill(rel regclass, tids tid[]) RETURNS int
 *		what pg_surgery's heap_force_kill is for heap
 *
 * minidb_verify (minidb_verify.c) finds them.
 *
 * A record whose bytes are damaged makes every read that visits it fail
 * with ERRCODE_DATA_CORRUPTED: sequential scans, pg_dump, even DELETE ...
 * WHERE ctid = ... of that very record.  minidb_force_kill makes the records
 * at the given TIDs dead without reading them, so that the rest of the
 * table can be read and dumped again.  What was in them is lost (their
 * TOAST values, if any, stay behind unreferenced, as with heap_force_kill).
 *
 * Each record's line pointer becomes LP_DEAD, never LP_UNUSED: index
 * entries may still point at it, and an LP_DEAD item is one that readers
 * skip (an index scan reaching it finds no row) and that no insert reuses.
 * The next VACUUM removes those index entries and then frees the item,
 * exactly as it does for the dead records it finds itself.  The record's
 * bytes are given back at once when the page's line pointers allow it
 * (PageRepairFragmentation, which moves the other records and never looks
 * inside them); otherwise they stay until VACUUM rewrites the page.
 *
 * Every page change goes through minidb_write_begin / minidb_write_page /
 * minidb_write_finish: one WAL record per page, and a page that was
 * all-visible loses that mark and its visibility map bits in the same
 * record.  The WAL is flushed before the function returns: the change
 * does not belong to the transaction (a rollback keeps it), and a
 * transaction that has no xid would not flush at commit.  Nothing here looks at the record's contents, so it works
 * whatever the damage inside the record; the page itself must still be a
 * readable minidb page (its header and special area intact).
 *
 * Safety: superuser only (EXECUTE is also revoked from PUBLIC); every TID
 * is checked before any page is changed, so a bad argument changes
 * nothing.  A TID whose item is already dead or unused is skipped with a
 * NOTICE, so the call can be repeated.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "chain.h"
#include "minidb_page.h"
#include "minidb_wal.h"
#include "minidb_am.h"

PG_FUNCTION_INFO_V1(minidb_force_kill);

/* ----------------------------------------------------------------
 * minidb_force_kill
 * ----------------------------------------------------------------
 */

static int
tid_cmp(const void *a, const void *b)
{
	return ItemPointerCompare((ItemPointer) a, (ItemPointer) b);
}

/* The TIDs of the argument, sorted, without duplicates */
static ItemPointer
tids_from_array(ArrayType *arr, int *ntids)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			kept = 0;
	ItemPointer tids;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("tids must be a one-dimensional array")));
	deconstruct_array(arr, TIDOID, sizeof(ItemPointerData), false,
					  TYPALIGN_SHORT, &elems, &nulls, &n);
	tids = palloc(sizeof(ItemPointerData) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("tids must not contain NULL (element %d)", i + 1)));
		tids[i] = *(ItemPointer) DatumGetPointer(elems[i]);
	}
	qsort(tids, n, sizeof(ItemPointerData), tid_cmp);
	for (int i = 0; i < n; i++)
		if (kept == 0 || !ItemPointerEquals(&tids[kept - 1], &tids[i]))
			tids[kept++] = tids[i];
	*ntids = kept;
	return tids;
}

/*
 * Would PageRepairFragmentation accept the page?  It refuses (ERROR) a
 * page whose header or normal line pointers are out of bounds; a damaged
 * line pointer must not keep us from killing a record, so we compact only
 * pages it accepts.  The same checks as bufpage.c's.
 */
static bool
page_compactable(Page page)
{
	PageHeader	ph = (PageHeader) page;
	OffsetNumber maxoff = minidb_page_maxoff(page);

	if (minidb_page_damage(page) != NULL)
		return false;
	for (OffsetNumber off = FirstOffsetNumber; off <= maxoff; off++)
	{
		ItemId		lp = PageGetItemId(page, off);
		unsigned	lpoff = ItemIdGetOffset(lp);

		if (!ItemIdHasStorage(lp))
			continue;
		if (lpoff < ph->pd_upper ||
			lpoff + MAXALIGN(ItemIdGetLength(lp)) > ph->pd_special ||
			lpoff != MAXALIGN(lpoff))
			return false;
	}
	return true;
}

static const char *
item_state(ItemId lp)
{
	if (ItemIdIsDead(lp))
		return "dead";
	if (ItemIdIsRedirected(lp))
		return "a redirect";
	return "unused";
}

/*
 * Kill the records at tids[0..n-1], all on block blkno (checked to be in
 * range by the caller).  Returns how many were killed.
 */
static int
kill_on_block(Relation rel, BlockNumber blkno, ItemPointer tids, int n)
{
	Buffer		buffer = ReadBuffer(rel, blkno);
	Page		page;
	OffsetNumber maxoff;
	OffsetNumber kill[MaxOffsetNumber];
	int			nkill = 0;

	LockBuffer(buffer, BUFFER_LOCK_EXCLUSIVE);
	minidb_page_check(rel, buffer);
	page = BufferGetPage(buffer);
	maxoff = minidb_page_maxoff(page);

	for (int i = 0; i < n; i++)
	{
		OffsetNumber off = ItemPointerGetOffsetNumber(&tids[i]);
		ItemId		lp;

		/* VACUUM may have cut off unused items at the end since we looked */
		if (off > maxoff)
		{
			ereport(NOTICE,
					(errmsg("skipping TID (%u,%u) of relation \"%s\": its item is unused",
							blkno, off, RelationGetRelationName(rel))));
			continue;
		}
		lp = PageGetItemId(page, off);
		if (!ItemIdIsNormal(lp))
		{
			ereport(NOTICE,
					(errmsg("skipping TID (%u,%u) of relation \"%s\": its item is %s",
							blkno, off, RelationGetRelationName(rel),
							item_state(lp))));
			continue;
		}
		kill[nkill++] = off;
	}

	if (nkill > 0)
	{
		MinidbPageWrite w;
		Page		copy;

		minidb_write_begin(&w, rel);
		copy = minidb_write_page(&w, buffer, false);
		for (int i = 0; i < nkill; i++)
			ItemIdSetDead(PageGetItemId(copy, kill[i]));
		if (page_compactable(copy))
			PageRepairFragmentation(copy);
		minidb_write_finish(&w);
	}
	UnlockReleaseBuffer(buffer);
	return nkill;
}

/*
 * minidb_force_kill(rel regclass, tids tid[]) RETURNS int: the number of
 * records made dead.
 */
Datum
minidb_force_kill(PG_FUNCTION_ARGS)
{
	Oid			relid;
	Relation	rel;
	ItemPointer tids;
	int			ntids;
	BlockNumber nblocks;
	int			killed = 0;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for minidb_force_kill"),
				 errdetail("Only superusers may make records dead by force.")));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("rel must not be NULL")));
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("tids must not be NULL")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("recovery is in progress"),
				 errhint("minidb_force_kill cannot run during recovery; run it on the primary.")));

	relid = PG_GETARG_OID(0);
	tids = tids_from_array(PG_GETARG_ARRAYTYPE_P(1), &ntids);

	rel = try_relation_open(relid, RowExclusiveLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation with OID %u does not exist", relid)));
	minidb_check_relation(rel, "minidb_force_kill");
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot change temporary tables of other sessions")));

	/*
	 * Check every TID before changing anything: a page change is not undone
	 * by a later error.  Offsets are checked against each page's line
	 * pointer array as it is now.
	 */
	nblocks = RelationGetNumberOfBlocks(rel);
	for (int i = 0; i < ntids; i++)
	{
		BlockNumber blkno = ItemPointerGetBlockNumberNoCheck(&tids[i]);
		OffsetNumber off = ItemPointerGetOffsetNumberNoCheck(&tids[i]);

		if (blkno >= nblocks)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("TID (%u,%u) is out of range for relation \"%s\"",
							blkno, off, RelationGetRelationName(rel)),
					 errdetail("The relation has %u blocks.", nblocks)));
		if (off == InvalidOffsetNumber || off > MaxOffsetNumber)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("TID (%u,%u) has an invalid offset", blkno, off)));
	}
	for (int i = 0; i < ntids;)
	{
		BlockNumber blkno = ItemPointerGetBlockNumber(&tids[i]);
		Buffer		buffer = ReadBuffer(rel, blkno);
		Page		page;
		OffsetNumber maxoff;

		LockBuffer(buffer, BUFFER_LOCK_SHARE);
		minidb_page_check(rel, buffer);
		page = BufferGetPage(buffer);
		maxoff = minidb_page_maxoff(page);
		UnlockReleaseBuffer(buffer);
		for (; i < ntids && ItemPointerGetBlockNumber(&tids[i]) == blkno; i++)
			if (ItemPointerGetOffsetNumber(&tids[i]) > maxoff)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("TID (%u,%u) is out of range for relation \"%s\"",
								blkno, ItemPointerGetOffsetNumber(&tids[i]),
								RelationGetRelationName(rel)),
						 errdetail("Block %u has %u items.", blkno, maxoff)));
	}

	/* one WAL-logged change per block */
	for (int i = 0; i < ntids;)
	{
		BlockNumber blkno = ItemPointerGetBlockNumber(&tids[i]);
		int			first = i;

		CHECK_FOR_INTERRUPTS();
		while (i < ntids && ItemPointerGetBlockNumber(&tids[i]) == blkno)
			i++;
		killed += kill_on_block(rel, blkno, &tids[first], i - first);
	}

	/*
	 * Durable when we return: the change is not the transaction's (a
	 * rollback keeps it), and a transaction without an xid commits
	 * without flushing WAL.
	 */
	if (killed > 0 && RelationNeedsWAL(rel))
		XLogFlush(XactLastRecEnd);

	/* keep the lock until the end of the transaction */
	relation_close(rel, NoLock);
	PG_RETURN_INT32(killed);
}
