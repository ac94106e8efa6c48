/*
 * asan_init_first.c -- preloaded right after the ASan runtime by
 * test/sanitize/run.sh (LD_PRELOAD="libasan.so asan_init_first.so ...")
 *
 * The postgres binary is not instrumented, so the sanitizer runtime comes in
 * by LD_PRELOAD and initializes itself lazily, on the first malloc.  In the
 * server that first malloc happens inside the constructor of a library that
 * runs before the runtime's own constructor (dependencies are initialized
 * first): libgpg-error's calls bindtextdomain(), libp11-kit's calls
 * newlocale().  glibc takes a lock for writing there (_nl_state_lock,
 * __libc_setlocale_lock) and then calls malloc.  The runtime's
 * initialization calls dlerror(), whose message translation takes the same
 * lock for reading: glibc refuses (the thread holds it for writing), then
 * releases it anyway, and the lock is left corrupt.  The next
 * bindtextdomain() or setlocale() waits for ever: "postgres -V" hangs.
 *
 * This library interposes the glibc functions that take one of those locks
 * for writing and then allocate: on its first call, each makes the runtime
 * initialize (one malloc) before glibc takes the lock, then calls glibc's.
 * Nothing else changes.  Plain C, no instrumentation: gcc -shared -fPIC.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <libintl.h>
#include <locale.h>
#include <stdlib.h>

static void
init_runtime_first(void)
{
	static int	done = 0;

	if (!done)
	{
		/* volatile, or the compiler drops the pair */
		void	   *volatile p = malloc(1);

		free(p);
		done = 1;
	}
}

static void *
next_symbol(const char *name)
{
	void	   *f;

	init_runtime_first();
	f = dlsym(RTLD_NEXT, name);
	if (f == NULL)
		abort();
	return f;
}

locale_t
newlocale(int category_mask, const char *locale, locale_t base)
{
	static locale_t (*real) (int, const char *, locale_t) = NULL;

	if (real == NULL)
		real = next_symbol("newlocale");
	return real(category_mask, locale, base);
}

locale_t
duplocale(locale_t locobj)
{
	static locale_t (*real) (locale_t) = NULL;

	if (real == NULL)
		real = next_symbol("duplocale");
	return real(locobj);
}

char *
bindtextdomain(const char *domainname, const char *dirname)
{
	static char *(*real) (const char *, const char *) = NULL;

	if (real == NULL)
		real = next_symbol("bindtextdomain");
	return real(domainname, dirname);
}

char *
bind_textdomain_codeset(const char *domainname, const char *codeset)
{
	static char *(*real) (const char *, const char *) = NULL;

	if (real == NULL)
		real = next_symbol("bind_textdomain_codeset");
	return real(domainname, codeset);
}

char *
textdomain(const char *domainname)
{
	static char *(*real) (const char *) = NULL;

	if (real == NULL)
		real = next_symbol("textdomain");
	return real(domainname);
}
