/* Additive estimate accumulators and their intervals. */
#include "fold/est.h"

#include <math.h>

#include "fold/gamma.h"

char *mt_fold_u128_str(char *buf, mt_fold_u128 v)
{
	char tmp[40];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (int i = 0; i < n; i++)
		buf[i] = tmp[n - 1 - i];
	buf[n] = '\0';
	return buf;
}

char *mt_fold_i128_str(char *buf, mt_fold_i128 v)
{
	if (v >= 0)
		return mt_fold_u128_str(buf, (mt_fold_u128)v);
	buf[0] = '-';
	mt_fold_u128_str(buf + 1, -(mt_fold_u128)v);
	return buf;
}

void mt_fold_est_add_exact(struct mt_fold_est *e, uint64_t amount)
{
	e->exact += amount;
}

void mt_fold_est_add_sampled(struct mt_fold_est *e, double w, uint64_t k)
{
	e->sampled = 1;
	if (k == 0)
		return;
	e->y += w * (double)k;
	e->v += w * w * (double)k;
	e->n += k;
	mt_fold_est_bound(e, w);
}

void mt_fold_est_bound(struct mt_fold_est *e, double w)
{
	if (w > e->wmax)
		e->wmax = w;
}

void mt_fold_est_merge(struct mt_fold_est *dst, const struct mt_fold_est *src)
{
	dst->exact += src->exact;
	dst->y += src->y;
	dst->v += src->v;
	dst->n += src->n;
	if (src->wmax > dst->wmax)
		dst->wmax = src->wmax;
	dst->sampled |= src->sampled;
}

void mt_fold_est_finish(const struct mt_fold_est *e, double conf,
			double wmax_fallback, struct mt_fold_value *out)
{
	double exact = (double)e->exact;
	out->value = exact + e->y;
	out->n = e->n;
	out->exact = !e->sampled;
	out->cut_top = 0;
	if (!e->sampled) {
		out->rse = 0;
		out->lo = out->hi = out->hi_samples = out->value;
		return;
	}
	out->rse = out->value > 0 ? sqrt(e->v) / out->value : INFINITY;
	double lo, hi;
	mt_fold_gamma_interval(e->y, e->v, e->wmax > 0 ? e->wmax : wmax_fallback,
			       conf, &lo, &hi);
	out->lo = exact + lo;
	out->hi = out->hi_samples = exact + hi;
}

void mt_fold_value_clip(struct mt_fold_value *v, double bound)
{
	if (bound >= 0 && !v->exact && v->hi > bound) {
		v->hi_samples = v->hi;
		v->hi = bound > v->value ? bound : v->value;
		v->cut_top = 1;
	}
}
