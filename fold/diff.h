/* Diffs: per allocation site (fold/sites.h), the change from a base profile
 * to a new one, with a test of whether it exceeds what sampling alone
 * would give, and a decision that holds false alarms to the level across
 * every site tested (docs/fold.md, "DIFF").
 *
 * A site's figure is a weighted sum of Poisson counts (fold/est.h).  Two
 * sampled sides are compared by the conditional test: given the effective
 * counts c = y^2/v of both sides (the sample counts when every weight is the
 * same: sample-mode bytes), the new side's share of c_base + c_new is
 * binomial with p = w_base / (w_base + w_new) (w = v/y, the weight of one
 * count) when the two sites allocated the same.  Figures with an exact part
 * that differs between the sides, or an exact side against a sampled one,
 * are tested by the normal approximation z = change / sqrt(v_base + v_new).
 * Exact figures on both sides (trace mode, the sampler's totals) are not
 * tested: their change is a fact.
 *
 * The decision is Holm's step-down over the tested sites, at family-wise
 * level alpha = 1 - confidence: whatever the number of sites, chance alone
 * marks one or more of them in at most alpha of diffs.  Sites whose counts
 * are too few for any outcome to reach alpha / K (Tarone: K the sites that
 * can) are counted, not tested.
 */
#ifndef MT_FOLD_DIFF_H
#define MT_FOLD_DIFF_H

#include <stdio.h>

#include "fold/est.h"
#include "fold/sites.h"
#include "fold/snapshot.h"

enum mt_fold_diff_kind {
	MT_FOLD_DIFF_EXACT,		/* both sides exact: the change is exact */
	MT_FOLD_DIFF_BINOMIAL,		/* conditional test of the two counts */
	MT_FOLD_DIFF_NORMAL,		/* normal approximation */
	MT_FOLD_DIFF_TOO_FEW,		/* no outcome of so few counts could
					 * reach the level: not tested */
};

struct mt_fold_diff_row {
	const char *name;		/* site (bare function name), or "(all)" */
	const char *loc;		/* "file:line" or "" */
	struct mt_fold_value base, cur;
	double delta;			/* cur - base */
	double pct;			/* 100 delta / base; NaN when base is 0 */
	enum mt_fold_diff_kind kind;
	double p;			/* two-sided p-value (1 when not tested) */
	double minp;			/* the smallest p any outcome could give */
	double p_adj;			/* Holm-adjusted p-value */
	int significant;		/* p_adj <= alpha (never for exact rows) */
};

struct mt_fold_diff {
	struct mt_fold_diff_row total;
	struct mt_fold_diff_row *rows;	/* by |delta|, largest first */
	uint32_t nrows, nshown;
	enum mt_fold_metric metric;
	double conf, alpha;		/* alpha = 1 - conf */
	uint32_t ntested;		/* tests in the family (the total's too) */
	uint32_t ntoo_few;		/* sites left out of it (Tarone) */
	uint32_t nexact;		/* exact rows (no test) */
	uint32_t nsignificant;		/* rows and total marked */
	uint32_t nsignificant_hidden;	/* of them, rows past --top */
	/* What exact rows (and the exact total) miss, from either side
	 * (mt_fold_exact_misses), NULL when nothing; which side. */
	const char *row_misses, *total_misses;
	const char *misses_side;	/* "the base has", "the inputs have",
					 * "both have" */
};

/* Test the change from a to b.  wa, wb: the weight of one count on each
 * side where that side saw none (the snapshots' wfb).
 * @return : the kind; *p the two-sided p-value, *minp the smallest p-value
 * that any outcome with the same counts could give (both 1 for exact). */
enum mt_fold_diff_kind mt_fold_diff_test(const struct mt_fold_est *a, double wa,
					 const struct mt_fold_est *b, double wb, double *p,
					 double *minp);

/* Regularized incomplete beta I_x(a, b), a, b > 0, 0 <= x <= 1 (the
 * binomial tails: P(X >= k) = I_p(k, n - k + 1) for X ~ Bin(n, p)). */
double mt_fold_beta_i(double x, double a, double b);

/* The diff of the allocation sites of base and cur (each made from its
 * snapshot, of the same metric and confidence).  top: rows kept in nshown
 * (0 = all); every site is in the decision.  The sites and snapshots must
 * outlive the diff.  @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_diff_new(struct mt_fold_diff **out, const struct mt_fold_snapshot *bsnap,
		     const struct mt_fold_sites *base, const struct mt_fold_snapshot *csnap,
		     const struct mt_fold_sites *cur, uint32_t top);
void mt_fold_diff_free(struct mt_fold_diff *d);

/* The table, and JSON (docs/formats/fold-json.md, "Diff").
 * @return : 0 or MT_FOLD_EIO. */
int mt_fold_render_diff_table(FILE *f, const struct mt_fold_diff *d, const char *base_name);
int mt_fold_render_diff_json(FILE *f, const struct mt_fold_diff *d, const char *base_name);

#endif
