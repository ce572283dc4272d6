/* Log2 histograms of estimate accumulators. */
#include "fold/hist.h"

void mt_fold_hist_merge(struct mt_fold_hist *dst, const struct mt_fold_hist *src)
{
	if (!src->any)
		return;
	for (unsigned b = 0; b < MT_FOLD_HIST_BUCKETS; b++) {
		mt_fold_est_merge(&dst->objects[b], &src->objects[b]);
		mt_fold_est_merge(&dst->bytes[b], &src->bytes[b]);
	}
	dst->used |= src->used;
	dst->any = 1;
}

#include <stdlib.h>
#include <string.h>

struct mt_fold_hist_cell *mt_fold_cells_get(struct mt_fold_cells *c, unsigned which,
					    unsigned bucket)
{
	for (uint32_t i = 0; i < c->n; i++)
		if (c->v[i].which == which && c->v[i].bucket == bucket)
			return &c->v[i];
	if (c->n == c->cap) {
		uint32_t ncap = c->cap ? c->cap * 2 : 4;
		struct mt_fold_hist_cell *n = realloc(c->v, ncap * sizeof(*n));
		if (!n)
			return NULL;
		c->v = n;
		c->cap = ncap;
	}
	struct mt_fold_hist_cell *x = &c->v[c->n++];
	memset(x, 0, sizeof(*x));
	x->which = (uint8_t)which;
	x->bucket = (uint8_t)bucket;
	return x;
}

int mt_fold_cells_merge(struct mt_fold_cells *dst, const struct mt_fold_cells *src)
{
	for (uint32_t i = 0; i < src->n; i++) {
		struct mt_fold_hist_cell *d = mt_fold_cells_get(dst, src->v[i].which,
								src->v[i].bucket);
		if (!d)
			return -10;
		mt_fold_est_merge(&d->objects, &src->v[i].objects);
		mt_fold_est_merge(&d->bytes, &src->v[i].bytes);
	}
	return 0;
}

void mt_fold_cells_release(struct mt_fold_cells *c)
{
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void mt_fold_cells_hist(const struct mt_fold_cells *c, unsigned which, struct mt_fold_hist *h)
{
	memset(h, 0, sizeof(*h));
	for (uint32_t i = 0; i < c->n; i++)
		if (c->v[i].which == which) {
			mt_fold_est_merge(&h->objects[c->v[i].bucket], &c->v[i].objects);
			mt_fold_est_merge(&h->bytes[c->v[i].bucket], &c->v[i].bytes);
			h->any = 1;
		}
}
