/* Test helpers: a seeded generator, Poisson draws, and a byte-level model of
 * mt-capture's sampler (exponential gaps on each thread's byte line). */
#ifndef MT_FOLD_TEST_SIM_H
#define MT_FOLD_TEST_SIM_H

#include <stddef.h>
#include <stdint.h>

struct sim_rng {
	uint64_t s[4];
};

/* xoshiro256** seeded through splitmix64: same seed, same sequence. */
void sim_seed(struct sim_rng *r, uint64_t seed);
uint64_t sim_next(struct sim_rng *r);
/* Uniform in (0, 1), never 0 or 1. */
double sim_uniform(struct sim_rng *r);
/* Exponential with the given mean. */
double sim_exp(struct sim_rng *r, double mean);
/* Poisson(mu), exact: inversion of the CDF searched outward from the mode. */
uint64_t sim_poisson(struct sim_rng *r, double mu);

/* The sampler: bytes until the next sample point, as in mt-capture. */
struct sim_sampler {
	struct sim_rng rng;
	double rate;
	double gap;
};
void sim_sampler_init(struct sim_sampler *s, uint64_t seed, double rate);
/* An allocation of size bytes: @return the sample points it covers. */
uint64_t sim_sampler_alloc(struct sim_sampler *s, uint64_t size);

/* Exact probability that the Garwood interval of a Poisson(mu) count covers
 * mu (sum of the pmf over the counts whose interval covers it). */
double sim_exact_coverage(double mu, double conf);

#endif
