/* What was live over time, by stack: the run cut into equal time buckets,
 * and for each stack the estimated live bytes and objects at each bucket's
 * moment, from the same liveness pass and weights as the inuse and peak
 * metrics (fold/profile.c), plus what each bucket allocated (docs/fold.md,
 * "Live over time"; JSON "live_over_time", docs/formats/fold-json.md).
 *
 * Bucket b of N over [start, end] (span = max(1, end - start)) ends at the
 * moment t_b = start + ceil((b + 1) span / N) - 1, the last one at end
 * itself.  An allocation is live at t when its TIME <= t < the TIME of
 * what ended it (its free, or the allocation that reused its pointer);
 * never ended: live to the end.  So the last bucket's sums are the inuse
 * metrics, and a bucket's the peak metrics of --at at its moment. */
#ifndef MT_FOLD_LIVE_H
#define MT_FOLD_LIVE_H

#include <stddef.h>
#include <stdint.h>

#define MT_FOLD_LIVE_MAX_BUCKETS 100000

/* One stack's figure at a bucket: bytes and objects (the estimates' values)
 * and n, the sample points behind bytes (0 where recorded exactly). */
struct mt_fold_live_pt {
	uint32_t bucket;
	uint64_t n;
	double bytes, objects;
};

/* A stack's series: live, its change points in bucket order (the value
 * holds from that bucket until the next point; a point of 0 when nothing
 * of the stack is live any more), and alloc, the buckets whose allocations
 * it has (an allocation belongs to the first bucket whose moment is at or
 * after its TIME). */
struct mt_fold_live_row {
	uint32_t stack;		/* the profile's stack id */
	struct mt_fold_live_pt *live, *alloc;
	uint32_t nlive, nalloc;
};

struct mt_fold_live_delta;

struct mt_fold_live {
	unsigned buckets;	/* 0: not asked for */
	uint64_t start, end;	/* perf time of the first and the last event */
	uint64_t *moments;	/* buckets of them: t_b in perf time */
	uint64_t allocations;	/* allocations of the liveness pass */
	struct mt_fold_live_row *rows;	/* by stack id; stacks with allocations */
	uint32_t nrows;
	/* while the liveness pass runs */
	struct mt_fold_live_delta *d;
	size_t nd, cap;
};

/* Start: buckets (1..MT_FOLD_LIVE_MAX_BUCKETS) over [start, end].
 * @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_live_init(struct mt_fold_live *l, unsigned buckets, uint64_t start, uint64_t end);

/* The bucket of moment t: the first whose moment is at or after t (the
 * last for t past the end). */
unsigned mt_fold_live_bucket(const struct mt_fold_live *l, uint64_t t);

/* An allocation of stack from time alloc to time end (UINT64_MAX: never
 * ended) worth bytes, objects and n sample points.  @return : 0 or
 * MT_FOLD_ENOMEM. */
int mt_fold_live_add(struct mt_fold_live *l, uint32_t stack, uint64_t alloc, uint64_t end,
		     double bytes, double objects, uint64_t n);

/* Build the rows from what was added.  @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_live_finish(struct mt_fold_live *l);

/* A stack's live figure at bucket b from its change points. */
struct mt_fold_live_pt mt_fold_live_at(const struct mt_fold_live_row *r, unsigned b);

/* dst: a deep copy of a finished src.  @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_live_copy(struct mt_fold_live *dst, const struct mt_fold_live *src);

void mt_fold_live_release(struct mt_fold_live *l);

#endif
