/* The sampler's set of live sampled pointers, so that their frees can be
 * reported.  Every free() asks mt_sampler_table_maybe() first: one byte load
 * from a 64 KiB counting filter that stays in cache; only a hit takes the
 * lock and probes the table.  The table is an open-addressing hash in
 * mmap'd memory that grows as needed: nothing here calls malloc.
 */
#ifndef MT_SAMPLER_TABLE_H
#define MT_SAMPLER_TABLE_H

#include <stdint.h>

#define MT_SAMPLER_TABLE_SLOTS (1u << 22)	/* at most 4M pointers (96 MiB) */
#define MT_SAMPLER_FILTER_BITS 16

struct mt_sampler_entry {
	uintptr_t ptr;		/* 0: empty slot */
	uint64_t size;
	uint64_t points;
};

extern unsigned char mt_sampler_filter[1u << MT_SAMPLER_FILTER_BITS];

static inline unsigned mt_sampler_table_hash(uintptr_t p)
{
	return (unsigned)(((uint64_t)p * 0x9e3779b97f4a7c15ULL) >> (64 - MT_SAMPLER_FILTER_BITS));
}

/* Cheap pre-check on the free path.
 * @return : 0 when p is certainly not in the table. */
static inline int mt_sampler_table_maybe(const void *p)
{
	return __atomic_load_n(&mt_sampler_filter[mt_sampler_table_hash((uintptr_t)p)],
			       __ATOMIC_RELAXED);
}

/* Make mt_sampler_table_maybe(p) true for good (the sampler's own boot
 * arena blocks, so that free() needs no separate check for them). */
void mt_sampler_table_pin(const void *p);

/* Remember p (non-NULL).  A p already present is overwritten.
 * @return : 0, or -1 when the table is full or cannot be mapped. */
int mt_sampler_table_insert(const void *p, uint64_t size, uint64_t points);

/* Forget p.  @return : 1 with *e filled when p was present, else 0. */
int mt_sampler_table_remove(const void *p, struct mt_sampler_entry *e);

/* fork support: hold the lock across fork, release it in both processes. */
void mt_sampler_table_lock(void);
void mt_sampler_table_unlock(void);

#endif
