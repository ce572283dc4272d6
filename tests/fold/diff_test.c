/* mt-fold --diff: the tests of one site (the binomial tails against sums of
 * the pmf), the decision over many (simulated null diffs keep the
 * family-wise false alarms at the level; a planted change is found), exact
 * totals compared exactly, and the JSON. */
#include <criterion/criterion.h>
#include <math.h>

#include "fold/diff.h"
#include "fold/sites.h"
#include "tests/fold/helpers.h"
#include "tests/fold/json_min.h"
#include "tests/fold/sim.h"

/* P(X >= k), X ~ Bin(n, p), summed term by term. */
static double binom_upper(int k, int n, double p)
{
	double s = 0;
	for (int i = k; i <= n; i++)
		s += exp(lgamma(n + 1) - lgamma(i + 1) - lgamma(n - i + 1) + i * log(p) +
			 (n - i) * log1p(-p));
	return s;
}

Test(diff, beta_is_the_binomial_tail)
{
	cr_assert(fabs(mt_fold_beta_i(0.5, 3, 3) - 0.5) < 1e-12);
	cr_assert_eq(mt_fold_beta_i(0, 2, 2), 0);
	cr_assert_eq(mt_fold_beta_i(1, 2, 2), 1);
	cr_assert(isnan(mt_fold_beta_i(0.5, 0, 2)));
	int ns[] = { 1, 7, 40, 300, 1000 };
	double ps[] = { 0.5, 0.2, 0.9 };
	for (unsigned a = 0; a < 5; a++)
		for (unsigned b = 0; b < 3; b++)
			for (int k = 1; k <= ns[a]; k += 1 + ns[a] / 13) {
				double want = binom_upper(k, ns[a], ps[b]);
				double got = mt_fold_beta_i(ps[b], k, ns[a] - k + 1);
				cr_assert(fabs(got - want) <= 1e-9 * want + 1e-300,
					  "n %d k %d p %g: %.17g, want %.17g", ns[a], k, ps[b], got,
					  want);
			}
}

static struct mt_fold_est counts(double w, uint64_t k)
{
	struct mt_fold_est e = { 0 };
	mt_fold_est_add_sampled(&e, w, k);
	return e;
}

Test(diff, one_site_tests)
{
	double p, minp;
	/* 12 against 6 points of one weight: 2 P(Bin(18, 1/2) <= 6) */
	struct mt_fold_est a = counts(4096, 12), b = counts(4096, 6);
	cr_assert_eq(mt_fold_diff_test(&a, 4096, &b, 4096, &p, &minp), MT_FOLD_DIFF_BINOMIAL);
	cr_assert(fabs(p - 2 * (1 - binom_upper(7, 18, 0.5))) < 1e-12, "%g", p);
	cr_assert(fabs(minp - 2 * pow(0.5, 18)) < 1e-15);
	/* the same counts both sides: p = 1 */
	cr_assert_eq(mt_fold_diff_test(&a, 4096, &a, 4096, &p, &minp), MT_FOLD_DIFF_BINOMIAL);
	cr_assert_eq(p, 1);
	/* a rate twice as large on the new side: 10 of its points weigh 20
	 * of the base's, no change */
	struct mt_fold_est c = counts(1024, 20), d = counts(2048, 10);
	cr_assert_eq(mt_fold_diff_test(&c, 1024, &d, 2048, &p, &minp), MT_FOLD_DIFF_BINOMIAL);
	cr_assert(p > 0.9, "%g", p);
	/* one point and none: no outcome of one count reaches 5% */
	struct mt_fold_est none = { .sampled = 1 }, one = counts(1024, 1);
	mt_fold_diff_test(&none, 1024, &one, 1024, &p, &minp);
	cr_assert_eq(minp, 1);
	/* exact both sides: no test */
	struct mt_fold_est x = { .exact = 10 }, y = { .exact = 70 };
	cr_assert_eq(mt_fold_diff_test(&x, 0, &y, 0, &p, &minp), MT_FOLD_DIFF_EXACT);
	/* exact against sampled: the normal approximation */
	struct mt_fold_est s = counts(1, 100);
	struct mt_fold_est t = { .exact = 100 };
	cr_assert_eq(mt_fold_diff_test(&t, 1, &s, 1, &p, &minp), MT_FOLD_DIFF_NORMAL);
	cr_assert_eq(p, 1);
}

/* An mt-unwind line: site NAME with k points at rate 65536 (one allocation
 * that took them all: the weights are the same as k lines of one). */
static void site_lines(FILE *f, const char *name, uint64_t k, uint64_t *t)
{
	if (!k)
		return;
	fprintf(f, "alloc\t1/1\t%llu\tt\tsize=256 ptr=0x%llx points=%llu rate=65536\t"
		"main;%s;malloc end=complete\n", (unsigned long long)*t,
		(unsigned long long)(0x1000 + 16 * *t), (unsigned long long)k, name);
	(*t)++;
}

struct sim_diff {
	struct mt_fold_profile *p[2];
	struct mt_fold_snapshot *s[2];
	struct mt_fold_sites *t[2];
	struct mt_fold_diff *d;
};

/* Two profiles of nsites sites, site i with Poisson(mu[i] * grow[i]) points
 * in the new one and Poisson(mu[i]) in the base, and their diff. */
static void sim_diff(struct sim_diff *x, struct sim_rng *rng, const double *mu,
		     const double *grow, int nsites)
{
	for (int side = 0; side < 2; side++) {
		char *buf = NULL;
		size_t len = 0;
		uint64_t t = 0;
		FILE *f = open_memstream(&buf, &len);
		fprintf(f, "# mt-unwind 1\n");
		for (int i = 0; i < nsites; i++) {
			char name[32];
			snprintf(name, sizeof(name), "site_%d", i);
			site_lines(f, name, sim_poisson(rng, mu[i] * (side ? grow[i] : 1)), &t);
		}
		fclose(f);
		x->p[side] = profile_of(buf, 0);
		free(buf);
		x->s[side] = snapshot_of(x->p[side], MT_FOLD_ALLOC_BYTES, 0);
		cr_assert_eq(mt_fold_sites_new(&x->t[side], x->p[side], x->s[side], NULL,
					       MT_FOLD_TREE_NONE), 0);
	}
	cr_assert_eq(mt_fold_diff_new(&x->d, x->s[0], x->t[0], x->s[1], x->t[1], 0), 0);
}

static void sim_free(struct sim_diff *x)
{
	mt_fold_diff_free(x->d);
	for (int i = 0; i < 2; i++) {
		mt_fold_sites_free(x->t[i]);
		mt_fold_snapshot_free(x->s[i]);
		mt_fold_profile_free(x->p[i]);
	}
}

static const struct mt_fold_diff_row *row(const struct mt_fold_diff *d, const char *name)
{
	for (uint32_t i = 0; i < d->nrows; i++)
		if (!strcmp(d->rows[i].name, name))
			return &d->rows[i];
	return NULL;
}

/* 1000 null diffs of 30 sites from 0.3 to 3000 expected points (10 of them
 * too sparse to ever reach the level): one or more false alarms in at
 * most 5% of them (+3 standard errors: 7.1%), while one site by one at 5%
 * would give 20 x 5% = 1 alarm a diff. */
Test(diff, null_diffs_keep_the_family_wise_level, .timeout = 60)
{
	struct sim_rng rng;
	sim_seed(&rng, 28);
	double mu[30], grow[30];
	for (int i = 0; i < 30; i++) {
		mu[i] = 0.3 * pow(10, 4.0 * i / 29);
		grow[i] = 1;
	}
	int runs = 1000, any = 0, too_few = 0;
	for (int r = 0; r < runs; r++) {
		struct sim_diff x;
		sim_diff(&x, &rng, mu, grow, 30);
		any += x.d->nsignificant > 0;
		too_few += x.d->ntoo_few;
		cr_assert_eq(x.d->ntested + x.d->ntoo_few, x.d->nrows + 1);	/* + total */
		sim_free(&x);
	}
	cr_log_info("null: %d of %d diffs with an alarm; %.1f sites a diff too few", any, runs,
		    (double)too_few / runs);
	cr_assert(any <= 71, "%d of %d null diffs with a false alarm", any, runs);
	cr_assert(too_few > 5 * runs, "Tarone's rule left out %d", too_few);
}

/* A site of 500 expected points allocating 30% more, beside one of 500
 * unchanged and 8 others: found in at least 90% of 500 diffs (its power
 * is about 97%), the neighbour marked in at most 5% + 3 SE. */
Test(diff, planted_change_is_found, .timeout = 60)
{
	struct sim_rng rng;
	sim_seed(&rng, 30);
	double mu[10] = { 500, 500, 2000, 100, 50, 20, 10, 5, 2, 1 };
	double grow[10] = { 1.3, 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	int runs = 500, found = 0, neighbour = 0;
	for (int r = 0; r < runs; r++) {
		struct sim_diff x;
		sim_diff(&x, &rng, mu, grow, 10);
		found += row(x.d, "site_0")->significant;
		neighbour += row(x.d, "site_1")->significant;
		sim_free(&x);
	}
	cr_log_info("planted: found %d, neighbour %d of %d", found, neighbour, runs);
	cr_assert(found >= 450, "found %d of %d", found, runs);
	cr_assert(neighbour <= 40, "neighbour %d of %d", neighbour, runs);
}

Test(diff, exact_totals_compared_exactly)
{
	const char *base =
		"alloc\t1/1\t1\tt\tsize=8 ptr=0x1 points=100 rate=1024\tmain;a;malloc end=complete\n"
		"totals\t1/1\t9\tt\tscope=thread alloc_bytes=102400 allocs=12800 frees=0 "
		"freed_bytes=0 peak_bytes=102400 rate=1024\t end=none\n";
	const char *cur =
		"alloc\t1/1\t1\tt\tsize=8 ptr=0x1 points=101 rate=1024\tmain;a;malloc end=complete\n"
		"alloc\t1/1\t2\tt\tsize=8 ptr=0x2 points=1 rate=1024\tmain;c;malloc end=complete\n"
		"totals\t1/1\t9\tt\tscope=thread alloc_bytes=102460 allocs=12810 frees=0 "
		"freed_bytes=0 peak_bytes=102460 rate=1024\t end=none\n";
	struct mt_fold_profile *pb = profile_of(base, 0), *pc = profile_of(cur, 0);
	struct mt_fold_snapshot *sb = snapshot_of(pb, MT_FOLD_ALLOC_BYTES, 0);
	struct mt_fold_snapshot *sc = snapshot_of(pc, MT_FOLD_ALLOC_BYTES, 0);
	struct mt_fold_sites *tb, *tc;
	cr_assert_eq(mt_fold_sites_new(&tb, pb, sb, NULL, MT_FOLD_TREE_NONE), 0);
	cr_assert_eq(mt_fold_sites_new(&tc, pc, sc, NULL, MT_FOLD_TREE_NONE), 0);
	struct mt_fold_diff *d;
	cr_assert_eq(mt_fold_diff_new(&d, sb, tb, sc, tc, 0), 0);
	cr_assert_eq(d->total.kind, MT_FOLD_DIFF_EXACT);
	cr_assert_eq(d->total.delta, 60);	/* the 60 bytes of issue 28 */
	cr_assert(!d->total.significant);
	cr_assert_eq(d->nrows, 2);
	cr_assert_eq(d->nexact, 1);
	cr_assert_eq(row(d, "c")->kind, MT_FOLD_DIFF_TOO_FEW);
	cr_assert_eq(row(d, "a")->kind, MT_FOLD_DIFF_BINOMIAL);
	cr_assert_eq(d->ntested, 1);
	cr_assert_eq(d->nsignificant, 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_eq(mt_fold_render_diff_json(f, d, "base.txt"), 0);
	fclose(f);
	char err[256];
	struct jm *j = jm_parse(buf, err);
	cr_assert_not_null(j, "%s", err);
	cr_assert_eq(jm_get(j, "rows")->nkids, 2);
	cr_assert(strstr(buf, "\"change\": 60, \"change_pct\": "), "%s", buf);
	cr_assert(strstr(buf, "\"test\": \"exact\", \"p\": null"), "%s", buf);
	cr_assert(strstr(buf, "\"rule\": \"holm-tarone\", \"alpha\": 0.05, \"tested\": 1, "
			      "\"too_few\": 1, \"exact\": 1, \"significant\": 0"), "%s", buf);
	jm_free(j);
	free(buf);
	f = open_memstream(&buf, &len);
	cr_assert_eq(mt_fold_render_diff_table(f, d, "base.txt"), 0);
	fclose(f);
	cr_assert(strstr(buf, "tested: 1 (two-sided"), "%s", buf);
	cr_assert(strstr(buf, "    +0.1%   exact  exact  (all)\n"), "%s", buf);
	free(buf);
	mt_fold_diff_free(d);
	mt_fold_sites_free(tb);
	mt_fold_sites_free(tc);
	mt_fold_snapshot_free(sb);
	mt_fold_snapshot_free(sc);
	mt_fold_profile_free(pb);
	mt_fold_profile_free(pc);
}
