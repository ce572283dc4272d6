/* Gap and point-count draws for the byte sampler (see sampler_rand.h). */
#include "capture/sampler_rand.h"

#include <math.h>

/* Beyond this many expected points a bulk draw replaces the per-point loop,
 * which keeps a huge allocation at a small rate from costing a loop turn
 * per point. */
#define BULK_POINTS 64

void mt_sampler_gapgen_init(struct mt_sampler_gapgen *g, uint64_t rate)
{
	g->rate = rate ? rate : 1;
	g->inv_log_q = g->rate > 1 ? 1.0 / log1p(-1.0 / (double)g->rate) : 0;
}

/* splitmix64's output function: a bijection on 64 bits. */
static uint64_t mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint64_t mt_sampler_rand_next(uint64_t *state)
{
	return mix(*state += 0x9e3779b97f4a7c15ULL);
}

uint64_t mt_sampler_rand_state(uint64_t seed, uint64_t stream, uint64_t ordinal)
{
	return mix(mix(mix(seed) ^ stream) + ordinal * 0x9e3779b97f4a7c15ULL);
}

uint64_t mt_sampler_rand_child(uint64_t stream, uint64_t n)
{
	uint64_t c = mix(stream ^ mix(n + 0xd1b54a32d192ed03ULL));
	return c == stream ? c + 1 : c;
}

double mt_sampler_rand_unit(uint64_t *state)
{
	/* 53 random bits, shifted off zero so log() stays finite. */
	return ((mt_sampler_rand_next(state) >> 11) + 1) * 0x1.0p-53;
}

uint64_t mt_sampler_gap_next(const struct mt_sampler_gapgen *g, uint64_t *state)
{
	if (g->rate == 1)
		return 1;
	double k = floor(log(mt_sampler_rand_unit(state)) * g->inv_log_q);
	if (!(k < 9.0e18))	/* U == 1 gives 0; guard the absurd tail */
		k = 9.0e18;
	return (uint64_t)k + 1;
}

static double normal(uint64_t *state)
{
	double u1 = mt_sampler_rand_unit(state), u2 = mt_sampler_rand_unit(state);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

uint64_t mt_sampler_points_after(const struct mt_sampler_gapgen *g, uint64_t *state,
				 uint64_t bytes, int64_t *next)
{
	if (g->rate == 1) {
		*next = 1;
		return bytes;
	}
	uint64_t points = 0;
	if (bytes / g->rate > BULK_POINTS) {
		double p = 1.0 / (double)g->rate;
		double mean = (double)bytes * p;
		double x = floor(mean + sqrt(mean * (1 - p)) * normal(state) + 0.5);
		points = x < 0 ? 0 : (uint64_t)x;
		/* The process is memoryless: the next gap starts afresh. */
		*next = (int64_t)mt_sampler_gap_next(g, state);
		return points;
	}
	for (;;) {
		uint64_t k = mt_sampler_gap_next(g, state);
		if (k > bytes) {
			*next = (int64_t)(k - bytes);
			return points;
		}
		points++;
		bytes -= k;
	}
}

uint64_t mt_sampler_points_cover(const struct mt_sampler_gapgen *g, uint64_t *state,
				 int64_t *remaining, uint64_t size)
{
	if ((uint64_t)*remaining > size) {
		*remaining -= (int64_t)size;
		return 0;
	}
	uint64_t after = size - (uint64_t)*remaining;
	return 1 + mt_sampler_points_after(g, state, after, remaining);
}
