/* Tick points per process, peak moments, downsampled and total series. */
#include "fold/timeline.h"

#include <stdlib.h>
#include <string.h>

int mt_fold_timeline_add(struct mt_fold_timeline *tl, uint32_t input,
			 const struct mt_fold_event *ev)
{
	struct mt_fold_tl_proc *pr = NULL;
	for (size_t i = tl->nprocs; i-- > 0;)
		if (tl->procs[i].pid == ev->pid && tl->procs[i].input == input) {
			pr = &tl->procs[i];
			break;
		}
	if (!pr) {
		if (tl->nprocs == tl->cap) {
			size_t ncap = tl->cap ? tl->cap * 2 : 8;
			struct mt_fold_tl_proc *n = realloc(tl->procs, ncap * sizeof(*n));
			if (!n)
				return MT_FOLD_ENOMEM;
			tl->procs = n;
			tl->cap = ncap;
		}
		pr = &tl->procs[tl->nprocs++];
		memset(pr, 0, sizeof(*pr));
		pr->input = input;
		pr->pid = ev->pid;
	}
	if (pr->n == pr->cap) {
		size_t ncap = pr->cap ? pr->cap * 2 : 64;
		struct mt_fold_tick *n = realloc(pr->pts, ncap * sizeof(*n));
		if (!n)
			return MT_FOLD_ENOMEM;
		pr->pts = n;
		pr->cap = ncap;
	}
	pr->pts[pr->n++] = (struct mt_fold_tick){
		.time = ev->time, .live = ev->live, .alloc_bytes = ev->alloc_bytes,
		.block_bytes = ev->alloc_block_bytes,
		.rss = ev->have & MT_FOLD_W_RSS ? ev->rss : MT_FOLD_RSS_NONE,
	};
	/* The peak moment: the largest peak= at its peak_time=; a tick whose
	 * own live exceeds every peak so far is one at its TIME.  Ties keep
	 * the earlier moment. */
	uint64_t lv = ev->live > 0 ? (uint64_t)ev->live : 0;
	if (pr->n == 1 || ev->peak > pr->peak ||
	    (ev->peak == pr->peak && ev->peak_time < pr->peak_time)) {
		pr->peak = ev->peak;
		pr->peak_time = ev->peak_time;
	}
	if (lv > pr->peak) {
		pr->peak = lv;
		pr->peak_time = ev->time;
	}
	if (ev->peak_error > pr->peak_error)
		pr->peak_error = ev->peak_error;
	if (ev->comm.len) {
		char *c = realloc(pr->comm, ev->comm.len + 1);
		if (!c)
			return MT_FOLD_ENOMEM;
		memcpy(c, ev->comm.s, ev->comm.len);
		c[ev->comm.len] = 0;
		pr->comm = c;
	}
	tl->ticks++;
	return 0;
}

static int tick_cmp(const void *a, const void *b)
{
	const struct mt_fold_tick *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	/* same time (a clock-less stream): cumulative order */
	return x->alloc_bytes < y->alloc_bytes ? -1 : x->alloc_bytes > y->alloc_bytes;
}

static int proc_cmp(const void *a, const void *b)
{
	const struct mt_fold_tl_proc *x = a, *y = b;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

void mt_fold_timeline_finish(struct mt_fold_timeline *tl)
{
	if (tl->finished)
		return;
	tl->finished = 1;
	for (size_t i = 0; i < tl->nprocs; i++) {
		struct mt_fold_tl_proc *pr = &tl->procs[i];
		qsort(pr->pts, pr->n, sizeof(struct mt_fold_tick), tick_cmp);
		/* a peak never raised (0, at time 0) is the start's */
		if (pr->n && pr->peak_time < pr->pts[0].time)
			pr->peak_time = pr->pts[0].time;
	}
	if (tl->nprocs)
		qsort(tl->procs, tl->nprocs, sizeof(*tl->procs), proc_cmp);
}

const struct mt_fold_tl_proc *mt_fold_timeline_proc(const struct mt_fold_timeline *tl,
						     uint32_t input, uint32_t pid)
{
	size_t lo = 0, hi = tl->nprocs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct mt_fold_tl_proc *m = &tl->procs[mid];
		if (m->input == input && m->pid == pid)
			return m;
		if (m->input < input || (m->input == input && m->pid < pid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct mt_fold_tick *mt_fold_timeline_at(const struct mt_fold_tl_proc *pr, uint64_t t)
{
	size_t lo = 0, hi = pr->n;	/* first point after t */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pr->pts[mid].time <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &pr->pts[lo - 1] : NULL;
}

void mt_fold_timeline_release(struct mt_fold_timeline *tl)
{
	for (size_t i = 0; i < tl->nprocs; i++) {
		free(tl->procs[i].pts);
		free(tl->procs[i].comm);
	}
	free(tl->procs);
	memset(tl, 0, sizeof(*tl));
}

size_t mt_fold_timeline_downsample(const struct mt_fold_tick *in, size_t n, size_t max,
				   struct mt_fold_tick *out)
{
	if (n <= max) {
		memcpy(out, in, n * sizeof(*in));
		return n;
	}
	/* bucket of t: (t - t0) * max / span, span = last - t0 + 1, in 128
	 * bits so that long runs do not overflow */
	uint64_t t0 = in[0].time;
	unsigned __int128 span = (unsigned __int128)(in[n - 1].time - t0) + 1;
	size_t k = 0, cur = (size_t)-1;
	for (size_t i = 0; i < n; i++) {
		size_t b = (size_t)((unsigned __int128)(in[i].time - t0) * max / span);
		if (b != cur || k == 0) {
			out[k++] = in[i];
			cur = b;
			continue;
		}
		struct mt_fold_tick *o = &out[k - 1];
		if (in[i].live > o->live) {
			o->time = in[i].time;
			o->live = in[i].live;
			o->rss = in[i].rss;
		}
		o->alloc_bytes = in[i].alloc_bytes;	/* the bucket's last */
		o->block_bytes = in[i].block_bytes;
	}
	return k;
}

size_t mt_fold_timeline_series(const struct mt_fold_tl_proc *pr, struct mt_fold_tick **out)
{
	struct mt_fold_tick *s = malloc((pr->n + 1) * sizeof(*s));
	if (!s)
		return (size_t)-1;
	size_t k = 0;
	int placed = 0;
	for (size_t i = 0; i < pr->n; i++) {
		const struct mt_fold_tick *t = &pr->pts[i];
		if (!placed && t->live >= 0 && (uint64_t)t->live == pr->peak &&
		    t->time == pr->peak_time)
			placed = 1;
		if (!placed && t->time > pr->peak_time && i > 0) {
			s[k] = pr->pts[i - 1];
			s[k].time = pr->peak_time;
			s[k].live = pr->peak > INT64_MAX ? INT64_MAX : (int64_t)pr->peak;
			k++;
			placed = 1;
		}
		s[k++] = *t;
	}
	if (!placed && pr->n && pr->peak_time >= pr->pts[pr->n - 1].time) {
		s[k] = pr->pts[pr->n - 1];
		s[k].time = pr->peak_time;
		s[k].live = pr->peak > INT64_MAX ? INT64_MAX : (int64_t)pr->peak;
		k++;
	}
	*out = s;
	return k;
}

struct step {
	uint64_t time;
	uint32_t proc;
	uint32_t end;		/* 1: the process's exit (its live and rss go) */
	const struct mt_fold_tick *pt;
};

static int step_cmp(const void *a, const void *b)
{
	const struct step *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	if (x->proc != y->proc)
		return x->proc < y->proc ? -1 : 1;
	return x->pt < y->pt ? -1 : x->pt > y->pt;
}

size_t mt_fold_timeline_total(const struct mt_fold_timeline *tl, struct mt_fold_tick **out,
			      uint64_t *peak_error)
{
	struct mt_fold_tick **series = calloc(tl->nprocs + 1, sizeof(*series));
	size_t *ns = calloc(tl->nprocs + 1, sizeof(*ns));
	struct step *steps = NULL;
	struct mt_fold_tick *res = NULL, *cur = NULL;
	size_t total = 0, k = 0, ret = (size_t)-1;
	*peak_error = 0;
	if (!series || !ns)
		goto out;
	for (size_t i = 0; i < tl->nprocs; i++) {
		if ((ns[i] = mt_fold_timeline_series(&tl->procs[i], &series[i])) == (size_t)-1)
			goto out;
		total += ns[i] + 1;
		*peak_error += tl->procs[i].peak_error;
	}
	steps = malloc((total + 1) * sizeof(*steps));
	res = malloc((total + 1) * sizeof(*res));
	cur = calloc(tl->nprocs + 1, sizeof(*cur));
	if (!steps || !res || !cur)
		goto out;
	size_t m = 0;
	for (size_t i = 0; i < tl->nprocs; i++) {
		for (size_t j = 0; j < ns[i]; j++)
			steps[m++] = (struct step){ series[i][j].time, (uint32_t)i, 0, &series[i][j] };
		if (ns[i])	/* gone 1 ns after its exit tick */
			steps[m++] = (struct step){ series[i][ns[i] - 1].time + 1, (uint32_t)i, 1,
						    &series[i][ns[i] - 1] };
	}
	qsort(steps, m, sizeof(*steps), step_cmp);
	for (size_t i = 0; i < m;) {
		uint64_t t = steps[i].time;
		for (; i < m && steps[i].time == t; i++) {
			struct mt_fold_tick *c = &cur[steps[i].proc];
			*c = *steps[i].pt;
			if (steps[i].end) {
				c->live = 0;
				c->rss = MT_FOLD_RSS_NONE;
			}
		}
		struct mt_fold_tick sum = { .time = t, .rss = MT_FOLD_RSS_NONE };
		for (size_t p = 0; p < tl->nprocs; p++) {
			sum.live += cur[p].live;
			sum.alloc_bytes += cur[p].alloc_bytes;
			sum.block_bytes += cur[p].block_bytes;
			if (cur[p].rss != MT_FOLD_RSS_NONE)
				sum.rss = (sum.rss == MT_FOLD_RSS_NONE ? 0 : sum.rss) + cur[p].rss;
		}
		res[k++] = sum;
	}
	/* after the last exit nothing is live: the series ends at that tick */
	if (k > 1 && m && steps[m - 1].end)
		k--;
	*out = res;
	res = NULL;
	ret = k;
out:
	for (size_t i = 0; series && i < tl->nprocs; i++)
		free(series[i]);
	free(series);
	free(ns);
	free(steps);
	free(res);
	free(cur);
	return ret;
}
