/*-------------------------------------------------------------------------
 *
 * chain_shim.h
 *	  What chain.c needs from the server when it is built standalone (unit
 *	  tests, fuzzer): palloc and friends, and elog.
 *
 * postgres_fe.h already declares palloc, palloc0, pfree and repalloc
 * (common/fe_memutils.h); chain_shim.c defines them over malloc so that no
 * PostgreSQL library is linked and AddressSanitizer sees every allocation
 * at its exact size.
 *
 * elog(ERROR, ...) is a programming error in chain.c.  The shim prints the
 * message and abort()s, unless a test armed minidb_shim_catch with
 * MINIDB_SHIM_EXPECT_ERROR, in which case it longjmps back there.
 *
 *-------------------------------------------------------------------------
 */
#ifndef MINIDB_CHAIN_SHIM_H
#define MINIDB_CHAIN_SHIM_H

#include <setjmp.h>

/*
 * port.h routes the printf family to libpgport's implementations; use the C
 * library's instead so that nothing from PostgreSQL needs linking.
 */
#undef snprintf
#undef vsnprintf
#undef sprintf
#undef vsprintf
#undef fprintf
#undef vfprintf
#undef printf
#undef vprintf

/*
 * 16: storage/itemptr.h (included by chain.h) has inline functions over
 * Datum, which lives in postgres.h, not in a frontend build's headers.
 */
#if PG_VERSION_NUM >= 160000
typedef uintptr_t Datum;
#define PointerGetDatum(X)	((Datum) (X))
#define DatumGetPointer(X)	((Pointer) (X))
#endif

#ifndef DEBUG1
#define DEBUG1		14
#define LOG			15
#define WARNING		19
#define ERROR		21
#endif

extern void minidb_shim_elog(int elevel, const char *file, int line,
							 const char *fmt,...) pg_attribute_printf(4, 5);

#define elog(elevel, ...) \
	minidb_shim_elog(elevel, __FILE__, __LINE__, __VA_ARGS__)

/* Set while a test expects an elog(ERROR); NULL otherwise */
extern sigjmp_buf *minidb_shim_catch;
/* The message of the last caught elog(ERROR) */
extern char minidb_shim_last_error[256];

/*
 * MINIDB_SHIM_EXPECT_ERROR(stmt) evaluates to true when stmt raised
 * elog(ERROR), false when it returned normally.
 */
#define MINIDB_SHIM_EXPECT_ERROR(caught, stmt) \
	do { \
		sigjmp_buf	minidb_jb_; \
		(caught) = false; \
		minidb_shim_last_error[0] = '\0'; \
		if (sigsetjmp(minidb_jb_, 0) == 0) \
		{ \
			minidb_shim_catch = &minidb_jb_; \
			stmt; \
		} \
		else \
			(caught) = true; \
		minidb_shim_catch = NULL; \
	} while (0)

#endif							/* MINIDB_CHAIN_SHIM_H */
