/* Live sampled pointers (see sampler_table.h): linear probing with
 * backward-shift deletion under one mutex.  Only sampled allocations and
 * filter hits come here, a tiny fraction of calls at the default rate.  A
 * mutex, not a spinlock: with more threads than CPUs a preempted holder
 * made the others spin for whole time slices (25% of a benchmark's time). */
#include "capture/sampler_table.h"

#include <pthread.h>
#include <stddef.h>
#include <sys/mman.h>

unsigned char mt_sampler_filter[1u << MT_SAMPLER_FILTER_BITS];

/* The table starts at 64K slots and grows by 4x when 3/4 full, up to
 * MT_SAMPLER_TABLE_SLOTS; each size is mapped populated: touching fresh
 * pages of a lazily mapped table (read: zero page, then write: copy) cost
 * a TLB shootdown to every CPU per sampled allocation, 10% of a benchmark. */
#define INITIAL_SLOTS (1u << 16)

static struct mt_sampler_entry *slots;
static unsigned nslots, used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void mt_sampler_table_lock(void)
{
	pthread_mutex_lock(&lock);
}

void mt_sampler_table_unlock(void)
{
	pthread_mutex_unlock(&lock);
}

static unsigned slot_of(uintptr_t p)
{
	return (unsigned)(((uint64_t)p * 0xff51afd7ed558ccdULL) >> 32) & (nslots - 1);
}

static struct mt_sampler_entry *map_slots(unsigned n)
{
	void *m = mmap(NULL, sizeof(*slots) * n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	return m == MAP_FAILED ? NULL : m;
}

/* Rehash into a table 4x larger.  @return : 0, or -1 (full at the cap or
 * no memory: the caller counts the pointer as untracked). */
static int grow(void)
{
	unsigned n = nslots ? nslots * 4 : INITIAL_SLOTS;
	if (n > MT_SAMPLER_TABLE_SLOTS)
		return -1;
	struct mt_sampler_entry *fresh = map_slots(n), *old = slots;
	unsigned old_n = nslots;
	if (!fresh)
		return -1;
	slots = fresh;
	nslots = n;
	for (unsigned i = 0; i < old_n; i++) {
		if (!old[i].ptr)
			continue;
		unsigned j = slot_of(old[i].ptr);
		while (slots[j].ptr)
			j = (j + 1) & (nslots - 1);
		slots[j] = old[i];
	}
	if (old)
		munmap(old, sizeof(*old) * old_n);
	return 0;
}

static void filter_add(uintptr_t p, int delta)
{
	unsigned char *f = &mt_sampler_filter[mt_sampler_table_hash(p)];
	unsigned char v = __atomic_load_n(f, __ATOMIC_RELAXED);
	if (v == 255)	/* saturated: stays set, only costs lookups */
		return;
	__atomic_store_n(f, (unsigned char)(v + delta), __ATOMIC_RELAXED);
}

void mt_sampler_table_pin(const void *p)
{
	__atomic_store_n(&mt_sampler_filter[mt_sampler_table_hash((uintptr_t)p)], 255,
			 __ATOMIC_RELAXED);
}

int mt_sampler_table_insert(const void *ptr, uint64_t size, uint64_t points)
{
	uintptr_t p = (uintptr_t)ptr;
	int rc = -1;
	mt_sampler_table_lock();
	if ((!slots || used >= nslots / 4 * 3) && grow() && !slots)
		goto out;
	for (unsigned i = slot_of(p);; i = (i + 1) & (nslots - 1)) {
		if (slots[i].ptr == p) {
			slots[i].size = size;
			slots[i].points = points;
			rc = 0;
			goto out;
		}
		if (!slots[i].ptr) {
			/* Keep probe chains short: refuse beyond 3/4 full. */
			if (used >= nslots / 4 * 3)
				goto out;
			slots[i] = (struct mt_sampler_entry){ p, size, points };
			used++;
			filter_add(p, 1);
			rc = 0;
			goto out;
		}
	}
out:
	mt_sampler_table_unlock();
	return rc;
}

int mt_sampler_table_remove(const void *ptr, struct mt_sampler_entry *e)
{
	uintptr_t p = (uintptr_t)ptr;
	int found = 0;
	mt_sampler_table_lock();
	if (!slots)
		goto out;
	unsigned i = slot_of(p);
	for (;; i = (i + 1) & (nslots - 1)) {
		if (!slots[i].ptr)
			goto out;
		if (slots[i].ptr == p)
			break;
	}
	*e = slots[i];
	found = 1;
	used--;
	filter_add(p, -1);
	/* Backward shift: move later members of the chain into the hole when
	 * their home slot does not lie cyclically in (hole, j]. */
	for (unsigned j = i;;) {
		j = (j + 1) & (nslots - 1);
		if (!slots[j].ptr)
			break;
		unsigned home = slot_of(slots[j].ptr);
		unsigned dist_home = (j - home) & (nslots - 1);
		unsigned dist_hole = (j - i) & (nslots - 1);
		if (dist_home >= dist_hole) {
			slots[i] = slots[j];
			i = j;
		}
	}
	slots[i].ptr = 0;
out:
	mt_sampler_table_unlock();
	return found;
}
