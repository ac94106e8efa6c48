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
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"

#include "minidb_am.h"

PG_FUNCTION_INFO_V1(minidb_chain);

/* ERROR unless the current user owns relid (or is a superuser) */
static void
check_owner(Oid relid)
{
	char	   *relname;

	/* raises undefined_table for an OID that names no relation */
	if (pg_class_ownercheck(relid, GetUserId()))
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
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbVersionRef vis;
	MinidbChainError err;
	bool		damaged = false;
	int			visible;

	visible = minidb_find_visible(cr->rel, cr->tid, rec, len,
								  GetActiveSnapshot(), buffer, &vis, NULL);
	if (!minidb_chain_iter_init(&it, rec, len, &err))
		minidb_report_corruption(cr->rel, cr->tid, &err);
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = Int32GetDatum(ref.index);
		values[1] = TransactionIdGetDatum(ref.vh->vh_xmin);
		values[2] = CommandIdGetDatum(ref.vh->vh_cid);
		values[3] = CStringGetTextDatum(flags_text(ref.vh->vh_flags));
		values[4] = Int32GetDatum(ref.vh->vh_len);
		values[5] = BoolGetDatum(ref.index == visible);
		tuplestore_putvalues(cr->store, cr->desc, values, nulls);
	}
	if (damaged)
		minidb_report_corruption(cr->rel, cr->tid, &err);
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
