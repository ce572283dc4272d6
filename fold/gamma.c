/* Incomplete gamma, its inverse, and the Poisson intervals built on them.
 * Series and continued fraction as in any numerical text (Abramowitz and
 * Stegun 6.5.29 and 6.5.31); written from the formulas. */
#include "fold/gamma.h"

#include <float.h>
#include <math.h>

#define EPS 1e-15
#define TINY 1e-300
#define WH_SHAPE 1e7	/* above this, Wilson-Hilferty is the quantile */

/* log(Gamma(a)) minus Stirling's formula, for a >= 10: the tail of the
 * Stirling series, so that the prefactor below keeps its precision. */
static double stirling_rest(double a)
{
	double a2 = a * a;
	return (1.0 / 12 - (1.0 / 360 - (1.0 / 1260) / a2) / a2) / a;
}

/* log(x^a e^-x / Gamma(a)) without the cancellation of its large terms. */
static double log_prefactor(double a, double x)
{
	if (a < 10)
		return a * log(x) - x - lgamma(a);
	double t = (x - a) / a;
	return -a * (t - log1p(t)) + 0.5 * log(a / (2 * M_PI)) - stirling_rest(a);
}

/* P(a, x) by its power series; converges fast for x < a + 1. */
static double p_series(double a, double x)
{
	double term = 1.0 / a, sum = term;
	for (long n = 1; n < 100000000; n++) {
		term *= x / (a + n);
		sum += term;
		if (term < sum * EPS)
			break;
	}
	return sum * exp(log_prefactor(a, x));
}

/* Q(a, x) by its continued fraction (modified Lentz); for x >= a + 1. */
static double q_fraction(double a, double x)
{
	double b = x + 1 - a, c = 1 / TINY, d = 1 / b, h = d;
	for (long i = 1; i < 100000000; i++) {
		double an = -i * (i - a);
		b += 2;
		d = an * d + b;
		if (fabs(d) < TINY)
			d = TINY;
		c = b + an / c;
		if (fabs(c) < TINY)
			c = TINY;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < EPS)
			break;
	}
	return exp(log_prefactor(a, x)) * h;
}

double mt_fold_gamma_p(double a, double x)
{
	if (isnan(a) || isnan(x) || a <= 0)
		return NAN;
	if (x <= 0)
		return 0;
	if (isinf(x))
		return 1;
	if (x < a + 1)
		return p_series(a, x);
	return 1 - q_fraction(a, x);
}

double mt_fold_gamma_q(double a, double x)
{
	if (isnan(a) || isnan(x) || a <= 0)
		return NAN;
	if (x <= 0)
		return 1;
	if (isinf(x))
		return 0;
	if (x < a + 1)
		return 1 - p_series(a, x);
	return q_fraction(a, x);
}

double mt_fold_normal_inv(double p)
{
	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	/* Start from Abramowitz and Stegun 26.2.23 (error < 4.5e-4), then
	 * Newton steps on erfc, which is accurate in both tails. */
	double q = p < 0.5 ? p : 1 - p;
	double t = sqrt(-2 * log(q));
	double z = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
		       (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
	if (p < 0.5)
		z = -z;
	for (int i = 0; i < 8; i++) {
		double cdf = 0.5 * erfc(-z / M_SQRT2);
		double pdf = exp(-0.5 * z * z) / sqrt(2 * M_PI);
		if (pdf <= 0)
			break;
		/* Compare in the smaller tail to keep relative precision. */
		double f = p < 0.5 ? cdf - p : (1 - p) - 0.5 * erfc(z / M_SQRT2);
		double step = f / pdf;
		z -= step;
		if (fabs(step) < 1e-15 * (1 + fabs(z)))
			break;
	}
	return z;
}

static double wilson_hilferty(double a, double p)
{
	double z = mt_fold_normal_inv(p);
	double c = 1 - 1 / (9 * a) + z * sqrt(1 / (9 * a));
	return c > 0 ? a * c * c * c : 0;
}

double mt_fold_gamma_inv(double a, double p)
{
	if (isnan(a) || isnan(p) || a <= 0 || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return 0;
	if (p == 1)
		return INFINITY;
	if (a > WH_SHAPE)
		return wilson_hilferty(a, p);

	double x = wilson_hilferty(a, p);
	if (!(x > 0) || a < 1) {
		/* Small shape or lower tail: P(a, x) ~ x^a / Gamma(a + 1). */
		double x0 = exp((log(p) + lgamma(a + 1)) / a);
		if (!(x > 0) || x0 < x)
			x = x0;
	}
	if (!(x > 0))
		x = DBL_MIN;
	double lo = 0, hi = INFINITY;
	for (int i = 0; i < 400; i++) {
		/* f = P(a, x) - p, from the tail that keeps its digits. */
		double f = p <= 0.5 ? mt_fold_gamma_p(a, x) - p
				    : (1 - p) - mt_fold_gamma_q(a, x);
		if (f == 0)
			return x;
		if (f < 0)
			lo = x;
		else
			hi = x;
		double dens = exp(log_prefactor(a, x)) / x;
		double xn = dens > 0 ? x - f / dens : NAN;
		if (!(xn > lo && xn < hi))	/* Newton left the bracket */
			xn = isinf(hi) ? (x * 2 > x + 1 ? x * 2 : x + 1) : 0.5 * (lo + hi);
		if (fabs(xn - x) <= 1e-14 * xn || (!isinf(hi) && hi - lo <= 1e-15 * hi))
			return xn;
		x = xn;
	}
	return x;
}

void mt_fold_garwood(double n, double conf, double *lo, double *hi)
{
	double alpha = 1 - conf;
	*lo = n > 0 ? mt_fold_gamma_inv(n, alpha / 2) : 0;
	*hi = mt_fold_gamma_inv(n + 1, 1 - alpha / 2);
}

void mt_fold_gamma_interval(double y, double v, double wmax, double conf,
			    double *lo, double *hi)
{
	double alpha = 1 - conf;
	if (y > 0 && v <= 0) {		/* no random part */
		*lo = *hi = y;
		return;
	}
	if (y <= 0) {
		*lo = 0;
		*hi = wmax > 0 ? wmax * mt_fold_gamma_inv(1, 1 - alpha / 2) : INFINITY;
		return;
	}
	if (wmax <= 0)		/* caller knows no weight: the mean one */
		wmax = v / y;
	*lo = v / y * mt_fold_gamma_inv(y * y / v, alpha / 2);
	double yu = y + wmax, vu = v + wmax * wmax;
	*hi = vu / yu * mt_fold_gamma_inv(yu * yu / vu, 1 - alpha / 2);
}
