/* Aggregation of events into a profile; liveness of allocations. */
#include "fold/profile.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fold/locs.h"
#include "fold/strtab.h"

static const char *const metric_names[MT_FOLD_NMETRICS] = {
	"alloc_bytes", "alloc_objects", "inuse_bytes", "inuse_objects", "samples", "period",
	"peak_bytes", "peak_objects", "temp_bytes", "temp_objects",
};
static const char *const metric_units[MT_FOLD_NMETRICS] = {
	"bytes", "objects", "bytes", "objects", "samples", "events",
	"bytes", "objects", "bytes", "objects",
};

const char *mt_fold_metric_name(enum mt_fold_metric m)
{
	return (unsigned)m < MT_FOLD_NMETRICS ? metric_names[m] : "?";
}

const char *mt_fold_metric_unit(enum mt_fold_metric m)
{
	return (unsigned)m < MT_FOLD_NMETRICS ? metric_units[m] : "?";
}

const char *mt_fold_metric_bound_name(enum mt_fold_metric m)
{
	return mt_fold_metric_bound_exact(m) ? "exact total" : "exact block peak";
}

int mt_fold_metric_parse(const char *name, enum mt_fold_metric *m)
{
	for (int i = 0; i < MT_FOLD_NMETRICS; i++)
		if (strcmp(name, metric_names[i]) == 0) {
			*m = (enum mt_fold_metric)i;
			return 0;
		}
	return -1;
}

enum rec_mode { MODE_SAMPLE, MODE_TRACE };

/* An allocation or free kept for the liveness pass. */
struct rec {
	uint64_t ptr, time, seq;	/* seq: input order */
	uint64_t size, scale;	/* scale: rate (sample) or every (trace) */
	uint64_t tseq;		/* the thread's allocation count (seq=) */
	uint32_t pid, tid, stack, thread, points;
	uint32_t input;		/* the input's labels (mt_fold_profile_input_labels) */
	uint8_t is_free, mode, has_tseq;
};

struct mt_fold_profile {
	unsigned prefix;
	int finished;
	uint64_t seq;
	struct mt_fold_strtab *stacks, *threads_by_key, *procs_by_key, *comms;
	struct mt_fold_est (*stack_est)[MT_FOLD_NMETRICS];
	uint32_t stack_cap;
	struct mt_fold_thread *threads;
	uint64_t *comm_time;	/* time of each thread's comm */
	size_t *comm_len;	/* and its length */
	uint32_t thread_cap, comm_cap;
	struct mt_fold_process *procs;
	uint32_t proc_cap;
	struct rec *recs;
	size_t nrecs, rec_cap;
	char *key;
	size_t key_cap;
	struct mt_fold_counts counts;
	const char *only_event;		/* NULL: every event */
	const struct mt_fold_filter *filter;	/* NULL: every thread */
	uint64_t read_lineno;		/* the line mt_fold_profile_read reached */
	/* This stream's kernel-side losses (LOST, LOST_SAMPLES) and the
	 * sampler's unseen marker calls after them, which may count the same
	 * events: the stream's loss is the larger of the two. */
	mt_fold_u128 seg_kernel, seg_unseen;
	struct mt_fold_locs *locs;	/* --pprof-info input (NULL: none seen) */
	struct mt_fold_strtab *inputs;	/* input labels; NULL until some are given */
	uint32_t input;			/* the current input's: id + 1, 0 none */
	int own_locs;			/* made here, to strip them */
	struct mt_fold_timeline tl;
	int64_t at;			/* --at: ns after the first event; -1 none */
	int64_t at_time;		/* and in perf time, after finish */
	struct mt_fold_hists hists;
	struct mt_fold_cells *cells;	/* per stack */
	uint32_t cells_cap;
	int no_hists;			/* mt_fold_profile_histograms(p, 0) */
	unsigned live_buckets;		/* mt_fold_profile_live_buckets */
	struct mt_fold_live live;
};

struct mt_fold_profile *mt_fold_profile_new(unsigned prefix)
{
	struct mt_fold_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->prefix = prefix;
	p->at = p->at_time = -1;
	p->stacks = mt_fold_strtab_new();
	p->threads_by_key = mt_fold_strtab_new();
	p->procs_by_key = mt_fold_strtab_new();
	p->comms = mt_fold_strtab_new();
	if (!p->stacks || !p->threads_by_key || !p->procs_by_key || !p->comms) {
		mt_fold_profile_free(p);
		return NULL;
	}
	return p;
}

void mt_fold_profile_keep_locations(struct mt_fold_profile *p, struct mt_fold_locs *locs)
{
	p->locs = locs;
}

int mt_fold_profile_input_labels(struct mt_fold_profile *p, const char *labels)
{
	if (!labels || !*labels) {
		p->input = 0;
		return 0;
	}
	if (!p->inputs && !(p->inputs = mt_fold_strtab_new()))
		return MT_FOLD_ENOMEM;
	uint32_t id;
	if (mt_fold_strtab_intern(p->inputs, labels, strlen(labels), &id) < 0)
		return MT_FOLD_ENOMEM;
	p->input = id + 1;
	return 0;
}

void mt_fold_profile_only_event(struct mt_fold_profile *p, const char *name)
{
	p->only_event = name;
}

void mt_fold_profile_filter(struct mt_fold_profile *p, const struct mt_fold_filter *f)
{
	p->filter = f && (f->npids || f->ntids || f->ncomms) ? f : NULL;
}

static int filter_keeps(const struct mt_fold_filter *f, const struct mt_fold_event *ev)
{
	if (ev->kind == MT_FOLD_LOST && !mt_fold_str_is(ev->reason, "no-totals") &&
	    !mt_fold_str_is(ev->reason, "no-sampler"))
		return 1;	/* a loss of the stream: never hidden */
	unsigned i;
	int tick = ev->kind == MT_FOLD_TICK;	/* a process's: its pid decides */
	if (f->npids) {
		for (i = 0; i < f->npids && f->pids[i] != ev->pid; i++)
			;
		if (i == f->npids)
			return 0;
	}
	if (f->ntids && !tick) {
		for (i = 0; i < f->ntids && f->tids[i] != ev->tid; i++)
			;
		if (i == f->ntids)
			return 0;
	}
	if (f->ncomms && !tick) {
		for (i = 0; i < f->ncomms && !mt_fold_str_is(ev->comm, f->comms[i]); i++)
			;
		if (i == f->ncomms)
			return 0;
	}
	return 1;
}

/* Count a sample line under its event name.  @return : 1 to fold it, 0
 * when it is of another event than the one asked, -1 out of memory. */
static int note_event(struct mt_fold_profile *p, struct mt_fold_str name)
{
	struct mt_fold_counts *c = &p->counts;
	if (!name.s)	/* a line without event=: the name "" */
		name.s = "";
	unsigned i = 0;
	while (i < c->nr_event_names && !mt_fold_str_is(name, c->event_names[i].name))
		i++;
	if (i < c->nr_event_names) {
		c->event_names[i].samples++;
	} else if (i < MT_FOLD_MAX_EVENTS) {
		char *copy = strndup(name.s, name.len);
		if (!copy)
			return -1;
		c->event_names[i].name = copy;
		c->event_names[i].samples = 1;
		c->nr_event_names++;
	} else {
		c->more_events++;
	}
	if (p->only_event && !mt_fold_str_is(name, p->only_event)) {
		c->other_event_samples++;
		return 0;
	}
	if (p->only_event)
		c->event = p->only_event;
	else
		c->event = c->nr_event_names == 1 && !c->more_events ? c->event_names[0].name : NULL;
	return 1;
}

void mt_fold_profile_free(struct mt_fold_profile *p)
{
	if (!p)
		return;
	if (p->own_locs)
		mt_fold_locs_free(p->locs);
	mt_fold_strtab_free(p->inputs);
	for (unsigned i = 0; i < p->counts.nr_event_names; i++)
		free((char *)p->counts.event_names[i].name);
	mt_fold_strtab_free(p->stacks);
	mt_fold_strtab_free(p->threads_by_key);
	mt_fold_strtab_free(p->procs_by_key);
	mt_fold_strtab_free(p->comms);
	free(p->stack_est);
	free(p->threads);
	free(p->comm_time);
	free(p->comm_len);
	free(p->procs);
	free(p->recs);
	free(p->key);
	mt_fold_timeline_release(&p->tl);
	mt_fold_live_release(&p->live);
	for (uint32_t i = 0; p->cells && i < p->cells_cap; i++)
		mt_fold_cells_release(&p->cells[i]);
	free(p->cells);
	free(p);
}

/* Grow *arr (of elem bytes each, *cap of them) to hold at least need. */
static int reserve(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	uint32_t ncap = *cap ? *cap : 64;
	while (ncap < need)
		ncap *= 2;
	void *n = realloc(*arr, (size_t)ncap * elem);
	if (!n)
		return MT_FOLD_ENOMEM;
	memset((char *)n + (size_t)*cap * elem, 0, (size_t)(ncap - *cap) * elem);
	*arr = n;
	*cap = ncap;
	return 0;
}

static int key_reserve(struct mt_fold_profile *p, size_t need)
{
	if (need <= p->key_cap)
		return 0;
	size_t ncap = p->key_cap ? p->key_cap : 256;
	while (ncap < need)
		ncap *= 2;
	char *k = realloc(p->key, ncap);
	if (!k)
		return MT_FOLD_ENOMEM;
	p->key = k;
	p->key_cap = ncap;
	return 0;
}

/* The stack's key: prefix frames, then the frames (or MT_FOLD_NO_STACK). */
static int stack_id(struct mt_fold_profile *p, const struct mt_fold_event *ev, uint32_t *id)
{
	size_t labels_len = 0;
	const char *labels = "";
	if ((p->prefix & MT_FOLD_PREFIX_LABELS) && p->input)
		labels = mt_fold_strtab_get(p->inputs, p->input - 1, &labels_len);
	size_t need = ev->comm.len + ev->frames.len + labels_len + sizeof(MT_FOLD_NO_STACK) + 64;
	if (key_reserve(p, need))
		return MT_FOLD_ENOMEM;
	char *k = p->key;
	size_t n = 0;
	if (p->prefix & MT_FOLD_PREFIX_COMM) {
		/* FlameGraph's rule: a ';' in a name becomes ':'. */
		for (size_t i = 0; i < ev->comm.len; i++)
			k[n++] = ev->comm.s[i] == ';' ? ':' : ev->comm.s[i];
		if (ev->comm.len == 0)
			k[n++] = '?';
		k[n++] = ';';
	}
	if (p->prefix & MT_FOLD_PREFIX_PID)
		n += (size_t)sprintf(k + n, "pid %u;", ev->pid);
	if (p->prefix & MT_FOLD_PREFIX_TID)
		n += (size_t)sprintf(k + n, "tid %u;", ev->tid);
	if (p->prefix & MT_FOLD_PREFIX_LABELS) {
		memcpy(k + n, labels, labels_len);
		n += labels_len;
		k[n++] = ';';
	}
	if (ev->frames.len) {
		memcpy(k + n, ev->frames.s, ev->frames.len);
		n += ev->frames.len;
	} else {
		memcpy(k + n, MT_FOLD_NO_STACK, sizeof(MT_FOLD_NO_STACK) - 1);
		n += sizeof(MT_FOLD_NO_STACK) - 1;
	}
	int r = mt_fold_strtab_intern(p->stacks, k, n, id);
	if (r < 0)
		return r;
	return reserve((void **)&p->stack_est, &p->stack_cap, *id + 1, sizeof(*p->stack_est));
}

static int thread_index(struct mt_fold_profile *p, const struct mt_fold_event *ev, uint32_t *idx)
{
	uint32_t key[2] = { ev->pid, ev->tid };
	int r = mt_fold_strtab_intern(p->threads_by_key, (const char *)key, sizeof(key), idx);
	if (r < 0)
		return r;
	if (reserve((void **)&p->threads, &p->thread_cap, *idx + 1, sizeof(*p->threads)))
		return MT_FOLD_ENOMEM;
	uint32_t ccap = p->comm_cap;
	if (reserve((void **)&p->comm_time, &p->comm_cap, *idx + 1, sizeof(*p->comm_time)) ||
	    reserve((void **)&p->comm_len, &ccap, *idx + 1, sizeof(*p->comm_len)))
		return MT_FOLD_ENOMEM;
	struct mt_fold_thread *t = &p->threads[*idx];
	if (r == 1) {
		t->pid = ev->pid;
		t->tid = ev->tid;
		t->comm = NULL;
		p->comm_time[*idx] = 0;
	}
	/* The latest name wins: a thread renamed by exec or prctl shows its
	 * last name. */
	if (ev->comm.len && (!t->comm || ev->time >= p->comm_time[*idx])) {
		if (!t->comm || p->comm_len[*idx] != ev->comm.len ||
		    memcmp(t->comm, ev->comm.s, ev->comm.len) != 0) {
			uint32_t cid;
			if (mt_fold_strtab_intern(p->comms, ev->comm.s, ev->comm.len, &cid) < 0)
				return MT_FOLD_ENOMEM;
			t->comm = mt_fold_strtab_get(p->comms, cid, &p->comm_len[*idx]);
		}
		p->comm_time[*idx] = ev->time;
	}
	return 0;
}

static int process_index(struct mt_fold_profile *p, uint32_t pid, uint32_t *idx)
{
	int r = mt_fold_strtab_intern(p->procs_by_key, (const char *)&pid, sizeof(pid), idx);
	if (r < 0)
		return r;
	if (reserve((void **)&p->procs, &p->proc_cap, *idx + 1, sizeof(*p->procs)))
		return MT_FOLD_ENOMEM;
	p->procs[*idx].pid = pid;
	return 0;
}

/* The weights of one allocation, by its capture mode, computed once for
 * every accumulator it goes to (the exponentials are the fold's cost). */
struct weights {
	int kind;		/* 0: sampled at a rate, 1: trace every N, 2: exact */
	double wb, wo, bound;
	uint64_t kb, size;
};

static void alloc_weights(const struct rec *r, struct weights *w)
{
	if (r->mode == MODE_SAMPLE && r->scale > 1) {
		double rate = (double)r->scale;
		/* Inclusion probability of an allocation of size s on a Poisson
		 * process of mean gap rate; size 0 is taken as 1 byte. */
		double s = r->size ? (double)r->size : 1.0;
		w->kind = 0;
		w->wb = rate;
		w->kb = r->points;
		w->wo = 1 / -expm1(-s / rate);
		/* The site's unsampled allocations may be of 1 byte, each worth
		 * about rate objects: a byte sampler sees tiny objects least. */
		w->bound = 1 / -expm1(-1 / rate);
	} else if (r->mode == MODE_TRACE && r->scale > 1) {
		double every = (double)r->scale;
		w->kind = 1;
		w->wb = every * (double)r->size;
		w->wo = every;
	} else {
		/* trace every=1 or sample rate=1: every allocation recorded */
		w->kind = 2;
		w->size = r->size;
	}
}

/* Bytes and objects of one allocation.  The same weights feed alloc_* at
 * add time and inuse_*, peak_*, temp_* at finish. */
static void add_weights(struct mt_fold_est *bytes, struct mt_fold_est *objects,
			const struct weights *w)
{
	switch (w->kind) {
	case 0:
		mt_fold_est_add_sampled(bytes, w->wb, w->kb);
		mt_fold_est_add_sampled(objects, w->wo, 1);
		mt_fold_est_bound(objects, w->bound);
		break;
	case 1:
		mt_fold_est_add_sampled(bytes, w->wb, 1);
		mt_fold_est_add_sampled(objects, w->wo, 1);
		break;
	default:
		mt_fold_est_add_exact(bytes, w->size);
		mt_fold_est_add_exact(objects, 1);
	}
}

/* Stack sid's histogram cell for value v.  @return : NULL out of memory. */
static struct mt_fold_hist_cell *stack_cell(struct mt_fold_profile *p, uint32_t sid,
					    unsigned which, uint64_t v)
{
	if (reserve((void **)&p->cells, &p->cells_cap, sid + 1, sizeof(*p->cells)))
		return NULL;
	return mt_fold_cells_get(&p->cells[sid], which, mt_fold_hist_bucket(v));
}

static int push_rec(struct mt_fold_profile *p, const struct rec *r)
{
	if (p->nrecs == p->rec_cap) {
		size_t ncap = p->rec_cap ? p->rec_cap * 2 : 4096;
		struct rec *n = realloc(p->recs, ncap * sizeof(*n));
		if (!n)
			return MT_FOLD_ENOMEM;
		p->recs = n;
		p->rec_cap = ncap;
	}
	p->recs[p->nrecs++] = *r;
	return 0;
}

/* The lines of one thread or one process are successive images (an exec
 * ends one, and the next counts from zero): counts add up, the peak is the
 * largest of theirs. */
static void add_totals(struct mt_fold_totals *t, const struct mt_fold_event *ev)
{
	t->alloc_bytes += ev->alloc_bytes;
	t->allocs += ev->allocs;
	t->frees += ev->frees;
	t->freed_bytes += ev->freed_bytes;
	if (ev->peak_bytes > t->peak_bytes)
		t->peak_bytes = ev->peak_bytes;
	if (ev->peak_error > t->peak_error)
		t->peak_error = ev->peak_error;
	t->lines++;
	t->forked_lines += ev->forked != 0;
}

static void note_stack(struct mt_fold_counts *c, const struct mt_fold_event *ev)
{
	if (ev->frames.len == 0)
		c->no_stack++;
	if (!mt_fold_str_is(ev->end, "none"))
		c->stacks++;
	if (!mt_fold_str_is(ev->end, "complete") && !mt_fold_str_is(ev->end, "none"))
		c->truncated++;
	if (mt_fold_str_is(ev->end, "end-of-dump"))
		c->end_of_dump++;
}

static void minmax(uint64_t v, uint64_t *lo, uint64_t *hi)
{
	if (!*lo || v < *lo)
		*lo = v;
	if (v > *hi)
		*hi = v;
}

static mt_fold_u128 seg_lost(const struct mt_fold_profile *p)
{
	return p->seg_kernel > p->seg_unseen ? p->seg_kernel : p->seg_unseen;
}

int mt_fold_profile_add(struct mt_fold_profile *p, const struct mt_fold_event *ev)
{
	struct mt_fold_counts *c = &p->counts;
	uint32_t sid, tix, pix;

	if (p->finished)
		return MT_FOLD_ESTATE;
	if (p->filter && !filter_keeps(p->filter, ev)) {
		c->filtered_out++;
		return 0;
	}
	if (ev->kind == MT_FOLD_SAMPLE) {
		int fold = note_event(p, ev->event);
		if (fold <= 0)
			return fold < 0 ? MT_FOLD_ENOMEM : 0;
	}
	c->events++;
	c->kind[ev->kind]++;
	if (ev->time && (!c->time_first || ev->time < c->time_first))
		c->time_first = ev->time;
	if (ev->time > c->time_last)
		c->time_last = ev->time;
	uint64_t seq = p->seq++;

	switch (ev->kind) {
	case MT_FOLD_ALLOC: {
		if (stack_id(p, ev, &sid) || thread_index(p, ev, &tix))
			return MT_FOLD_ENOMEM;
		note_stack(c, ev);
		struct rec r = {
			.ptr = ev->ptr, .time = ev->time, .seq = seq, .size = ev->size,
			.pid = ev->pid, .tid = ev->tid, .stack = sid, .thread = tix,
			.input = p->input, .tseq = ev->seq, .has_tseq = !!(ev->have & MT_FOLD_W_SEQ),
		};
		c->seq_allocs += r.has_tseq;
		if (ev->have & MT_FOLD_W_EVERY) {
			r.mode = MODE_TRACE;
			r.scale = ev->every;
			r.points = 1;
			minmax(ev->every, &c->every_min, &c->every_max);
		} else {
			r.mode = MODE_SAMPLE;
			r.scale = ev->rate;
			r.points = ev->points > UINT32_MAX ? UINT32_MAX : (uint32_t)ev->points;
			minmax(ev->rate, &c->rate_min, &c->rate_max);
		}
		if (r.mode == MODE_TRACE)
			c->trace_allocs++;
		else
			c->sample_allocs++;
		if (r.scale == 1)
			c->full_allocs++;
		struct mt_fold_est *se = p->stack_est[sid], *te = p->threads[tix].est;
		struct weights w;
		alloc_weights(&r, &w);
		add_weights(&se[MT_FOLD_ALLOC_BYTES], &se[MT_FOLD_ALLOC_OBJECTS], &w);
		add_weights(&te[MT_FOLD_ALLOC_BYTES], &te[MT_FOLD_ALLOC_OBJECTS], &w);
		mt_fold_est_add_exact(&se[MT_FOLD_SAMPLES], 1);
		mt_fold_est_add_exact(&te[MT_FOLD_SAMPLES], 1);
		if (r.scale > 1) {
			/* inuse, peak and temp of this thread are estimates even
			 * if none of its allocations is among them */
			static const enum mt_fold_metric subsets[] = {
				MT_FOLD_INUSE_BYTES, MT_FOLD_INUSE_OBJECTS, MT_FOLD_PEAK_BYTES,
				MT_FOLD_PEAK_OBJECTS, MT_FOLD_TEMP_BYTES, MT_FOLD_TEMP_OBJECTS,
			};
			for (unsigned i = 0; i < sizeof(subsets) / sizeof(subsets[0]); i++)
				te[subsets[i]].sampled = 1;
		}
		if (!p->no_hists) {
			/* requested sizes: every allocation, ptr or not (the
			 * overall histogram is the stacks' summed at finish) */
			struct mt_fold_hist_cell *cell = stack_cell(p, sid, MT_FOLD_CELL_SIZES, r.size);
			if (!cell)
				return MT_FOLD_ENOMEM;
			add_weights(&cell->bytes, &cell->objects, &w);
		}
		if (!ev->ptr) {
			c->no_ptr_allocs++;
			return 0;
		}
		return push_rec(p, &r);
	}
	case MT_FOLD_FREE: {
		if (!ev->ptr)
			return 0;	/* free(NULL) */
		struct rec r = { .ptr = ev->ptr, .time = ev->time, .seq = seq,
				 .pid = ev->pid, .tid = ev->tid, .input = p->input, .is_free = 1,
				 .tseq = ev->seq, .has_tseq = !!(ev->have & MT_FOLD_W_SEQ) };
		c->seq_frees += r.has_tseq;
		return push_rec(p, &r);
	}
	case MT_FOLD_TOTALS:
		/* The sampler's rate (rate= since a3688fc): an input that no
		 * sample point fell on still has it. */
		if (ev->have & MT_FOLD_W_RATE)
			minmax(ev->rate, &c->rate_min, &c->rate_max);
		if (ev->process_scope) {
			if (process_index(p, ev->pid, &pix))
				return MT_FOLD_ENOMEM;
			add_totals(&p->procs[pix].totals, ev);
		} else {
			if (thread_index(p, ev, &tix))
				return MT_FOLD_ENOMEM;
			add_totals(&p->threads[tix].totals, ev);
		}
		return 0;
	case MT_FOLD_TICK:
		return mt_fold_timeline_add(&p->tl, p->input, ev);
	case MT_FOLD_NKINDS:
		break;
	case MT_FOLD_SAMPLE: {
		if (stack_id(p, ev, &sid) || thread_index(p, ev, &tix))
			return MT_FOLD_ENOMEM;
		note_stack(c, ev);
		struct mt_fold_est *se = p->stack_est[sid], *te = p->threads[tix].est;
		if (ev->freq)
			c->freq_samples++;
		if (!ev->freq && ev->period == 1) {	/* -c 1: every event */
			mt_fold_est_add_exact(&se[MT_FOLD_PERIOD], 1);
			mt_fold_est_add_exact(&te[MT_FOLD_PERIOD], 1);
		} else {
			mt_fold_est_add_sampled(&se[MT_FOLD_PERIOD], (double)ev->period, 1);
			mt_fold_est_add_sampled(&te[MT_FOLD_PERIOD], (double)ev->period, 1);
		}
		mt_fold_est_add_exact(&se[MT_FOLD_SAMPLES], 1);
		mt_fold_est_add_exact(&te[MT_FOLD_SAMPLES], 1);
		return 0;
	}
	case MT_FOLD_LOST:
		if (mt_fold_str_is(ev->reason, "no-totals")) {
			/* Not lost events: a process image whose exact totals
			 * never came, so its process's totals leave it out. */
			if (process_index(p, ev->pid, &pix))
				return MT_FOLD_ENOMEM;
			p->procs[pix].silent_images += ev->count;
			c->silent_images += ev->count;
			return 0;
		}
		if (mt_fold_str_is(ev->reason, "no-sampler")) {
			/* Not lost events either: an image that never ran the
			 * sampler, in no estimate and no exact total. */
			c->unsampled_images += ev->count;
			return 0;
		}
		if (mt_fold_str_is(ev->reason, "unseen") || mt_fold_str_is(ev->reason, "kernel") ||
		    mt_fold_str_is(ev->reason, "lost-samples")) {
			/* unseen: marker calls of one thread that the sampler
			 * made and the stream lacks, after LOST records, which
			 * name no thread: the same events, seen from the other
			 * end.  Each loss counts once: the stream's kernel
			 * losses or its unseen calls, whichever is larger. */
			mt_fold_u128 before = seg_lost(p);
			if (mt_fold_str_is(ev->reason, "unseen")) {
				p->seg_unseen += ev->count;
				c->unseen_events += ev->count;
			} else {
				p->seg_kernel += ev->count;
				c->lost_records++;
			}
			c->lost_events += seg_lost(p) - before;
			return 0;
		}
		c->lost_records++;
		c->lost_events += ev->count;
		return 0;
	}
	return 0;
}

static int rec_cmp(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->input != y->input)
		return x->input < y->input ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->ptr != y->ptr)
		return x->ptr < y->ptr ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The peak moment of a's process in perf time: --at's, or the process's
 * from its ticks.  @return : 0 with *t, -1 when it has none. */
static int peak_moment(const struct mt_fold_profile *p, const struct rec *a, uint64_t *t)
{
	if (p->at_time >= 0) {
		*t = (uint64_t)p->at_time;
		return 0;
	}
	const struct mt_fold_tl_proc *pr = mt_fold_timeline_proc(&p->tl, a->input, a->pid);
	if (!pr)
		return -1;
	*t = pr->peak_time;
	return 0;
}

/* Allocation a ended at time end (UINT64_MAX: live at the end of the
 * input), by free f (NULL: by no free seen): its part in the peak, temp
 * and lifetime figures.  @return : 0 or MT_FOLD_ENOMEM. */
static int end_alloc_w(struct mt_fold_profile *p, const struct rec *a, const struct rec *f,
		       uint64_t end, const struct weights *wp)
{
	struct mt_fold_est *se = p->stack_est[a->stack], *te = p->threads[a->thread].est;
	struct weights w = *wp;
	uint64_t t;
	if (peak_moment(p, a, &t) == 0) {
		if (a->time <= t && t < end) {
			add_weights(&se[MT_FOLD_PEAK_BYTES], &se[MT_FOLD_PEAK_OBJECTS], &w);
			add_weights(&te[MT_FOLD_PEAK_BYTES], &te[MT_FOLD_PEAK_OBJECTS], &w);
		}
	} else {
		p->counts.peak_unticked++;
	}
	if (p->live.buckets) {
		double lb = w.kind == 2 ? (double)w.size : w.kind == 1 ? w.wb : w.wb * (double)w.kb;
		if (mt_fold_live_add(&p->live, a->stack, a->time, end, lb,
				     w.kind == 2 ? 1.0 : w.wo, w.kind == 2 ? 0 : w.kind == 1 ? 1 : w.kb))
			return MT_FOLD_ENOMEM;
	}
	int same_thread = f && f->tid == a->tid && f->has_tseq && a->has_tseq;
	if (same_thread && f->tseq == a->tseq) {
		/* freed by its thread with no allocation of its in between */
		add_weights(&se[MT_FOLD_TEMP_BYTES], &se[MT_FOLD_TEMP_OBJECTS], &w);
		add_weights(&te[MT_FOLD_TEMP_BYTES], &te[MT_FOLD_TEMP_OBJECTS], &w);
	}
	struct mt_fold_hists *h = &p->hists;
	struct mt_fold_est *ho, *hb;
	if (p->no_hists)
		return 0;
	if (!f) {
		add_weights(&h->not_freed_bytes, &h->not_freed, &w);
		return 0;
	}
	add_weights(&h->freed_bytes, &h->freed, &w);
	uint64_t ns = f->time > a->time ? f->time - a->time : 0;
	struct mt_fold_hist_cell *cell = stack_cell(p, a->stack, MT_FOLD_CELL_LIFE_NS, ns);
	if (!cell)
		return MT_FOLD_ENOMEM;
	add_weights(&cell->bytes, &cell->objects, &w);
	if (same_thread && f->tseq >= a->tseq) {
		mt_fold_hist_slot(&h->life_allocs, f->tseq - a->tseq, &ho, &hb);
		add_weights(hb, ho, &w);
	}
	return 0;
}

static int end_alloc(struct mt_fold_profile *p, const struct rec *a, const struct rec *f,
		     uint64_t end)
{
	struct weights w;
	alloc_weights(a, &w);
	return end_alloc_w(p, a, f, end, &w);
}

int mt_fold_profile_finish(struct mt_fold_profile *p)
{
	if (p->finished)
		return 0;
	p->finished = 1;
	mt_fold_timeline_finish(&p->tl);
	if (p->at >= 0)
		p->at_time = (int64_t)(p->counts.time_first + (uint64_t)p->at);
	if (p->nrecs)
		qsort(p->recs, p->nrecs, sizeof(*p->recs), rec_cmp);
	size_t i = 0;
	int ret = mt_fold_live_init(&p->live, p->live_buckets, p->counts.time_first,
				    p->counts.time_last);
	while (i < p->nrecs) {
		size_t j = i;
		const struct rec *live = NULL;
		for (; j < p->nrecs && p->recs[j].input == p->recs[i].input &&
		       p->recs[j].pid == p->recs[i].pid && p->recs[j].ptr == p->recs[i].ptr; j++) {
			const struct rec *r = &p->recs[j];
			if (r->is_free) {
				if (live) {
					ret |= end_alloc(p, live, r, r->time);
					live = NULL;
				} else {
					p->counts.unmatched_frees++;
				}
			} else {
				if (live) {
					p->counts.implicit_frees++;
					ret |= end_alloc(p, live, NULL, r->time);
				}
				live = r;
			}
		}
		if (live) {
			struct mt_fold_est *se = p->stack_est[live->stack];
			struct mt_fold_est *te = p->threads[live->thread].est;
			struct weights w;
			alloc_weights(live, &w);
			add_weights(&se[MT_FOLD_INUSE_BYTES], &se[MT_FOLD_INUSE_OBJECTS], &w);
			add_weights(&te[MT_FOLD_INUSE_BYTES], &te[MT_FOLD_INUSE_OBJECTS], &w);
			ret |= end_alloc_w(p, live, NULL, UINT64_MAX, &w);
		}
		i = j;
	}
	free(p->recs);
	p->recs = NULL;
	p->nrecs = p->rec_cap = 0;
	ret |= mt_fold_live_finish(&p->live);
	/* the overall sizes and lifetimes: the stacks' cells summed */
	for (uint32_t sid = 0; sid < p->cells_cap; sid++) {
		const struct mt_fold_cells *c = &p->cells[sid];
		for (uint32_t k = 0; k < c->n; k++) {
			const struct mt_fold_hist_cell *x = &c->v[k];
			struct mt_fold_hist *h = x->which == MT_FOLD_CELL_SIZES ? &p->hists.sizes
										: &p->hists.life_ns;
			mt_fold_est_merge(&h->objects[x->bucket], &x->objects);
			mt_fold_est_merge(&h->bytes[x->bucket], &x->bytes);
			h->any = 1;
		}
	}
	return ret ? MT_FOLD_ENOMEM : 0;
}

void mt_fold_profile_histograms(struct mt_fold_profile *p, int on)
{
	p->no_hists = !on;
}

void mt_fold_profile_live_buckets(struct mt_fold_profile *p, unsigned n)
{
	p->live_buckets = n > MT_FOLD_LIVE_MAX_BUCKETS ? MT_FOLD_LIVE_MAX_BUCKETS : n;
}

const struct mt_fold_live *mt_fold_profile_live(const struct mt_fold_profile *p)
{
	return p->live.buckets ? &p->live : NULL;
}

void mt_fold_profile_at(struct mt_fold_profile *p, uint64_t ns_from_start)
{
	p->at = ns_from_start > INT64_MAX ? INT64_MAX : (int64_t)ns_from_start;
}

int64_t mt_fold_profile_at_time(const struct mt_fold_profile *p)
{
	return p->at_time;
}

const struct mt_fold_timeline *mt_fold_profile_timeline(const struct mt_fold_profile *p)
{
	return &p->tl;
}

const struct mt_fold_hists *mt_fold_profile_hists(const struct mt_fold_profile *p)
{
	return &p->hists;
}

const struct mt_fold_cells *mt_fold_profile_stack_cells(const struct mt_fold_profile *p,
							uint32_t id)
{
	static const struct mt_fold_cells none;
	return id < p->cells_cap ? &p->cells[id] : &none;
}

/* Why getline returned -1 after line lineno: the end of the input, or a
 * line it could not buffer (ENOMEM: a line larger than memory allows;
 * getline says so only in errno, not in ferror), or a read error. */
static int read_end(struct mt_fold_profile *p, FILE *f, uint64_t lineno)
{
	if (ferror(f))
		return MT_FOLD_EIO;
	if (feof(f))
		return 0;
	p->read_lineno = lineno + 1;	/* the line that could not be read */
	return errno == ENOMEM ? MT_FOLD_ENOMEM : MT_FOLD_EIO;
}

int mt_fold_profile_read(struct mt_fold_profile *p, FILE *f, const char *name,
			 mt_fold_bad_line_fn bad, void *ctx)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	uint64_t lineno = 0;
	int ret = 0;
	struct mt_fold_event ev;

	if (p->finished)
		return MT_FOLD_ESTATE;
	p->read_lineno = 0;
	p->seg_kernel = p->seg_unseen = 0;	/* a new stream */
	if (p->locs)
		mt_fold_locs_file(p->locs);
	while ((len = getline(&line, &cap, f)) >= 0) {
		p->read_lineno = ++lineno;
		p->counts.lines++;
		if (len && line[len - 1] == '\n')
			len--;
		if (len && line[0] == '#') {
			if (mt_fold_line_header(line, (size_t)len) == MT_FOLD_EVERSION) {
				/* Lines that follow may mean something else: stop
				 * here rather than fold them wrongly. */
				p->counts.bad_lines++;
				if (bad)
					bad(ctx, name, lineno, MT_FOLD_EVERSION, NULL);
				goto skip_rest;
			}
			if (!p->locs && len > 9 && memcmp(line, "# module ", 9) == 0) {
				if (!(p->locs = mt_fold_locs_new(0))) {
					ret = MT_FOLD_ENOMEM;
					goto out;
				}
				p->own_locs = 1;
			}
			if (p->locs && mt_fold_locs_comment(p->locs, line, (size_t)len) < 0) {
				ret = MT_FOLD_ENOMEM;
				goto out;
			}
			continue;
		}
		int err = mt_fold_line_parse(line, (size_t)len, &ev);
		if (err) {
			p->counts.bad_lines++;
			if (bad)
				bad(ctx, name, lineno, err, ev.bad_key);
			continue;
		}
		if (p->locs && mt_fold_locs_active(p->locs) && ev.frames.len &&
		    mt_fold_locs_frames(p->locs, ev.frames, &ev.frames)) {
			ret = MT_FOLD_ENOMEM;
			goto out;
		}
		ret = mt_fold_profile_add(p, &ev);
		if (ret)
			goto out;
	}
	ret = read_end(p, f, lineno);
	goto out;
skip_rest:
	/* Count what is skipped so that nothing goes unreported. */
	while ((len = getline(&line, &cap, f)) >= 0) {
		p->read_lineno = ++lineno;
		p->counts.lines++;
		if (!(len && line[0] == '#'))
			p->counts.bad_lines++;
	}
	ret = read_end(p, f, lineno);
out:
	free(line);
	return ret;
}

unsigned mt_fold_profile_prefix_frames(const struct mt_fold_profile *p)
{
	return !!(p->prefix & MT_FOLD_PREFIX_COMM) + !!(p->prefix & MT_FOLD_PREFIX_PID) +
	       !!(p->prefix & MT_FOLD_PREFIX_TID) + !!(p->prefix & MT_FOLD_PREFIX_LABELS);
}

uint64_t mt_fold_profile_read_line(const struct mt_fold_profile *p)
{
	return p->read_lineno;
}

uint32_t mt_fold_profile_stack_count(const struct mt_fold_profile *p)
{
	return mt_fold_strtab_count(p->stacks);
}

const char *mt_fold_profile_stack(const struct mt_fold_profile *p, uint32_t id,
				  size_t *len, const struct mt_fold_est **est)
{
	if (est)
		*est = p->stack_est[id];
	return mt_fold_strtab_get(p->stacks, id, len);
}

uint32_t mt_fold_profile_thread_count(const struct mt_fold_profile *p)
{
	return mt_fold_strtab_count(p->threads_by_key);
}

const struct mt_fold_thread *mt_fold_profile_thread(const struct mt_fold_profile *p,
						    uint32_t i)
{
	return &p->threads[i];
}

uint32_t mt_fold_profile_process_count(const struct mt_fold_profile *p)
{
	return mt_fold_strtab_count(p->procs_by_key);
}

const struct mt_fold_process *mt_fold_profile_process(const struct mt_fold_profile *p,
						      uint32_t i)
{
	return &p->procs[i];
}

const struct mt_fold_counts *mt_fold_profile_counts(const struct mt_fold_profile *p)
{
	return &p->counts;
}

enum mt_fold_metric mt_fold_profile_default_metric(const struct mt_fold_profile *p)
{
	if (!p->counts.kind[MT_FOLD_ALLOC] && p->counts.kind[MT_FOLD_SAMPLE])
		return MT_FOLD_PERIOD;
	return MT_FOLD_ALLOC_BYTES;
}
