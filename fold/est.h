/* Estimate accumulators: one per (site or stack or thread, metric).
 *
 * Every event adds either an exactly known amount (trace mode recording every
 * call, a full capture, plain counts) or a weight w times a Poisson count k
 * (k sample points worth w = rate bytes each; one sampled allocation worth
 * w = 1/p objects; one event-mode sample worth its period).  Keeping the sums
 * of w k, w^2 k and the largest w makes accumulators additive, so merging
 * profiles is adding accumulators, and an interval can be derived at the end
 * for any sum of them (the gamma interval of Fay and Feuer, which reduces to
 * the exact Garwood interval when every weight is the same).
 */
#ifndef MT_FOLD_EST_H
#define MT_FOLD_EST_H

#include <stdint.h>

/* Exact sums are carried in 128 bits: 2^64 of the largest 64-bit amounts
 * still add up without wrapping (three allocations of 2^63 bytes do not
 * make 8 EiB). */
typedef unsigned __int128 mt_fold_u128;
typedef __int128 mt_fold_i128;

/* v in decimal into buf (40 bytes at least).  @return : buf. */
char *mt_fold_u128_str(char *buf, mt_fold_u128 v);
char *mt_fold_i128_str(char *buf, mt_fold_i128 v);

struct mt_fold_est {
	mt_fold_u128 exact;	/* sum of exactly known parts */
	double y;		/* sum of w * k over sampled parts */
	double v;		/* sum of w^2 * k: the Poisson variance of y */
	double wmax;		/* largest single weight w seen, or that an unseen
				 * contributor could have (mt_fold_est_bound) */
	uint64_t n;		/* sum of k: the samples behind y */
	int sampled;		/* a sampled part was added (even with k = 0) */
};

/* A finished estimate: what tables and JSON print. */
struct mt_fold_value {
	double value;		/* exact + y */
	uint64_t n;		/* samples behind the sampled part */
	int exact;		/* 1: no sampled part, lo == hi == value */
	double rse;		/* sqrt(v) / value; +inf when value == 0 and sampled */
	double lo, hi;		/* confidence interval */
	int cut_top;		/* hi was cut at the sampler's exact total
				 * (mt_fold_value_clip): the samples alone
				 * reach hi_samples */
	double hi_samples;	/* hi before any cut */
};

/* Add an exactly known amount. */
void mt_fold_est_add_exact(struct mt_fold_est *e, uint64_t amount);

/* Add k Poisson counts of weight w (w > 0; k may be 0 to mark the
 * accumulator as sampled). */
void mt_fold_est_add_sampled(struct mt_fold_est *e, double w, uint64_t k);

/* Contributors that were not sampled could each weigh up to w: the
 * interval's bound on one weight must allow for them (objects under byte
 * sampling: the smallest allocations, the likeliest to be missed, weigh
 * the most). */
void mt_fold_est_bound(struct mt_fold_est *e, double w);

/* dst += src, the accumulators of two disjoint sets of events. */
void mt_fold_est_merge(struct mt_fold_est *dst, const struct mt_fold_est *src);

/* Derive value, error and interval at confidence conf (e.g. 0.95).
 * wmax_fallback is the weight of one count to assume when e saw none (a
 * site or thread with no samples), 0 when unknown. */
void mt_fold_est_finish(const struct mt_fold_est *e, double conf,
			double wmax_fallback, struct mt_fold_value *out);

/* v's interval cut at bound, an exact figure the truth cannot exceed
 * (< 0: none); never below the estimate itself. */
void mt_fold_value_clip(struct mt_fold_value *v, double bound);

#endif
