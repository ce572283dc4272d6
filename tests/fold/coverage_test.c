/* Statistical acceptance of the intervals, with fixed seeds.
 *
 * 1. Count level: 2000 sampling runs of a known allocation stream whose sites
 *    have 1 to 10000 expected sample points.  In the byte-sampling model a
 *    site's point count is Poisson(bytes / rate) (test 2 shows the sampler
 *    produces exactly that), so each run draws the counts directly and folds
 *    them through the real profile and snapshot code.
 * 2. Byte level: the exponential-gap sampler itself over a stream of 32 B,
 *    4 KiB and 1 MiB allocations, 1000 runs: point counts are Poisson
 *    (mean and variance), and the bytes and objects intervals cover.
 *
 * MT_FOLD_COVERAGE_TABLE=1 prints the tables (docs/fold.md has them).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "tests/fold/helpers.h"
#include "tests/fold/sim.h"

#define RUNS 2000
#define RATE 524288.0

static const double mus[] = { 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000 };
#define NSITES (sizeof(mus) / sizeof(mus[0]))

static int table_wanted(void)
{
	const char *e = getenv("MT_FOLD_COVERAGE_TABLE");
	return e && *e && *e != '0';
}

static void add_alloc(struct mt_fold_profile *p, const char *frames, uint64_t size,
		      uint64_t points, uint64_t ptr, uint64_t time, double rate)
{
	struct mt_fold_event ev = {
		.kind = MT_FOLD_ALLOC, .pid = 1, .tid = 1, .time = time,
		.comm = { "sim", 3 }, .frames = { frames, strlen(frames) },
		.end = { "complete", 8 },
		.have = MT_FOLD_W_SIZE | MT_FOLD_W_PTR | MT_FOLD_W_POINTS | MT_FOLD_W_RATE,
		.size = size, .ptr = ptr, .points = points, .rate = (uint64_t)rate,
	};
	cr_assert_eq(mt_fold_profile_add(p, &ev), 0);
}

/* The interval mt-fold gives a site it saw no sample of: [0, 3.69 rate]. */
static void empty_interval(double w, double *lo, double *hi)
{
	struct mt_fold_est e = { 0 };
	struct mt_fold_value v;
	mt_fold_est_add_sampled(&e, w, 0);
	mt_fold_est_finish(&e, 0.95, w, &v);
	*lo = v.lo;
	*hi = v.hi;
}

Test(coverage, poisson_sites_2000_runs, .timeout = 120)
{
	char names[NSITES][32];
	unsigned covered[NSITES] = { 0 }, below[NSITES] = { 0 };
	double elo, ehi;
	empty_interval(RATE, &elo, &ehi);
	for (size_t k = 0; k < NSITES; k++)
		snprintf(names[k], sizeof(names[k]), "main;site_%g", mus[k]);

	for (unsigned run = 0; run < RUNS; run++) {
		struct sim_rng rng;
		sim_seed(&rng, 0x5eed0000 + run);
		struct mt_fold_profile *p = mt_fold_profile_new(0);
		for (size_t k = 0; k < NSITES; k++) {
			uint64_t points = sim_poisson(&rng, mus[k]);
			if (points)	/* a site nobody sampled leaves no line */
				add_alloc(p, names[k], (uint64_t)(mus[k] * RATE), points, 0x1000 + k, k,
					  RATE);
		}
		mt_fold_profile_finish(p);
		struct mt_fold_snapshot *s = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
		for (size_t k = 0; k < NSITES; k++) {
			double truth = mus[k] * RATE, lo = elo, hi = ehi;
			const struct mt_fold_site *site = site_named(s, names[k] + 5);
			if (site) {
				lo = site->total.lo;
				hi = site->total.hi;
				cr_assert_eq(site->total.value, site->total.n * RATE);
			}
			covered[k] += lo <= truth && truth <= hi;
			below[k] += hi < truth;
		}
		mt_fold_snapshot_free(s);
		mt_fold_profile_free(p);
	}

	if (table_wanted())
		fprintf(stderr, "| expected samples | covered (of %d) | coverage | below / above | "
			"exact coverage |\n|---:|---:|---:|---:|---:|\n", RUNS);
	for (size_t k = 0; k < NSITES; k++) {
		double cov = (double)covered[k] / RUNS, exact = sim_exact_coverage(mus[k], 0.95);
		if (table_wanted())
			fprintf(stderr, "| %g | %u | %.2f%% | %u / %u | %.2f%% |\n", mus[k], covered[k],
				100 * cov, below[k], RUNS - covered[k] - below[k], 100 * exact);
		/* "Covers in at least 95% of runs" is a property of the true
		 * coverage, computed exactly here (the pmf summed over the counts
		 * whose interval covers): it must be >= 95% at every size.  The
		 * 2000-run figure estimates it with a standard error of 0.49
		 * points; the true coverage at large sizes is 95.06%, so a run of
		 * 2000 lands under 95.00% about 45% of the time whatever the code.
		 * The simulation is held to agree with the exact figure within 3
		 * SE and to stay above 95% less 2.58 SE (93.7%). */
		double se = sqrt(exact * (1 - exact) / RUNS);
		cr_expect(exact >= 0.95, "mu=%g: exact coverage %.4f", mus[k], exact);
		cr_expect(fabs(cov - exact) <= 3 * se, "mu=%g: simulated %.4f, exact %.4f", mus[k],
			  cov, exact);
		cr_expect(cov >= 0.95 - 2.58 * sqrt(0.95 * 0.05 / RUNS), "mu=%g: coverage %.4f",
			  mus[k], cov);
		if (mus[k] >= 100)
			cr_expect(cov >= 0.93 && cov <= 0.97, "mu=%g: coverage %.4f", mus[k], cov);
	}
}

/* --- byte level -------------------------------------------------------- */

#define BRUNS 1000
#define BRATE 65536.0

static const struct bsite {
	const char *frames;
	uint64_t size, count;
} bsites[] = {
	{ "main;small", 32, 20000 },	/* 9.77 expected points */
	{ "main;page", 4096, 400 },	/* 25 */
	{ "main;huge", 1 << 20, 5 },	/* 80; every allocation is sampled */
};
#define NB (sizeof(bsites) / sizeof(bsites[0]))

Test(coverage, byte_level_sampler, .timeout = 120)
{
	double sum[NB] = { 0 }, sumsq[NB] = { 0 };
	unsigned bytes_cov[NB] = { 0 }, obj_cov[NB] = { 0 };

	for (unsigned run = 0; run < BRUNS; run++) {
		struct sim_sampler smp;
		sim_sampler_init(&smp, 0xb17e0000 + run, BRATE);
		struct mt_fold_profile *p = mt_fold_profile_new(0);
		uint64_t points_at[NB] = { 0 }, left[NB], t = 0;
		for (size_t k = 0; k < NB; k++)
			left[k] = bsites[k].count;
		/* Interleave the sites as a program would. */
		for (int more = 1; more;) {
			more = 0;
			for (size_t k = 0; k < NB; k++) {
				uint64_t burst = bsites[k].count / 50 + 1;
				for (; burst && left[k]; burst--, left[k]--) {
					uint64_t pts = sim_sampler_alloc(&smp, bsites[k].size);
					if (pts)
						add_alloc(p, bsites[k].frames, bsites[k].size, pts,
							  0x10000 + t, t, BRATE);
					points_at[k] += pts;
					t++;
				}
				more |= left[k] > 0;
			}
		}
		mt_fold_profile_finish(p);
		struct mt_fold_snapshot *sb = snapshot_of(p, MT_FOLD_ALLOC_BYTES, 0);
		struct mt_fold_snapshot *so = snapshot_of(p, MT_FOLD_ALLOC_OBJECTS, 0);
		for (size_t k = 0; k < NB; k++) {
			double tb = (double)(bsites[k].size * bsites[k].count);
			double to = (double)bsites[k].count;
			const char *leaf = strchr(bsites[k].frames, ';') + 1;
			const struct mt_fold_site *b = site_named(sb, leaf), *o = site_named(so, leaf);
			double lo, hi;
			empty_interval(BRATE, &lo, &hi);
			if (b) {
				lo = b->total.lo;
				hi = b->total.hi;
			}
			bytes_cov[k] += lo <= tb && tb <= hi;
			if (o)
				obj_cov[k] += o->total.lo <= to && to <= o->total.hi;
			else	/* no sample: [0, 3.69 x the weight of one] */
				obj_cov[k] += to <= 3.6889 / -expm1(-(double)bsites[k].size / BRATE);
			sum[k] += (double)points_at[k];
			sumsq[k] += (double)points_at[k] * (double)points_at[k];
		}
		mt_fold_snapshot_free(sb);
		mt_fold_snapshot_free(so);
		mt_fold_profile_free(p);
	}
	if (table_wanted())
		fprintf(stderr, "| site | expected points | mean | variance/mean | bytes covered | "
			"objects covered |\n|---|---:|---:|---:|---:|---:|\n");
	for (size_t k = 0; k < NB; k++) {
		double mu = (double)(bsites[k].size * bsites[k].count) / BRATE;
		double mean = sum[k] / BRUNS, var = (sumsq[k] - sum[k] * mean) / (BRUNS - 1);
		double bc = (double)bytes_cov[k] / BRUNS, oc = (double)obj_cov[k] / BRUNS;
		if (table_wanted())
			fprintf(stderr, "| %s %llu x %llu B | %.2f | %.2f | %.3f | %.1f%% | %.1f%% |\n",
				bsites[k].frames, (unsigned long long)bsites[k].count,
				(unsigned long long)bsites[k].size, mu, mean, var / mean, 100 * bc,
				100 * oc);
		/* Poisson: mean mu (4 standard errors), variance = mean (the
		 * ratio's standard error is sqrt(2 / runs) = 0.045). */
		cr_expect(fabs(mean - mu) <= 4 * sqrt(mu / BRUNS), "%s: mean %.3f vs %.3f",
			  bsites[k].frames, mean, mu);
		cr_expect(fabs(var / mean - 1) <= 4 * sqrt(2.0 / BRUNS), "%s: var/mean %.3f",
			  bsites[k].frames, var / mean);
		/* The counts behave as Poisson, so coverage is Garwood's exact
		 * figure within sampling error (SE 0.7 points at 1000 runs). */
		double exact = sim_exact_coverage(mu, 0.95);
		cr_expect(bc >= exact - 4 * sqrt(exact * (1 - exact) / BRUNS),
			  "%s: bytes coverage %.3f, exact %.3f", bsites[k].frames, bc, exact);
		cr_expect(oc >= 0.93, "%s: objects coverage %.3f", bsites[k].frames, oc);
	}
}

Test(coverage, poisson_generator_moments)
{
	/* The direct generator used above against the Poisson mean and
	 * variance, at the small and large means it is used for. */
	static const double m[] = { 0.5, 3, 40, 10000 };
	for (size_t i = 0; i < sizeof(m) / sizeof(*m); i++) {
		struct sim_rng rng;
		sim_seed(&rng, 7 + i);
		double s = 0, s2 = 0;
		const int n = 20000;
		for (int j = 0; j < n; j++) {
			double k = (double)sim_poisson(&rng, m[i]);
			s += k;
			s2 += k * k;
		}
		double mean = s / n, var = (s2 - s * mean) / (n - 1);
		cr_assert(fabs(mean - m[i]) <= 4 * sqrt(m[i] / n), "mu %g mean %f", m[i], mean);
		cr_assert(fabs(var / m[i] - 1) <= 4 * sqrt(2.0 / n) + 4 / sqrt(n * m[i]),
			  "mu %g var %f", m[i], var);
	}
}

/* A site of mixed sizes, as real code has: 10000 small objects and 30 of
 * 64 KiB at the default rate.  Most runs sample none of the small ones
 * (0.46 points expected), so the objects interval must allow for unseen
 * small objects, not only for the weights it saw: with the largest weight
 * seen as its bound, the process's interval covered in 41% of the runs. */
Test(coverage, objects_of_mixed_sizes, .timeout = 120)
{
	const double rate = 524288;
	const uint64_t nsmall = 10000, nbig = 30, small = 24, big = 65536;
	unsigned site_cov = 0, all_cov = 0, runs = 1000;
	for (unsigned run = 0; run < runs; run++) {
		struct sim_sampler smp;
		sim_sampler_init(&smp, 0x0b1ec700 + run, rate);
		struct mt_fold_profile *p = mt_fold_profile_new(0);
		uint64_t t = 0;
		for (uint64_t i = 0; i < nsmall + nbig; i++) {
			/* a large object after every 333 small ones */
			uint64_t size = i % 334 == 333 ? big : small;
			uint64_t pts = sim_sampler_alloc(&smp, size);
			if (pts)
				add_alloc(p, "main;mixed", size, pts, 0x10000 + t, t, rate);
			t++;
		}
		mt_fold_profile_finish(p);
		struct mt_fold_snapshot *so = snapshot_of(p, MT_FOLD_ALLOC_OBJECTS, 0);
		const struct mt_fold_site *o = site_named(so, "mixed");
		double total = (double)(nsmall + nbig);
		if (o)
			site_cov += o->total.lo <= total && total <= o->total.hi;
		else	/* no sample: [0, 3.69 x the weight of a 1-byte object] */
			site_cov += total <= 3.6889 / -expm1(-1 / rate);
		if (so->nthreads)
			all_cov += so->all.metric.lo <= total && total <= so->all.metric.hi;
		else
			all_cov++;
		mt_fold_snapshot_free(so);
		mt_fold_profile_free(p);
	}
	cr_expect(site_cov >= 0.93 * runs, "site: objects coverage %.3f", (double)site_cov / runs);
	cr_expect(all_cov >= 0.93 * runs, "all: objects coverage %.3f", (double)all_cov / runs);
}
