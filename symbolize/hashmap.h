/* A uint64 -> uint64 open-addressing hash map for the per-PC caches: the
 * unwinder looks up every frame here, so it stays small and branch-light. */
#ifndef MT_UNWIND_HASHMAP_H
#define MT_UNWIND_HASHMAP_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/error.h"

struct mt_unwind_hashmap {
	uint64_t *keys;		/* MT_UNWIND_HASH_EMPTY marks a free slot */
	uint64_t *vals;
	size_t cap;		/* power of two, or 0 */
	size_t len;
	uint64_t hits, misses;	/* lookups, for the cache hit rate */
};

#define MT_UNWIND_HASH_EMPTY UINT64_MAX

/* Embedded object: zero it, or call init; release frees the arrays. */
void mt_unwind_hashmap_init(struct mt_unwind_hashmap *h);
void mt_unwind_hashmap_release(struct mt_unwind_hashmap *h);

/* @return : 1 with *val set when key is present, else 0 (always for
 *           MT_UNWIND_HASH_EMPTY, which no entry has).  Counts hits and
 *           misses. */
static inline int mt_unwind_hashmap_get(struct mt_unwind_hashmap *h, uint64_t key,
					uint64_t *val)
{
	if (h->cap && key != MT_UNWIND_HASH_EMPTY) {
		size_t mask = h->cap - 1;
		size_t i = (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 32) & mask;
		for (;;) {
			uint64_t k = h->keys[i];
			if (k == key) {
				*val = h->vals[i];
				h->hits++;
				return 1;
			}
			if (k == MT_UNWIND_HASH_EMPTY)
				break;
			i = (i + 1) & mask;
		}
	}
	h->misses++;
	return 0;
}

/* Insert or replace.  @return : 0, MT_UNWIND_ENOMEM, or
 *           MT_UNWIND_HASH_NO_KEY for the key MT_UNWIND_HASH_EMPTY, which
 *           marks free slots (a pc or vaddr a recording can make up: the
 *           caller keeps that entry apart). */
#define MT_UNWIND_HASH_NO_KEY MT_UNWIND_ERANGE
int mt_unwind_hashmap_put(struct mt_unwind_hashmap *h, uint64_t key, uint64_t val);

#endif
