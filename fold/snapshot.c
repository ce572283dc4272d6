/* Deriving sites, threads and totals from a profile for one metric. */
#include "fold/snapshot.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold/line.h"
#include "fold/strtab.h"

static int site_cmp(const void *a, const void *b)
{
	const struct mt_fold_site *x = a, *y = b;
	if (x->total.value != y->total.value)
		return x->total.value > y->total.value ? -1 : 1;
	if (x->self.value != y->self.value)
		return x->self.value > y->self.value ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int stack_row_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mt_fold_stack_row *)a)->stack,
		      ((const struct mt_fold_stack_row *)b)->stack);
}

/* The stacks of the collapsed output with their sample counts. */
static int build_stacks(struct mt_fold_snapshot *s, const struct mt_fold_profile *p)
{
	enum mt_fold_metric m = s->opt.metric;
	uint32_t n = mt_fold_profile_stack_count(p);
	s->stacks = calloc((size_t)n + 1, sizeof(*s->stacks));
	if (!s->stacks)
		return MT_FOLD_ENOMEM;
	for (uint32_t id = 0; id < n; id++) {
		const struct mt_fold_est *est;
		size_t len;
		const char *key = mt_fold_profile_stack(p, id, &len, &est);
		double v = (double)est[m].exact + est[m].y;
		if (!(v >= 0.5))	/* rounds to 0 */
			continue;
		uint32_t kid;
		if (mt_fold_strtab_intern(s->names, key, len, &kid) < 0)
			return MT_FOLD_ENOMEM;
		s->stacks[s->nstacks++] = (struct mt_fold_stack_row){
			.stack = mt_fold_strtab_get(s->names, kid, NULL),
			.value = v, .n = est[m].n, .exact = !est[m].sampled,
		};
	}
	if (s->nstacks)
		qsort(s->stacks, s->nstacks, sizeof(*s->stacks), stack_row_cmp);
	return 0;
}

/* What was live over time (asked for): copied, with the stacks' keys. */
static int build_live(struct mt_fold_snapshot *s, const struct mt_fold_profile *p)
{
	const struct mt_fold_live *l = mt_fold_profile_live(p);
	if (!l)
		return 0;
	if (mt_fold_live_copy(&s->live, l))
		return MT_FOLD_ENOMEM;
	if (!(s->live_keys = calloc((size_t)l->nrows + 1, sizeof(*s->live_keys))))
		return MT_FOLD_ENOMEM;
	for (uint32_t i = 0; i < l->nrows; i++) {
		size_t len;
		uint32_t kid;
		const char *key = mt_fold_profile_stack(p, l->rows[i].stack, &len, NULL);
		if (mt_fold_strtab_intern(s->names, key, len, &kid) < 0)
			return MT_FOLD_ENOMEM;
		s->live_keys[i] = mt_fold_strtab_get(s->names, kid, NULL);
	}
	return 0;
}

static int group_cmp(const void *a, const void *b)
{
	const struct mt_fold_group *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static const char *mode_name(const struct mt_fold_counts *c)
{
	/* sample mode: sampled allocations, or totals that give a rate (only
	 * sample mode has one) */
	int sample = c->sample_allocs > 0 || c->rate_max > 0,
	    trace = c->trace_allocs > 0, event = c->kind[MT_FOLD_SAMPLE] > 0;
	if (sample + trace + event > 1)
		return "mixed";
	return sample ? "sample" : trace ? "trace" : event ? "event" : "none";
}

/* Compare an exact figure with an estimate accumulator. */
static void check_set(struct mt_fold_check *ck, const struct mt_fold_est *e, double conf,
		      double wfallback, int has_exact, mt_fold_i128 exact)
{
	mt_fold_est_finish(e, conf, wfallback, &ck->est);
	ck->has_exact = has_exact;
	ck->exact = exact;
	ck->in_interval = has_exact && (double)exact >= ck->est.lo && (double)exact <= ck->est.hi;
}

/* Accumulators of a group: alloc and inuse bytes and objects, the metric. */
struct group_acc {
	struct mt_fold_est est[MT_FOLD_NMETRICS];
};

static void group_fill(struct mt_fold_group *g, const struct group_acc *a,
		       const struct mt_fold_snapshot_options *opt, const double *wfb)
{
	const struct mt_fold_totals *t = &g->totals;
	int has = t->lines > 0;
	/* A thread under the sampler (it reported totals) that no sample point
	 * fell on has an estimate of 0 with an error, not an exact 0: its
	 * interval is [0, the weight of about 3.7 points].  Unless nothing in
	 * the input was sampled (--rate 1): then every figure is exact, and
	 * must equal the sampler's. */
	struct group_acc sampled = *a;
	if (has) {
		for (int m = 0; m < MT_FOLD_NMETRICS; m++)
			if (wfb[m] > 0)
				sampled.est[m].sampled = 1;
		a = &sampled;
	}
	check_set(&g->check[MT_FOLD_CHECK_BYTES], &a->est[MT_FOLD_ALLOC_BYTES], opt->conf,
		  wfb[MT_FOLD_ALLOC_BYTES], has, (mt_fold_i128)t->alloc_bytes);
	check_set(&g->check[MT_FOLD_CHECK_OBJECTS], &a->est[MT_FOLD_ALLOC_OBJECTS], opt->conf,
		  wfb[MT_FOLD_ALLOC_OBJECTS], has, (mt_fold_i128)t->allocs);
	/* The sampler counts freed bytes in block size (glibc's chunk size,
	 * usable size + 8) and allocated bytes as requested: their difference
	 * is not the requested bytes still live, so inuse_bytes has no exact
	 * figure to be checked against. */
	check_set(&g->check[MT_FOLD_CHECK_INUSE_BYTES], &a->est[MT_FOLD_INUSE_BYTES], opt->conf,
		  wfb[MT_FOLD_INUSE_BYTES], 0, 0);
	check_set(&g->check[MT_FOLD_CHECK_INUSE_OBJECTS], &a->est[MT_FOLD_INUSE_OBJECTS],
		  opt->conf, wfb[MT_FOLD_INUSE_OBJECTS], has,
		  (mt_fold_i128)t->allocs - (mt_fold_i128)t->frees);
	/* A forked image frees blocks of its parent's (counted in frees),
	 * which the estimate, made of its own allocations, knows nothing of:
	 * allocs - frees is then only a lower bound of what it estimates. */
	struct mt_fold_check *live = &g->check[MT_FOLD_CHECK_INUSE_OBJECTS];
	live->forked = t->forked_lines > 0;
	if (live->forked)
		live->in_interval = has && (double)live->exact <= live->est.hi;
	mt_fold_est_finish(&a->est[opt->metric], opt->conf, wfb[opt->metric], &g->metric);
}

static void totals_add(struct mt_fold_totals *d, const struct mt_fold_totals *s)
{
	d->alloc_bytes += s->alloc_bytes;
	d->allocs += s->allocs;
	d->frees += s->frees;
	d->freed_bytes += s->freed_bytes;
	d->peak_bytes += s->peak_bytes;
	d->peak_error += s->peak_error;
	d->lines += s->lines;
	d->forked_lines += s->forked_lines;
}

static void acc_add(struct group_acc *d, const struct mt_fold_est *e)
{
	for (int m = 0; m < MT_FOLD_NMETRICS; m++)
		mt_fold_est_merge(&d->est[m], &e[m]);
}

/* Cut v's interval at the exact total (bound; < 0: none), but not below
 * the estimate itself: an interval holds its estimate (one that took a
 * tiny object's weight of 30000 may exceed the total). */
static int build_sites(struct mt_fold_snapshot *s, const struct mt_fold_profile *p,
		       const double *wfb, double bound)
{
	enum mt_fold_metric m = s->opt.metric;
	uint32_t nstacks = mt_fold_profile_stack_count(p);
	unsigned skip = mt_fold_profile_prefix_frames(p);
	size_t cap = 0;
	uint32_t *stamp = NULL;
	struct mt_fold_site *sites = NULL;
	int ret = MT_FOLD_ENOMEM;

	s->names = mt_fold_strtab_new();
	if (!s->names)
		return MT_FOLD_ENOMEM;
	for (uint32_t id = 0; id < nstacks; id++) {
		const struct mt_fold_est *est;
		size_t len;
		const char *key = mt_fold_profile_stack(p, id, &len, &est);
		const char *f = key, *end = key + len;
		unsigned depth = 0;
		if (est[m].exact == 0 && est[m].n == 0)
			continue;	/* contributes nothing to this metric */
		while (f <= end) {
			const char *semi = memchr(f, ';', (size_t)(end - f));
			const char *stop = semi ? semi : end;
			if (depth++ >= skip) {
				uint32_t sid;
				int r = mt_fold_strtab_intern(s->names, f, (size_t)(stop - f), &sid);
				if (r < 0)
					goto out;
				if (sid >= cap) {
					size_t ncap = cap ? cap * 2 : 256;
					while (ncap <= sid)
						ncap *= 2;
					void *a = realloc(sites, ncap * sizeof(*sites));
					void *b = realloc(stamp, ncap * sizeof(*stamp));
					if (a)
						sites = a;
					if (b)
						stamp = b;
					if (!a || !b)
						goto out;
					memset(sites + cap, 0, (ncap - cap) * sizeof(*sites));
					memset(stamp + cap, 0, (ncap - cap) * sizeof(*stamp));
					cap = ncap;
				}
				if (stamp[sid] != id + 1) {	/* once per stack */
					stamp[sid] = id + 1;
					mt_fold_est_merge(&sites[sid].total_acc, &est[m]);
					sites[sid].events += est[MT_FOLD_SAMPLES].exact;
				}
				if (!semi) {
					mt_fold_est_merge(&sites[sid].self_acc, &est[m]);
					sites[sid].self_events += est[MT_FOLD_SAMPLES].exact;
				}
			}
			if (!semi)
				break;
			f = semi + 1;
		}
	}
	s->nsites = mt_fold_strtab_count(s->names);
	for (uint32_t i = 0; i < s->nsites; i++) {
		struct mt_fold_site *site = &sites[i];
		site->name = mt_fold_strtab_get(s->names, i, NULL);
		/* No self events in a sampled profile is an estimate of 0 too. */
		site->self_acc.sampled |= site->total_acc.sampled;
		mt_fold_est_finish(&site->total_acc, s->opt.conf, wfb[m], &site->total);
		mt_fold_est_finish(&site->self_acc, s->opt.conf, wfb[m], &site->self);
		mt_fold_value_clip(&site->total, bound);
		mt_fold_value_clip(&site->self, bound);
		site->few = !site->total.exact && site->total.n < s->opt.few;
	}
	if (s->nsites)
		qsort(sites, s->nsites, sizeof(*sites), site_cmp);
	s->sites = sites;
	sites = NULL;
	s->shown = malloc((s->nsites + 1) * sizeof(*s->shown));
	if (!s->shown)
		goto out;
	for (uint32_t i = 0; i < s->nsites; i++) {
		const struct mt_fold_site *site = &s->sites[i];
		uint64_t n = site->total.exact ? site->events : site->total.n;
		if (n < s->opt.min_samples)
			continue;
		if (s->opt.top && s->nshown >= s->opt.top)
			break;
		s->shown[s->nshown++] = i;
	}
	ret = 0;
out:
	free(sites);
	free(stamp);
	return ret;
}

/* The sampler's exact count of the snapshot's metric over all the input,
 * when every event comes from a thread or process that sent its totals
 * (uncounted: threads with events and neither) and no image is missing
 * from them; else -1.  (No exact counterpart for inuse_bytes, samples or
 * period: -1.) */
static double exact_bound(const struct mt_fold_snapshot *s, const struct mt_fold_profile *p,
			  int uncounted, enum mt_fold_metric m)
{
	const struct mt_fold_totals *t = &s->all.totals;
	if (!s->has_totals || s->all.partial || uncounted)
		return -1;
	switch (m) {
	case MT_FOLD_PEAK_BYTES:	/* requested <= block */
		return mt_fold_memory_peak_bound(p, t->forked_lines);
	case MT_FOLD_ALLOC_BYTES:
		return (double)t->alloc_bytes;
	case MT_FOLD_ALLOC_OBJECTS:
		return (double)t->allocs;
	case MT_FOLD_INUSE_OBJECTS:
		return t->allocs >= t->frees && !t->forked_lines ? (double)(t->allocs - t->frees)
								 : -1;
	default:
		return -1;
	}
}

int mt_fold_snapshot_new(struct mt_fold_snapshot **out, const struct mt_fold_profile *p,
			 const struct mt_fold_snapshot_options *opt)
{
	struct mt_fold_snapshot *s = calloc(1, sizeof(*s));
	struct group_acc *tacc = NULL, *pacc = NULL, all = { 0 };
	double wfb[MT_FOLD_NMETRICS] = { 0 };
	int ret = MT_FOLD_ENOMEM;

	*out = NULL;
	if (!s)
		return MT_FOLD_ENOMEM;
	s->opt = *opt;
	s->counts = *mt_fold_profile_counts(p);
	/* The names stay with the profile: only the one folded is kept. */
	for (unsigned i = 0; i < s->counts.nr_event_names; i++)
		s->counts.event_names[i].name = NULL;
	if (s->counts.event && !(s->counts.event = s->event = strdup(s->counts.event))) {
		free(s);
		return MT_FOLD_ENOMEM;
	}
	s->mode = mode_name(&s->counts);

	/* The weight of one sample where a group saw none: the largest seen. */
	uint32_t nstacks = mt_fold_profile_stack_count(p);
	struct group_acc total = { 0 };
	for (uint32_t id = 0; id < nstacks; id++) {
		const struct mt_fold_est *est;
		mt_fold_profile_stack(p, id, NULL, &est);
		acc_add(&total, est);
	}
	for (int m = 0; m < MT_FOLD_NMETRICS; m++)
		wfb[m] = total.est[m].wmax;
	/* A group that no point fell on weighs a point at the largest rate of
	 * the input: also when its capture's points are none (a short program
	 * at the default rate, known from the rate= of its totals) or when it
	 * is merged with captures of smaller weights (another rate, trace
	 * mode).  With no point anywhere, the total is an estimate of 0, not
	 * an exact 0.  (At rate 1 nothing sampled is nothing allocated.) */
	if (s->counts.rate_max > 1) {
		double rate = (double)s->counts.rate_max, w1 = 1 / -expm1(-1 / rate);
		if (!wfb[MT_FOLD_ALLOC_BYTES])
			for (int m = MT_FOLD_ALLOC_BYTES; m <= MT_FOLD_INUSE_OBJECTS; m++)
				total.est[m].sampled = 1;
		if (wfb[MT_FOLD_ALLOC_BYTES] < rate)
			wfb[MT_FOLD_ALLOC_BYTES] = rate;
		if (wfb[MT_FOLD_ALLOC_OBJECTS] < w1)
			wfb[MT_FOLD_ALLOC_OBJECTS] = w1;
	}
	if (wfb[MT_FOLD_INUSE_BYTES] < wfb[MT_FOLD_ALLOC_BYTES])
		wfb[MT_FOLD_INUSE_BYTES] = wfb[MT_FOLD_ALLOC_BYTES];
	if (wfb[MT_FOLD_INUSE_OBJECTS] < wfb[MT_FOLD_ALLOC_OBJECTS])
		wfb[MT_FOLD_INUSE_OBJECTS] = wfb[MT_FOLD_ALLOC_OBJECTS];
	/* peak and temp: subsets of the allocations, as inuse */
	for (int m = MT_FOLD_PEAK_BYTES; m <= MT_FOLD_TEMP_OBJECTS; m++) {
		int bytes = m == MT_FOLD_PEAK_BYTES || m == MT_FOLD_TEMP_BYTES;
		double w = wfb[bytes ? MT_FOLD_ALLOC_BYTES : MT_FOLD_ALLOC_OBJECTS];
		if (wfb[m] < w)
			wfb[m] = w;
		if (s->counts.rate_max > 1 || s->counts.every_max > 1)
			total.est[m].sampled = 1;
	}
	mt_fold_est_finish(&total.est[opt->metric], opt->conf, wfb[opt->metric], &s->total);

	/* Threads, then processes with their own totals, then all. */
	uint32_t nt = mt_fold_profile_thread_count(p), np = mt_fold_profile_process_count(p);
	s->threads = calloc(nt + 1, sizeof(*s->threads));
	tacc = calloc(nt + 1, sizeof(*tacc));
	s->procs = calloc(np + 1, sizeof(*s->procs));
	pacc = calloc(np + 1, sizeof(*pacc));
	if (!s->threads || !tacc || !s->procs || !pacc)
		goto out;
	for (uint32_t i = 0; i < np; i++) {
		const struct mt_fold_process *pr = mt_fold_profile_process(p, i);
		s->procs[i].pid = pr->pid;
		s->procs[i].totals = pr->totals;
		s->procs[i].partial = pr->silent_images > 0;
		s->has_totals |= pr->totals.lines > 0;
	}
	s->nprocs = np;
	struct mt_fold_totals thread_sum_orphans = { 0 };
	int uncounted = 0;	/* threads with events and no totals behind them */
	for (uint32_t i = 0; i < nt; i++) {
		const struct mt_fold_thread *t = mt_fold_profile_thread(p, i);
		struct mt_fold_group *g = &s->threads[i];
		g->pid = t->pid;
		g->tid = t->tid;
		g->comm = t->comm ? t->comm : "?";
		g->totals = t->totals;
		s->has_totals |= t->totals.lines > 0;
		acc_add(&tacc[i], t->est);
		acc_add(&all, t->est);
		group_fill(g, &tacc[i], opt, wfb);
		int has_proc = 0;
		for (uint32_t j = 0; j < np; j++)
			if (s->procs[j].pid == t->pid) {
				acc_add(&pacc[j], t->est);
				has_proc = s->procs[j].totals.lines > 0;
			}
		/* A process without a scope=process line: its threads' totals
		 * count towards all. */
		if (!has_proc)
			totals_add(&thread_sum_orphans, &t->totals);
		uncounted |= !has_proc && !t->totals.lines && t->est[MT_FOLD_SAMPLES].exact;
	}
	s->nthreads = nt;
	for (uint32_t j = 0; j < np; j++) {
		group_fill(&s->procs[j], &pacc[j], opt, wfb);
		totals_add(&s->all.totals, &s->procs[j].totals);
	}
	totals_add(&s->all.totals, &thread_sum_orphans);
	s->all.partial = s->counts.silent_images > 0;
	group_fill(&s->all, &all, opt, wfb);
	if (nt)
		qsort(s->threads, nt, sizeof(*s->threads), group_cmp);
	if (np)
		qsort(s->procs, np, sizeof(*s->procs), group_cmp);
	/* Every event under the sampler's totals: no site can have more than
	 * they count (an interval up to 1.9 M objects is cut at the 15 k the
	 * program made). */
	for (int m = 0; m < MT_FOLD_NMETRICS; m++) {
		s->wfb[m] = wfb[m];
		s->bound[m] = exact_bound(s, p, uncounted, (enum mt_fold_metric)m);
	}
	double bound = s->bound[opt->metric];
	mt_fold_value_clip(&s->total, bound);
	if (build_sites(s, p, wfb, bound) || build_stacks(s, p) ||
	    mt_fold_memory_new(&s->mem, p, opt->conf, wfb, s->bound[MT_FOLD_PEAK_BYTES]) ||
	    build_live(s, p))
		goto out;
	/* Thread comm strings point into the profile: copy them. */
	for (uint32_t i = 0; i < nt; i++) {
		uint32_t cid;
		if (mt_fold_strtab_intern(s->names, s->threads[i].comm,
					  strlen(s->threads[i].comm), &cid) < 0)
			goto out;
		s->threads[i].comm = mt_fold_strtab_get(s->names, cid, NULL);
	}
	ret = 0;
out:
	free(tacc);
	free(pacc);
	if (ret)
		mt_fold_snapshot_free(s);
	else
		*out = s;
	return ret;
}

void mt_fold_snapshot_free(struct mt_fold_snapshot *s)
{
	if (!s)
		return;
	free(s->sites);
	free(s->shown);
	free(s->threads);
	free(s->procs);
	free(s->stacks);
	mt_fold_memory_free(s->mem);
	mt_fold_live_release(&s->live);
	free(s->live_keys);
	mt_fold_strtab_free(s->names);
	free(s->event);
	free(s);
}
