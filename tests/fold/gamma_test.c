/* The gamma functions and intervals against values known in closed form or
 * from published tables (Garwood 1936; chi-square tables). */
#include <criterion/criterion.h>
#include <math.h>

#include "fold/gamma.h"
#include "tests/fold/sim.h"

static void near(double got, double want, double rel, const char *what)
{
	cr_assert(fabs(got - want) <= rel * fabs(want) + 1e-300,
		  "%s: got %.12g, want %.12g", what, got, want);
}

Test(gamma, p_closed_forms)
{
	for (double x = 0.01; x < 50; x *= 1.7) {
		/* a = 1: exponential; a = 0.5: erf(sqrt(x)); a = 3: Poisson sum */
		near(mt_fold_gamma_p(1, x), -expm1(-x), 1e-13, "P(1,x)");
		near(mt_fold_gamma_p(0.5, x), erf(sqrt(x)), 1e-13, "P(0.5,x)");
		near(mt_fold_gamma_q(3, x), exp(-x) * (1 + x + x * x / 2), 1e-12, "Q(3,x)");
		near(mt_fold_gamma_p(7.5, x) + mt_fold_gamma_q(7.5, x), 1, 1e-14, "P+Q");
	}
	cr_assert_eq(mt_fold_gamma_p(2, 0), 0);
	cr_assert_eq(mt_fold_gamma_q(2, 0), 1);
	cr_assert(isnan(mt_fold_gamma_p(0, 1)));
	cr_assert(isnan(mt_fold_gamma_p(-1, 1)));
}

Test(gamma, p_large_shape)
{
	/* P(Poisson(a) <= a) = Q(a + 1, a) ~ 1/2 + 2/(3 sqrt(2 pi a)) (Ramanujan's
	 * theta -> 1/3), the error O(1/a). */
	double a = 1e6;
	near(mt_fold_gamma_q(a + 1, a), 0.5 + 2 / (3 * sqrt(2 * M_PI * a)), 1e-7, "Q(1e6+1,1e6)");
}

Test(gamma, normal_quantile)
{
	near(mt_fold_normal_inv(0.975), 1.959963984540054, 1e-12, "z 0.975");
	near(mt_fold_normal_inv(0.001), -3.090232306167814, 1e-12, "z 0.001");
	near(mt_fold_normal_inv(1e-10), -6.361340902404056, 1e-10, "z 1e-10");
	cr_assert(fabs(mt_fold_normal_inv(0.5)) < 1e-15);
}

Test(gamma, inverse_round_trip)
{
	static const double shapes[] = { 0.05, 0.5, 1, 2.5, 10, 101, 3333.3, 1e5, 9e6 };
	static const double ps[] = { 1e-9, 0.001, 0.025, 0.3, 0.5, 0.9, 0.975, 0.999999 };
	for (size_t i = 0; i < sizeof(shapes) / sizeof(*shapes); i++)
		for (size_t j = 0; j < sizeof(ps) / sizeof(*ps); j++) {
			double x = mt_fold_gamma_inv(shapes[i], ps[j]);
			double back = ps[j] <= 0.5 ? mt_fold_gamma_p(shapes[i], x)
						   : 1 - mt_fold_gamma_q(shapes[i], x);
			cr_assert(fabs(back - ps[j]) <= 1e-9 * ps[j] + 1e-15,
				  "a=%g p=%g: x=%.15g gives P=%.15g", shapes[i], ps[j], x, back);
		}
	cr_assert_eq(mt_fold_gamma_inv(3, 0), 0);
	cr_assert(isinf(mt_fold_gamma_inv(3, 1)));
	cr_assert(isnan(mt_fold_gamma_inv(3, 1.5)));
}

Test(gamma, chi_square_table)
{
	/* chi-square quantiles (df = 2a) from standard tables, halved. */
	near(2 * mt_fold_gamma_inv(0.5, 0.95), 3.841458820694124, 1e-10, "chi2(1) 0.95");
	near(2 * mt_fold_gamma_inv(5, 0.05), 3.940299136119717, 1e-10, "chi2(10) 0.05");
	near(2 * mt_fold_gamma_inv(50, 0.99), 135.807, 5e-6, "chi2(100) 0.99");
}

Test(gamma, wilson_hilferty_is_continuous)
{
	/* Above 1e7 the quantile switches to Wilson-Hilferty: no visible seam. */
	double below = mt_fold_gamma_inv(1e7, 0.025), above = mt_fold_gamma_inv(1e7 + 1e-3, 0.025);
	cr_assert(fabs(above - below) < 1e-4 * (1e7 - below), "%.6f vs %.6f", below, above);
}

Test(garwood, known_values)
{
	/* Garwood (1936); also Ulm (1990) and any table of exact Poisson limits. */
	static const struct { double n, lo, hi; } t[] = {
		{ 0, 0, 3.688879 },     { 1, 0.025318, 5.571643 },  { 2, 0.242209, 7.224688 },
		{ 5, 1.623486, 11.668332 }, { 10, 4.795389, 18.390356 },
		{ 100, 81.363992, 121.626794 },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++) {
		double lo, hi;
		mt_fold_garwood(t[i].n, 0.95, &lo, &hi);
		cr_assert(fabs(lo - t[i].lo) < 1e-5 * (1 + t[i].lo), "n=%g lo %.7f", t[i].n, lo);
		cr_assert(fabs(hi - t[i].hi) < 1e-5 * t[i].hi, "n=%g hi %.7f", t[i].n, hi);
	}
	/* n = 0: upper = -ln(0.025) exactly; n = 1: lower = -ln(0.975). */
	double lo, hi;
	mt_fold_garwood(0, 0.95, &lo, &hi);
	near(hi, -log(0.025), 1e-12, "n=0 hi");
	mt_fold_garwood(1, 0.95, &lo, &hi);
	near(lo, -log(0.975), 1e-12, "n=1 lo");
}

Test(garwood, exact_coverage_never_below_level)
{
	/* The defining property: for every mean, P(interval covers mean) >=
	 * 95%.  Check it exactly (summing the pmf) over a fine grid of means. */
	for (double mu = 0.05; mu < 3000; mu *= 1.05) {
		double cov = sim_exact_coverage(mu, 0.95);
		cr_assert(cov >= 0.95 - 1e-9, "mu=%g coverage %.6f", mu, cov);
	}
}

Test(gamma_interval, equal_weights_is_scaled_garwood)
{
	static const double ns[] = { 1, 3, 17, 250, 40000 };
	for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++) {
		double R = 524288, glo, ghi, lo, hi;
		mt_fold_garwood(ns[i], 0.95, &glo, &ghi);
		mt_fold_gamma_interval(ns[i] * R, ns[i] * R * R, R, 0.95, &lo, &hi);
		near(lo, glo * R, 1e-9, "lo");
		near(hi, ghi * R, 1e-9, "hi");
	}
	double lo, hi;
	mt_fold_gamma_interval(0, 0, 4096, 0.95, &lo, &hi);	/* nothing seen */
	cr_assert_eq(lo, 0);
	near(hi, 4096 * -log(0.025), 1e-12, "empty hi");
	mt_fold_gamma_interval(0, 0, 0, 0.95, &lo, &hi);	/* nothing known */
	cr_assert(isinf(hi));
}

/* Fay and Feuer's wmax is the largest weight of the population. */
#define WMAX 50
Test(gamma_interval, mixed_weights_cover)
{
	/* Y = 1 * X1 + 50 * X2, X1 ~ Poisson(40), X2 ~ Poisson(2): the Fay-Feuer
	 * interval is conservative; check its coverage by exact enumeration. */
	double m1 = 40, m2 = 2, truth = m1 + 50 * m2, cov = 0;
	for (int a = 0; a < 120; a++)
		for (int b = 0; b < 25; b++) {
			double pa = exp(a * log(m1) - m1 - lgamma(a + 1));
			double pb = exp(b * log(m2) - m2 - lgamma(b + 1));
			double y = a + 50.0 * b, v = a + 2500.0 * b, lo, hi;
			mt_fold_gamma_interval(y, v, WMAX, 0.95, &lo, &hi);
			if (lo <= truth && truth <= hi)
				cov += pa * pb;
		}
	cr_assert(cov >= 0.95, "coverage %.4f", cov);
}
