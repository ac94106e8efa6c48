/*
 * minidb_sanitize_plant.c -- the self-test of test/sanitize/run.sh
 *
 * A separate module, built with the same sanitizer flags as minidb_am and
 * installed only into the sanitizer run's server copy: each call makes one
 * error of a kind the run must catch, so that a run that reports nothing
 * is known to have been able to report something (the runtime preloaded,
 * the module instrumented, the report found and attributed).
 *
 *   sanitize_plant('heap', n)   reads n bytes past a palloc'd 16 kB chunk
 *                               (large chunks are malloc'd blocks of their
 *                               own, which ASan guards)
 *   sanitize_plant('stack', n)  reads element n of an 8-byte stack array
 *   sanitize_plant('align', n)  loads an int32 from a pointer n bytes off
 *                               its alignment (UBSan)
 *
 * Called with n = 0 for 'heap' and 'align', or n < 8 for 'stack', each is
 * harmless, and returns 0.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(sanitize_plant);

Datum
sanitize_plant(PG_FUNCTION_ARGS)
{
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));
	int32		n = PG_GETARG_INT32(1);
	int32		result = 0;

	if (strcmp(kind, "heap") == 0)
	{
		Size		size = 16384;
		char	   *p = palloc0(size);

		result = p[size - 1 + n];
		pfree(p);
	}
	else if (strcmp(kind, "stack") == 0)
	{
		volatile char buf[8] = {0};

		result = buf[n];
	}
	else if (strcmp(kind, "align") == 0)
	{
		int64		words[2] = {0, 0};
		int32	   *ip = (int32 *) ((char *) words + n);

		result = *ip;
	}
	else
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown kind \"%s\"", kind)));
	PG_RETURN_INT32(result);
}
