/* Gamma distribution functions and Poisson confidence intervals.
 *
 * Exact ("Garwood") intervals for a Poisson count and the gamma interval of
 * Fay and Feuer (1997) for a weighted sum of Poisson counts both need the
 * quantile of the gamma distribution (chi-square/2); libm has none, so it
 * lives here: the regularized incomplete gamma by series and continued
 * fraction, inverted by safeguarded Newton steps.  Pure functions, no state.
 */
#ifndef MT_FOLD_GAMMA_H
#define MT_FOLD_GAMMA_H

/* Regularized lower incomplete gamma P(a, x) = gamma(a, x) / Gamma(a), the
 * CDF at x of a gamma distribution of shape a and scale 1.
 * @return : P in [0, 1]; 0 for x <= 0; NaN when a <= 0 or an argument is NaN. */
double mt_fold_gamma_p(double a, double x);

/* Upper tail Q(a, x) = 1 - P(a, x), computed without cancellation. */
double mt_fold_gamma_q(double a, double x);

/* Quantile: the x >= 0 with P(a, x) = p, shape a > 0, 0 <= p <= 1.
 * @return : x (0 for p == 0, +inf for p == 1), NaN for bad arguments.
 * Relative accuracy about 1e-10 up to a = 1e7; above that the Wilson-Hilferty
 * approximation (relative error of the interval width below 1e-4). */
double mt_fold_gamma_inv(double a, double p);

/* Standard normal quantile, used for a > 1e7 and for tests. */
double mt_fold_normal_inv(double p);

/* Exact two-sided Poisson interval (Garwood 1936) for an observed count n at
 * confidence level conf (e.g. 0.95): lo = G^-1((1-conf)/2; n) (0 when
 * n == 0), hi = G^-1((1+conf)/2; n+1), G the unit-scale gamma quantile.
 * n may be non-integer (an "effective" count).  Writes *lo and *hi. */
void mt_fold_garwood(double n, double conf, double *lo, double *hi);

/* Gamma interval of Fay and Feuer for Y = sum w_i X_i, X_i independent
 * Poisson and w_i > 0 known: y the observed sum, v = sum w_i^2 x_i its
 * variance estimate, wmax the largest weight (of the site, or of the whole
 * capture when the site has no counts).  With all weights equal to R it is
 * exactly R times the Garwood interval of y/R.  Writes *lo and *hi; an
 * interval of [0, +inf) when y == 0 and wmax <= 0 (nothing known). */
void mt_fold_gamma_interval(double y, double v, double wmax, double conf,
			    double *lo, double *hi);

#endif
