/* Live bytes and objects over time, by stack (fold/live.h). */
#include "fold/live.h"

#include <stdlib.h>
#include <string.h>

#include "fold/line.h"

enum { D_ALLOC, D_START, D_STOP };	/* D_START: allocated and live from here */

struct mt_fold_live_delta {
	uint32_t stack, bucket;
	uint8_t kind;
	uint64_t n;
	double bytes, objects;
};

int mt_fold_live_init(struct mt_fold_live *l, unsigned buckets, uint64_t start, uint64_t end)
{
	memset(l, 0, sizeof(*l));
	if (!buckets)
		return 0;
	if (end < start)
		end = start;
	if (!(l->moments = malloc(buckets * sizeof(*l->moments))))
		return MT_FOLD_ENOMEM;
	l->buckets = buckets;
	l->start = start;
	l->end = end;
	unsigned __int128 span = end - start ? end - start : 1;
	for (unsigned b = 0; b + 1 < buckets; b++) {
		unsigned __int128 x = span * (b + 1);
		l->moments[b] = start + (uint64_t)((x + buckets - 1) / buckets) - 1;
	}
	l->moments[buckets - 1] = end;
	return 0;
}

unsigned mt_fold_live_bucket(const struct mt_fold_live *l, uint64_t t)
{
	/* the first b with moments[b] >= t: they are in order */
	unsigned lo = 0, hi = l->buckets - 1;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (l->moments[mid] >= t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

static int push(struct mt_fold_live *l, const struct mt_fold_live_delta *d)
{
	if (l->nd == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 4096;
		struct mt_fold_live_delta *n = realloc(l->d, ncap * sizeof(*n));
		if (!n)
			return MT_FOLD_ENOMEM;
		l->d = n;
		l->cap = ncap;
	}
	l->d[l->nd++] = *d;
	return 0;
}

int mt_fold_live_add(struct mt_fold_live *l, uint32_t stack, uint64_t alloc, uint64_t end,
		     double bytes, double objects, uint64_t n)
{
	if (!l->buckets)
		return 0;
	l->allocations++;
	unsigned from = mt_fold_live_bucket(l, alloc);
	/* live at the moments of buckets from .. to-1: alloc <= t_b < end */
	unsigned to = end == UINT64_MAX || end > l->moments[l->buckets - 1] ? l->buckets
									   : mt_fold_live_bucket(l, end);
	struct mt_fold_live_delta d = { stack, from, from < to ? D_START : D_ALLOC, n, bytes,
					objects };
	if (push(l, &d))
		return MT_FOLD_ENOMEM;
	if (from < to && to < l->buckets) {
		d.bucket = to;
		d.kind = D_STOP;
		return push(l, &d);
	}
	return 0;
}

static int delta_cmp(const void *a, const void *b)
{
	const struct mt_fold_live_delta *x = a, *y = b;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	if (x->bucket != y->bucket)
		return x->bucket < y->bucket ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

static int pt_push(struct mt_fold_live_pt **v, uint32_t *n, uint32_t *cap,
		   const struct mt_fold_live_pt *p)
{
	if (*n == *cap) {
		uint32_t ncap = *cap ? *cap * 2 : 4;
		struct mt_fold_live_pt *x = realloc(*v, ncap * sizeof(*x));
		if (!x)
			return MT_FOLD_ENOMEM;
		*v = x;
		*cap = ncap;
	}
	(*v)[(*n)++] = *p;
	return 0;
}

/* The rows of the deltas of one stack, d[0..n). */
static int stack_row(struct mt_fold_live_row *r, const struct mt_fold_live_delta *d, size_t n)
{
	uint32_t lcap = 0, acap = 0;
	struct mt_fold_live_pt cur = { 0 }, shown = { 0 };
	int64_t count = 0;	/* allocations live: at 0 the sums are 0 exactly */
	r->stack = d[0].stack;
	for (size_t i = 0; i < n;) {
		struct mt_fold_live_pt al = { .bucket = d[i].bucket };
		int any_alloc = 0;
		size_t j = i;
		for (; j < n && d[j].bucket == d[i].bucket; j++) {
			const struct mt_fold_live_delta *x = &d[j];
			if (x->kind == D_STOP) {
				count--;
				cur.bytes -= x->bytes;
				cur.objects -= x->objects;
				cur.n -= x->n;
				continue;
			}
			any_alloc = 1;
			al.bytes += x->bytes;
			al.objects += x->objects;
			al.n += x->n;
			if (x->kind == D_START) {
				count++;
				cur.bytes += x->bytes;
				cur.objects += x->objects;
				cur.n += x->n;
			}
		}
		if (count <= 0)
			cur = (struct mt_fold_live_pt){ 0 };
		cur.bucket = d[i].bucket;
		if (cur.bytes != shown.bytes || cur.objects != shown.objects || cur.n != shown.n) {
			if (pt_push(&r->live, &r->nlive, &lcap, &cur))
				return MT_FOLD_ENOMEM;
			shown = cur;
		}
		if (any_alloc && pt_push(&r->alloc, &r->nalloc, &acap, &al))
			return MT_FOLD_ENOMEM;
		i = j;
	}
	return 0;
}

int mt_fold_live_finish(struct mt_fold_live *l)
{
	if (!l->buckets || !l->nd) {
		free(l->d);
		l->d = NULL;
		l->nd = l->cap = 0;
		return 0;
	}
	qsort(l->d, l->nd, sizeof(*l->d), delta_cmp);
	uint32_t nstacks = 0;
	for (size_t i = 0; i < l->nd; i++)
		nstacks += !i || l->d[i].stack != l->d[i - 1].stack;
	if (!(l->rows = calloc(nstacks, sizeof(*l->rows))))
		return MT_FOLD_ENOMEM;
	int ret = 0;
	for (size_t i = 0; i < l->nd && !ret;) {
		size_t j = i;
		while (j < l->nd && l->d[j].stack == l->d[i].stack)
			j++;
		ret = stack_row(&l->rows[l->nrows++], l->d + i, j - i);
		i = j;
	}
	free(l->d);
	l->d = NULL;
	l->nd = l->cap = 0;
	return ret;
}

struct mt_fold_live_pt mt_fold_live_at(const struct mt_fold_live_row *r, unsigned b)
{
	struct mt_fold_live_pt p = { .bucket = b };
	for (uint32_t i = 0; i < r->nlive && r->live[i].bucket <= b; i++) {
		p = r->live[i];
		p.bucket = b;
	}
	return p;
}

int mt_fold_live_copy(struct mt_fold_live *dst, const struct mt_fold_live *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src->buckets)
		return 0;
	*dst = *src;
	dst->moments = NULL;
	dst->rows = NULL;
	dst->nrows = 0;
	dst->d = NULL;
	dst->nd = dst->cap = 0;
	if (!(dst->moments = malloc(src->buckets * sizeof(*dst->moments))) ||
	    (src->nrows && !(dst->rows = calloc(src->nrows, sizeof(*dst->rows)))))
		goto oom;
	memcpy(dst->moments, src->moments, src->buckets * sizeof(*dst->moments));
	for (uint32_t i = 0; i < src->nrows; i++) {
		const struct mt_fold_live_row *s = &src->rows[i];
		struct mt_fold_live_row *d = &dst->rows[dst->nrows++];
		d->stack = s->stack;
		d->live = malloc(((size_t)s->nlive + 1) * sizeof(*d->live));
		d->alloc = malloc(((size_t)s->nalloc + 1) * sizeof(*d->alloc));
		if (!d->live || !d->alloc)
			goto oom;
		if (s->nlive)
			memcpy(d->live, s->live, s->nlive * sizeof(*d->live));
		if (s->nalloc)
			memcpy(d->alloc, s->alloc, s->nalloc * sizeof(*d->alloc));
		d->nlive = s->nlive;
		d->nalloc = s->nalloc;
	}
	return 0;
oom:
	mt_fold_live_release(dst);
	return MT_FOLD_ENOMEM;
}

void mt_fold_live_release(struct mt_fold_live *l)
{
	for (uint32_t i = 0; i < l->nrows; i++) {
		free(l->rows[i].live);
		free(l->rows[i].alloc);
	}
	free(l->rows);
	free(l->moments);
	free(l->d);
	memset(l, 0, sizeof(*l));
}
