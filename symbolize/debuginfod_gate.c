/* Keeps libdw from loading libdebuginfod when no server is configured.
 *
 * libdw 0.188 loads libdebuginfod, with libcurl and some twenty libraries
 * behind it (its relocations, on the thread the main thread then waits
 * for), the first time a module has no local debug info (every recording has
 * [vdso]), even when DEBUGINFOD_URLS names no server and the client could do
 * nothing.  This dlopen, defined in the executable, is the one libdw's call
 * binds to: it declines that library when DEBUGINFOD_URLS is unset or empty
 * (libdw then searches locally only, as the client would) and passes every
 * other call to the next dlopen (libc's). */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

void *dlopen(const char *file, int mode)
{
	static void *(*next)(const char *, int);
	void *(*fn)(const char *, int) = __atomic_load_n(&next, __ATOMIC_RELAXED);
	if (!fn) {
		fn = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
		if (!fn)
			return NULL;
		__atomic_store_n(&next, fn, __ATOMIC_RELAXED);
	}
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (file && strncmp(file, "libdebuginfod", 13) == 0 && (!urls || !*urls))
		return NULL;
	return fn(file, mode);
}
