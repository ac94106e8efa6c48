/*-------------------------------------------------------------------------
 *
 * chain_shim.c
 *	  palloc and elog for chain.c outside the server.  See chain_shim.h.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres_fe.h"

#include <stdarg.h>

#include "chain_shim.h"

sigjmp_buf *minidb_shim_catch = NULL;
char		minidb_shim_last_error[256];

static void *
shim_alloc(size_t size, bool zero)
{
	/* malloc(0) may return NULL; palloc(0) must not */
	void	   *p = zero ? calloc(1, size ? size : 1) : malloc(size ? size : 1);

	if (p == NULL)
	{
		fprintf(stderr, "out of memory (%zu bytes)\n", size);
		abort();
	}
	return p;
}

void *
palloc(Size size)
{
	return shim_alloc(size, false);
}

void *
palloc0(Size size)
{
	return shim_alloc(size, true);
}

void *
palloc_extended(Size size, int flags)
{
	return shim_alloc(size, (flags & MCXT_ALLOC_ZERO) != 0);
}

void
pfree(void *pointer)
{
	free(pointer);
}

void *
repalloc(void *pointer, Size size)
{
	void	   *p = realloc(pointer, size ? size : 1);

	if (p == NULL)
		abort();
	return p;
}

void
minidb_shim_elog(int elevel, const char *file, int line, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(minidb_shim_last_error, sizeof(minidb_shim_last_error), fmt, ap);
	va_end(ap);
	if (elevel < ERROR)
	{
		fprintf(stderr, "%s:%d: %s\n", file, line, minidb_shim_last_error);
		return;
	}
	if (minidb_shim_catch != NULL)
		siglongjmp(*minidb_shim_catch, 1);
	fprintf(stderr, "%s:%d: ERROR: %s\n", file, line, minidb_shim_last_error);
	abort();
}
