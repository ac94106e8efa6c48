/*-------------------------------------------------------------------------
 *
 * minidb_chain_funcs.c
 *	  SQL functions over bare chain records (bytea), for tests and demos:
 *
 *	minidb_chain_build(vals text[], xids xid[], cids cid[], flags text[],
 *					   successor tid) RETURNS bytea
 *	minidb_chain_decode(chain bytea, walker text) RETURNS TABLE(...)
 *	minidb_chain_check(chain bytea) RETURNS (valid, version, field, detail)
 *	minidb_chain_walk_timing(chain bytea, iterations int,
 *							 visible_position int) RETURNS TABLE(...)
 *
 * Each version's data is a single text attribute in heap's tuple format,
 * made by heap_form_tuple on a one-column descriptor.  The functions read
 * only the bytes they are given, so they are granted to PUBLIC; each call
 * is bounded (versions, bytes, iterations) and its loops check for
 * interrupts.  minidb_chain_walk_timing runs for as long as its caller
 * asks (up to a bound), so it is for superusers and members of
 * minidb_bench, as the benchmarks are (bench.c).  minidb_chain_build's
 * result depends on minidb.record_format, so it is STABLE.
 *
 * Also here: minidb_chain_error_report, which turns chain.c's description
 * of a damaged record into ereport(ERROR, ERRCODE_DATA_CORRUPTED) for every
 * server-side caller.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <time.h>

#include "access/htup_details.h"
#include "access/transam.h"
#include "access/tupdesc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "chain.h"
#include "minidb_am.h"

PG_FUNCTION_INFO_V1(minidb_chain_build);
PG_FUNCTION_INFO_V1(minidb_chain_decode);
PG_FUNCTION_INFO_V1(minidb_chain_check);
PG_FUNCTION_INFO_V1(minidb_chain_walk_timing);

/* Version flags by name; the first five may be given to minidb_chain_build */
typedef struct FlagName
{
	uint16		bit;
	const char *name;
	bool		settable;
} FlagName;

static const FlagName flag_names[] = {
	{MINIDB_V_XMIN_COMMITTED, "committed", true},
	{MINIDB_V_XMIN_ABORTED, "aborted", true},
	{MINIDB_V_FROZEN, "frozen", true},
	{MINIDB_V_TOMBSTONE, "tombstone", true},
	{MINIDB_V_MOVED, "moved", true},
	{MINIDB_V_HASNULL, "hasnull", false},
	{MINIDB_V_HASVARWIDTH, "hasvarwidth", false},
	{MINIDB_V_HASEXTERNAL, "hasexternal", false},
	{MINIDB_V_KEYS_UPDATED, "keys_updated", false},
	{MINIDB_V_ENC_DELTA, "delta", false},
	{MINIDB_V_COMBOCID, "combocid", false},
	{MINIDB_V_VIRTUAL, "end", false},
	{MINIDB_V_XMIN_MULTI, "multixact", false},
};

typedef enum Walker
{
	WALKER_REFERENCE,
	WALKER_FAST
} Walker;


/* ----------------------------------------------------------------
 *		Errors
 * ----------------------------------------------------------------
 */

static char *
error_location(const MinidbChainError *err)
{
	if (err->version < 0)
		return pstrdup("record header");
	return psprintf("version %d", err->version);
}

void
minidb_chain_error_report(const MinidbChainError *err, const char *where)
{
	if (where)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record in %s: %s, field \"%s\": %s",
						where, error_location(err), err->field, err->detail)));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("corrupted minidb record: %s, field \"%s\": %s",
					error_location(err), err->field, err->detail)));
	pg_unreachable();
}


/* ----------------------------------------------------------------
 *		Arguments
 * ----------------------------------------------------------------
 */

/* A copy of a bytea's payload in a MAXALIGNed buffer, as chain.c requires */
static char *
aligned_copy(bytea *chain, uint32 *len)
{
	char	   *rec;

	*len = VARSIZE_ANY_EXHDR(chain);
	rec = palloc(Max(*len, 1));
	memcpy(rec, VARDATA_ANY(chain), *len);
	return rec;
}

static Walker
parse_walker(text *name)
{
	char	   *s = text_to_cstring(name);

	if (strcmp(s, "reference") == 0)
		return WALKER_REFERENCE;
	if (strcmp(s, "fast") == 0)
		return WALKER_FAST;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown walker \"%s\"", s),
			 errhint("Valid walkers are \"reference\" and \"fast\".")));
	pg_unreachable();
}

/* Elements of a one-dimensional array argument (an empty array has none) */
static void
array_elements(ArrayType *arr, const char *argname, Oid elemtype,
			   int16 elmlen, bool elmbyval, char elmalign,
			   Datum **elems, bool **nulls, int *n)
{
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", argname)));
	deconstruct_array(arr, elemtype, elmlen, elmbyval, elmalign,
					  elems, nulls, n);
}

/* Parse "committed,frozen" into version flags */
static uint16
parse_flags(const char *s, int position)
{
	char	   *copy = pstrdup(s);
	char	   *tok;
	char	   *save;
	uint16		flags = 0;

	for (tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save))
	{
		int			i;

		for (i = 0; i < lengthof(flag_names); i++)
			if (strcmp(tok, flag_names[i].name) == 0)
				break;
		if (i == lengthof(flag_names))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("unknown version flag \"%s\" for version %d", tok, position),
					 errhint("Valid flags are committed, aborted, frozen, tombstone and moved.")));
		if (!flag_names[i].settable)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("version flag \"%s\" for version %d is derived from the value and cannot be given",
							tok, position)));
		flags |= flag_names[i].bit;
	}
	return flags;
}

static text *
flags_text(uint16 flags)
{
	StringInfoData buf;
	int			i;

	initStringInfo(&buf);
	for (i = 0; i < lengthof(flag_names); i++)
		if (flags & flag_names[i].bit)
			appendStringInfo(&buf, "%s%s", buf.len ? "," : "", flag_names[i].name);
	return cstring_to_text_with_len(buf.data, buf.len);
}


/* ----------------------------------------------------------------
 *		minidb_chain_build
 * ----------------------------------------------------------------
 */

/* The largest V1 record minidb_chain_build makes (V2: its format's limit) */
#define BUILD_MAX_V1_LEN	(256 * 1024)

typedef struct BuildArgs
{
	int			n;
	Datum	   *vals;
	bool	   *valnulls;
	TransactionId *xids;
	CommandId  *cids;
	uint16	   *flags;
} BuildArgs;

static void
read_build_args(FunctionCallInfo fcinfo, BuildArgs *a)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	int			i;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("vals must not be NULL")));
	array_elements(PG_GETARG_ARRAYTYPE_P(0), "vals", TEXTOID, -1, false,
				   TYPALIGN_INT, &a->vals, &a->valnulls, &a->n);
	if (a->n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a chain needs at least one version")));
	if (a->n > MINIDB_MAX_VERSIONS)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("a chain holds at most %d versions, %d given",
						MINIDB_MAX_VERSIONS, a->n)));

	a->xids = palloc(sizeof(TransactionId) * a->n);
	a->cids = palloc0(sizeof(CommandId) * a->n);
	a->flags = palloc0(sizeof(uint16) * a->n);
	/* default xids: the oldest version 1000, each newer one more */
	for (i = 0; i < a->n; i++)
		a->xids[i] = 1000 + (a->n - 1 - i);

	if (!PG_ARGISNULL(1))
	{
		array_elements(PG_GETARG_ARRAYTYPE_P(1), "xids", XIDOID, sizeof(TransactionId),
					   true, TYPALIGN_INT, &elems, &nulls, &n);
		if (n != a->n)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("xids has %d elements but vals has %d", n, a->n)));
		for (i = 0; i < n; i++)
		{
			if (nulls[i] || DatumGetTransactionId(elems[i]) == InvalidTransactionId)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("xid of version %d must be a valid transaction id", i)));
			a->xids[i] = DatumGetTransactionId(elems[i]);
		}
	}
	if (!PG_ARGISNULL(2))
	{
		array_elements(PG_GETARG_ARRAYTYPE_P(2), "cids", CIDOID, sizeof(CommandId),
					   true, TYPALIGN_INT, &elems, &nulls, &n);
		if (n != a->n)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("cids has %d elements but vals has %d", n, a->n)));
		for (i = 0; i < n; i++)
		{
			if (nulls[i])
				ereport(ERROR,
						(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
						 errmsg("cid of version %d must not be NULL", i)));
			a->cids[i] = DatumGetCommandId(elems[i]);
		}
	}
	if (!PG_ARGISNULL(3))
	{
		array_elements(PG_GETARG_ARRAYTYPE_P(3), "flags", TEXTOID, -1, false,
					   TYPALIGN_INT, &elems, &nulls, &n);
		if (n != a->n)
			ereport(ERROR,
					(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
					 errmsg("flags has %d elements but vals has %d", n, a->n)));
		for (i = 0; i < n; i++)
			if (!nulls[i])
				a->flags[i] = parse_flags(TextDatumGetCString(elems[i]), i);
	}
}

/*
 * Version 'position' of the chain as chain.c takes it: a marker, or the
 * value as heap_form_tuple lays out a one-column text tuple.
 */
static MinidbVersionData
version_from_value(TupleDesc desc, const BuildArgs *a, int position)
{
	MinidbVersionData v;
	HeapTuple	tuple;
	HeapTupleHeader td;

	memset(&v, 0, sizeof(v));
	v.xmin = a->xids[position];
	v.cid = a->cids[position];
	v.flags = a->flags[position];
	if (v.flags & MINIDB_V_NODATA_MASK)
	{
		if (!a->valnulls[position])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("version %d is a tombstone or moved marker and carries no value",
							position),
					 errhint("Pass NULL as its value.")));
		return v;
	}

	tuple = heap_form_tuple(desc, &a->vals[position], &a->valnulls[position]);
	td = tuple->t_data;
	v.natts = HeapTupleHeaderGetNatts(td);
	if (td->t_infomask & HEAP_HASNULL)
	{
		v.flags |= MINIDB_V_HASNULL;
		v.bitmap = td->t_bits;
	}
	if (td->t_infomask & HEAP_HASVARWIDTH)
		v.flags |= MINIDB_V_HASVARWIDTH;
	if (td->t_infomask & HEAP_HASEXTERNAL)
		v.flags |= MINIDB_V_HASEXTERNAL;
	v.data = (char *) td + td->t_hoff;
	v.datalen = tuple->t_len - td->t_hoff;
	if ((uint64) minidb_version_size(&v) > MINIDB_MAX_VERSION_LEN)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("value of version %d is too long: %u bytes, a version holds at most %u",
						position, minidb_version_size(&v), MINIDB_MAX_VERSION_LEN)));
	return v;
}

Datum
minidb_chain_build(PG_FUNCTION_ARGS)
{
	BuildArgs	a;
	TupleDesc	desc;
	MinidbVersionData *vs;
	MinidbChainError err;
	uint64		total;
	uint32		maxlen;
	char	   *rec;
	uint32		len;
	bytea	   *result;
	int			i;

	read_build_args(fcinfo, &a);

	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, (AttrNumber) 1, "value", TEXTOID, -1, 0);
	vs = palloc(sizeof(MinidbVersionData) * a.n);
	for (i = 0; i < a.n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		vs[i] = version_from_value(desc, &a, i);
	}
	/*
	 * V3 keeps a row's end in the record header: only the newest version
	 * may be a marker, and something must be left for it to end.
	 */
	if (minidb_record_format == MINIDB_FORMAT_V3)
		for (i = 0; i < a.n; i++)
			if ((vs[i].flags & MINIDB_V_NODATA_MASK) && (i > 0 || a.n == 1))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("these versions do not form a valid minidb record"),
						 errdetail("In format v3 only the newest version may be a tombstone or moved marker, above at least one row version.")));

	/*
	 * Every intermediate record (build, then prepend) is shorter.  Each
	 * prepend moves the record built so far, so the size is bounded to keep
	 * the build's time bounded: V2's and V3's own limit, and
	 * BUILD_MAX_V1_LEN (far more than a page holds) for V1.
	 */
	total = MAXALIGN(minidb_record_size(vs, a.n, minidb_record_format));
	maxlen = minidb_record_format == MINIDB_FORMAT_V1 ?
		BUILD_MAX_V1_LEN : MINIDB_V2_MAX_LEN;
	if (total > maxlen)
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("chain of %d versions would take " UINT64_FORMAT " bytes, more than the %u a record of format v%d may take here",
						a.n, total, maxlen, minidb_record_format)));

	/* oldest first: build, then prepend each newer version in place */
	rec = palloc(total);
	len = minidb_record_build(rec, total, &vs[a.n - 1]);
	for (i = a.n - 2; i >= 0; i--)
	{
		MinidbRecordEnd extra;

		CHECK_FOR_INTERRUPTS();
		memset(&extra, 0, sizeof(extra));
		if (i == 0 && !PG_ARGISNULL(4))
			extra.successor = (ItemPointer) PG_GETARG_POINTER(4);
		if (i == 0 && (vs[0].flags & MINIDB_V_MOVED) &&
			extra.successor == NULL &&
			minidb_record_format_of(rec) == MINIDB_FORMAT_V3)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("a moved marker needs a successor TID in format v3")));
		len = minidb_record_prepend_ex(rec, total, rec, len, &vs[i], 0,
									   &extra);
	}
	if (!PG_ARGISNULL(4) && a.n == 1 &&
		minidb_record_format_of(rec) != MINIDB_FORMAT_V3)
		minidb_record_patch_successor(rec, len,
									  (ItemPointer) PG_GETARG_POINTER(4));

	if (!minidb_record_validate(rec, len, &err))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("these versions do not form a valid minidb record"),
				 errdetail("%s, field \"%s\": %s",
						   error_location(&err), err.field, err.detail)));

	result = palloc(VARHDRSZ + len);
	SET_VARSIZE(result, VARHDRSZ + len);
	memcpy(VARDATA(result), rec, len);
	PG_RETURN_BYTEA_P(result);
}


/* ----------------------------------------------------------------
 *		minidb_chain_decode, minidb_chain_check
 * ----------------------------------------------------------------
 */

/*
 * Attribute 1 of a version as text, or NULL.  The record passed validation,
 * which says nothing about the data bytes: check the varlena header against
 * the data length and the encoding before making a text of it.
 */
static Datum
version_value(const MinidbVersionData *v, int position, bool *isnull)
{
	const char *p = v->data;
	uint32		size;

	*isnull = true;
	if (v->natts != 1 || (v->flags & MINIDB_V_NODATA_MASK))
		return (Datum) 0;
	if ((v->flags & MINIDB_V_HASNULL) && att_isnull(0, v->bitmap))
		return (Datum) 0;
	if (v->datalen == 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record: version %d, field \"data\": attribute 1 is not null but there is no data",
						position)));
	if (VARATT_IS_1B_E(p) || (v->datalen >= VARHDRSZ && VARATT_IS_4B_C(p)))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("version %d holds a TOAST pointer or a compressed value, which minidb_chain_decode does not read",
						position)));
	if (VARATT_IS_1B(p))
		size = VARSIZE_1B(p);
	else if (v->datalen >= VARHDRSZ)
		size = VARSIZE_4B(p);
	else
		size = 0;
	if (size != v->datalen || size < VARHDRSZ_SHORT)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record: version %d, field \"data\": varlena length %u does not match the data length %u",
						position, size, v->datalen)));
	if (!pg_verifymbstr(VARDATA_ANY(p), VARSIZE_ANY_EXHDR(p), true))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("corrupted minidb record: version %d, field \"data\": value is not valid in the database encoding",
						position)));
	*isnull = false;
	return PointerGetDatum(cstring_to_text_with_len(VARDATA_ANY(p),
													VARSIZE_ANY_EXHDR(p)));
}

static void
emit_version(ReturnSetInfo *rsinfo, int position, const MinidbVersionData *v,
			 uint32 vh_len)
{
	Datum		values[7];
	bool		nulls[7] = {false};

	values[0] = Int32GetDatum(position);
	values[1] = TransactionIdGetDatum(v->xmin);
	values[2] = CommandIdGetDatum(v->cid);
	values[3] = PointerGetDatum(flags_text(v->flags));
	values[4] = Int32GetDatum(v->natts);
	values[5] = Int32GetDatum(vh_len);
	values[6] = version_value(v, position, &nulls[6]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

static void
decode_reference(ReturnSetInfo *rsinfo, const char *rec, uint32 len)
{
	MinidbVersionData *vs;
	MinidbChainError err;
	int			n = minidb_chain_decode_all(rec, len, &vs, &err);
	int			i;
	uint32	   *sizes;
	MinidbChainIter it;
	MinidbVersionRef ref;
	bool		damaged;

	if (n < 0)
		minidb_chain_error_report(&err, NULL);
	/* each version's stored size, from the iterator (validated above) */
	sizes = palloc(sizeof(uint32) * Max(n, 1));
	if (minidb_chain_iter_init(&it, (char *) rec, len, &err))
		while (minidb_chain_iter_next(&it, &ref, &err, &damaged) &&
			   ref.index < n)
			sizes[ref.index] = minidb_ref_size(&ref);
	for (i = 0; i < n; i++)
	{
		CHECK_FOR_INTERRUPTS();
		emit_version(rsinfo, i, &vs[i], sizes[i]);
	}
	pfree(sizes);
}

static void
decode_fast(ReturnSetInfo *rsinfo, char *rec, uint32 len)
{
	MinidbChainIter it;
	MinidbVersionRef ref;
	MinidbChainError err;
	bool		damaged;

	if (!minidb_chain_iter_init(&it, rec, len, &err))
		minidb_chain_error_report(&err, NULL);
	while (minidb_chain_iter_next(&it, &ref, &err, &damaged))
	{
		MinidbVersionData v;

		CHECK_FOR_INTERRUPTS();
		minidb_version_get(rec, &ref, &v);
		emit_version(rsinfo, ref.index, &v, minidb_ref_size(&ref));
	}
	if (damaged)
		minidb_chain_error_report(&err, NULL);
}

Datum
minidb_chain_decode(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Walker		walker = parse_walker(PG_GETARG_TEXT_PP(1));
	uint32		len;
	char	   *rec = aligned_copy(PG_GETARG_BYTEA_PP(0), &len);

	InitMaterializedSRF(fcinfo, 0);
	if (walker == WALKER_REFERENCE)
		decode_reference(rsinfo, rec, len);
	else
		decode_fast(rsinfo, rec, len);
	return (Datum) 0;
}

Datum
minidb_chain_check(PG_FUNCTION_ARGS)
{
	uint32		len;
	char	   *rec = aligned_copy(PG_GETARG_BYTEA_PP(0), &len);
	MinidbChainError err;
	TupleDesc	desc;
	Datum		values[4];
	bool		nulls[4] = {false};

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	desc = BlessTupleDesc(desc);
	values[0] = BoolGetDatum(minidb_record_validate(rec, len, &err));
	if (DatumGetBool(values[0]))
		nulls[1] = nulls[2] = nulls[3] = true;
	else
	{
		values[1] = Int32GetDatum(err.version);
		values[2] = CStringGetTextDatum(err.field);
		values[3] = CStringGetTextDatum(err.detail);
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(desc, values, nulls)));
}


/* ----------------------------------------------------------------
 *		minidb_chain_walk_timing
 * ----------------------------------------------------------------
 */

#define TIMING_ROUNDS 10
#define TIMING_MAX_ITERATIONS 100000000

/*
 * The work of one call is bounded: iterations x (versions + bytes / 64),
 * about what both walkers' reads cost, must not exceed TIMING_MAX_WORK
 * (well under a minute).  The loops check for interrupts every
 * TIMING_CHECK_WORK units of work (a load and a branch between batches,
 * far below the clock's resolution of a round).
 */
#define TIMING_MAX_WORK		INT64CONST(1000000000)
#define TIMING_CHECK_WORK	65536

static int64
timing_work_per_op(int nversions, uint32 len)
{
	return (int64) nversions + len / 64 + 1;
}

static bool
visible_at(MinidbVersionHeader *vh, int index, void *arg)
{
	return index == *(int *) arg;
}

static double
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * ns per read through the reference walker: decode all, copy, pick.  Ops
 * run in batches of batch, with an interrupt check between batches.
 */
static double
time_reference(const char *rec, uint32 len, int target, int ops, int batch,
			   MemoryContext scratch, int *found)
{
	double		start = now_ns();
	MemoryContext old = MemoryContextSwitchTo(scratch);

	for (int done = 0; done < ops; done += batch)
	{
		int			end = Min(ops, done + batch);

		for (int i = done; i < end; i++)
		{
			MinidbVersionData *vs;
			MinidbChainError err;
			int			n = minidb_chain_decode_all(rec, len, &vs, &err);

			*found = minidb_chain_pick_visible(vs, n, visible_at, &target);
			MemoryContextReset(scratch);
		}
		CHECK_FOR_INTERRUPTS();
	}
	MemoryContextSwitchTo(old);
	return (now_ns() - start) / ops;
}

/* ns per read through the fast walker: find, then point at the version */
static double
time_fast(char *rec, uint32 len, int target, int ops, int batch, int *found)
{
	double		start = now_ns();
	volatile uint32 sink = 0;

	for (int done = 0; done < ops; done += batch)
	{
		int			end = Min(ops, done + batch);

		for (int i = done; i < end; i++)
		{
			MinidbVersionRef ref;
			MinidbChainError err;
			MinidbVersionData v;

			*found = minidb_chain_find_visible(rec, len, visible_at, &target,
											   &ref, &err);
			if (*found >= 0)
			{
				minidb_version_get(rec, &ref, &v);
				sink += v.datalen;
			}
		}
		CHECK_FOR_INTERRUPTS();
	}
	(void) sink;
	return (now_ns() - start) / ops;
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

static void
emit_timing(ReturnSetInfo *rsinfo, const char *walker, int found, int n,
			int iterations, double *ns)
{
	Datum		values[6];
	bool		nulls[6] = {false};

	qsort(ns, TIMING_ROUNDS, sizeof(double), cmp_double);
	values[0] = CStringGetTextDatum(walker);
	values[1] = Int32GetDatum(found);
	values[2] = Int32GetDatum(n);
	values[3] = Int32GetDatum(iterations);
	values[4] = Float8GetDatum((ns[TIMING_ROUNDS / 2 - 1] + ns[TIMING_ROUNDS / 2]) / 2);
	values[5] = Float8GetDatum(ns[0]);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * Time both walkers on one chain, finding the version at visible_position
 * (default: the oldest).  Rounds alternate ABBA so that drift hits both
 * walkers alike; each walker reports its median and minimum ns per read.
 */
Datum
minidb_chain_walk_timing(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	double		ref_ns[TIMING_ROUNDS];
	double		fast_ns[TIMING_ROUNDS];
	MemoryContext scratch;
	MinidbChainError err;
	uint32		len;
	char	   *rec;
	int			iterations;
	int			ops;
	int			batch;
	int			n;
	int			target;
	int			found_ref = -1;
	int			found_fast = -1;
	int			r;
	int64		max_iterations;

	minidb_bench_check_caller();
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("chain and iterations must not be NULL")));
	rec = aligned_copy(PG_GETARG_BYTEA_PP(0), &len);
	iterations = PG_GETARG_INT32(1);
	if (iterations < TIMING_ROUNDS || iterations > TIMING_MAX_ITERATIONS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("iterations must be between %d and %d", TIMING_ROUNDS,
						TIMING_MAX_ITERATIONS)));
	if (!minidb_record_validate(rec, len, &err))
		minidb_chain_error_report(&err, NULL);
	n = minidb_record_nversions(rec, len);
	max_iterations = TIMING_MAX_WORK / timing_work_per_op(n, len);
	if (iterations > max_iterations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("at most " INT64_FORMAT " iterations for a chain of %d versions and %u bytes, not %d",
						Max(max_iterations, TIMING_ROUNDS), n, len, iterations),
				 errdetail("A call is bounded: iterations times (versions + bytes / 64) may not exceed " INT64_FORMAT ".",
						   TIMING_MAX_WORK)));
	batch = (int) Max(1, TIMING_CHECK_WORK / timing_work_per_op(n, len));
	target = PG_ARGISNULL(2) ? n - 1 : PG_GETARG_INT32(2);
	if (target < -1 || target >= n)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("visible_position must be between -1 (none) and %d", n - 1)));

	InitMaterializedSRF(fcinfo, 0);
	scratch = AllocSetContextCreate(CurrentMemoryContext, "minidb walk timing",
									ALLOCSET_DEFAULT_SIZES);
	ops = iterations / TIMING_ROUNDS;
	/* warm up both paths */
	time_reference(rec, len, target, Min(ops, 100), batch, scratch,
				   &found_ref);
	time_fast(rec, len, target, Min(ops, 100), batch, &found_fast);
	for (r = 0; r < TIMING_ROUNDS; r++)
	{
		bool		ref_first = (r % 4 == 0 || r % 4 == 3);

		if (ref_first)
			ref_ns[r] = time_reference(rec, len, target, ops, batch, scratch,
									   &found_ref);
		fast_ns[r] = time_fast(rec, len, target, ops, batch, &found_fast);
		if (!ref_first)
			ref_ns[r] = time_reference(rec, len, target, ops, batch, scratch,
									   &found_ref);
	}
	if (found_ref != found_fast)
		elog(ERROR, "walkers disagree: reference found %d, fast found %d",
			 found_ref, found_fast);
	emit_timing(rsinfo, "reference", found_ref, n, ops * TIMING_ROUNDS, ref_ns);
	emit_timing(rsinfo, "fast", found_fast, n, ops * TIMING_ROUNDS, fast_ns);
	MemoryContextDelete(scratch);
	return (Datum) 0;
}
