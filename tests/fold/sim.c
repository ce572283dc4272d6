/* Seeded randomness and the sampler model for the fold tests. */
#include "tests/fold/sim.h"

#include <math.h>

#include "fold/gamma.h"

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

void sim_seed(struct sim_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sim_next(struct sim_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sim_uniform(struct sim_rng *r)
{
	return ((double)(sim_next(r) >> 11) + 0.5) * 0x1.0p-53;
}

double sim_exp(struct sim_rng *r, double mean)
{
	return -mean * log(sim_uniform(r));
}

static double pmf(double mu, double k)
{
	return exp(k * log(mu) - mu - lgamma(k + 1));
}

uint64_t sim_poisson(struct sim_rng *r, double mu)
{
	if (mu <= 0)
		return 0;
	double u = sim_uniform(r);
	/* Walk k = mode, mode+1, mode-1, mode+2, ... subtracting each pmf from
	 * u; the k where u runs out is a draw from the distribution (the
	 * order of summation does not change which mass each k owns). */
	double mode = floor(mu);
	double pm = pmf(mu, mode);
	double up = pm, down = pm;	/* pmf at the current up and down ends */
	uint64_t kup = (uint64_t)mode, kdown = (uint64_t)mode;
	u -= pm;
	if (u <= 0)
		return kup;
	for (;;) {
		kup++;
		up *= mu / (double)kup;
		u -= up;
		if (u <= 0)
			return kup;
		if (kdown > 0) {
			down *= (double)kdown / mu;
			kdown--;
			u -= down;
			if (u <= 0)
				return kdown;
		}
		if (up < 1e-300 && (kdown == 0 || down < 1e-300))
			return kup;	/* rounding left u > 0: astronomically rare */
	}
}

void sim_sampler_init(struct sim_sampler *s, uint64_t seed, double rate)
{
	sim_seed(&s->rng, seed);
	s->rate = rate;
	s->gap = sim_exp(&s->rng, rate);
}

uint64_t sim_sampler_alloc(struct sim_sampler *s, uint64_t size)
{
	uint64_t points = 0;
	double left = (double)size;
	while (left >= s->gap) {
		left -= s->gap;
		s->gap = sim_exp(&s->rng, s->rate);
		points++;
	}
	s->gap -= left;
	return points;
}

double sim_exact_coverage(double mu, double conf)
{
	double cov = 0, lo, hi;
	uint64_t kmax = (uint64_t)(mu + 12 * sqrt(mu) + 30);
	for (uint64_t k = 0; k <= kmax; k++) {
		mt_fold_garwood((double)k, conf, &lo, &hi);
		if (lo <= mu && mu <= hi)
			cov += pmf(mu, (double)k);
	}
	return cov;
}
