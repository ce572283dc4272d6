/* The byte sampler's draws: gaps average the rate, points per allocation
 * average size/rate with the Binomial spread, rate 1 counts every byte, and
 * the same seed repeats the same draws. */
#include "capture/sampler_rand.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

Test(sampler_rand, gaps_have_the_mean_and_spread_of_a_geometric)
{
	struct mt_sampler_gapgen g;
	uint64_t seed = 1, n = 200000;
	double sum = 0, sum2 = 0;
	mt_sampler_gapgen_init(&g, 4096);
	for (uint64_t i = 0; i < n; i++) {
		double k = (double)mt_sampler_gap_next(&g, &seed);
		cr_assert_geq(k, 1);
		sum += k;
		sum2 += k * k;
	}
	double mean = sum / n, var = sum2 / n - mean * mean;
	/* Geometric(p = 1/4096): mean 4096, sd about 4096; the sample mean's sd
	 * is 4096 / sqrt(n) = 9.2, so 5 sd is 46. */
	cr_expect(fabs(mean - 4096) < 46, "mean gap %f", mean);
	cr_expect(fabs(sqrt(var) - 4096) < 100, "gap sd %f", sqrt(var));
}

static void points_stats(uint64_t rate, uint64_t size, int n, double *mean, double *var)
{
	struct mt_sampler_gapgen g;
	uint64_t seed = 7;
	int64_t remaining;
	double s = 0, s2 = 0;
	mt_sampler_gapgen_init(&g, rate);
	remaining = (int64_t)mt_sampler_gap_next(&g, &seed);
	for (int i = 0; i < n; i++) {
		double p = (double)mt_sampler_points_cover(&g, &seed, &remaining, size);
		cr_assert_geq(remaining, 1);
		s += p;
		s2 += p * p;
	}
	*mean = s / n;
	*var = s2 / n - *mean * *mean;
}

Test(sampler_rand, small_allocations_cover_size_over_rate_points)
{
	double mean, var;
	/* 100-byte allocations at rate 1000: 0.1 points each, variance ~0.1. */
	points_stats(1000, 100, 400000, &mean, &var);
	cr_expect(fabs(mean - 0.1) < 5 * sqrt(0.1 / 400000), "mean points %f", mean);
	cr_expect(fabs(var - 0.1) < 0.01, "variance %f", var);
}

Test(sampler_rand, large_allocations_take_the_bulk_path_unbiased)
{
	double mean, var;
	/* 1 MiB at rate 4096: 256 points expected (bulk draw), variance ~256. */
	points_stats(4096, 1 << 20, 20000, &mean, &var);
	cr_expect(fabs(mean - 256) < 5 * sqrt(256.0 / 20000), "mean points %f", mean);
	cr_expect(fabs(var - 256) < 20, "variance %f", var);
}

Test(sampler_rand, rate_one_makes_every_byte_a_point)
{
	struct mt_sampler_gapgen g;
	uint64_t seed = 3;
	int64_t remaining = 1;
	mt_sampler_gapgen_init(&g, 1);
	cr_assert_eq(mt_sampler_gap_next(&g, &seed), 1);
	for (uint64_t size = 1; size < 5000; size += 97) {
		cr_assert_eq(mt_sampler_points_cover(&g, &seed, &remaining, size), size);
		cr_assert_eq(remaining, 1);
	}
	cr_assert_eq(mt_sampler_points_cover(&g, &seed, &remaining, 0), 0);
}

Test(sampler_rand, same_seed_same_draws)
{
	struct mt_sampler_gapgen g;
	uint64_t a = 42, b = 42, c = 43;
	int diff = 0;
	mt_sampler_gapgen_init(&g, 524288);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = mt_sampler_gap_next(&g, &a), y = mt_sampler_gap_next(&g, &b);
		cr_assert_eq(x, y);
		diff |= x != mt_sampler_gap_next(&g, &c);
	}
	cr_expect(diff, "seed 43 repeated seed 42's gaps");
}

Test(sampler_rand, unit_draws_stay_in_the_open_closed_interval)
{
	uint64_t s = 0;
	for (int i = 0; i < 100000; i++) {
		double u = mt_sampler_rand_unit(&s);
		cr_assert(u > 0 && u <= 1, "u = %g", u);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Threads, forked children and exec'd images each draw from a state of
 * their own: no 64-bit draw of one generator may appear in another's first
 * 4096 (states a fixed step apart, as seed + ordinal * gamma was, give
 * neighbouring threads the same draws shifted by one). */
Test(sampler_rand, threads_and_images_draw_independent_streams)
{
	enum { STREAMS = 5, THREADS = 16, DRAWS = 4096 };
	uint64_t streams[STREAMS] = { 0 };
	streams[1] = mt_sampler_rand_child(0, 1);
	streams[2] = mt_sampler_rand_child(0, 2);
	streams[3] = mt_sampler_rand_child(streams[1], 1);
	streams[4] = mt_sampler_rand_child(streams[2], 1);
	static uint64_t all[STREAMS * THREADS * DRAWS];
	size_t n = 0;
	for (int s = 0; s < STREAMS; s++) {
		for (int t = 0; t < s; t++)
			cr_assert_neq(streams[s], streams[t], "streams %d and %d are one", s, t);
		for (uint64_t k = 1; k <= THREADS; k++) {
			uint64_t st = mt_sampler_rand_state(42, streams[s], k);
			cr_assert_eq(st, mt_sampler_rand_state(42, streams[s], k));
			cr_assert_neq(st, mt_sampler_rand_state(43, streams[s], k));
			for (int i = 0; i < DRAWS; i++)
				all[n++] = mt_sampler_rand_next(&st);
		}
	}
	qsort(all, n, sizeof(all[0]), cmp_u64);
	for (size_t i = 1; i < n; i++)
		cr_assert_neq(all[i], all[i - 1], "a draw repeats across generators");
	cr_assert_eq(mt_sampler_rand_child(7, 3), mt_sampler_rand_child(7, 3));
}
