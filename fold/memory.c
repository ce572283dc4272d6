/* Finishing the timeline, peak, temporary, size and lifetime figures. */
#include "fold/memory.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold/profile.h"

static int hist_finish(struct mt_fold_mem_hist *out, const struct mt_fold_hist *h, double conf,
		       const double *wfb)
{
	out->v = NULL;
	out->n = 0;
	unsigned n = 0;
	for (unsigned b = 0; b < MT_FOLD_HIST_BUCKETS; b++)
		n += mt_fold_hist_has(h, b);
	if (!n)
		return 0;
	if (!(out->v = calloc(n, sizeof(*out->v))))
		return MT_FOLD_ENOMEM;
	for (unsigned b = 0; b < MT_FOLD_HIST_BUCKETS; b++) {
		if (!mt_fold_hist_has(h, b))
			continue;
		struct mt_fold_mem_bucket *o = &out->v[out->n++];
		o->b = b;
		mt_fold_est_finish(&h->objects[b], conf, wfb[MT_FOLD_ALLOC_OBJECTS], &o->objects);
		mt_fold_est_finish(&h->bytes[b], conf, wfb[MT_FOLD_ALLOC_BYTES], &o->bytes);
	}
	return 0;
}

int mt_fold_memory_cells(struct mt_fold_mem_hist *out, const struct mt_fold_cells *c,
			 unsigned which, double conf, const double *wfb)
{
	struct mt_fold_hist *h = malloc(sizeof(*h));
	if (!h)
		return MT_FOLD_ENOMEM;
	mt_fold_cells_hist(c, which, h);
	int r = hist_finish(out, h, conf, wfb);
	free(h);
	return r;
}

void mt_fold_memory_hist_free(struct mt_fold_mem_hist *h)
{
	free(h->v);
	h->v = NULL;
	h->n = 0;
}

void mt_fold_memory_free(struct mt_fold_memory *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nprocs; i++) {
		free(m->procs[i].comm);
		free(m->procs[i].pts);
	}
	free(m->procs);
	free(m->total);
	mt_fold_memory_hist_free(&m->sizes);
	mt_fold_memory_hist_free(&m->life_ns);
	mt_fold_memory_hist_free(&m->life_allocs);
	free(m);
}

/* s[0..n) downsampled into a new array.  @return : its length, or
 * (size_t)-1 out of memory. */
static size_t downsample(const struct mt_fold_tick *s, size_t n, struct mt_fold_tick **out)
{
	size_t cap = n < MT_FOLD_TIMELINE_MAX ? n : MT_FOLD_TIMELINE_MAX;
	*out = malloc((cap + 1) * sizeof(**out));
	if (!*out)
		return (size_t)-1;
	return mt_fold_timeline_downsample(s, n, MT_FOLD_TIMELINE_MAX, *out);
}

static int timeline(struct mt_fold_memory *m, const struct mt_fold_timeline *tl)
{
	if (!tl->nprocs)
		return 0;
	if (!(m->procs = calloc(tl->nprocs, sizeof(*m->procs))))
		return MT_FOLD_ENOMEM;
	for (size_t i = 0; i < tl->nprocs; i++) {
		const struct mt_fold_tl_proc *pr = &tl->procs[i];
		struct mt_fold_mem_proc *o = &m->procs[m->nprocs++];
		o->pid = pr->pid;
		o->comm = strdup(pr->comm ? pr->comm : "");
		o->points_read = pr->n;
		o->peak = pr->peak;
		o->peak_error = pr->peak_error;
		o->peak_time = pr->peak_time;
		struct mt_fold_tick *series;
		size_t n = mt_fold_timeline_series(pr, &series);
		if (!o->comm || n == (size_t)-1)
			return MT_FOLD_ENOMEM;
		o->n = downsample(series, n, &o->pts);
		free(series);
		if (o->n == (size_t)-1) {
			o->n = 0;
			return MT_FOLD_ENOMEM;
		}
		for (size_t j = 0; j < o->n; j++)
			o->has_rss |= o->pts[j].rss != MT_FOLD_RSS_NONE;
	}
	struct mt_fold_tick *total;
	size_t n = mt_fold_timeline_total(tl, &total, &m->total_peak_error);
	if (n == (size_t)-1)
		return MT_FOLD_ENOMEM;
	for (size_t j = 0; j < n; j++) {
		uint64_t lv = total[j].live > 0 ? (uint64_t)total[j].live : 0;
		if (lv > m->total_peak || j == 0) {
			m->total_peak = lv;
			m->total_peak_time = total[j].time;
		}
	}
	m->ntotal = downsample(total, n, &m->total);
	free(total);
	if (m->ntotal == (size_t)-1) {
		m->ntotal = 0;
		return MT_FOLD_ENOMEM;
	}
	for (size_t j = 0; j < m->ntotal; j++)
		m->total_has_rss |= m->total[j].rss != MT_FOLD_RSS_NONE;
	return 0;
}

/* The reconciliation rows from the ticks: block and RSS at each process's
 * moment (its peak, or --at) and at its last tick. */
static void reconcile(struct mt_fold_memory *m, const struct mt_fold_timeline *tl,
		      int64_t at_time)
{
	for (size_t i = 0; i < tl->nprocs; i++) {
		const struct mt_fold_tl_proc *pr = &tl->procs[i];
		uint64_t t = at_time >= 0 ? (uint64_t)at_time : pr->peak_time;
		const struct mt_fold_tick *k = mt_fold_timeline_at(pr, t);
		m->at_peak.has_block = 1;
		if (at_time >= 0)
			m->at_peak.block += k ? k->live : 0;
		else
			m->at_peak.block += pr->peak > INT64_MAX ? INT64_MAX : (int64_t)pr->peak;
		if (k && k->rss != MT_FOLD_RSS_NONE) {
			m->at_peak.has_rss = 1;
			m->at_peak.rss += k->rss;
		}
		if (pr->n) {
			const struct mt_fold_tick *last = &pr->pts[pr->n - 1];
			m->at_end.has_block = 1;
			m->at_end.block += last->live;
			if (last->rss != MT_FOLD_RSS_NONE) {
				m->at_end.has_rss = 1;
				m->at_end.rss += last->rss;
			}
		}
	}
	if (at_time >= 0) {
		m->peak_time_known = 1;
		m->peak_moment = (uint64_t)at_time;
	} else if (tl->nprocs == 1) {
		m->peak_time_known = 1;
		m->peak_moment = tl->procs[0].peak_time;
	}
}

/* The metric m summed over the stacks, finished. */
static void metric_total(const struct mt_fold_profile *p, enum mt_fold_metric m, double conf,
			 const double *wfb, struct mt_fold_value *out)
{
	struct mt_fold_est acc = { 0 };
	uint32_t n = mt_fold_profile_stack_count(p);
	for (uint32_t id = 0; id < n; id++) {
		const struct mt_fold_est *est;
		mt_fold_profile_stack(p, id, NULL, &est);
		mt_fold_est_merge(&acc, &est[m]);
	}
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	if (c->rate_max > 1 || c->every_max > 1)
		acc.sampled = 1;	/* none sampled is an estimate of 0 */
	mt_fold_est_finish(&acc, conf, wfb[m], out);
}

double mt_fold_memory_peak_bound(const struct mt_fold_profile *p, uint64_t forked_lines)
{
	const struct mt_fold_timeline *tl = mt_fold_profile_timeline(p);
	if (!tl->nprocs || mt_fold_profile_at_time(p) >= 0 || forked_lines)
		return -1;
	double b = 0;
	for (size_t i = 0; i < tl->nprocs; i++)
		b += (double)tl->procs[i].peak + (double)tl->procs[i].peak_error;
	return b;
}

int mt_fold_memory_new(struct mt_fold_memory **out, const struct mt_fold_profile *p,
		       double conf, const double *wfb, double peak_bound)
{
	struct mt_fold_memory *m = calloc(1, sizeof(*m));
	*out = NULL;
	if (!m)
		return MT_FOLD_ENOMEM;
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	const struct mt_fold_timeline *tl = mt_fold_profile_timeline(p);
	int64_t at_time = mt_fold_profile_at_time(p);
	m->has_ticks = c->kind[MT_FOLD_TICK] > 0;
	m->has_seq = c->seq_allocs > 0;
	m->start = c->time_first;
	m->at = at_time >= 0 ? at_time - (int64_t)c->time_first : -1;
	m->peak_unticked = c->peak_unticked;
	metric_total(p, MT_FOLD_PEAK_BYTES, conf, wfb, &m->peak_bytes);
	mt_fold_value_clip(&m->peak_bytes, peak_bound);
	metric_total(p, MT_FOLD_PEAK_OBJECTS, conf, wfb, &m->peak_objects);
	metric_total(p, MT_FOLD_TEMP_BYTES, conf, wfb, &m->temp_bytes);
	metric_total(p, MT_FOLD_TEMP_OBJECTS, conf, wfb, &m->temp_objects);
	metric_total(p, MT_FOLD_ALLOC_BYTES, conf, wfb, &m->alloc_bytes);
	m->temp_share = m->alloc_bytes.value > 0 ? m->temp_bytes.value / m->alloc_bytes.value : 0;
	m->at_peak.requested = m->peak_bytes;
	metric_total(p, MT_FOLD_INUSE_BYTES, conf, wfb, &m->at_end.requested);
	reconcile(m, tl, at_time);
	const struct mt_fold_hists *h = mt_fold_profile_hists(p);
	mt_fold_est_finish(&h->freed, conf, wfb[MT_FOLD_ALLOC_OBJECTS], &m->freed);
	mt_fold_est_finish(&h->not_freed, conf, wfb[MT_FOLD_ALLOC_OBJECTS], &m->not_freed);
	if (timeline(m, tl) || hist_finish(&m->sizes, &h->sizes, conf, wfb) ||
	    hist_finish(&m->life_ns, &h->life_ns, conf, wfb) ||
	    hist_finish(&m->life_allocs, &h->life_allocs, conf, wfb)) {
		mt_fold_memory_free(m);
		return MT_FOLD_ENOMEM;
	}
	*out = m;
	return 0;
}
