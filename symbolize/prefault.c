/* Page-table population ahead of the reader; see prefault.h. */
#include "symbolize/prefault.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

/* How often the thread looks whether it should stop. */
#define CHUNK ((size_t)4 << 20)

/* Bytes read ahead of the reader into the cache: the unwinder's reads of
 * each stack dump were cache misses one after the other, most of its time
 * after the walk itself.  4 MiB did best on a python3.11d recording (2 MiB
 * about as well; 16 MiB worse: the 32 MiB shared cache holds the output
 * too); bench/unwind.sh measures the run as a whole. */
#define WARM_AHEAD ((size_t)4 << 20)

/* The thread's nap when it is ahead of the reader on all counts. */
#define NAP_NS 100000

struct mt_unwind_prefault {
	pthread_t thread;
	uintptr_t start;	/* page-aligned */
	size_t len;
	size_t done;		/* atomic: the reader is past start + done */
	int stop;		/* atomic */
	int warm;
	size_t warmed;		/* read into the cache up to start + warmed */
};

/* Read the lines the reader reaches next, up to WARM_AHEAD past it.
 * @return : 1 if there was any. */
static int warm_ahead(struct mt_unwind_prefault *pf)
{
	size_t done = __atomic_load_n(&pf->done, __ATOMIC_RELAXED);
	size_t until = done + WARM_AHEAD < pf->len ? done + WARM_AHEAD : pf->len;
	if (pf->warmed < done)
		pf->warmed = done;	/* fell behind: what the reader read is gone */
	if (pf->warmed >= until)
		return 0;
	for (; pf->warmed < until; pf->warmed += 64)
		(void)*(volatile const char *)(pf->start + pf->warmed);
	return 1;
}

/* Unmapping a file's pages is per page like mapping them (for a 250 MB
 * file, a noticeable part of a run): dropping them once the reader is past
 * them does it here, beside the reader, instead of in the munmap at its
 * end.  MADV_DONTNEED, not munmap: the range stays reserved for the
 * reader's own munmap.  A refusal (locked pages) ends the dropping: the
 * pages then go with that munmap.  @return : 1 if pages were dropped. */
static int drop_behind(struct mt_unwind_prefault *pf, size_t *dropped)
{
	size_t done = __atomic_load_n(&pf->done, __ATOMIC_RELAXED) & ~(CHUNK - 1);
	if (done <= *dropped)
		return 0;
	if (madvise((void *)(pf->start + *dropped), done - *dropped, MADV_DONTNEED) != 0) {
		*dropped = SIZE_MAX;
		return 0;
	}
	*dropped = done;
	return 1;
}

/* A read fault maps the page and its cached neighbours (fault-around) under
 * the mapping's own lock.  MADV_POPULATE_READ did the same under the
 * process-wide mmap_lock, held per call: the other threads' mmap and
 * mprotect (malloc growing a thread's heap a page at a time) waited for it,
 * a large part of a run. */
static void map_chunk(struct mt_unwind_prefault *pf, size_t off)
{
	size_t n = pf->len - off < CHUNK ? pf->len - off : CHUNK;
	for (size_t o = 0; o < n; o += 4096)
		(void)*(volatile const char *)(pf->start + off + o);
}

static void *prefault_main(void *arg)
{
	struct mt_unwind_prefault *pf = arg;
	size_t mapped = 0, dropped = 0;
	while (!__atomic_load_n(&pf->stop, __ATOMIC_RELAXED)) {
		/* What the reader needs soonest first. */
		int busy = pf->warm && warm_ahead(pf);
		if (mapped < pf->len) {
			map_chunk(pf, mapped);
			mapped += CHUNK;
			continue;
		}
		/* Dropped only once all is mapped: mapping would bring them back. */
		busy |= drop_behind(pf, &dropped);
		if (!busy)
			nanosleep(&(struct timespec){ .tv_nsec = NAP_NS }, NULL);
	}
	return NULL;
}

void mt_unwind_prefault_done(struct mt_unwind_prefault *pf, size_t off)
{
	if (pf)
		__atomic_store_n(&pf->done, off, __ATOMIC_RELAXED);
}

struct mt_unwind_prefault *mt_unwind_prefault_start(const void *p, size_t len, int warm)
{
	struct mt_unwind_prefault *pf = calloc(1, sizeof(*pf));
	if (!pf || !p || !len) {
		free(pf);
		return NULL;
	}
	pf->start = (uintptr_t)p & ~(uintptr_t)4095;
	pf->len = len + ((uintptr_t)p - pf->start);
	pf->warm = warm;
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
