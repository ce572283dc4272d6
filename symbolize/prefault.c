/* Page-table population ahead of the reader; see prefault.h. */
#include "symbolize/prefault.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

/* How often the thread looks whether it should stop. */
#define CHUNK ((size_t)4 << 20)

struct mt_unwind_prefault {
	pthread_t thread;
	uintptr_t start;	/* page-aligned */
	size_t len;
	size_t done;		/* atomic: the reader is past start + done */
	int stop;		/* atomic */
};

/* Unmapping a file's pages is per page like mapping them (8 ms of a 75 ms
 * run for 250 MB): dropping them once the reader is past them does it here,
 * beside the reader, instead of in the munmap at its end.  MADV_DONTNEED,
 * not munmap: the range stays reserved for the reader's own munmap. */
static void drop_behind(struct mt_unwind_prefault *pf)
{
	size_t dropped = 0;
	while (!__atomic_load_n(&pf->stop, __ATOMIC_RELAXED)) {
		size_t done = __atomic_load_n(&pf->done, __ATOMIC_RELAXED) & ~(CHUNK - 1);
		if (done > dropped) {
			if (madvise((void *)(pf->start + dropped), done - dropped, MADV_DONTNEED))
				return;
			dropped = done;
		} else {
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
		}
	}
}

static void *prefault_main(void *arg)
{
	struct mt_unwind_prefault *pf = arg;
	for (size_t off = 0; off < pf->len; off += CHUNK) {
		if (__atomic_load_n(&pf->stop, __ATOMIC_RELAXED))
			break;
		size_t n = pf->len - off < CHUNK ? pf->len - off : CHUNK;
		/* A read fault maps the page and its cached neighbours (fault-around)
		 * under the mapping's own lock.  MADV_POPULATE_READ did the same
		 * under the process-wide mmap_lock, held per call: the other
		 * threads' mmap and mprotect (malloc growing a thread's heap a page
		 * at a time) waited for it, 20-25 ms in a 85 ms run. */
		for (size_t o = 0; o < n; o += 4096)
			(void)*(volatile const char *)(pf->start + off + o);
	}
	drop_behind(pf);
	return NULL;
}

void mt_unwind_prefault_done(struct mt_unwind_prefault *pf, size_t off)
{
	if (pf)
		__atomic_store_n(&pf->done, off, __ATOMIC_RELAXED);
}

struct mt_unwind_prefault *mt_unwind_prefault_start(const void *p, size_t len)
{
	struct mt_unwind_prefault *pf = calloc(1, sizeof(*pf));
	if (!pf || !p || !len) {
		free(pf);
		return NULL;
	}
	pf->start = (uintptr_t)p & ~(uintptr_t)4095;
	pf->len = len + ((uintptr_t)p - pf->start);
	if (pthread_create(&pf->thread, NULL, prefault_main, pf) != 0) {
		free(pf);
		return NULL;
	}
	return pf;
}

void mt_unwind_prefault_stop(struct mt_unwind_prefault *pf)
{
	if (!pf)
		return;
	__atomic_store_n(&pf->stop, 1, __ATOMIC_RELAXED);
	pthread_join(pf->thread, NULL);
	free(pf);
}
