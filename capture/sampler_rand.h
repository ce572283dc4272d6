/* Random draws for the byte sampler: a per-thread generator, geometric gaps
 * between sample points on the byte line, and bulk point counts.
 *
 * Model: every allocated byte is a sample point independently with
 * probability p = 1/rate (a Bernoulli process, the discrete Poisson process).
 * The gap to the next point is then geometric with mean rate, and an
 * allocation of s bytes covers Binomial(s, p) points: its expected estimate
 * points * rate is s, exactly.  rate 1 makes every byte a point.
 *
 * Pure functions, no allocation, no locks: callable inside malloc.
 */
#ifndef MT_SAMPLER_RAND_H
#define MT_SAMPLER_RAND_H

#include <stdint.h>

struct mt_sampler_gapgen {
	uint64_t rate;		/* mean gap in bytes, >= 1 */
	double inv_log_q;	/* 1 / log(1 - 1/rate); 0 when rate is 1 */
};

/* Set up draws for a mean gap of rate bytes (0 is taken as 1). */
void mt_sampler_gapgen_init(struct mt_sampler_gapgen *g, uint64_t rate);

/* splitmix64: advances *state, @return : 64 random bits. */
uint64_t mt_sampler_rand_next(uint64_t *state);

/* The state of a generator of its own for thread number ordinal of the
 * process image stream, under seed.  Every input is mixed, so that the
 * states of any two (stream, ordinal) lie far apart on splitmix64's single
 * cycle: their draws are independent.  (States a fixed step apart, as seed +
 * ordinal * gamma, would give each thread its neighbour's draws shifted by
 * one.)  @return : the state for mt_sampler_rand_next. */
uint64_t mt_sampler_rand_state(uint64_t seed, uint64_t stream, uint64_t ordinal);

/* The stream of the n-th process image that the image stream starts (a
 * forked child, or the program it execs): never stream itself, the same
 * for the same (stream, n). */
uint64_t mt_sampler_rand_child(uint64_t stream, uint64_t n);

/* @return : a uniform double in (0, 1]. */
double mt_sampler_rand_unit(uint64_t *state);

/* @return : bytes up to and including the next sample point, >= 1,
 *           geometric with mean g->rate. */
uint64_t mt_sampler_gap_next(const struct mt_sampler_gapgen *g, uint64_t *state);

/* Sample points among bytes bytes that follow a point, and the new distance
 * to the next point: exact (one geometric draw per point) while few points
 * are expected, a normal approximation of Binomial(bytes, 1/rate) beyond
 * 64 expected points (relative error of its variance < 1/64).
 * @return : the number of points; *next is set to the new gap (>= 1). */
uint64_t mt_sampler_points_after(const struct mt_sampler_gapgen *g, uint64_t *state,
				 uint64_t bytes, int64_t *next);

/* Points covered by an allocation of size bytes, given *remaining bytes to
 * the next point before it (>= 1); updates *remaining.  The fast path of the
 * sampler inlines the size < *remaining case; this is the whole rule.
 * @return : the number of points (0 when size < *remaining). */
uint64_t mt_sampler_points_cover(const struct mt_sampler_gapgen *g, uint64_t *state,
				 int64_t *remaining, uint64_t size);

#endif
