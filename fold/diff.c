/* Per-site diffs with a multiplicity-controlled decision: see diff.h. */
#include "fold/diff.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold/render.h"
#include "fold/sitestext.h"

/* ---- the incomplete beta ------------------------------------------------ */

/* The continued fraction of I_x(a, b) (modified Lentz), good for
 * x < (a + 1) / (a + b + 2).  @return : the fraction, NaN when it did not
 * converge. */
static double beta_cf(double x, double a, double b)
{
	const double tiny = 1e-300, eps = 1e-15;
	double c = 1, d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= 100000; m++) {
		double m2 = 2.0 * m;
		double num = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
		d = 1 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h *= d * c;
		num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
		d = 1 + num * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + num / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			return h;
	}
	return NAN;
}

double mt_fold_beta_i(double x, double a, double b)
{
	if (isnan(x) || isnan(a) || isnan(b) || a <= 0 || b <= 0)
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	double lf = lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
	if (x < (a + 1) / (a + b + 2))
		return exp(lf) * beta_cf(x, a, b) / a;
	return 1 - exp(lf) * beta_cf(1 - x, b, a) / b;
}

/* ---- one test ----------------------------------------------------------- */

/* The weight of one count: v / y, or w where the side saw none. */
static double count_weight(const struct mt_fold_est *e, double w)
{
	if (e->n > 0 && e->y > 0 && e->v > 0)
		return e->v / e->y;
	return w > 0 ? w : e->wmax;
}

/* Variance of a side; a sampled side with no counts could still have had
 * one: at least one weight squared. */
static double variance(const struct mt_fold_est *e, double w)
{
	if (!e->sampled)
		return 0;
	if (e->n == 0)
		return w * w;
	return e->v;
}

enum mt_fold_diff_kind mt_fold_diff_test(const struct mt_fold_est *a, double wa,
					 const struct mt_fold_est *b, double wb, double *p,
					 double *minp)
{
	*p = *minp = 1;
	if (!a->sampled && !b->sampled)
		return MT_FOLD_DIFF_EXACT;
	double ka = count_weight(a, wa), kb = count_weight(b, wb);
	if (a->sampled && b->sampled && a->exact == b->exact && ka > 0 && kb > 0) {
		/* Given N counts in all, the new side's share is Bin(N, pi)
		 * when both allocated the same (rates y/k of counts). */
		double ca = a->y / ka, cb = b->y / kb, nn = ca + cb;
		double pi = ka / (ka + kb);
		if (!(nn > 0))
			return MT_FOLD_DIFF_BINOMIAL;	/* nothing seen: p = 1 */
		double up = cb > 0 ? mt_fold_beta_i(pi, cb, nn - cb + 1) : 1;
		double dn = ca > 0 ? mt_fold_beta_i(1 - pi, ca, cb + 1) : 1;
		if (!isnan(up) && !isnan(dn)) {
			double t = 2 * (up < dn ? up : dn);
			*p = t < 1 ? t : 1;
			double q = pi < 1 - pi ? pi : 1 - pi, m = 2 * pow(q, nn);
			*minp = m < 1 ? m : 1;
			return MT_FOLD_DIFF_BINOMIAL;
		}
		/* not converged (counts beyond 1e10): the normal test below */
	}
	double delta = ((double)b->exact + b->y) - ((double)a->exact + a->y);
	double var = variance(a, wa) + variance(b, wb);
	*minp = 0;
	if (!(var > 0))
		*p = delta == 0 ? 1 : 0;
	else
		*p = erfc(fabs(delta) / sqrt(var) / M_SQRT2);
	return MT_FOLD_DIFF_NORMAL;
}

/* ---- the diff ----------------------------------------------------------- */

struct key {
	const struct mt_fold_alloc_site *site;
};

static int site_key_cmp(const void *x, const void *y)
{
	const struct mt_fold_alloc_site *a = *(const struct mt_fold_alloc_site *const *)x;
	const struct mt_fold_alloc_site *b = *(const struct mt_fold_alloc_site *const *)y;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->loc, b->loc);
}

static int row_cmp(const void *x, const void *y)
{
	const struct mt_fold_diff_row *a = x, *b = y;
	double da = fabs(a->delta), db = fabs(b->delta);
	if (da != db)
		return da > db ? -1 : 1;
	int c = strcmp(a->name, b->name);
	return c ? c : strcmp(a->loc, b->loc);
}

static void finish_side(struct mt_fold_value *v, const struct mt_fold_est *e,
			const struct mt_fold_snapshot *s)
{
	enum mt_fold_metric m = s->opt.metric;
	mt_fold_est_finish(e, s->opt.conf, s->wfb[m], v);
	mt_fold_value_clip(v, s->bound[m]);
}

static void fill_row(struct mt_fold_diff_row *r, const struct mt_fold_est *a,
		     const struct mt_fold_snapshot *bs, const struct mt_fold_est *b,
		     const struct mt_fold_snapshot *cs)
{
	enum mt_fold_metric m = cs->opt.metric;
	finish_side(&r->base, a, bs);
	finish_side(&r->cur, b, cs);
	r->delta = r->cur.value - r->base.value;
	r->pct = r->base.value > 0 ? 100 * r->delta / r->base.value : NAN;
	r->kind = mt_fold_diff_test(a, bs->wfb[m], b, cs->wfb[m], &r->p, &r->minp);
	r->p_adj = 1;
}

/* Tarone's index over the tests still open: the smallest K with at most K
 * of them able to reach alpha / K.  minp sorted ascending, n of them. */
static uint32_t tarone(const double *minp, uint32_t n, double alpha)
{
	uint32_t k = 1, cnt = n;
	for (; k < n; k++) {
		while (cnt > 0 && minp[cnt - 1] > alpha / k)
			cnt--;
		if (cnt <= k)
			break;
	}
	return k;
}

static int p_cmp(const void *x, const void *y)
{
	const struct mt_fold_diff_row *a = *(const struct mt_fold_diff_row *const *)x;
	const struct mt_fold_diff_row *b = *(const struct mt_fold_diff_row *const *)y;
	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return 0;
}

static int dbl_cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

/* Holm's step-down with Tarone's index recomputed at each step over the
 * hypotheses not yet rejected (Hommel and Krummenauer): FWER <= alpha. */
static int decide(struct mt_fold_diff *d)
{
	uint32_t n = 0;
	struct mt_fold_diff_row **t = malloc(((size_t)d->nrows + 1) * sizeof(*t));
	double *mp = malloc(((size_t)d->nrows + 1) * sizeof(*mp));
	if (!t || !mp) {
		free(t);
		free(mp);
		return MT_FOLD_ENOMEM;
	}
	if (d->total.kind != MT_FOLD_DIFF_EXACT)
		t[n++] = &d->total;
	else
		d->nexact++;
	for (uint32_t i = 0; i < d->nrows; i++) {
		if (d->rows[i].kind != MT_FOLD_DIFF_EXACT)
			t[n++] = &d->rows[i];
		else
			d->nexact++;
	}
	qsort(t, n, sizeof(*t), p_cmp);
	uint32_t done = 0, k = 1;
	for (;;) {
		uint32_t open = n - done;
		if (!open)
			break;
		for (uint32_t i = 0; i < open; i++)
			mp[i] = t[done + i]->minp;
		qsort(mp, open, sizeof(*mp), dbl_cmp);
		k = tarone(mp, open, d->alpha);
		double thr = d->alpha / k;
		if (t[done]->p > thr)
			break;
		t[done]->p_adj = thr;
		t[done]->significant = 1;
		done++;
	}
	/* the last threshold decides who could have been tested */
	double thr = d->alpha / k;
	for (uint32_t i = done; i < n; i++) {
		t[i]->p_adj = thr;
		if (t[i]->minp > thr) {
			t[i]->kind = MT_FOLD_DIFF_TOO_FEW;
			d->ntoo_few++;
		}
	}
	d->ntested = n - d->ntoo_few;
	d->nsignificant = done;
	for (uint32_t i = d->nshown; i < d->nrows; i++)
		d->nsignificant_hidden += d->rows[i].significant;
	free(t);
	free(mp);
	return 0;
}

int mt_fold_diff_new(struct mt_fold_diff **out, const struct mt_fold_snapshot *bsnap,
		     const struct mt_fold_sites *base, const struct mt_fold_snapshot *csnap,
		     const struct mt_fold_sites *cur, uint32_t top)
{
	struct mt_fold_diff *d = calloc(1, sizeof(*d));
	const struct mt_fold_alloc_site **byname = NULL;
	char *matched = NULL;
	*out = NULL;
	if (!d)
		return MT_FOLD_ENOMEM;
	d->metric = csnap->opt.metric;
	d->conf = csnap->opt.conf;
	/* 1 - 0.95 is 0.050000000000000044: the level as given */
	d->alpha = round((1 - d->conf) * 1e12) / 1e12;
	d->rows = calloc((size_t)base->nsites + cur->nsites + 1, sizeof(*d->rows));
	byname = malloc(((size_t)cur->nsites + 1) * sizeof(*byname));
	matched = calloc((size_t)cur->nsites + 1, 1);
	if (!d->rows || !byname || !matched)
		goto oom;
	/* A site missing on one side was not seen there; if that side is
	 * sampled, it might have been: it keeps its sampling error. */
	struct mt_fold_est zb = { .sampled = !bsnap->total.exact },
			   zc = { .sampled = !csnap->total.exact };
	struct mt_fold_est tb = { 0 }, tc = { 0 };
	for (uint32_t i = 0; i < cur->nsites; i++) {
		byname[i] = &cur->sites[i];
		mt_fold_est_merge(&tc, &cur->sites[i].acc);
	}
	qsort(byname, cur->nsites, sizeof(*byname), site_key_cmp);
	for (uint32_t i = 0; i < base->nsites; i++) {
		const struct mt_fold_alloc_site *bs = &base->sites[i], *kp = bs;
		const struct mt_fold_alloc_site **hit =
			bsearch(&kp, byname, cur->nsites, sizeof(*byname), site_key_cmp);
		struct mt_fold_diff_row *r = &d->rows[d->nrows++];
		r->name = bs->name;
		r->loc = bs->loc;
		mt_fold_est_merge(&tb, &bs->acc);
		if (hit)
			matched[*hit - cur->sites] = 1;
		fill_row(r, &bs->acc, bsnap, hit ? &(*hit)->acc : &zc, csnap);
	}
	for (uint32_t i = 0; i < cur->nsites; i++) {
		if (matched[i])
			continue;
		struct mt_fold_diff_row *r = &d->rows[d->nrows++];
		r->name = cur->sites[i].name;
		r->loc = cur->sites[i].loc;
		fill_row(r, &zb, bsnap, &cur->sites[i].acc, csnap);
	}
	if (d->nrows)
		qsort(d->rows, d->nrows, sizeof(*d->rows), row_cmp);
	d->nshown = top && top < d->nrows ? top : d->nrows;

	/* The totals: the sampler's exact counts where both sides have them
	 * (their change is exact), else the sum of the sites' estimates. */
	enum mt_fold_metric m = d->metric;
	d->total.name = "(all)";
	d->total.loc = "";
	if (mt_fold_metric_bound_exact(m) && bsnap->bound[m] >= 0 && csnap->bound[m] >= 0) {
		struct mt_fold_value vb = { .value = bsnap->bound[m], .exact = 1 },
				     vc = { .value = csnap->bound[m], .exact = 1 };
		vb.lo = vb.hi = vb.value;
		vc.lo = vc.hi = vc.value;
		d->total.base = vb;
		d->total.cur = vc;
		d->total.delta = vc.value - vb.value;
		d->total.pct = vb.value > 0 ? 100 * d->total.delta / vb.value : NAN;
		d->total.kind = MT_FOLD_DIFF_EXACT;
		d->total.p = d->total.minp = d->total.p_adj = 1;
	} else {
		tb.sampled |= !bsnap->total.exact;
		tc.sampled |= !csnap->total.exact;
		fill_row(&d->total, &tb, bsnap, &tc, csnap);
	}
	/* Exact rows over incomplete inputs are exact sums of what was
	 * captured, not of what the program did.  The sampler's totals are
	 * counted in the program: only images without the sampler escape. */
	const char *mb = mt_fold_exact_misses(&bsnap->counts, 1);
	const char *mc = mt_fold_exact_misses(&csnap->counts, 1);
	d->row_misses = mb ? mb : mc;
	d->misses_side = mb && mc ? "both have" : mb ? "the base has" : "the inputs have";
	if (d->total.kind == MT_FOLD_DIFF_EXACT && mt_fold_metric_bound_exact(m) &&
	    bsnap->bound[m] >= 0)
		d->total_misses = bsnap->counts.unsampled_images || csnap->counts.unsampled_images
					  ? "images unsampled" : NULL;
	else {
		mb = mt_fold_exact_misses(&bsnap->counts, 0);
		mc = mt_fold_exact_misses(&csnap->counts, 0);
		d->total_misses = mb ? mb : mc;
	}
	if (decide(d))
		goto oom;
	free(byname);
	free(matched);
	*out = d;
	return 0;
oom:
	free(byname);
	free(matched);
	mt_fold_diff_free(d);
	return MT_FOLD_ENOMEM;
}

void mt_fold_diff_free(struct mt_fold_diff *d)
{
	if (!d)
		return;
	free(d->rows);
	free(d);
}

/* ---- rendering ---------------------------------------------------------- */

static int is_bytes(enum mt_fold_metric m)
{
	return m == MT_FOLD_ALLOC_BYTES || m == MT_FOLD_INUSE_BYTES;
}

/* The unit every figure of the diff is in, as the column headers say
 * (long) and as the table cells say it (short), from the metric's unit. */
static const char *unit_of(enum mt_fold_metric m, int shortly)
{
	const char *u = mt_fold_metric_unit(m);
	if (strcmp(u, "bytes") == 0)
		return shortly ? "req B" : "requested bytes";
	if (strcmp(u, "samples") == 0)
		return "events";
	if (strcmp(u, "events") == 0 && shortly)
		return "period";
	return u;
}

static const char *kind_name(enum mt_fold_diff_kind k)
{
	static const char *const names[] = { "exact", "binomial", "normal", "too_few" };
	return (unsigned)k < 4 ? names[k] : "?";
}

static char *format_p(char *buf, const struct mt_fold_diff_row *r)
{
	if (r->kind == MT_FOLD_DIFF_EXACT)
		snprintf(buf, 32, "exact");
	else if (r->kind == MT_FOLD_DIFF_TOO_FEW)
		snprintf(buf, 32, "few");
	else if (r->p < 0.001)
		snprintf(buf, 32, "%.0e", r->p);
	else
		snprintf(buf, 32, "%.3f", r->p);
	return buf;
}

static char *format_pct(char *buf, const struct mt_fold_diff_row *r)
{
	if (isnan(r->pct))
		snprintf(buf, 32, r->cur.value > 0 ? "new" : "-");
	else if (fabs(r->pct) >= 9999.5)
		snprintf(buf, 32, "%+.0e%%", r->pct);
	else
		snprintf(buf, 32, "%+.1f%%", r->pct);
	return buf;
}

/* "cut", "lost", "part" for an exact row that misses something */
static const char *misses_short(const char *misses)
{
	return misses[0] == 's' ? "cut" : misses[0] == 'e' ? "lost" : "part";
}

static void table_row(FILE *f, const struct mt_fold_diff_row *r, int bytes, const char *misses)
{
	char a[32], b[32], c[32], p[32], q[32];
	const char *sig = r->kind == MT_FOLD_DIFF_EXACT && misses ? misses_short(misses)
			  : r->kind == MT_FOLD_DIFF_EXACT ? "exact"
			  : r->kind == MT_FOLD_DIFF_TOO_FEW ? "-"
			  : r->significant ? "yes" : "no";
	fprintf(f, "%10s %8llu %10s %8llu %11s %8s %7s  %-5s  %s", mt_fold_format_amount(a, r->base.value, bytes),
		(unsigned long long)r->base.n, mt_fold_format_amount(b, r->cur.value, bytes),
		(unsigned long long)r->cur.n, mt_fold_format_amount(c, r->delta, bytes),
		format_pct(q, r), format_p(p, r), sig, r->name);
	if (r->loc && *r->loc)
		fprintf(f, " (%s)", r->loc);
	fputc('\n', f);
}

int mt_fold_render_diff_table(FILE *f, const struct mt_fold_diff *d, const char *base_name)
{
	int bytes = is_bytes(d->metric);
	int lvl = (int)lround(100 * d->alpha);
	char num[32];
	fprintf(f, "mt-fold diff: %s in %s, per allocation site, of the inputs against base '%s'\n",
		mt_fold_metric_name(d->metric), unit_of(d->metric, 0), base_name);
	fprintf(f, "decision: Holm's step-down with Tarone's rule at family-wise level %d%%: "
		"chance alone marks one or more sites (or the total) in at most %d%% of diffs\n",
		lvl, lvl);
	uint32_t nnormal = d->total.kind == MT_FOLD_DIFF_NORMAL;
	for (uint32_t i = 0; i < d->nrows; i++)
		nnormal += d->rows[i].kind == MT_FOLD_DIFF_NORMAL;
	fprintf(f, "tested: %u (two-sided", d->ntested);
	if (nnormal < d->ntested)
		fprintf(f, "; %s%u by the conditional binomial test of the sample counts",
			nnormal ? "" : "all ", d->ntested - nnormal);
	if (nnormal)
		fprintf(f, "; %u by the normal approximation", nnormal);
	fprintf(f, "); %u with too few samples to reach the level ('few'); %u exact, "
		"compared exactly ('exact')\n", d->ntoo_few, d->nexact);
	snprintf(num, sizeof(num), "%.2g", d->alpha * d->ntested);
	fprintf(f, "significant: %u; tested one by one at %d%%, chance alone would mark "
		"about %s of the %u\n", d->nsignificant, lvl, num, d->ntested);
	const char *ms = d->row_misses ? d->row_misses : d->total_misses;
	if (ms && (d->nexact || d->total.kind == MT_FOLD_DIFF_EXACT))
		fprintf(f, "not exact: %s %s: '%s' marks a change summed exactly over what "
			"was captured, which misses them\n", d->misses_side, ms, misses_short(ms));
	fputc('\n', f);
	char hb[32], hn[32], hc[32];
	snprintf(hb, sizeof(hb), "base %s", unit_of(d->metric, 1));
	snprintf(hn, sizeof(hn), "new %s", unit_of(d->metric, 1));
	snprintf(hc, sizeof(hc), "change %s", unit_of(d->metric, 1));
	fprintf(f, "%10s %8s %10s %8s %11s %8s %7s  %-5s  %s\n", hb, "n", hn, "n", hc,
		"change%", "p", "sig", "site");
	table_row(f, &d->total, bytes, d->total_misses);
	for (uint32_t i = 0; i < d->nshown; i++)
		table_row(f, &d->rows[i], bytes, d->row_misses);
	if (d->nshown < d->nrows)
		fprintf(f, "%u more sites not shown (--top 0 shows all), %u of them significant\n",
			d->nrows - d->nshown, d->nsignificant_hidden);
	return ferror(f) ? MT_FOLD_EIO : 0;
}

static void json_row(FILE *f, const struct mt_fold_diff_row *r, const char *misses)
{
	fputs("{\"name\": ", f);
	mt_fold_json_string(f, r->name);
	fputs(", \"loc\": ", f);
	mt_fold_json_string(f, r->loc ? r->loc : "");
	fputs(", \"base\": ", f);
	mt_fold_json_value(f, &r->base);
	fputs(",\n   \"new\": ", f);
	mt_fold_json_value(f, &r->cur);
	fputs(",\n   \"change\": ", f);
	mt_fold_json_num(f, r->delta);
	fputs(", \"change_pct\": ", f);
	mt_fold_json_num(f, r->pct);
	fprintf(f, ", \"test\": \"%s\", ", kind_name(r->kind));
	if (r->kind == MT_FOLD_DIFF_EXACT && misses)
		fprintf(f, "\"misses\": \"%s\", ", misses);
	fputs("\"p\": ", f);
	int tested = r->kind == MT_FOLD_DIFF_BINOMIAL || r->kind == MT_FOLD_DIFF_NORMAL;
	mt_fold_json_num(f, tested ? r->p : NAN);
	fputs(", \"threshold\": ", f);
	mt_fold_json_num(f, tested ? r->p_adj : NAN);
	fprintf(f, ", \"significant\": %s}", r->significant ? "true" : "false");
}

int mt_fold_render_diff_json(FILE *f, const struct mt_fold_diff *d, const char *base_name)
{
	fprintf(f, "{\n \"format\": \"mt-fold-diff\",\n \"version\": 2,\n \"metric\": \"%s\",\n"
		" \"unit\": \"%s\",\n \"confidence\": ", mt_fold_metric_name(d->metric),
		unit_of(d->metric, 0));
	mt_fold_json_num(f, d->conf);
	fputs(",\n \"base\": ", f);
	mt_fold_json_string(f, base_name);
	fputs(",\n \"decision\": {\"rule\": \"holm-tarone\", \"alpha\": ", f);
	mt_fold_json_num(f, d->alpha);
	fprintf(f, ", \"tested\": %u, \"too_few\": %u, \"exact\": %u, \"significant\": %u, "
		"\"chance_one_by_one\": ", d->ntested, d->ntoo_few, d->nexact, d->nsignificant);
	mt_fold_json_num(f, d->alpha * d->ntested);
	fprintf(f, ", \"sites\": %u},\n \"total\": ", d->nrows);
	json_row(f, &d->total, d->total_misses);
	fputs(",\n \"rows\": [", f);
	for (uint32_t i = 0; i < d->nshown; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		json_row(f, &d->rows[i], d->row_misses);
	}
	fputs("]\n}\n", f);
	return ferror(f) ? MT_FOLD_EIO : 0;
}
