/*-------------------------------------------------------------------------
 *
 * bench.c
 *	  SQL-callable benchmarks: where does a read of a deep version chain
 *	  spend its time, path by path, beside heap?
 *
 *	minidb_bench_chain_depth(depths, iterations, paths, include_heap)
 *		ns, bytes and allocations per fetch by TID, for each chain depth,
 *		each reader (newest, oldest), each minidb read path and heap
 *	minidb_bench_chain_rows(depths, paths, include_heap)
 *		the row each of those fetches returns (the regression test proves
 *		with it that every path returns the same row)
 *	minidb_bench_copy_vs_alloc(bytes, iterations)
 *		copy into an existing buffer versus allocate 1 kB and copy
 *	minidb_bench_ab(a, b, depth, reader, pairs, iterations, a_format, b_format)
 *		two paths (or heap) alternately, ABBA, with the median and the
 *		interquartile range of the per-pair ratio B/A and a verdict; the
 *		two sides may read minidb records of different formats (v1, v2)
 *	minidb_bench_scan(kinds, rows, pairs, data, format)
 *		scans of many rows (sequential count and filter, index range,
 *		bitmap, TID range, ANALYZE) of a minidb table beside a heap table,
 *		ABBA, with bytes and allocations per returned row (see the section
 *		"minidb_bench_scan" at the end of this file)
 *
 * The minidb chains' record format (minidb.record_format: v1, v2, v3) is an
 * argument of every function ('v2' by default): the writer sets it before
 * inserting the row and before every update (a write produces the format
 * the setting names, turning a V1 or V2 record into V3 when it says v3).
 *
 * The chains are real.  A chain of depth d is one row, (1, 'v0'), inserted
 * and then updated d-1 times ('v1', 'v2', ...), every version by its own
 * committed transaction.  A function cannot commit, so the writes go
 * through a dblink connection to the same database (a second backend, the
 * "writer"); meanwhile this backend, inside the calling statement, holds
 * snapshots that keep the removal horizon behind the whole chain:
 *
 *	1. writer: CREATE SCHEMA minidb_bench_<pid>; one table per (table AM,
 *	   depth), (id int PRIMARY KEY, v text), fillfactor 50, autovacuum off;
 *	   INSERT (1, 'v0'); commit.
 *	2. here: the "oldest" snapshot (GetLatestSnapshot, registered).  It sees
 *	   'v0' and none of the updates.
 *	3. writer: for k = 1 .. depth-1, one transaction updating v to 'v<k>'
 *	   in every table whose depth exceeds k; synchronous_commit = on, so
 *	   that the first read may set hint bits as it would on a normal system.
 *	4. here: the "newest" snapshot, registered.  It sees 'v<depth-1>'.
 *
 * (Every name the writer is sent is schema-qualified: pg_catalog.int4,
 * pg_catalog.text, OPERATOR(pg_catalog.=), ...)
 *
 * The calling statement's own snapshot predates step 1, so this backend's
 * xmin holds the horizon: no version can be pruned, on either table AM.
 * v is not indexed and each table holds one row on a page with room, so
 * minidb prepends every version in place (one record, same TID) and heap
 * makes a HOT chain on the row's page.  Both are checked before anything
 * is timed: minidb's record must hold depth versions, heap's HOT chain
 * walked from the root on the page must be depth tuples long, and every
 * reader must get the value its snapshot should see.  The writer drops
 * its schema at the end.
 *
 * What is timed is the generic table-AM fetch by TID, table_index_fetch_tuple
 * (what an index scan calls), with the row's original TID: for heap the
 * root of the HOT chain, which heap walks forward from the oldest version;
 * for minidb the record, read through the path that the minidb.read_path
 * variable (minidb_read_path) selects, set around the timed loop.
 *
 * Measurement: warm-up fetches first (not counted); then the timed fetches
 * in a few rounds, each timed as a whole with INSTR_TIME (clock_gettime),
 * so the clock's cost is spread over thousands of fetches; ns/op is the
 * median round.  Bytes and allocations per op are counted, not estimated:
 * the fetch descriptor, the slot and everything allocated while fetching
 * live in a dedicated AllocSet context whose method table is a copy of
 * AllocSet's with alloc and realloc wrapped by counters (calls, requested
 * bytes).  The copy paths palloc in CurrentMemoryContext, which is that
 * context during the loop.  Allocations in other contexts would escape the
 * count; the fetch paths make none.
 *
 * Output: ns are rounded to 0.1 ns, ratios to 0.001, bytes and
 * allocations per op to 0.1 and 0.01 (round_to), which is finer than any
 * two runs agree.  Calls that plan a million fetches or more (or write a
 * thousand versions or more) report their steps as NOTICEs: each cell,
 * pair or round as it starts, and the writing of the chains; with
 * client_min_messages = warning they are quiet.  The A/B verdict names
 * both sides.
 *
 * Privileges: superusers and members of the role minidb_bench (created by
 * the extension script) may run the functions; the functions check that
 * themselves (minidb_bench_check_caller), so that anybody else is told
 * which role to ask for, and EXECUTE is granted to PUBLIC.  They are not
 * SECURITY DEFINER: they run as their caller, and only their dblink calls
 * run as the functions' owner (the superuser that created the extension),
 * because dblink lets only superusers connect without a password.  The
 * writer session that opens is a superuser session, so no code of the
 * caller may run in it: see "The chains" below for how its settings are
 * pinned, what it is sent, and why it is always closed.
 *
 * Bounds: every call is bounded (iterations, fetches, bytes; see
 * BENCH_MAX_*) and every loop checks for interrupts.  A cancelled or
 * failed call closes the writer connection and drops its schema
 * (bench_run); schemas of backends that died are dropped by the next call.
 *
 * Copyright (c) 2026, minidb_am developers
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <math.h>

#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "executor/execdesc.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/memnodes.h"
#include "port/atomics.h"
#include "portability/instr_time.h"
#include "postmaster/postmaster.h"
#include "storage/bufmgr.h"
#include "storage/bufpage.h"
#include "storage/itemptr.h"
#include "utils/array.h"
#include "commands/dbcommands.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/guc.h"
#include "utils/portal.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"
#include "utils/varlena.h"

#include "pg_compat.h"
#include "chain.h"
#include "btree_view.h"
#include "minidb_am.h"

PG_FUNCTION_INFO_V1(minidb_bench_chain_depth);
PG_FUNCTION_INFO_V1(minidb_bench_chain_rows);
PG_FUNCTION_INFO_V1(minidb_bench_copy_vs_alloc);
PG_FUNCTION_INFO_V1(minidb_bench_ab);

/*
 * Deepest chain: one 8 kB page must hold the whole chain for both table AMs
 * (minidb: 16 + 24 bytes a version for this row; heap: 32 bytes a tuple plus
 * a line pointer).  Deeper, minidb would move the row and heap would leave
 * the page, and neither would be a chain of that depth any more.
 */
#define BENCH_MAX_DEPTH			200
#define BENCH_MAX_PAIRS			1000

/*
 * Bounds on what one call may do, so that no call runs for hours: at most
 * 10^8 iterations per cell, 10^9 fetches in all (minutes at the slowest
 * path), 10^11 bytes copied by minidb_bench_copy_vs_alloc.  Every loop
 * checks for interrupts every BENCH_INTERRUPT_EVERY rounds (a load and a
 * branch, outside the timed inner loop's body).
 */
#define BENCH_MAX_ITERATIONS	100000000
#define BENCH_MAX_FETCHES		INT64CONST(1000000000)
#define BENCH_MAX_COPY_WORK		INT64CONST(100000000000)
#define BENCH_INTERRUPT_EVERY	4096

/* Advisory lock (class, pid) a backend holds while its schema is in use */
#define BENCH_LOCK_CLASS		0x6D696E69	/* "mini" */
#define BENCH_ROUNDS			5
#define BENCH_MAX_COPY_BYTES	(1024 * 1024)
#define BENCH_ALLOC_SIZE		1024
/* alloc_copy resets its context after this many bytes: 1000 chunks of 1 kB */
#define BENCH_ALLOC_RESET_BYTES (1000 * BENCH_ALLOC_SIZE)

/*
 * Progress: a call that plans at least this many fetches (or copies), or
 * writes at least this many versions, reports each step as a NOTICE
 * (client_min_messages = warning hides them).  Smaller calls finish within
 * a fraction of a second and say nothing, so that the regression tests'
 * output does not depend on it.
 */
#define BENCH_PROGRESS_MIN_WORK		INT64CONST(1000000)
#define BENCH_PROGRESS_MIN_VERSIONS	1000

/* The comment that marks the role as minidb_am's (sqlsrc/20_bench.sql) */
#define MINIDB_BENCH_ROLE_MARKER \
	"may run the minidb_am benchmark functions (minidb_bench_*)"

/* What is read: a minidb read path, or heap's own fetch */
#define BENCH_PATH_HEAP			(-1)

typedef enum BenchReader
{
	BENCH_NEWEST,
	BENCH_OLDEST
} BenchReader;

static const char *const reader_names[] = {"newest", "oldest"};

/* This call reports its steps as NOTICEs (set by each SQL function) */
static bool bench_progress = false;

/*
 * Round what the functions return to what the measurement can tell apart,
 * so that values print as 152.3, not 152.34166666666667: ns to 0.1 ns,
 * ratios to 0.001, counts per op to 0.01.
 */
static double
round_to(double x, int places)
{
	double		f = pow(10.0, places);

	return rint(x * f) / f;
}

/* ----------------------------------------------------------------
 * Who may call, and argument checks
 * ----------------------------------------------------------------
 */

/*
 * Superusers and members of minidb_bench (with its privileges: INHERIT)
 * may run the benchmarks and minidb_chain_walk_timing; anybody else gets
 * an error that names the role.  EXECUTE is granted to PUBLIC so that this
 * check, and its hint, is what a caller meets.
 */
void
minidb_bench_check_caller(void)
{
	Oid			role;

	if (superuser())
		return;
	role = get_role_oid(MINIDB_BENCH_ROLE, true);
	if (OidIsValid(role) && has_privs_of_role(GetUserId(), role))
		return;
	if (!OidIsValid(role))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied for the minidb benchmark functions"),
				 errdetail("Only superusers and members of role \"%s\" may run the benchmarks and minidb_chain_walk_timing, and that role does not exist.",
						   MINIDB_BENCH_ROLE),
				 errhint("A superuser may create it again and grant it: CREATE ROLE %s NOLOGIN; COMMENT ON ROLE %s IS '%s'; GRANT %s TO %s;",
						 MINIDB_BENCH_ROLE, MINIDB_BENCH_ROLE,
						 MINIDB_BENCH_ROLE_MARKER, MINIDB_BENCH_ROLE,
						 quote_identifier(GetUserNameFromId(GetUserId(), false)))));
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied for the minidb benchmark functions"),
			 errdetail("Only superusers and members of role \"%s\" may run the benchmarks and minidb_chain_walk_timing.",
					   MINIDB_BENCH_ROLE),
			 errhint("A superuser may grant the role: GRANT %s TO %s;",
					 MINIDB_BENCH_ROLE,
					 quote_identifier(GetUserNameFromId(GetUserId(), false)))));
}

static const char *
path_name(int path)
{
	switch (path)
	{
		case MINIDB_PATH_COPY_EAGER:
			return "copy_eager";
		case MINIDB_PATH_COPY_LAZY:
			return "copy_lazy";
		case MINIDB_PATH_VIEW_LAZY:
			return "view_lazy";
		case BENCH_PATH_HEAP:
			return "heap";
	}
	return "?";
}

/* A read path by name; 'heap' only when allow_heap */
static int
parse_path(const char *name, bool allow_heap)
{
	if (strcmp(name, "copy_eager") == 0)
		return MINIDB_PATH_COPY_EAGER;
	if (strcmp(name, "copy_lazy") == 0)
		return MINIDB_PATH_COPY_LAZY;
	if (strcmp(name, "view_lazy") == 0)
		return MINIDB_PATH_VIEW_LAZY;
	if (allow_heap && strcmp(name, "heap") == 0)
		return BENCH_PATH_HEAP;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown read path \"%s\"", name),
			 errhint(allow_heap ?
					 "Valid values are copy_eager, copy_lazy, view_lazy and heap." :
					 "Valid values are copy_eager, copy_lazy and view_lazy (heap is measured when include_heap is true).")));
	return 0;					/* keep compiler quiet */
}

static BenchReader
parse_reader(const char *name)
{
	if (strcmp(name, "newest") == 0)
		return BENCH_NEWEST;
	if (strcmp(name, "oldest") == 0)
		return BENCH_OLDEST;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown reader \"%s\"", name),
			 errhint("Valid values are newest (a snapshot taken after the whole chain) and oldest (one taken before its first update).")));
	return BENCH_NEWEST;		/* keep compiler quiet */
}

/* A minidb record format by name, as minidb.record_format spells it */
static int
parse_format(const char *name)
{
	if (strcmp(name, "v1") == 0)
		return MINIDB_FORMAT_V1;
	if (strcmp(name, "v2") == 0)
		return MINIDB_FORMAT_V2;
	if (strcmp(name, "v3") == 0)
		return MINIDB_FORMAT_V3;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown record format \"%s\"", name),
			 errhint("Valid values are v1, v2 and v3 (see minidb.record_format).")));
	return 0;					/* keep compiler quiet */
}

static void
check_not_null(FunctionCallInfo fcinfo, int argno, const char *argname)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", argname)));
}

static void
check_depth(int depth)
{
	if (depth < 1 || depth > BENCH_MAX_DEPTH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("chain depth %d is out of range", depth),
				 errdetail("A depth is between 1 and %d versions: the whole chain must fit on one page for both table access methods.",
						   BENCH_MAX_DEPTH)));
}

static void
check_iterations(int iterations)
{
	if (iterations <= 0 || iterations > BENCH_MAX_ITERATIONS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("iterations must be between 1 and %d, not %d",
						BENCH_MAX_ITERATIONS, iterations)));
}

/* A call's fetches (timed and warm-up) are bounded: see BENCH_MAX_FETCHES */
static void
check_fetches(int64 fetches)
{
	if (fetches > BENCH_MAX_FETCHES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("this call would make " INT64_FORMAT " fetches, more than the limit of " INT64_FORMAT,
						fetches, (int64) BENCH_MAX_FETCHES),
				 errhint("Ask for fewer iterations, depths, paths or pairs, and make several calls.")));
}

/* The elements of a one-dimensional int4[] or text[] argument, no NULLs */
static void
array_elements(ArrayType *arr, Oid elemtype, const char *argname,
			   Datum **elems, int *nelems)
{
	bool	   *nulls;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("%s must be a one-dimensional array", argname)));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign,
					  elems, &nulls, nelems);
	for (int i = 0; i < *nelems; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain nulls", argname)));
}

/* depths[]: each in range, duplicates dropped, order kept */
static int *
parse_depths(ArrayType *arr, int *ndepths)
{
	Datum	   *elems;
	int			n;
	int		   *depths;
	int			k = 0;

	array_elements(arr, INT4OID, "depths", &elems, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("depths must not be empty")));
	depths = palloc(sizeof(int) * n);
	for (int i = 0; i < n; i++)
	{
		int			d = DatumGetInt32(elems[i]);
		bool		seen = false;

		check_depth(d);
		for (int j = 0; j < k; j++)
			seen |= (depths[j] == d);
		if (!seen)
			depths[k++] = d;
	}
	*ndepths = k;
	return depths;
}

/* paths[]: minidb read paths, duplicates dropped, order kept */
static int *
parse_paths(ArrayType *arr, int *npaths)
{
	Datum	   *elems;
	int			n;
	int		   *paths;
	int			k = 0;

	array_elements(arr, TEXTOID, "paths", &elems, &n);
	paths = palloc(sizeof(int) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		char	   *name = TextDatumGetCString(elems[i]);
		int			p = parse_path(name, false);
		bool		seen = false;

		for (int j = 0; j < k; j++)
			seen |= (paths[j] == p);
		if (!seen)
			paths[k++] = p;
	}
	*npaths = k;
	return paths;
}

/* ----------------------------------------------------------------
 * Counting allocations
 *
 * A dedicated AllocSet context whose method table is a copy of AllocSet's
 * with alloc (and, on 15, realloc) wrapped: palloc, palloc0 and
 * MemoryContextAlloc in this context go through them, and on 15 so does
 * repalloc of its chunks.  From 16 on, repalloc, pfree and
 * GetMemoryChunkSpace find their methods through the chunk's header, not
 * the context, so repalloc is not counted there: allocs/op counts the
 * palloc family only (the fetch paths never repalloc, so the figures mean
 * the same on every version).  pfree, reset and delete are AllocSet's own.
 * Bytes are the sizes requested (what the code asked for; the allocator
 * rounds chunks up to a power of two).
 * ----------------------------------------------------------------
 */
static const MemoryContextMethods *counting_orig;
static MemoryContextMethods counting_methods;
static uint64 counting_allocs;
static uint64 counting_bytes;

#if PG_VERSION_NUM >= 170000	/* 17: alloc takes flags */
static void *
counting_alloc(MemoryContext context, Size size, int flags)
{
	counting_allocs++;
	counting_bytes += size;
	return counting_orig->alloc(context, size, flags);
}
#else
static void *
counting_alloc(MemoryContext context, Size size)
{
	counting_allocs++;
	counting_bytes += size;
	return counting_orig->alloc(context, size);
}
#endif

#if PG_VERSION_NUM < 160000		/* 16: realloc no longer through the context */
static void *
counting_realloc(MemoryContext context, void *pointer, Size size)
{
	counting_allocs++;
	counting_bytes += size;
	return counting_orig->realloc(context, pointer, size);
}
#endif

static MemoryContext
counting_context_create(void)
{
	MemoryContext cxt = AllocSetContextCreate(CurrentMemoryContext,
											  "minidb bench (counting)",
											  ALLOCSET_DEFAULT_SIZES);

	if (counting_orig == NULL)
	{
		counting_orig = cxt->methods;
		counting_methods = *cxt->methods;
		counting_methods.alloc = counting_alloc;
#if PG_VERSION_NUM < 160000
		counting_methods.realloc = counting_realloc;
#endif
	}
	Assert(cxt->methods == counting_orig);
	cxt->methods = &counting_methods;
	return cxt;
}

/* ----------------------------------------------------------------
 * The chains: written by a second backend through dblink
 *
 * The writer is a superuser session (the functions' owner): dblink lets
 * only superusers connect without a password.  No code of the caller may
 * ever run in it, so:
 *	- its search_path is pinned before anything else, in the startup
 *	  packet (options -c search_path=pg_catalog,pg_temp, which outranks
 *	  ALTER DATABASE/ROLE ... SET) and again by its first command; so is
 *	  role (ALTER DATABASE ... SET role would otherwise make the session
 *	  run as the database owner's choice of role);
 *	- its identity and settings are checked before it does anything;
 *	- every name it is sent is schema-qualified, types and operators
 *	  included, and every statement is built here from integers, fixed
 *	  names and quote_identifier/quote_literal output;
 *	- the connection is closed on every path out of the function, errors
 *	  and cancels included (a dblink connection outlives the statement, and
 *	  the caller could run anything through it): see bench_run().
 * The calling backend runs as the caller, with its search_path pinned by
 * the functions' SET clause; only the dblink calls run as the owner.
 * ----------------------------------------------------------------
 */
typedef struct BenchChain
{
	bool		heap;			/* heap table, else minidb */
	int			format;			/* minidb: MINIDB_FORMAT_*; heap: 0 */
	int			depth;
	char		relname[NAMEDATALEN];
	Relation	rel;			/* open (AccessShareLock) while measuring */
	ItemPointerData tid;		/* the row's original TID (heap: the root) */
	int			versions;		/* chain length found on the page */
} BenchChain;

typedef struct BenchEnv
{
	Oid			owner;			/* the writer connects as this role */
	char	   *owner_name;
	char		conname[NAMEDATALEN];	/* dblink connection name */
	char		schema[NAMEDATALEN];	/* the writer's scratch schema */
	char	   *dblink_nsp;		/* quoted schema of the dblink functions */
	bool		connected_once; /* the writer connected: a schema may exist */
	int			nchains;
	BenchChain *chains;
	Snapshot	snap[2];		/* [BENCH_NEWEST], [BENCH_OLDEST] */
	Oid			save_userid;	/* saved by as_owner() */
	int			save_sec_context;
	MemoryContext cxt;			/* the call's: outlives SPI and errors */
} BenchEnv;

/* The role that owns the function being called: the writer's role */
static Oid
function_owner(FunctionCallInfo fcinfo)
{
	Oid			fnoid = fcinfo->flinfo->fn_oid;
	HeapTuple	tup = SearchSysCache1(PROCOID, ObjectIdGetDatum(fnoid));
	Oid			owner;

	if (!HeapTupleIsValid(tup))
		elog(ERROR, "cache lookup failed for function %u", fnoid);
	owner = ((Form_pg_proc) GETSTRUCT(tup))->proowner;
	ReleaseSysCache(tup);
	return owner;
}

/* Everything bench_run() and its cleanup need, before any work is done */
static void
bench_env_init(BenchEnv *env, FunctionCallInfo fcinfo)
{
	memset(env, 0, sizeof(*env));
	env->cxt = CurrentMemoryContext;
	env->owner = function_owner(fcinfo);
	env->owner_name = GetUserNameFromId(env->owner, false);
	snprintf(env->conname, NAMEDATALEN, "minidb_bench_%d", MyProcPid);
	snprintf(env->schema, NAMEDATALEN, "minidb_bench_%d", MyProcPid);
}

/*
 * Run the dblink calls as the owner; everything else runs as the caller.
 * An error in between is cleaned up by the (sub)transaction's abort, which
 * restores the user id and security context.
 */
static void
as_owner(BenchEnv *env)
{
	GetUserIdAndSecContext(&env->save_userid, &env->save_sec_context);
	SetUserIdAndSecContext(env->owner,
						   env->save_sec_context |
						   SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
}

static void
as_caller(BenchEnv *env)
{
	SetUserIdAndSecContext(env->save_userid, env->save_sec_context);
}

/* Run one query through SPI; returns the number of rows */
static uint64
spi_exec(const char *sql, int nargs, Oid *argtypes, Datum *values,
		 bool read_only)
{
	int			rc;

	rc = SPI_execute_with_args(sql, nargs, argtypes, values, NULL,
							   read_only, 0);
	if (rc < 0)
		elog(ERROR, "SPI_execute_with_args failed (%d): %s", rc, sql);
	return SPI_processed;
}

/* A dblink call with the connection name as $1 (and text $2), as owner */
static uint64
dblink_call(BenchEnv *env, const char *fmt, const char *arg2)
{
	char	   *q = psprintf(fmt, env->dblink_nsp, env->dblink_nsp);
	Oid			types[2] = {TEXTOID, TEXTOID};
	Datum		vals[2];
	uint64		n;

	vals[0] = CStringGetTextDatum(env->conname);
	if (arg2)
		vals[1] = CStringGetTextDatum(arg2);
	as_owner(env);
	n = spi_exec(q, arg2 ? 2 : 1, types, vals, false);
	as_caller(env);
	pfree(q);
	return n;
}

/* Execute sql in the writer's session: one transaction, committed */
static void
writer_exec(BenchEnv *env, const char *sql)
{
	dblink_call(env, "SELECT %s.dblink_exec($1, $2)", sql);
}

/*
 * Run a query returning one text column in the writer's session; the rows
 * are in SPI_tuptable.
 */
static uint64
writer_query(BenchEnv *env, const char *sql)
{
	return dblink_call(env,
					   "SELECT r.v FROM %s.dblink($1, $2) AS r(v pg_catalog.text)",
					   sql);
}

/* Row i of the last writer_query, palloc'd (NULL for a NULL) */
static char *
writer_value(uint64 i)
{
	return SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
}

/* Append a conninfo keyword = 'value' pair, quoted as libpq wants it */
static void
conninfo_add(StringInfo s, const char *key, const char *value)
{
	appendStringInfo(s, "%s%s='", s->len > 0 ? " " : "", key);
	for (const char *p = value; *p; p++)
	{
		if (*p == '\'' || *p == '\\')
			appendStringInfoChar(s, '\\');
		appendStringInfoChar(s, *p);
	}
	appendStringInfoChar(s, '\'');
}

/* Where the writer connects: the first unix socket directory, else TCP */
static const char *
writer_host(void)
{
	char	   *dirs = pstrdup(Unix_socket_directories ? Unix_socket_directories : "");
	List	   *dirlist = NIL;

	if (SplitDirectoriesString(dirs, ',', &dirlist) && dirlist != NIL)
		return (const char *) linitial(dirlist);
	return "127.0.0.1";
}

/*
 * How the writer reaches this server and database: the first unix socket
 * directory (else the loopback address), this server's port, the owner.
 * Every value is quoted (the database name is its owner's choice).
 */
static char *
writer_conninfo(BenchEnv *env)
{
	StringInfoData s;

	initStringInfo(&s);
	conninfo_add(&s, "host", writer_host());
	conninfo_add(&s, "port", psprintf("%d", PostPortNumber));
	conninfo_add(&s, "dbname", get_database_name(MyDatabaseId));
	conninfo_add(&s, "user", env->owner_name);
	conninfo_add(&s, "application_name", "minidb_bench writer");
	/* settings of the startup packet outrank ALTER DATABASE/ROLE SET */
	conninfo_add(&s, "options", "-c search_path=pg_catalog,pg_temp -c role=none");
	return s.data;
}

/* A writer that cannot connect: say what the connection needs */
static void
writer_connect_error_callback(void *arg)
{
	BenchEnv   *env = (BenchEnv *) arg;

	if (geterrcode() == ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION)
		errhint("The benchmark writes its chains through dblink, connecting to database \"%s\" as role \"%s\" through %s (port %d) without a password: "
				"the server must let that connection in (pg_hba.conf: trust or peer for it, or the role's password in the server's operating-system user's ~/.pgpass), "
				"and the database must allow connections.",
				get_database_name(MyDatabaseId), env->owner_name,
				writer_host(), PostPortNumber);
}

/* Close the writer connection, if it is open (as the owner) */
static void
writer_disconnect(BenchEnv *env)
{
	dblink_call(env,
				"SELECT %s.dblink_disconnect(c)"
				" FROM pg_catalog.unnest(%s.dblink_get_connections()) AS c"
				" WHERE c OPERATOR(pg_catalog.=) $1", NULL);
}

/*
 * The writer connection, afresh (a failed earlier call may have left one
 * of this name, or the caller may have opened one), checked before use.
 */
static void
writer_connect(BenchEnv *env)
{
	ErrorContextCallback errcallback;
	char	   *expected;
	char	   *got;

	if (spi_exec("SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
				 " JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) e.extnamespace"
				 " WHERE e.extname OPERATOR(pg_catalog.=) 'dblink'", 0, NULL, NULL, true) != 1)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("the chain-depth benchmarks need the dblink extension"),
				 errdetail("Each version of a chain is written by its own committed transaction, through a dblink connection to this database, while this session's snapshot holds the removal horizon."),
				 errhint("Run CREATE EXTENSION dblink in this database (it ships with PostgreSQL's contrib modules).")));
	/* kept in the call's context: the cleanup after an error needs it */
	env->dblink_nsp = MemoryContextStrdup(env->cxt,
										  SPI_getvalue(SPI_tuptable->vals[0],
													   SPI_tuptable->tupdesc, 1));

	writer_disconnect(env);

	errcallback.callback = writer_connect_error_callback;
	errcallback.arg = env;
	errcallback.previous = error_context_stack;
	error_context_stack = &errcallback;
	dblink_call(env, "SELECT %s.dblink_connect($1, $2)", writer_conninfo(env));
	error_context_stack = errcallback.previous;
	env->connected_once = true;

	/* pinned again, first: nothing resolves a name before this */
	writer_exec(env, "SET search_path = pg_catalog, pg_temp; SET ROLE NONE;"
				" SET synchronous_commit = on");
	expected = psprintf("%s|%s|pg_catalog, pg_temp|%s", env->owner_name,
						env->owner_name, get_database_name(MyDatabaseId));
	if (writer_query(env,
					 "SELECT pg_catalog.concat_ws('|', SESSION_USER, CURRENT_USER,"
					 " pg_catalog.current_setting('search_path'),"
					 " pg_catalog.current_database())") != 1 ||
		(got = writer_value(0)) == NULL || strcmp(got, expected) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the minidb benchmark's writer session is not what it must be"),
				 errdetail("Expected session user, current user, search_path and database \"%s\".",
						   expected)));
}

/*
 * The writer's scratch schema, minidb_bench_<pid>.  This backend holds an
 * advisory lock (BENCH_LOCK_CLASS, pid) until its transaction ends, so
 * that another backend's cleanup never drops a schema in use.  Leftovers
 * of backends that are gone (a cancel whose cleanup failed, a crash) are
 * dropped first; a schema of that name the owner does not own is never
 * touched.
 */
static void
drop_dead_leftovers(BenchEnv *env)
{
	List	   *names = NIL;
	ListCell   *lc;
	uint64		n;

	n = writer_query(env,
					 "SELECT n.nspname::pg_catalog.text FROM pg_catalog.pg_namespace n"
					 " WHERE n.nspname OPERATOR(pg_catalog.~) '^minidb_bench_[0-9]{1,9}$'"
					 " AND n.nspowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r"
					 "  WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)"
					 " AND NOT EXISTS (SELECT FROM pg_catalog.pg_stat_activity a"
					 "  WHERE pg_catalog.concat('minidb_bench_', a.pid)"
					 "  OPERATOR(pg_catalog.=) n.nspname::pg_catalog.text)");
	for (uint64 i = 0; i < n; i++)
		names = lappend(names, writer_value(i));
	foreach(lc, names)
	{
		const char *name = (const char *) lfirst(lc);
		int			pid = atoi(name + strlen("minidb_bench_"));

		writer_exec(env, "BEGIN");
		if (writer_query(env,
						 psprintf("SELECT pg_catalog.pg_try_advisory_xact_lock(%d, %d)::pg_catalog.text",
								  BENCH_LOCK_CLASS, pid)) == 1 &&
			strcmp(writer_value(0), "true") == 0)
			writer_exec(env, psprintf("DROP SCHEMA IF EXISTS %s CASCADE",
									  quote_identifier(name)));
		writer_exec(env, "COMMIT");
	}
}

/*
 * Drop this backend's scratch schema, if it exists and is the owner's.  A
 * schema of that name that somebody else owns is never dropped: an ERROR
 * before the benchmark starts (refuse_foreign), silently left alone by the
 * cleanup after an error.
 */
static void
drop_own_schema(BenchEnv *env, bool refuse_foreign)
{
	char	   *q;

	q = psprintf("SELECT pg_catalog.pg_get_userbyid(n.nspowner)::pg_catalog.text"
				 " FROM pg_catalog.pg_namespace n"
				 " WHERE n.nspname OPERATOR(pg_catalog.=) %s",
				 quote_literal_cstr(env->schema));
	if (writer_query(env, q) == 0)
		return;
	if (strcmp(writer_value(0), env->owner_name) != 0)
	{
		if (!refuse_foreign)
			return;
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_SCHEMA),
				 errmsg("schema \"%s\" already exists and belongs to role \"%s\"",
						env->schema, writer_value(0)),
				 errdetail("The benchmark writes its chains into a scratch schema of this name, owned by role \"%s\", and drops it afterwards.",
						   env->owner_name),
				 errhint("Drop or rename that schema.")));
	}
	writer_exec(env, psprintf("DROP SCHEMA %s CASCADE",
							  quote_identifier(env->schema)));
}

static void
scratch_schema_create(BenchEnv *env)
{
	Oid			types[2] = {INT4OID, INT4OID};
	Datum		vals[2];

	vals[0] = Int32GetDatum(BENCH_LOCK_CLASS);
	vals[1] = Int32GetDatum(MyProcPid);
	spi_exec("SELECT pg_catalog.pg_advisory_xact_lock($1, $2)", 2, types,
			 vals, false);
	drop_dead_leftovers(env);
	drop_own_schema(env, true);
	writer_exec(env, psprintf("CREATE SCHEMA %s",
							  quote_identifier(env->schema)));
}

/* Register a fresh snapshot on the current resource owner */
static Snapshot
take_snapshot(void)
{
	return RegisterSnapshot(GetLatestSnapshot());
}

/* minidb: how many versions the record at tid holds, and its format */
static void
count_versions_cb(char *rec, uint32 len, Buffer buffer, void *arg)
{
	((int *) arg)[0] = minidb_record_nversions(rec, len);
	((int *) arg)[1] = minidb_record_format_of(rec);
}

/* heap: the length of the HOT chain rooted at tid, walked on its page */
static int
heap_hot_chain_length(Relation rel, ItemPointer tid)
{
	BlockNumber blkno = ItemPointerGetBlockNumber(tid);
	OffsetNumber off = ItemPointerGetOffsetNumber(tid);
	Buffer		buffer = ReadBuffer(rel, blkno);
	Page		page;
	int			n = 0;

	LockBuffer(buffer, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buffer);
	while (n <= MaxHeapTuplesPerPage &&
		   off >= FirstOffsetNumber && off <= PageGetMaxOffsetNumber(page))
	{
		ItemId		lp = PageGetItemId(page, off);
		HeapTupleHeader htup;

		if (ItemIdIsRedirected(lp))
		{
			off = ItemIdGetRedirect(lp);
			continue;
		}
		if (!ItemIdIsNormal(lp))
			break;
		htup = (HeapTupleHeader) PageGetItem(page, lp);
		n++;
		if (!HeapTupleHeaderIsHotUpdated(htup) ||
			ItemPointerGetBlockNumber(&htup->t_ctid) != blkno)
			break;
		off = ItemPointerGetOffsetNumber(&htup->t_ctid);
	}
	UnlockReleaseBuffer(buffer);
	return n;
}

/*
 * Build the chains (minidb and/or heap, for each depth) and the two
 * snapshots, and open the tables.  SPI must be connected; env is
 * initialized (bench_env_init).
 */
static void
bench_env_setup(BenchEnv *env, const int *depths, int ndepths,
				const int *formats, int nformats, bool want_heap)
{
	StringInfoData sql;
	const char *schema = quote_identifier(env->schema);
	int			maxdepth = 0;
	int			n = 0;
	int			nversions = 0;
	bool		progress;

	env->chains = palloc0(sizeof(BenchChain) * ndepths * (nformats + 1));
	for (int i = 0; i < ndepths; i++)
	{
		/* h < nformats: a minidb chain of formats[h]; h == nformats: heap */
		for (int h = 0; h <= nformats; h++)
		{
			BenchChain *c;

			if (h == nformats && !want_heap)
				continue;
			c = &env->chains[n++];
			c->heap = (h == nformats);
			c->format = c->heap ? 0 : formats[h];
			c->depth = depths[i];
			if (c->heap || c->format == MINIDB_FORMAT_V1)
				snprintf(c->relname, NAMEDATALEN, "%s_d%d",
						 c->heap ? "heap" : "minidb", c->depth);
			else
				snprintf(c->relname, NAMEDATALEN, "minidb_v%d_d%d",
						 c->format, c->depth);
		}
		maxdepth = Max(maxdepth, depths[i]);
	}
	env->nchains = n;

	for (int i = 0; i < n; i++)
		nversions += env->chains[i].depth;
	progress = bench_progress || nversions >= BENCH_PROGRESS_MIN_VERSIONS;
	if (progress)
		ereport(NOTICE,
				(errmsg_plural("minidb_bench: writing %d chain of depth %d",
							   "minidb_bench: writing %d chains of depths up to %d",
							   n, n, maxdepth)));

	writer_connect(env);
	scratch_schema_create(env);

	/* 1. the tables and their rows, committed */
	initStringInfo(&sql);
	for (int i = 0; i < n; i++)
	{
		BenchChain *c = &env->chains[i];

		/* the record's format is chosen when the row is inserted */
		if (!c->heap)
			appendStringInfo(&sql, "SET minidb.record_format = 'v%d';",
							 c->format);
		appendStringInfo(&sql,
						 "CREATE TABLE %s.%s (id pg_catalog.int4 PRIMARY KEY, v pg_catalog.text) USING %s"
						 " WITH (fillfactor = 50, autovacuum_enabled = false);"
						 " INSERT INTO %s.%s VALUES (1, 'v0'::pg_catalog.text);",
						 schema, c->relname, c->heap ? "heap" : "minidb",
						 schema, c->relname);
	}
	if (nformats > 0)
		appendStringInfoString(&sql, " RESET minidb.record_format;");
	writer_exec(env, sql.data);

	/*
	 * Where the rows landed: the TIDs every read below starts from.  Asked
	 * of the writer, whose snapshot sees its own commits whatever this
	 * transaction's isolation level.
	 */
	for (int i = 0; i < n; i++)
	{
		BenchChain *c = &env->chains[i];
		char	   *remote;
		char	   *tid;

		remote = psprintf("SELECT ctid::pg_catalog.text FROM %s.%s"
						  " WHERE id OPERATOR(pg_catalog.=) 1",
						  schema, c->relname);
		if (writer_query(env, remote) != 1 || (tid = writer_value(0)) == NULL)
			elog(ERROR, "minidb bench: the row of %s.%s is missing",
				 env->schema, c->relname);
		c->tid = *(ItemPointer)
			DatumGetPointer(DirectFunctionCall1(tidin, CStringGetDatum(tid)));
	}

	/* 2. the oldest reader's snapshot: before every update */
	env->snap[BENCH_OLDEST] = take_snapshot();

	/* 3. one committed transaction per version */
	for (int k = 1; k < maxdepth; k++)
	{
		resetStringInfo(&sql);
		for (int i = 0; i < n; i++)
		{
			BenchChain *c = &env->chains[i];

			if (c->depth <= k)
				continue;
			/* a write keeps the format only when the setting says so */
			if (!c->heap)
				appendStringInfo(&sql, "SET minidb.record_format = 'v%d';",
								 c->format);
			appendStringInfo(&sql,
							 "UPDATE %s.%s SET v = 'v%d'::pg_catalog.text"
							 " WHERE id OPERATOR(pg_catalog.=) 1;",
							 schema, c->relname, k);
		}
		if (nformats > 0)
			appendStringInfoString(&sql, " RESET minidb.record_format;");
		writer_exec(env, sql.data);
		CHECK_FOR_INTERRUPTS();
	}

	/* 4. the newest reader's snapshot */
	env->snap[BENCH_NEWEST] = take_snapshot();
	if (progress)
		ereport(NOTICE,
				(errmsg("minidb_bench: chains written")));

	/* open the tables and check that each chain is what it claims */
	for (int i = 0; i < n; i++)
	{
		BenchChain *c = &env->chains[i];

		/* the schema is the owner's: no USAGE for the caller */
		as_owner(env);
		c->rel = table_openrv(makeRangeVar(env->schema, c->relname, -1),
							  AccessShareLock);
		as_caller(env);
		if (c->heap)
			c->versions = heap_hot_chain_length(c->rel, &c->tid);
		else
		{
			Buffer		pin = InvalidBuffer;
			int			found[2] = {0, 0};

			minidb_view_record(c->rel, &c->tid, &pin, count_versions_cb,
							   found);
			if (BufferIsValid(pin))
				ReleaseBuffer(pin);
			c->versions = found[0];
			if (found[1] != c->format)
				ereport(ERROR,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("minidb bench: the record of \"%s\" has format %d, not %d",
								c->relname, found[1], c->format)));
		}
		if (c->versions != c->depth)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("minidb bench: the %s chain of depth %d has %d versions at TID (%u,%u)",
							c->heap ? "heap HOT" : "minidb", c->depth,
							c->versions,
							ItemPointerGetBlockNumber(&c->tid),
							ItemPointerGetOffsetNumber(&c->tid)),
					 errdetail(c->heap ?
							   "Every update should have been a HOT update on the row's page." :
							   "Every update should have prepended a version in place.")));
	}
	pfree(sql.data);
}

/* Close the tables, drop the writer's schema, disconnect */
static void
bench_env_teardown(BenchEnv *env)
{
	for (int i = 0; i < env->nchains; i++)
		if (env->chains[i].rel)
		{
			/* releases the lock: the writer is about to drop the table */
			table_close(env->chains[i].rel, AccessShareLock);
			env->chains[i].rel = NULL;
		}
	for (int r = 0; r < 2; r++)
		if (env->snap[r])
		{
			UnregisterSnapshot(env->snap[r]);
			env->snap[r] = NULL;
		}
	drop_own_schema(env, true);
	writer_disconnect(env);
}

/*
 * fn(env, arg) with SPI connected, in a subtransaction.  Returns NULL when
 * it succeeded, else the error (the subtransaction is rolled back: its
 * locks, snapshots, SPI state and user id are gone).
 */
typedef void (*BenchStep) (BenchEnv *env, void *arg);

static ErrorData *
bench_try(BenchEnv *env, BenchStep fn, void *arg)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	ErrorData  *volatile edata = NULL;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		fn(env, arg);
		SPI_finish();
		ReleaseCurrentSubTransaction();
	}
	PG_CATCH();
	{
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
	}
	PG_END_TRY();
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;
	return edata;
}

static void
close_step(BenchEnv *env, void *arg)
{
	writer_disconnect(env);
}

static void
drop_step(BenchEnv *env, void *arg)
{
	writer_connect(env);
	drop_own_schema(env, false);
	writer_disconnect(env);
}

/*
 * Run body(env, arg), which builds the chains, measures and tears down.
 * On any error (a cancel, statement_timeout, a failed check) the writer
 * connection is closed, the scratch schema dropped through a fresh
 * connection, and the error raised again.  Closing the connection is not
 * optional: it is a superuser session that the caller could otherwise
 * use through dblink; if even that fails, the backend exits.
 */
static void
bench_run(BenchEnv *env, BenchStep body, void *arg)
{
	ErrorData  *edata = bench_try(env, body, arg);
	ErrorData  *cleanup;

	if (edata == NULL)
		return;
	if (env->dblink_nsp != NULL)
	{
		if ((cleanup = bench_try(env, close_step, NULL)) != NULL)
			ereport(FATAL,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("could not close the minidb benchmark's writer connection: %s",
							cleanup->message)));
		if (env->connected_once &&
			(cleanup = bench_try(env, drop_step, NULL)) != NULL)
		{
			ereport(WARNING,
					(errmsg("could not drop the minidb benchmark's schema \"%s\": %s",
							env->schema, cleanup->message),
					 errhint("The next benchmark call in this database drops it once this session has ended.")));
			if ((cleanup = bench_try(env, close_step, NULL)) != NULL)
				ereport(FATAL,
						(errcode(ERRCODE_INTERNAL_ERROR),
						 errmsg("could not close the minidb benchmark's writer connection: %s",
								cleanup->message)));
		}
	}
	ReThrowError(edata);
}

static BenchChain *
find_chain(BenchEnv *env, bool heap, int depth, int format)
{
	for (int i = 0; i < env->nchains; i++)
		if (env->chains[i].heap == heap && env->chains[i].depth == depth &&
			(heap || env->chains[i].format == format))
			return &env->chains[i];
	elog(ERROR, "minidb bench: no %s chain of depth %d",
		 heap ? "heap" : "minidb", depth);
	return NULL;
}

/* ----------------------------------------------------------------
 * Fetching and timing
 * ----------------------------------------------------------------
 */
typedef struct BenchResult
{
	int64		iterations;		/* timed fetches */
	double		ns_per_op;		/* median of the rounds */
	double		bytes_per_op;
	double		allocs_per_op;
} BenchResult;

/* The value of v this reader must see in a chain of this depth */
static char *
expected_value(int depth, BenchReader reader)
{
	return psprintf("v%d", reader == BENCH_NEWEST ? depth - 1 : 0);
}

/*
 * One fetch by TID, as an index scan makes it.  Heap's fetch overwrites the
 * TID it is given with the TID of the version it found in the HOT chain
 * (as index scans expect: xs_heaptid is refilled for every index entry),
 * so every fetch starts from a fresh copy of the root TID.
 */
static inline void
fetch_once(IndexFetchTableData *fetch, BenchChain *c, Snapshot snap,
		   TupleTableSlot *slot)
{
	ItemPointerData tid = c->tid;
	bool		call_again = false;
	bool		all_dead = false;

	if (!table_index_fetch_tuple(fetch, &tid, snap, slot, &call_again,
								 &all_dead))
		elog(ERROR, "minidb bench: no visible row at TID (%u,%u) of \"%s\"",
			 ItemPointerGetBlockNumber(&c->tid),
			 ItemPointerGetOffsetNumber(&c->tid), c->relname);
}

/* Check the row in slot: id 1, v as the reader must see it */
static void
check_row(TupleTableSlot *slot, BenchChain *c, BenchReader reader, int path)
{
	bool		isnull;
	Datum		d;
	char	   *want = expected_value(c->depth, reader);
	char	   *got;

	d = slot_getattr(slot, 2, &isnull);
	got = isnull ? "NULL" : TextDatumGetCString(d);
	if (DatumGetInt32(slot_getattr(slot, 1, &isnull)) != 1 ||
		strcmp(got, want) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("minidb bench: %s reader of the %s chain of depth %d read \"%s\" through %s, expected \"%s\"",
						reader_names[reader], c->heap ? "heap" : "minidb",
						c->depth, got, path_name(path), want)));
}

/* What a fetch returned, for minidb_bench_chain_rows */
typedef struct BenchRow
{
	ItemPointerData tid;		/* as the slot reports it */
	int32		id;
	char	   *v;
	TransactionId xmin;
} BenchRow;

static void
describe_row(TupleTableSlot *slot, BenchRow *row, MemoryContext cxt)
{
	bool		isnull;
	Datum		d;

	row->tid = slot->tts_tid;
	row->id = DatumGetInt32(slot_getattr(slot, 1, &isnull));
	d = slot_getattr(slot, 2, &isnull);
	row->v = isnull ? NULL : MemoryContextStrdup(cxt, TextDatumGetCString(d));
	d = slot_getsysattr(slot, MinTransactionIdAttributeNumber, &isnull);
	row->xmin = isnull ? InvalidTransactionId : DatumGetTransactionId(d);
}

static int
cmp_double(const void *a, const void *b)
{
	double		x = *(const double *) a;
	double		y = *(const double *) b;

	return (x > y) - (x < y);
}

/*
 * The loops of measure(), in the counting context with minidb_read_path
 * set: warmup fetches first (the first one checked), then iterations timed
 * fetches in rounds; round_ns[r] gets each round's ns per fetch.
 */
static void
measure_loop(BenchChain *c, Snapshot snap, BenchReader reader, int path,
			 int64 iterations, int64 warmup, int rounds, double *round_ns,
			 BenchResult *res, BenchRow *row, MemoryContext rowcxt)
{
	TupleTableSlot *slot = table_slot_create(c->rel, NULL);
	IndexFetchTableData *fetch = table_index_fetch_begin(c->rel);
	uint64		allocs0;
	uint64		bytes0;
	int64		done = 0;

	/* warm-up: not timed, not counted; the first row is checked */
	fetch_once(fetch, c, snap, slot);
	check_row(slot, c, reader, path);
	if (row)
		describe_row(slot, row, rowcxt);
	for (int64 i = 1; i < warmup; i++)
	{
		fetch_once(fetch, c, snap, slot);
		if (i % BENCH_INTERRUPT_EVERY == 0)
			CHECK_FOR_INTERRUPTS();
	}

	allocs0 = counting_allocs;
	bytes0 = counting_bytes;
	for (int r = 0; r < rounds; r++)
	{
		int64		n = (iterations - done) / (rounds - r);
		instr_time	start;
		instr_time	elapsed;

		INSTR_TIME_SET_CURRENT(start);
		/* in chunks, checking for interrupts in between */
		for (int64 i = 0; i < n; i += BENCH_INTERRUPT_EVERY)
		{
			int64		end = Min(n, i + BENCH_INTERRUPT_EVERY);

			for (int64 j = i; j < end; j++)
				fetch_once(fetch, c, snap, slot);
			CHECK_FOR_INTERRUPTS();
		}
		INSTR_TIME_SET_CURRENT(elapsed);
		INSTR_TIME_SUBTRACT(elapsed, start);
		round_ns[r] = INSTR_TIME_GET_DOUBLE(elapsed) * 1e9 / (double) n;
		done += n;
	}
	res->iterations = done;
	res->allocs_per_op = (double) (counting_allocs - allocs0) / done;
	res->bytes_per_op = (double) (counting_bytes - bytes0) / done;

	ExecClearTuple(slot);
	table_index_fetch_end(fetch);
	ExecDropSingleTupleTableSlot(slot);
}

/* Everything measure_loop() needs, for the error-guarded call below */
typedef struct MeasureArgs
{
	BenchChain *c;
	Snapshot	snap;
	BenchReader reader;
	int			path;
	int64		iterations;
	int64		warmup;
	int			rounds;
	double		round_ns[BENCH_ROUNDS];
	BenchResult *res;
	BenchRow   *row;
	MemoryContext rowcxt;
} MeasureArgs;

/*
 * measure_loop() in the context cxt with minidb_read_path set to the path;
 * both are restored after it, also on error.
 */
static void
measure_guarded(MeasureArgs *a, MemoryContext cxt)
{
	int			saved_path = minidb_read_path;
	MemoryContext oldcxt = MemoryContextSwitchTo(cxt);

	PG_TRY();
	{
		if (a->path != BENCH_PATH_HEAP)
			minidb_read_path = a->path;
		measure_loop(a->c, a->snap, a->reader, a->path, a->iterations,
					 a->warmup, a->rounds, a->round_ns, a->res, a->row,
					 a->rowcxt);
	}
	PG_FINALLY();
	{
		minidb_read_path = saved_path;
		MemoryContextSwitchTo(oldcxt);
	}
	PG_END_TRY();
}

/*
 * Fetch the row of chain c with snapshot snap (the reader's) through path,
 * warmup times untimed and iterations times timed, in up to maxrounds
 * rounds; ns_per_op is the median round.  Every fetch runs in a fresh
 * counting context (see above), which also holds the slot and the fetch
 * descriptor; minidb_read_path is path during the loops.  With row, the
 * first row fetched is described there.
 */
static void
measure(BenchChain *c, Snapshot snap, BenchReader reader, int path,
		int64 iterations, int64 warmup, int maxrounds, BenchResult *res,
		BenchRow *row)
{
	MeasureArgs a;
	MemoryContext cxt;

	if (c->heap != (path == BENCH_PATH_HEAP))
		elog(ERROR, "minidb bench: path %s does not read %s tables",
			 path_name(path), c->heap ? "heap" : "minidb");

	a.c = c;
	a.snap = snap;
	a.reader = reader;
	a.path = path;
	a.iterations = iterations;
	a.warmup = warmup;
	a.rounds = (int) Max(Min((int64) Min(maxrounds, BENCH_ROUNDS),
							 iterations), 1);
	a.res = res;
	a.row = row;
	a.rowcxt = CurrentMemoryContext;

	cxt = counting_context_create();
	measure_guarded(&a, cxt);
	MemoryContextDelete(cxt);

	qsort(a.round_ns, a.rounds, sizeof(double), cmp_double);
	res->ns_per_op = (a.rounds % 2) ? a.round_ns[a.rounds / 2] :
		(a.round_ns[a.rounds / 2 - 1] + a.round_ns[a.rounds / 2]) / 2.0;
}

/* Warm-up fetches before a timed run: a tenth, at least 1, at most 20000 */
static int64
warmup_for(int64 iterations)
{
	return Max(1, Min(iterations / 10, 20000));
}

/*
 * Before anything is timed, read every chain once with each reader through
 * the production path (minidb) or heap's fetch: the first reads set the
 * hint bits that all later reads, on every path, then find in place.
 */
static void
prewarm(BenchEnv *env)
{
	for (int i = 0; i < env->nchains; i++)
	{
		BenchChain *c = &env->chains[i];

		for (int r = 0; r < 2; r++)
		{
			BenchResult res;

			measure(c, env->snap[r], (BenchReader) r,
					c->heap ? BENCH_PATH_HEAP : MINIDB_PATH_VIEW_LAZY,
					1, 1, 1, &res, NULL);
		}
	}
}

/* ----------------------------------------------------------------
 * minidb_bench_chain_depth
 * ----------------------------------------------------------------
 */
/*
 * The arguments of minidb_bench_chain_depth and minidb_bench_chain_rows,
 * and where their rows go
 */
typedef struct DepthArgs
{
	ReturnSetInfo *rsinfo;
	int		   *depths;
	int			ndepths;
	int		   *paths;
	int			npaths;
	int			iterations;		/* chain_depth only */
	bool		include_heap;
	int			format;
} DepthArgs;

static void
chain_depth_body(BenchEnv *env, void *arg)
{
	DepthArgs  *a = (DepthArgs *) arg;
	ReturnSetInfo *rsinfo = a->rsinfo;
	int			nreads = a->npaths + (a->include_heap ? 1 : 0);
	int			cell = 0;

	bench_env_setup(env, a->depths, a->ndepths, &a->format,
					a->npaths > 0 ? 1 : 0, a->include_heap);
	prewarm(env);

	for (int i = 0; i < a->ndepths; i++)
	{
		for (int r = 0; r < 2; r++)
		{
			for (int p = 0; p < nreads; p++)
			{
				int			path = p < a->npaths ? a->paths[p] : BENCH_PATH_HEAP;
				BenchChain *c = find_chain(env, path == BENCH_PATH_HEAP,
										   a->depths[i], a->format);
				BenchResult res;
				Datum		values[8];
				bool		nulls[8] = {0};

				if (bench_progress)
					ereport(NOTICE,
							(errmsg("minidb_bench_chain_depth: cell %d of %d: %s, depth %d, %s reader",
									++cell, a->ndepths * 2 * nreads,
									path_name(path), c->depth,
									reader_names[r])));
				measure(c, env->snap[r], (BenchReader) r, path, a->iterations,
						warmup_for(a->iterations), BENCH_ROUNDS, &res, NULL);
				values[0] = CStringGetTextDatum(c->heap ? "heap" : "minidb");
				values[1] = Int32GetDatum(c->depth);
				values[2] = CStringGetTextDatum(reader_names[r]);
				values[3] = CStringGetTextDatum(path_name(path));
				values[4] = Int32GetDatum((int32) res.iterations);
				values[5] = Float8GetDatum(round_to(res.ns_per_op, 1));
				values[6] = Float8GetDatum(round_to(res.bytes_per_op, 1));
				values[7] = Float8GetDatum(round_to(res.allocs_per_op, 2));
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
									 values, nulls);
			}
		}
	}

	bench_env_teardown(env);
}

Datum
minidb_bench_chain_depth(PG_FUNCTION_ARGS)
{
	DepthArgs	a;
	BenchEnv	env;

	minidb_bench_check_caller();
	check_not_null(fcinfo, 0, "depths");
	check_not_null(fcinfo, 1, "iterations");
	check_not_null(fcinfo, 2, "paths");
	check_not_null(fcinfo, 3, "include_heap");
	check_not_null(fcinfo, 4, "format");
	a.format = parse_format(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	a.depths = parse_depths(PG_GETARG_ARRAYTYPE_P(0), &a.ndepths);
	a.iterations = PG_GETARG_INT32(1);
	check_iterations(a.iterations);
	a.paths = parse_paths(PG_GETARG_ARRAYTYPE_P(2), &a.npaths);
	a.include_heap = PG_GETARG_BOOL(3);
	if (a.npaths == 0 && !a.include_heap)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nothing to measure: paths is empty and include_heap is false")));
	check_fetches((int64) a.ndepths * 2 * (a.npaths + (a.include_heap ? 1 : 0)) *
				  (a.iterations + warmup_for(a.iterations)));
	bench_progress = (int64) a.ndepths * 2 *
		(a.npaths + (a.include_heap ? 1 : 0)) *
		(a.iterations + warmup_for(a.iterations)) >= BENCH_PROGRESS_MIN_WORK;

	InitMaterializedSRF(fcinfo, 0);
	a.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bench_env_init(&env, fcinfo);
	bench_run(&env, chain_depth_body, &a);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * minidb_bench_chain_rows: what each path returns
 * ----------------------------------------------------------------
 */
static void
chain_rows_body(BenchEnv *env, void *arg)
{
	DepthArgs  *a = (DepthArgs *) arg;
	ReturnSetInfo *rsinfo = a->rsinfo;

	bench_env_setup(env, a->depths, a->ndepths, &a->format,
					a->npaths > 0 ? 1 : 0, a->include_heap);

	for (int i = 0; i < a->ndepths; i++)
	{
		for (int r = 0; r < 2; r++)
		{
			for (int p = 0; p < a->npaths + (a->include_heap ? 1 : 0); p++)
			{
				int			path = p < a->npaths ? a->paths[p] : BENCH_PATH_HEAP;
				BenchChain *c = find_chain(env, path == BENCH_PATH_HEAP,
										   a->depths[i], a->format);
				BenchRow	row;
				BenchResult res;
				Datum		values[9];
				bool		nulls[9] = {0};

				measure(c, env->snap[r], (BenchReader) r, path, 1, 1, 1, &res,
						&row);
				values[0] = CStringGetTextDatum(c->heap ? "heap" : "minidb");
				values[1] = Int32GetDatum(c->depth);
				values[2] = CStringGetTextDatum(reader_names[r]);
				values[3] = CStringGetTextDatum(path_name(path));
				values[4] = Int32GetDatum(c->versions);
				values[5] = PointerGetDatum(&row.tid);
				values[6] = Int32GetDatum(row.id);
				if (row.v)
					values[7] = CStringGetTextDatum(row.v);
				else
					nulls[7] = true;
				values[8] = TransactionIdGetDatum(row.xmin);
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
									 values, nulls);
			}
		}
	}

	bench_env_teardown(env);
}

Datum
minidb_bench_chain_rows(PG_FUNCTION_ARGS)
{
	DepthArgs	a;
	BenchEnv	env;

	minidb_bench_check_caller();
	check_not_null(fcinfo, 0, "depths");
	check_not_null(fcinfo, 1, "paths");
	check_not_null(fcinfo, 2, "include_heap");
	check_not_null(fcinfo, 3, "format");
	a.format = parse_format(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	a.depths = parse_depths(PG_GETARG_ARRAYTYPE_P(0), &a.ndepths);
	a.paths = parse_paths(PG_GETARG_ARRAYTYPE_P(1), &a.npaths);
	a.include_heap = PG_GETARG_BOOL(2);
	a.iterations = 1;
	bench_progress = false;		/* one fetch per cell: only the writing */
	if (a.npaths == 0 && !a.include_heap)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("nothing to read: paths is empty and include_heap is false")));

	InitMaterializedSRF(fcinfo, 0);
	a.rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	bench_env_init(&env, fcinfo);
	bench_run(&env, chain_rows_body, &a);
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * minidb_bench_copy_vs_alloc
 *
 * What the study's profile merged: copying a record's bytes, and getting
 * fresh memory to copy them into.  Three loops, alternated in ABBA order
 * over rounds, median ns per op each:
 *	copy			memcpy into one existing buffer
 *	alloc_copy		palloc 1 kB (or bytes, if larger) and copy; the context
 *					is reset after every 1000 kB allocated (1000 chunks of
 *					1 kB), its cost included
 *	alloc_copy_free	palloc, copy, pfree: what the copy read paths do
 * A compiler barrier after each copy keeps the copies from being elided.
 *
 * alloc_copy measures whole reset cycles only: each of its rounds runs a
 * whole number of cycles (at least one), so it may run more iterations
 * than asked (its row says how many).  What a cycle costs is mostly the
 * kernel's: the context grows to about 1 MB, its larger blocks are
 * malloc'ed from fresh pages (mmap, or the heap top that glibc trims
 * again), and the reset gives them back, so every cycle faults about 210
 * pages in again (measured with the backend's minor fault count).  A round
 * of fewer allocations than a cycle never leaves the context's first
 * 120 kB, which malloc keeps, and measured 25 ns where whole cycles
 * measure 600 to 800: the figure depended on the iteration count.
 * ----------------------------------------------------------------
 */
#define COPY_KINDS 3
static const char *const copy_kind_names[COPY_KINDS] =
{"copy", "alloc_copy", "alloc_copy_free"};

/* alloc_copy's allocations per reset cycle, for a copy of bytes */
static int64
alloc_cycle(int bytes)
{
	return Max(1, BENCH_ALLOC_RESET_BYTES / Max(bytes, BENCH_ALLOC_SIZE));
}

/* n rounded up to what kind runs: whole reset cycles for alloc_copy */
static int64
copy_round_count(int kind, int bytes, int64 n)
{
	int64		cycle = alloc_cycle(bytes);

	if (kind != 1)
		return n;
	return Max(1, (n + cycle - 1) / cycle) * cycle;
}

/* One round of n (see copy_round_count) operations of kind; ns per op */
static double
copy_round(int kind, const char *src, char *dst, int bytes, int64 n,
		   MemoryContext cxt)
{
	Size		allocsize = Max(bytes, BENCH_ALLOC_SIZE);
	int64		cycle = alloc_cycle(bytes);
	instr_time	start;
	instr_time	elapsed;

	MemoryContextReset(cxt);
	INSTR_TIME_SET_CURRENT(start);
	/* in chunks, checking for interrupts in between (a load and a branch) */
	for (int64 done = 0; done < n; done += BENCH_INTERRUPT_EVERY)
	{
		int64		end = Min(n, done + BENCH_INTERRUPT_EVERY);

		switch (kind)
		{
			case 0:
				for (int64 i = done; i < end; i++)
				{
					memcpy(dst, src, bytes);
					pg_compiler_barrier();
				}
				break;
			case 1:
				for (int64 i = done; i < end; i++)
				{
					char	   *p = MemoryContextAlloc(cxt, allocsize);

					memcpy(p, src, bytes);
					pg_compiler_barrier();
					if ((i + 1) % cycle == 0)
						MemoryContextReset(cxt);
				}
				break;
			case 2:
				for (int64 i = done; i < end; i++)
				{
					char	   *p = MemoryContextAlloc(cxt, allocsize);

					memcpy(p, src, bytes);
					pg_compiler_barrier();
					pfree(p);
				}
				break;
		}
		CHECK_FOR_INTERRUPTS();
	}
	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	return INSTR_TIME_GET_DOUBLE(elapsed) * 1e9 / (double) n;
}

Datum
minidb_bench_copy_vs_alloc(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int			bytes;
	int			iterations;
	int			rounds;
	char	   *src;
	char	   *dst;
	MemoryContext cxt;
	double	   *ns[COPY_KINDS];
	int64		done = 0;
	int64		done_kind[COPY_KINDS] = {0};
	double		median[COPY_KINDS];

	minidb_bench_check_caller();
	check_not_null(fcinfo, 0, "bytes");
	check_not_null(fcinfo, 1, "iterations");
	bytes = PG_GETARG_INT32(0);
	iterations = PG_GETARG_INT32(1);
	if (bytes < 1 || bytes > BENCH_MAX_COPY_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bytes must be between 1 and %d, not %d",
						BENCH_MAX_COPY_BYTES, bytes)));
	check_iterations(iterations);
	if ((int64) iterations * Max(bytes, BENCH_ALLOC_SIZE) > BENCH_MAX_COPY_WORK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("bytes times iterations must not exceed " INT64_FORMAT,
						(int64) BENCH_MAX_COPY_WORK),
				 errdetail("At %d bytes a call may make at most " INT64_FORMAT " iterations.",
						   bytes, (int64) BENCH_MAX_COPY_WORK / Max(bytes, BENCH_ALLOC_SIZE))));

	bench_progress = (int64) iterations * COPY_KINDS >= BENCH_PROGRESS_MIN_WORK;
	InitMaterializedSRF(fcinfo, 0);
	rounds = (int) Min(10, iterations);
	src = palloc(bytes);
	dst = palloc(bytes);
	for (int i = 0; i < bytes; i++)
		src[i] = (char) i;
	cxt = AllocSetContextCreate(CurrentMemoryContext, "minidb bench copy",
								ALLOCSET_DEFAULT_SIZES);
	for (int k = 0; k < COPY_KINDS; k++)
		ns[k] = palloc(sizeof(double) * rounds);

	/* warm-up: one short round of each */
	for (int k = 0; k < COPY_KINDS; k++)
		copy_round(k, src, dst, bytes,
				   copy_round_count(k, bytes,
									Max(1, Min(iterations / 10, 10000))),
				   cxt);

	/* rounds in ABBA-style order: 0 1 2, 2 1 0, 0 1 2, ... */
	for (int r = 0; r < rounds; r++)
	{
		int64		n = (iterations - done) / (rounds - r);

		if (bench_progress)
			ereport(NOTICE,
					(errmsg("minidb_bench_copy_vs_alloc: round %d of %d",
							r + 1, rounds)));
		for (int j = 0; j < COPY_KINDS; j++)
		{
			int			k = (r % 2 == 0) ? j : COPY_KINDS - 1 - j;
			int64		nk = copy_round_count(k, bytes, n);

			ns[k][r] = copy_round(k, src, dst, bytes, nk, cxt);
			done_kind[k] += nk;
		}
		done += n;
	}
	MemoryContextDelete(cxt);

	for (int k = 0; k < COPY_KINDS; k++)
	{
		qsort(ns[k], rounds, sizeof(double), cmp_double);
		median[k] = (rounds % 2) ? ns[k][rounds / 2] :
			(ns[k][rounds / 2 - 1] + ns[k][rounds / 2]) / 2.0;
	}
	for (int k = 0; k < COPY_KINDS; k++)
	{
		Datum		values[6];
		bool		nulls[6] = {0};

		values[0] = CStringGetTextDatum(copy_kind_names[k]);
		values[1] = Int32GetDatum(bytes);
		values[2] = Int32GetDatum(k == 0 ? 0 : (int32) Max(bytes, BENCH_ALLOC_SIZE));
		values[3] = Int32GetDatum((int32) done_kind[k]);
		values[4] = Float8GetDatum(round_to(median[k], 1));
		values[5] = Float8GetDatum(round_to(median[k] / median[0], 2));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * minidb_bench_ab
 *
 * A and B (read paths, or 'heap') on chains of one depth, read by one
 * reader, alternately: pair i runs A then B when i is odd, B then A when
 * it is even (A B B A A B ...), each run being iterations timed fetches
 * after a short warm-up.  Rows: one per pair (pair, a_ns, b_ns, ratio =
 * b_ns / a_ns), then a summary row with pair NULL: the medians of a_ns,
 * b_ns and ratio, the first and third quartiles of the ratio, and the
 * verdict: 'B faster' when Q3 < 1, 'A faster' when Q1 > 1, else (the
 * interquartile range touches or crosses 1.0) 'no difference detected'.
 * Quartiles interpolate linearly between order statistics, as
 * percentile_cont does.
 * ----------------------------------------------------------------
 */
/* A side of an A/B comparison as the verdict names it: heap, view_lazy v2 */
static char *
side_label(int path, int format)
{
	if (path == BENCH_PATH_HEAP)
		return pstrdup("heap");
	return psprintf("%s v%d", path_name(path), format);
}

static double
quantile(const double *sorted, int n, double q)
{
	double		pos = q * (n - 1);
	int			lo = (int) floor(pos);
	int			hi = (int) ceil(pos);

	return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

typedef struct AbArgs
{
	int			side[2];
	int			depth;
	BenchReader reader;
	int			pairs;
	int			iterations;
	bool		want_heap;
	int			format[2];
	int			formats[2];
	int			nformats;
	double	   *ns[2];			/* [side][pair], filled in */
	double	   *ratio;
} AbArgs;

static void
ab_body(BenchEnv *env, void *arg)
{
	AbArgs	   *a = (AbArgs *) arg;
	BenchChain *chain[2];
	int			warmup = (int) Max(1, Min(a->iterations / 20, 5000));

	bench_env_setup(env, &a->depth, 1, a->formats, a->nformats, a->want_heap);
	prewarm(env);
	for (int s = 0; s < 2; s++)
		chain[s] = find_chain(env, a->side[s] == BENCH_PATH_HEAP, a->depth,
							  a->format[s]);

	for (int p = 0; p < a->pairs; p++)
	{
		if (bench_progress)
			ereport(NOTICE,
					(errmsg("minidb_bench_ab: pair %d of %d", p + 1,
							a->pairs)));
		for (int j = 0; j < 2; j++)
		{
			int			s = (p % 2 == 0) ? j : 1 - j;
			BenchResult res;

			measure(chain[s], env->snap[a->reader], a->reader, a->side[s],
					a->iterations, warmup, 1, &res, NULL);
			a->ns[s][p] = res.ns_per_op;
		}
		a->ratio[p] = a->ns[1][p] / a->ns[0][p];
	}
	bench_env_teardown(env);
}

Datum
minidb_bench_ab(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	AbArgs		a;
	BenchEnv	env;
	double	   *sorted[3];
	int			pairs;

	static const char *const argnames[8] =
	{"a", "b", "depth", "reader", "pairs", "iterations", "a_format", "b_format"};

	minidb_bench_check_caller();
	for (int i = 0; i < 8; i++)
		check_not_null(fcinfo, i, argnames[i]);
	a.format[0] = parse_format(text_to_cstring(PG_GETARG_TEXT_PP(6)));
	a.format[1] = parse_format(text_to_cstring(PG_GETARG_TEXT_PP(7)));
	a.side[0] = parse_path(text_to_cstring(PG_GETARG_TEXT_PP(0)), true);
	a.side[1] = parse_path(text_to_cstring(PG_GETARG_TEXT_PP(1)), true);
	a.depth = PG_GETARG_INT32(2);
	check_depth(a.depth);
	a.reader = parse_reader(text_to_cstring(PG_GETARG_TEXT_PP(3)));
	pairs = a.pairs = PG_GETARG_INT32(4);
	if (pairs < 2 || pairs > BENCH_MAX_PAIRS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pairs must be between 2 and %d, not %d",
						BENCH_MAX_PAIRS, pairs),
				 errdetail("Quartiles of the per-pair ratio need at least two pairs.")));
	a.iterations = PG_GETARG_INT32(5);
	check_iterations(a.iterations);
	check_fetches((int64) pairs * 2 * (a.iterations + Max(1, Min(a.iterations / 20, 5000))));
	bench_progress = (int64) pairs * 2 *
		(a.iterations + Max(1, Min(a.iterations / 20, 5000))) >=
		BENCH_PROGRESS_MIN_WORK;

	a.want_heap = (a.side[0] == BENCH_PATH_HEAP || a.side[1] == BENCH_PATH_HEAP);
	a.nformats = 0;
	for (int s = 0; s < 2; s++)
		if (a.side[s] != BENCH_PATH_HEAP &&
			(a.nformats == 0 || a.formats[0] != a.format[s]))
			a.formats[a.nformats++] = a.format[s];
	for (int s = 0; s < 2; s++)
		a.ns[s] = palloc(sizeof(double) * pairs);
	a.ratio = palloc(sizeof(double) * pairs);

	InitMaterializedSRF(fcinfo, 0);
	bench_env_init(&env, fcinfo);
	bench_run(&env, ab_body, &a);

	for (int p = 0; p < pairs; p++)
	{
		Datum		values[7];
		bool		nulls[7] = {0, 0, 0, 0, 1, 1, 1};

		values[0] = Int32GetDatum(p + 1);
		values[1] = Float8GetDatum(round_to(a.ns[0][p], 1));
		values[2] = Float8GetDatum(round_to(a.ns[1][p], 1));
		values[3] = Float8GetDatum(round_to(a.ratio[p], 3));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}

	{
		Datum		values[7];
		bool		nulls[7] = {1, 0, 0, 0, 0, 0, 0};
		double		q1;
		double		q3;
		const char *verdict;

		for (int k = 0; k < 3; k++)
		{
			sorted[k] = palloc(sizeof(double) * pairs);
			memcpy(sorted[k], k < 2 ? a.ns[k] : a.ratio, sizeof(double) * pairs);
			qsort(sorted[k], pairs, sizeof(double), cmp_double);
		}
		/* rounded as shown, so that the verdict follows the printed quartiles */
		q1 = round_to(quantile(sorted[2], pairs, 0.25), 3);
		q3 = round_to(quantile(sorted[2], pairs, 0.75), 3);
		if (q3 < 1.0)
			verdict = "B faster";
		else if (q1 > 1.0)
			verdict = "A faster";
		else
			verdict = "no difference detected";
		values[1] = Float8GetDatum(round_to(quantile(sorted[0], pairs, 0.5), 1));
		values[2] = Float8GetDatum(round_to(quantile(sorted[1], pairs, 0.5), 1));
		values[3] = Float8GetDatum(round_to(quantile(sorted[2], pairs, 0.5), 3));
		values[4] = Float8GetDatum(q1);
		values[5] = Float8GetDatum(q3);
		/* the verdict names the sides: "B faster (A = heap, B = view_lazy v2)" */
		values[6] = CStringGetTextDatum(psprintf("%s (A = %s, B = %s)", verdict,
												 side_label(a.side[0], a.format[0]),
												 side_label(a.side[1], a.format[1])));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values,
							 nulls);
	}
	return (Datum) 0;
}

/* ----------------------------------------------------------------
 * minidb_bench_scan: scans over many rows, minidb beside heap
 *
 * The writer (the same dblink session as above, as the functions' owner)
 * loads one table per table AM into the scratch schema, each in one
 * committed transaction: rows narrow rows (id int4, k int4; k = id * 7919
 * mod 1000) or pgbench_accounts rows (aid, bid, abalance, filler char(84),
 * as pgbench -i makes them: scale = rows / 100000), then a primary key on
 * the first column and VACUUM ANALYZE.  This backend then runs each kind's
 * query as the owner (the schema is the owner's), with the planner
 * settings the kind needs pinned around it (a GUC nest level), through a
 * portal: ExecutorStart, then the timed ExecutorRun (SPI_cursor_fetch), so
 * that planning and executor start-up are not timed.  Each query is
 * checked first: its plan must hold the kind's scan node (EXPLAIN), and
 * every run's result must be the count the data implies, on both tables.
 *
 * The calling statement's snapshot predates the load, so this backend's
 * xmin keeps VACUUM from marking pages all-visible: both table AMs test
 * every row's visibility (hint bits set by VACUUM and the warm-up run), as
 * on freshly loaded data.
 *
 * Per kind: one warm-up run of each table, one counted run of each (bytes
 * and allocations: the portal's executor context, es_query_cxt, gets the
 * counting method table between ExecutorStart and the end of the run; the
 * scan and everything it allocates per row live there), then pairs of
 * timed runs, heap first in odd pairs and minidb first in even ones
 * (A B B A ...).  ratio = minidb / heap per pair (ns per returned row; the
 * two return the same rows); the summary row has the medians, the
 * quartiles of the ratio and the verdict of minidb_bench_ab.
 *
 * Everything runs in a subtransaction that is rolled back at the end
 * (ANALYZE's statistics included), so that this backend's locks on the
 * tables are gone before the writer drops them.
 * ----------------------------------------------------------------
 */
PG_FUNCTION_INFO_V1(minidb_bench_scan);

typedef enum ScanKind
{
	SCAN_SEQ_COUNT,
	SCAN_SEQ_FILTER,
	SCAN_INDEX_RANGE,
	SCAN_BITMAP,
	SCAN_TID_RANGE,
	SCAN_ANALYZE,
	SCAN_NKINDS
} ScanKind;

static const char *const scan_kind_names[SCAN_NKINDS] =
{"seq_count", "seq_filter", "index_range", "bitmap", "tid_range", "analyze"};

/* The plan node each kind must use (NULL: a utility statement) */
static const char *const scan_kind_nodes[SCAN_NKINDS] =
{"Seq Scan", "Seq Scan", "Index Scan", "Bitmap Heap Scan", "Tid Range Scan",
NULL};

#define BENCH_SCAN_MIN_ROWS		1000
#define BENCH_SCAN_MAX_ROWS		10000000
#define BENCH_SCAN_RANGE		100000	/* rows of the index and TID ranges */
#define BENCH_SCAN_MAX_WORK		INT64CONST(10000000000) /* rows x runs */
#define BENCH_SCAN_STATS_TARGET 100
#define BENCH_SCAN_PGBENCH_SCALE_ROWS 100000

typedef struct ScanTable
{
	bool		heap;
	char		relname[NAMEDATALEN];
	char	   *qualname;		/* schema.relname, quoted */
	char	   *tid_lo;			/* TIDs of the first and last id of the
								 * range, as text */
	char	   *tid_hi;
	int64		pages;
} ScanTable;

typedef struct ScanArgs
{
	ReturnSetInfo *rsinfo;
	int			kinds[SCAN_NKINDS];
	int			nkinds;
	int			rows;
	int			pairs;
	bool		pgbench;
	int			format;
	int			range_lo;		/* id range of index_range, bitmap, tid_range */
	int			range_hi;
	ScanTable	tables[2];		/* [0] heap, [1] minidb */
	/* results, per kind index (0 .. nkinds-1) */
	double	   *ms[SCAN_NKINDS][2]; /* [kind][table][pair] */
	double	   *ratio[SCAN_NKINDS];
	int64		returned[SCAN_NKINDS];
	bool		counted[SCAN_NKINDS];
	double		bytes_per_row[SCAN_NKINDS][2];
	double		allocs_per_row[SCAN_NKINDS][2];
} ScanArgs;

static int
parse_scan_kind(const char *name)
{
	for (int k = 0; k < SCAN_NKINDS; k++)
		if (strcmp(name, scan_kind_names[k]) == 0)
			return k;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("unknown scan kind \"%s\"", name),
			 errhint("Valid values are seq_count, seq_filter, index_range, bitmap, tid_range and analyze.")));
	return 0;					/* keep compiler quiet */
}

/* The data set's column names: key, filtered column */
static const char *
scan_key_col(ScanArgs *a)
{
	return a->pgbench ? "aid" : "id";
}

static const char *
scan_other_col(ScanArgs *a)
{
	return a->pgbench ? "abalance" : "k";
}

/*
 * The query of kind on table t, every name qualified: the count the timed
 * runs make, or (rows) the rows it counts, which the counted run fetches
 */
static char *
scan_query(ScanArgs *a, int kind, ScanTable *t, bool rows)
{
	/* a column outside the index: every row is read from the table */
	char	   *what = rows ? psprintf("%s", scan_other_col(a)) :
		kind == SCAN_SEQ_COUNT ? "pg_catalog.count(*)" :
		psprintf("pg_catalog.count(%s)", scan_other_col(a));

	switch ((ScanKind) kind)
	{
		case SCAN_SEQ_COUNT:
			return psprintf("SELECT %s FROM %s", what, t->qualname);
		case SCAN_SEQ_FILTER:
			/* one row in a thousand: k = id * 7919 mod 1000, aid mod 1000 */
			if (a->pgbench)
				return psprintf("SELECT %s FROM %s"
								" WHERE (aid OPERATOR(pg_catalog.%%) 1000) OPERATOR(pg_catalog.=) 7",
								what, t->qualname);
			return psprintf("SELECT %s FROM %s"
							" WHERE k OPERATOR(pg_catalog.=) 7", what, t->qualname);
		case SCAN_INDEX_RANGE:
		case SCAN_BITMAP:
			return psprintf("SELECT %s FROM %s"
							" WHERE %s OPERATOR(pg_catalog.>=) %d"
							" AND %s OPERATOR(pg_catalog.<=) %d",
							what, t->qualname,
							scan_key_col(a), a->range_lo,
							scan_key_col(a), a->range_hi);
		case SCAN_TID_RANGE:
			return psprintf("SELECT %s FROM %s"
							" WHERE ctid OPERATOR(pg_catalog.>=) %s::pg_catalog.tid"
							" AND ctid OPERATOR(pg_catalog.<=) %s::pg_catalog.tid",
							what, t->qualname,
							quote_literal_cstr(t->tid_lo),
							quote_literal_cstr(t->tid_hi));
		case SCAN_ANALYZE:
			return psprintf("ANALYZE %s", t->qualname);
		case SCAN_NKINDS:
			break;
	}
	elog(ERROR, "minidb bench: unknown scan kind %d", kind);
	return NULL;
}

/* The count the query of kind must return (rows sampled, for analyze) */
static int64
scan_expected(ScanArgs *a, int kind)
{
	int64		n = 0;

	switch ((ScanKind) kind)
	{
		case SCAN_SEQ_COUNT:
			return a->rows;
		case SCAN_SEQ_FILTER:
			for (int64 id = 1; id <= a->rows; id++)
				n += ((a->pgbench ? id : id * 7919) % 1000 == 7);
			return n;
		case SCAN_INDEX_RANGE:
		case SCAN_BITMAP:
		case SCAN_TID_RANGE:
			return (int64) a->range_hi - a->range_lo + 1;
		case SCAN_ANALYZE:
			return Min((int64) a->rows, (int64) 300 * BENCH_SCAN_STATS_TARGET);
		case SCAN_NKINDS:
			break;
	}
	return 0;
}

/*
 * The rows the table AM hands to the executor in one run of kind: the
 * whole table for the sequential scans (the filter is the executor's), the
 * range, or ANALYZE's sample
 */
static int64
scan_rows_read(ScanArgs *a, int kind)
{
	if (kind == SCAN_SEQ_COUNT || kind == SCAN_SEQ_FILTER)
		return a->rows;
	return scan_expected(a, kind);
}

/* Pin the planner settings kind needs, in a new GUC nest level */
static int
scan_settings(int kind)
{
	int			level = NewGUCNestLevel();
	bool		seq = (kind == SCAN_SEQ_COUNT || kind == SCAN_SEQ_FILTER);
	char		target[16];
	struct
	{
		const char *name;
		const char *value;
	}			s[] =
	{
		{"max_parallel_workers_per_gather", "0"},
		{"jit", "off"},
		{"synchronize_seqscans", "off"},
		{"work_mem", "65536"},
		{"enable_indexonlyscan", "off"},
		{"enable_seqscan", seq ? "on" : "off"},
		{"enable_indexscan", kind == SCAN_INDEX_RANGE ? "on" : "off"},
		{"enable_bitmapscan", kind == SCAN_BITMAP ? "on" : "off"},
		{"enable_tidscan", kind == SCAN_TID_RANGE ? "on" : "off"},
		{"default_statistics_target", target},
	};

	snprintf(target, sizeof(target), "%d", BENCH_SCAN_STATS_TARGET);
	for (int i = 0; i < lengthof(s); i++)
		(void) set_config_option(s[i].name, s[i].value, PGC_USERSET,
								 PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
								 false);
	return level;
}

/* The plan of kind's query on t must hold the kind's scan node */
static void
scan_check_plan(ScanArgs *a, int kind, ScanTable *t)
{
	StringInfoData plan;
	char	   *q;

	if (scan_kind_nodes[kind] == NULL)
		return;
	for (int rows = 0; rows < 2; rows++)
	{
		q = psprintf("EXPLAIN (COSTS OFF) %s", scan_query(a, kind, t, rows));
		initStringInfo(&plan);
		spi_exec(q, 0, NULL, NULL, false);
		for (uint64 i = 0; i < SPI_processed; i++)
			appendStringInfo(&plan, "%s\n",
							 SPI_getvalue(SPI_tuptable->vals[i],
										  SPI_tuptable->tupdesc, 1));
		if (strstr(plan.data, scan_kind_nodes[kind]) == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("minidb bench: the %s query on %s table \"%s\" is not planned as a %s",
							scan_kind_names[kind], t->heap ? "heap" : "minidb",
							t->relname, scan_kind_nodes[kind]),
					 errdetail("Plan:\n%s", plan.data)));
	}
}

/* Run kind's query on t once (the count); returns ms */
static double
scan_run(ScanArgs *a, int kind, ScanTable *t)
{
	char	   *q = scan_query(a, kind, t, false);
	int64		want = scan_expected(a, kind);
	instr_time	start;
	instr_time	elapsed;
	int64		got;
	bool		isnull;

	if (kind == SCAN_ANALYZE)
	{
		INSTR_TIME_SET_CURRENT(start);
		spi_exec(q, 0, NULL, NULL, false);
		INSTR_TIME_SET_CURRENT(elapsed);
	}
	else
	{
		Portal		portal;

		/* a snapshot taken now sees the writer's commits */
		PushActiveSnapshot(GetLatestSnapshot());
		portal = SPI_cursor_open_with_args(NULL, q, 0, NULL, NULL, NULL,
										   true, 0);
		/* the executor has started: only its run is timed */
		INSTR_TIME_SET_CURRENT(start);
		SPI_cursor_fetch(portal, true, 2);
		INSTR_TIME_SET_CURRENT(elapsed);
		if (SPI_processed != 1)
			elog(ERROR, "minidb bench: the %s query returned " UINT64_FORMAT " rows",
				 scan_kind_names[kind], (uint64) SPI_processed);
		got = DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[0],
										  SPI_tuptable->tupdesc, 1, &isnull));
		SPI_freetuptable(SPI_tuptable);
		SPI_cursor_close(portal);
		PopActiveSnapshot();
		if (got != want)
			ereport(ERROR,
					(errcode(ERRCODE_INTERNAL_ERROR),
					 errmsg("minidb bench: the %s query on %s table \"%s\" counted " INT64_FORMAT " rows, expected " INT64_FORMAT,
							scan_kind_names[kind], t->heap ? "heap" : "minidb",
							t->relname, got, want)));
	}
	INSTR_TIME_SUBTRACT(elapsed, start);
	return INSTR_TIME_GET_DOUBLE(elapsed) * 1e3;
}

#define BENCH_SCAN_FETCH_BATCH	10000

/*
 * The counted run of kind on t: its rows fetched through a portal, the
 * first tenth as a warm-up (executor and scan start-up, the scan's
 * buffers), then the rest with the executor's query context counting
 * (es_query_cxt, where the scan and everything it allocates live).
 * Returns the rows counted (0: none after the warm-up); *bytes and
 * *allocs get what they allocated.
 */
static int64
scan_count_allocs(ScanArgs *a, int kind, ScanTable *t, uint64 *bytes,
				  uint64 *allocs)
{
	int64		want = scan_expected(a, kind);
	int64		warm = Max(1, want / 10);
	int64		got;
	volatile int64 counted = 0;
	Portal		portal;
	MemoryContext qcxt;
	uint64		allocs0;
	uint64		bytes0;

	PushActiveSnapshot(GetLatestSnapshot());
	portal = SPI_cursor_open_with_args(NULL, scan_query(a, kind, t, true),
									   0, NULL, NULL, NULL, true, 0);
	if (portal->queryDesc == NULL || portal->queryDesc->estate == NULL ||
		portal->queryDesc->estate->es_query_cxt->methods != counting_orig)
		elog(ERROR, "minidb bench: cannot count the allocations of the %s query",
			 scan_kind_names[kind]);
	qcxt = portal->queryDesc->estate->es_query_cxt;

	SPI_cursor_fetch(portal, true, warm);
	got = SPI_processed;
	SPI_freetuptable(SPI_tuptable);

	allocs0 = counting_allocs;
	bytes0 = counting_bytes;
	qcxt->methods = &counting_methods;
	PG_TRY();
	{
		for (;;)
		{
			SPI_cursor_fetch(portal, true, BENCH_SCAN_FETCH_BATCH);
			counted += SPI_processed;
			SPI_freetuptable(SPI_tuptable);
			if (SPI_processed < BENCH_SCAN_FETCH_BATCH)
				break;
		}
	}
	PG_FINALLY();
	{
		qcxt->methods = counting_orig;
	}
	PG_END_TRY();
	*allocs = counting_allocs - allocs0;
	*bytes = counting_bytes - bytes0;
	SPI_cursor_close(portal);
	PopActiveSnapshot();
	if (got + counted != want)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("minidb bench: the %s query on %s table \"%s\" returned " INT64_FORMAT " rows, expected " INT64_FORMAT,
						scan_kind_names[kind], t->heap ? "heap" : "minidb",
						t->relname, got + counted, want)));
	return counted;
}

/* Every kind: warm-up, counted run and timed pairs (as the owner) */
static void
scan_measure(BenchEnv *env, ScanArgs *a)
{
	for (int i = 0; i < a->nkinds; i++)
	{
		int			kind = a->kinds[i];
		int			level;
		int64		rows = scan_rows_read(a, kind);

		if (bench_progress)
			ereport(NOTICE,
					(errmsg("minidb_bench_scan: kind %d of %d: %s",
							i + 1, a->nkinds, scan_kind_names[kind])));
		level = scan_settings(kind);
		as_owner(env);
		for (int s = 0; s < 2; s++)
		{
			uint64		bytes = 0;
			uint64		allocs = 0;

			scan_check_plan(a, kind, &a->tables[s]);
			(void) scan_run(a, kind, &a->tables[s]);
			if (kind != SCAN_ANALYZE)
			{
				int64		n = scan_count_allocs(a, kind, &a->tables[s],
												  &bytes, &allocs);

				a->counted[i] = (n > 0);
				a->bytes_per_row[i][s] = (double) bytes / Max(n, 1);
				a->allocs_per_row[i][s] = (double) allocs / Max(n, 1);
			}
		}
		for (int p = 0; p < a->pairs; p++)
		{
			for (int j = 0; j < 2; j++)
			{
				int			s = (p % 2 == 0) ? j : 1 - j;

				a->ms[i][s][p] = scan_run(a, kind, &a->tables[s]);
			}
			a->ratio[i][p] = a->ms[i][1][p] / a->ms[i][0][p];
		}
		as_caller(env);
		a->returned[i] = rows;
		AtEOXact_GUC(true, level);
	}
}

/* scan_measure in a subtransaction rolled back afterwards (its locks too) */
static void
scan_measure_rolled_back(BenchEnv *env, ScanArgs *a)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcxt);
	PG_TRY();
	{
		scan_measure(env, a);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcxt);
		CurrentResourceOwner = oldowner;
		ReThrowError(edata);
	}
	PG_END_TRY();
	RollbackAndReleaseCurrentSubTransaction();
	MemoryContextSwitchTo(oldcxt);
	CurrentResourceOwner = oldowner;
}

/* The writer loads both tables; then every kind is measured */
static void
scan_body(BenchEnv *env, void *arg)
{
	ScanArgs   *a = (ScanArgs *) arg;
	const char *schema = quote_identifier(env->schema);
	const char *key = scan_key_col(a);

	if (bench_progress)
		ereport(NOTICE,
				(errmsg("minidb_bench_scan: loading %d %s rows into a heap and a minidb table",
						a->rows, a->pgbench ? "pgbench_accounts" : "narrow")));
	writer_connect(env);
	scratch_schema_create(env);

	for (int s = 0; s < 2; s++)
	{
		ScanTable  *t = &a->tables[s];
		StringInfoData sql;
		char	   *q;

		t->heap = (s == 0);
		snprintf(t->relname, NAMEDATALEN, "%s_%s",
				 a->pgbench ? "pgbench_accounts" : "narrow",
				 t->heap ? "heap" : "minidb");
		t->qualname = MemoryContextStrdup(env->cxt,
										  psprintf("%s.%s", schema,
												   quote_identifier(t->relname)));
		initStringInfo(&sql);
		if (!t->heap)
			appendStringInfo(&sql, "SET minidb.record_format = 'v%d';",
							 a->format);
		if (a->pgbench)
			appendStringInfo(&sql,
							 "CREATE TABLE %s (aid pg_catalog.int4 NOT NULL, bid pg_catalog.int4,"
							 " abalance pg_catalog.int4, filler pg_catalog.bpchar(84)) USING %s"
							 " WITH (fillfactor = 100, autovacuum_enabled = false);"
							 " INSERT INTO %s SELECT g, ((g OPERATOR(pg_catalog.-) 1)"
							 " OPERATOR(pg_catalog./) %d) OPERATOR(pg_catalog.+) 1, 0, ''"
							 " FROM pg_catalog.generate_series(1, %d) g;",
							 t->qualname, t->heap ? "heap" : "minidb",
							 t->qualname, BENCH_SCAN_PGBENCH_SCALE_ROWS, a->rows);
		else
			appendStringInfo(&sql,
							 "CREATE TABLE %s (id pg_catalog.int4 NOT NULL, k pg_catalog.int4 NOT NULL)"
							 " USING %s WITH (autovacuum_enabled = false);"
							 " INSERT INTO %s SELECT g, ((g::pg_catalog.int8 OPERATOR(pg_catalog.*) 7919)"
							 " OPERATOR(pg_catalog.%%) 1000)::pg_catalog.int4"
							 " FROM pg_catalog.generate_series(1, %d) g;",
							 t->qualname, t->heap ? "heap" : "minidb",
							 t->qualname, a->rows);
		appendStringInfo(&sql, " ALTER TABLE %s ADD PRIMARY KEY (%s);",
						 t->qualname, key);
		if (!t->heap)
			appendStringInfoString(&sql, " RESET minidb.record_format;");
		writer_exec(env, sql.data);
		CHECK_FOR_INTERRUPTS();
		/* VACUUM refuses a transaction block: a statement of its own */
		writer_exec(env, psprintf("VACUUM ANALYZE %s", t->qualname));
		CHECK_FOR_INTERRUPTS();

		/* the range's first and last rows: where the TID range starts, ends */
		q = psprintf("SELECT ctid::pg_catalog.text FROM %s WHERE %s OPERATOR(pg_catalog.=) %d"
					 " UNION ALL SELECT ctid::pg_catalog.text FROM %s WHERE %s OPERATOR(pg_catalog.=) %d"
					 " UNION ALL SELECT (pg_catalog.pg_relation_size(%s::pg_catalog.regclass)"
					 " OPERATOR(pg_catalog./) %d)::pg_catalog.text",
					 t->qualname, key, a->range_lo, t->qualname, key, a->range_hi,
					 quote_literal_cstr(t->qualname), BLCKSZ);
		if (writer_query(env, q) != 3)
			elog(ERROR, "minidb bench: the rows of the range of \"%s\" are missing",
				 t->relname);
		t->tid_lo = MemoryContextStrdup(env->cxt, writer_value(0));
		t->tid_hi = MemoryContextStrdup(env->cxt, writer_value(1));
		t->pages = pg_strtoint64(writer_value(2));
	}
	if (bench_progress)
		ereport(NOTICE, (errmsg("minidb_bench_scan: tables loaded")));

	scan_measure_rolled_back(env, a);

	drop_own_schema(env, true);
	writer_disconnect(env);
}

Datum
minidb_bench_scan(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ScanArgs	a;
	BenchEnv	env;
	Datum	   *elems;
	int			n;
	int			range;
	char	   *data;

	static const char *const argnames[5] =
	{"kinds", "rows", "pairs", "data", "format"};

	minidb_bench_check_caller();
	for (int i = 0; i < 5; i++)
		check_not_null(fcinfo, i, argnames[i]);
	memset(&a, 0, sizeof(a));

	array_elements(PG_GETARG_ARRAYTYPE_P(0), TEXTOID, "kinds", &elems, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("kinds must not be empty")));
	for (int i = 0; i < n; i++)
	{
		int			k = parse_scan_kind(TextDatumGetCString(elems[i]));
		bool		seen = false;

		for (int j = 0; j < a.nkinds; j++)
			seen |= (a.kinds[j] == k);
		if (!seen)
			a.kinds[a.nkinds++] = k;
	}
	a.rows = PG_GETARG_INT32(1);
	if (a.rows < BENCH_SCAN_MIN_ROWS || a.rows > BENCH_SCAN_MAX_ROWS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("rows must be between %d and %d, not %d",
						BENCH_SCAN_MIN_ROWS, BENCH_SCAN_MAX_ROWS, a.rows)));
	a.pairs = PG_GETARG_INT32(2);
	if (a.pairs < 2 || a.pairs > BENCH_MAX_PAIRS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("pairs must be between 2 and %d, not %d",
						BENCH_MAX_PAIRS, a.pairs),
				 errdetail("Quartiles of the per-pair ratio need at least two pairs.")));
	data = text_to_cstring(PG_GETARG_TEXT_PP(3));
	if (strcmp(data, "narrow") == 0)
		a.pgbench = false;
	else if (strcmp(data, "pgbench") == 0)
		a.pgbench = true;
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown data set \"%s\"", data),
				 errhint("Valid values are narrow (id int4, k int4) and pgbench (pgbench_accounts rows, rows / 100000 = scale).")));
	a.format = parse_format(text_to_cstring(PG_GETARG_TEXT_PP(4)));
	if ((int64) a.rows * (a.pairs + 2) * 2 * a.nkinds > BENCH_SCAN_MAX_WORK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("this call would read " INT64_FORMAT " rows, more than the limit of " INT64_FORMAT,
						(int64) a.rows * (a.pairs + 2) * 2 * a.nkinds,
						(int64) BENCH_SCAN_MAX_WORK),
				 errhint("Ask for fewer rows, kinds or pairs, and make several calls.")));
	bench_progress = (int64) a.rows * (a.pairs + 2) * 2 * a.nkinds >=
		10 * BENCH_PROGRESS_MIN_WORK;

	/* the ranges: BENCH_SCAN_RANGE rows (a tenth of smaller tables), centred */
	range = Min(BENCH_SCAN_RANGE, a.rows / 10);
	a.range_lo = (a.rows - range) / 2 + 1;
	a.range_hi = a.range_lo + range - 1;
	for (int i = 0; i < a.nkinds; i++)
	{
		for (int s = 0; s < 2; s++)
			a.ms[i][s] = palloc0(sizeof(double) * a.pairs);
		a.ratio[i] = palloc0(sizeof(double) * a.pairs);
	}
	/* the counting method table: filled in by the first counting context */
	MemoryContextDelete(counting_context_create());

	InitMaterializedSRF(fcinfo, 0);
	a.rsinfo = rsinfo;
	bench_env_init(&env, fcinfo);
	bench_run(&env, scan_body, &a);

	for (int i = 0; i < a.nkinds; i++)
	{
		int			kind = a.kinds[i];
		double	   *sorted[3];
		double		q1,
					q3;
		const char *verdict;

		for (int p = 0; p <= a.pairs; p++)
		{
			Datum		values[17];
			bool		nulls[17];

			memset(nulls, 0, sizeof(nulls));
			values[0] = CStringGetTextDatum(scan_kind_names[kind]);
			values[1] = CStringGetTextDatum(a.pgbench ? "pgbench" : "narrow");
			values[2] = Int32GetDatum(a.rows);
			values[3] = Int64GetDatum(a.returned[i]);
			if (p < a.pairs)
			{
				values[4] = Int32GetDatum(p + 1);
				values[5] = Float8GetDatum(round_to(a.ms[i][0][p], 3));
				values[6] = Float8GetDatum(round_to(a.ms[i][1][p], 3));
				values[7] = Float8GetDatum(round_to(a.ratio[i][p], 3));
				for (int c = 8; c < 17; c++)
					nulls[c] = true;
				tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
									 values, nulls);
				continue;
			}
			for (int k = 0; k < 3; k++)
			{
				sorted[k] = palloc(sizeof(double) * a.pairs);
				memcpy(sorted[k], k < 2 ? a.ms[i][k] : a.ratio[i],
					   sizeof(double) * a.pairs);
				qsort(sorted[k], a.pairs, sizeof(double), cmp_double);
			}
			q1 = round_to(quantile(sorted[2], a.pairs, 0.25), 3);
			q3 = round_to(quantile(sorted[2], a.pairs, 0.75), 3);
			if (q3 < 1.0)
				verdict = "B faster";
			else if (q1 > 1.0)
				verdict = "A faster";
			else
				verdict = "no difference detected";
			nulls[4] = true;
			values[5] = Float8GetDatum(round_to(quantile(sorted[0], a.pairs, 0.5), 3));
			values[6] = Float8GetDatum(round_to(quantile(sorted[1], a.pairs, 0.5), 3));
			values[7] = Float8GetDatum(round_to(quantile(sorted[2], a.pairs, 0.5), 3));
			values[8] = Float8GetDatum(q1);
			values[9] = Float8GetDatum(q3);
			values[10] = CStringGetTextDatum(psprintf("%s (A = heap, B = minidb)",
													  verdict));
			values[11] = Int64GetDatum(a.tables[0].pages);
			values[12] = Int64GetDatum(a.tables[1].pages);
			if (a.counted[i])
			{
				values[13] = Float8GetDatum(round_to(a.bytes_per_row[i][0], 3));
				values[14] = Float8GetDatum(round_to(a.bytes_per_row[i][1], 3));
				values[15] = Float8GetDatum(round_to(a.allocs_per_row[i][0], 4));
				values[16] = Float8GetDatum(round_to(a.allocs_per_row[i][1], 4));
			}
			else
				nulls[13] = nulls[14] = nulls[15] = nulls[16] = true;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc,
								 values, nulls);
		}
	}
	return (Datum) 0;
}
