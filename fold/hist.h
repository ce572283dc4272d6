/* Log2 histograms of estimates: requested sizes, lifetimes in ns, and
 * allocations between an allocation and its free (docs/fold.md, "Sizes and
 * lifetimes").  Bucket 0 is [0,1), bucket k >= 1 is [2^(k-1), 2^k); each
 * holds an objects and a bytes accumulator fed like alloc_* (1/inclusion
 * probability per sampled allocation, points * rate bytes). */
#ifndef MT_FOLD_HIST_H
#define MT_FOLD_HIST_H

#include <stdint.h>

#include "fold/est.h"

#define MT_FOLD_HIST_BUCKETS 65

struct mt_fold_hist {
	struct mt_fold_est objects[MT_FOLD_HIST_BUCKETS], bytes[MT_FOLD_HIST_BUCKETS];
	uint64_t used;		/* bit k: bucket k or (k >= 64) bucket 64 has data */
	int any;
};

/* The bucket of v. */
static inline unsigned mt_fold_hist_bucket(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0u;
}

/* Bucket b's bounds [lo, hi); hi of bucket 64 is 2^64, given as a double. */
static inline double mt_fold_hist_lo(unsigned b)
{
	return b ? (double)(1ull << (b - 1)) : 0;
}
static inline double mt_fold_hist_hi(unsigned b)
{
	return b < 64 ? (double)(1ull << b) : 18446744073709551616.0;
}

/* Mark bucket b used and return its accumulators. */
static inline void mt_fold_hist_slot(struct mt_fold_hist *h, uint64_t v,
				     struct mt_fold_est **objects, struct mt_fold_est **bytes)
{
	unsigned b = mt_fold_hist_bucket(v);
	h->used |= 1ull << (b < 64 ? b : 63);
	h->any = 1;
	*objects = &h->objects[b];
	*bytes = &h->bytes[b];
}

static inline int mt_fold_hist_has(const struct mt_fold_hist *h, unsigned b)
{
	return h->objects[b].n || h->objects[b].exact || h->bytes[b].n || h->bytes[b].exact;
}

/* dst += src */
void mt_fold_hist_merge(struct mt_fold_hist *dst, const struct mt_fold_hist *src);



/* Sparse histograms: the cells of one stack or site that have data. */
enum { MT_FOLD_CELL_SIZES, MT_FOLD_CELL_LIFE_NS };
struct mt_fold_hist_cell {
	uint8_t which, bucket;
	struct mt_fold_est objects, bytes;
};
struct mt_fold_cells {
	struct mt_fold_hist_cell *v;
	uint32_t n, cap;
};

/* The cell (which, bucket), made when missing.  @return : it, or NULL out
 * of memory. */
struct mt_fold_hist_cell *mt_fold_cells_get(struct mt_fold_cells *c, unsigned which,
					    unsigned bucket);
/* dst += src.  @return : 0 or MT_FOLD_ENOMEM (-10). */
int mt_fold_cells_merge(struct mt_fold_cells *dst, const struct mt_fold_cells *src);
void mt_fold_cells_release(struct mt_fold_cells *c);
/* The cells of which, into a full histogram h (zeroed first). */
void mt_fold_cells_hist(const struct mt_fold_cells *c, unsigned which, struct mt_fold_hist *h);
#endif
