/* symbolize/events.h: the meaning of mt's capture events. */
#include "symbolize/events.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/arch.h"
#include "symbolize/hashmap.h"

/* ---- event roles, from evsel names (capture-events.md) ------------------ */

enum role {
	ROLE_UNKNOWN = 0,	/* not yet classified */
	ROLE_SAMPLE,		/* event mode and anything else */
	ROLE_MT_ALLOC,
	ROLE_MT_FREE,
	ROLE_MT_TOTALS,
	ROLE_MT_TICK,
	ROLE_TRACE_ENTRY,	/* probe_LIB:FN */
	ROLE_TRACE_RETURN,	/* probe_LIB:FN__return */
};

static const char *const alloc_fns[] = {
	"malloc", "calloc", "realloc", "reallocarray", "posix_memalign",
	"aligned_alloc", "memalign", "valloc", "pvalloc", "free",
};
#define NR_FNS 10
#define FN_REALLOC 2
#define FN_FREE 9

struct evinfo {
	enum role role;
	int fn;			/* trace and mt:* roles: index in alloc_fns */
	int paired;		/* trace entry: its __return event exists */
	char attr_name[48];	/* made from the attr (see attr_name), on first need */
};

/* ---- pending trace entries --------------------------------------------- */

struct pending {
	uint32_t tid;
	int fn;
	int internal;		/* entered while another entry was pending */
	char *line_head;	/* "alloc\tPID/TID\tTIME\tCOMM\tsize=N" */
	char *line_tail;	/* " fn=... every=N\tSTACK end=R\n" */
	uint64_t old_ptr;	/* realloc, reallocarray */
	uint64_t memptr;	/* posix_memalign: where the pointer goes */
	uint64_t size;
	int overflow;		/* calloc, reallocarray: the size does not fit */
	uint64_t time;		/* of the entry: the lines' time */
	struct pending *next;
};



/* ---- the state ---------------------------------------------------------- */

struct mt_unwind_events {
	struct mt_unwind_events_opts o;
	const struct mt_perf_reader *reader;
	const struct mt_perf_features *features;
	struct mt_unwind_emit *emit;
	struct mt_unwind_out *out;	/* the emit's lines */
	struct mt_unwind_maps *maps;
	mt_unwind_stack_fn stack;
	void *stack_ctx;
	struct mt_unwind_events_stats st;
	int nomem;

	struct evinfo *ev;		/* by evsel index */
	size_t nr_ev;
	struct pending *pending;	/* trace entries waiting for their return */
	/* totals lines awaiting an exec or the end (capture-events.md): process
	 * reports, and the thread reports made at an exec (tid nonzero), which
	 * a later report of the same thread supersedes if the exec failed */
	struct totals_pending {
		uint32_t pid, tid;
		char *line;
		struct totals_pending *next;
	} *totals;
	/* pid -> enum image_state of its current image: those that run the
	 * sampler and have sent no process totals yet are found at an exec or
	 * at the end (killed, a bare exit system call, no way to the capture). */
	struct mt_unwind_hashmap images;
	/* pid -> 1 while its image is a forked copy of its parent's (no exec
	 * since): its totals count frees of blocks it inherited, which its
	 * own allocations do not explain (totals lines say forked=1). */
	struct mt_unwind_hashmap forked;
	int sampler_input;		/* -1 not known yet, else 0/1 */
	/* mt:alloc / mt:free events seen per thread, against the sampler's
	 * counts of its marker calls (see marks_check) */
	struct marks {
		uint32_t pid, tid;	/* pid 0: empty slot (0 is never a user pid) */
		uint64_t seen[2], reported[2];
	} *marks, marks_scratch;
	size_t nr_marks, cap_marks;
};

/* The name the input gives e: its own, else the perf.data file's
 * EVENT_DESC feature's, else "". */
static const char *event_name(struct mt_unwind_events *s, const struct mt_perf_evsel *e)
{
	if (e->name && *e->name)
		return e->name;
	return mt_perf_features_event_name(s->features, e, mt_perf_reader_nr_evsels(s->reader));
}

/* A name for an event the input names nowhere (a perf.data file read from
 * a pipe: its names come after the data), from its attr: perf's generic
 * name (cpu-clock), else type and config; "#INDEX" after it when another
 * event has the same type and config, or that name, so that two events
 * never share a name (mt-fold does not add up different events). */
static const char *attr_name(struct mt_unwind_events *s, struct evinfo *ei,
			     const struct mt_perf_evsel *e)
{
	if (ei->attr_name[0])
		return ei->attr_name;
	const char *g = mt_perf_event_name(e->attr.type, e->attr.config);
	int k = g ? snprintf(ei->attr_name, sizeof(ei->attr_name), "%s", g)
		  : snprintf(ei->attr_name, sizeof(ei->attr_name), "type=%u,config=%#llx",
			     e->attr.type, (unsigned long long)e->attr.config);
	for (size_t i = 0; i < mt_perf_reader_nr_evsels(s->reader); i++) {
		const struct mt_perf_evsel *o = mt_perf_reader_evsel(s->reader, i);
		const char *named = event_name(s, o);
		if (o != e && ((o->attr.type == e->attr.type && o->attr.config == e->attr.config) ||
			       strcmp(named, ei->attr_name) == 0)) {
			if (k > 0 && (size_t)k < sizeof(ei->attr_name))
				snprintf(ei->attr_name + k, sizeof(ei->attr_name) - (size_t)k, "#%d",
					 e->index);
			break;
		}
	}
	return ei->attr_name;
}

static struct evinfo *evinfo_of(struct mt_unwind_events *s, const struct mt_perf_evsel *e)
{
	size_t n = mt_perf_reader_nr_evsels(s->reader);
	if (s->nr_ev < n) {
		struct evinfo *v = realloc(s->ev, n * sizeof(*v));
		if (!v) {
			s->nomem = 1;
			return NULL;
		}
		memset(v + s->nr_ev, 0, (n - s->nr_ev) * sizeof(*v));
		s->ev = v;
		s->nr_ev = n;
	}
	struct evinfo *ei = &s->ev[e->index];
	if (ei->role != ROLE_UNKNOWN)
		return ei;
	const char *name = event_name(s, e);
	ei->role = ROLE_SAMPLE;
	if (strcmp(name, "mt:alloc") == 0)
		ei->role = ROLE_MT_ALLOC;
	else if (strcmp(name, "mt:free") == 0)
		ei->role = ROLE_MT_FREE;
	else if (strcmp(name, "mt:totals") == 0)
		ei->role = ROLE_MT_TOTALS;
	else if (strcmp(name, "mt:tick") == 0)
		ei->role = ROLE_MT_TICK;
	else if (strncmp(name, "probe_", 6) == 0 && strchr(name, ':')) {
		const char *fn = strchr(name, ':') + 1;
		size_t len = strlen(fn);
		int ret = len > 8 && strcmp(fn + len - 8, "__return") == 0;
		if (ret)
			len -= 8;
		for (int i = 0; i < NR_FNS; i++)
			if (strlen(alloc_fns[i]) == len && strncmp(fn, alloc_fns[i], len) == 0) {
				ei->role = ret ? ROLE_TRACE_RETURN : ROLE_TRACE_ENTRY;
				ei->fn = i;
			}
		if (ei->role == ROLE_TRACE_ENTRY) {
			/* Paired when the same library's FN__return event exists. */
			char want[512];
			snprintf(want, sizeof(want), "%s__return", name);
			for (size_t i = 0; i < n; i++) {
				const struct mt_perf_evsel *o = mt_perf_reader_evsel(s->reader, i);
				if (o->name && strcmp(o->name, want) == 0)
					ei->paired = 1;
			}
		}
	}
	return ei;
}

/* A register's value by perf index (symbolize/arch.h names the ones used). */
static uint64_t preg(const struct mt_perf_sample *smp, int idx)
{
	if (smp->regs_abi == 0 || !(smp->regs_mask & (1ULL << idx)))
		return 0;
	unsigned k = (unsigned)__builtin_popcountll(smp->regs_mask & ((1ULL << idx) - 1));
	return k < smp->nr_regs ? smp->regs[k] : 0;
}
#define R_AX MT_UNWIND_PREG_AX
#define R_CX MT_UNWIND_PREG_CX
#define R_DX MT_UNWIND_PREG_DX
#define R_SI MT_UNWIND_PREG_SI
#define R_DI MT_UNWIND_PREG_DI
#define R_SP MT_UNWIND_PREG_SP
#define R_R8 MT_UNWIND_PREG_R8
#define R_R9 MT_UNWIND_PREG_R9
#define R_R10 MT_UNWIND_PREG_R10
#define R_R11 MT_UNWIND_PREG_R11
#define R_R12 MT_UNWIND_PREG_R12
#define R_R13 MT_UNWIND_PREG_R13
#define R_R14 MT_UNWIND_PREG_R14
#define R_R15 MT_UNWIND_PREG_R15


static int idset_has(const struct mt_unwind_idset *s, uint32_t x)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return 1;
	return 0;
}

/* --pid/--tid leave this event out (not counted: see filtered). */
int mt_unwind_events_excluded(const struct mt_unwind_events *s, uint32_t pid, uint32_t tid)
{
	return (s->o.pids && s->o.pids->n && !idset_has(s->o.pids, pid)) ||
	       (s->o.tids && s->o.tids->n && !idset_has(s->o.tids, tid));
}

static int filtered(struct mt_unwind_events *s, uint32_t pid, uint32_t tid)
{
	if (mt_unwind_events_excluded(s, pid, tid)) {
		s->st.filtered++;
		return 1;
	}
	return 0;
}

static uint64_t period_of(const struct mt_perf_sample *smp)
{
	if (smp->sample_type & PERF_SAMPLE_PERIOD)
		return smp->period;
	return smp->evsel->attr.freq ? 1 : smp->evsel->attr.sample_period;
}

/* ---- trace mode --------------------------------------------------------- */

static struct pending *pending_top(struct mt_unwind_events *s, uint32_t tid, int fn)
{
	for (struct pending *p = s->pending; p; p = p->next)
		if (p->tid == tid && (fn < 0 || p->fn == fn))
			return p;
	return NULL;
}

static void trace_entry(struct mt_unwind_events *s, const struct mt_perf_sample *smp,
			const struct evinfo *ei)
{
	int internal = pending_top(s, smp->tid, -1) != NULL;
	uint64_t di = preg(smp, R_DI), si = preg(smp, R_SI), dx = preg(smp, R_DX);
	uint64_t size = 0, old = 0;
	int overflow = 0;
	switch (ei->fn) {
	case 0: case 7: case 8: size = di; break;		/* malloc valloc pvalloc */
	case 1: overflow = __builtin_mul_overflow(di, si, &size); break;	/* calloc */
	case 2: old = di; size = si; break;			/* realloc */
	case 3:							/* reallocarray */
		old = di;
		overflow = __builtin_mul_overflow(si, dx, &size);
		break;
	case 4: size = dx; break;				/* posix_memalign */
	case 5: case 6: size = si; break;			/* aligned_alloc memalign */
	case FN_FREE: old = di; break;
	}
	if (internal && !ei->paired) {
		s->st.internal++;
		return;
	}
	if (!internal && filtered(s, smp->pid, smp->tid))
		internal = 1;	/* still tracked so its return pairs */
	uint64_t every = period_of(smp);
	if (ei->fn == FN_FREE) {
		if (!internal) {
			mt_unwind_emit_head(s->emit, s->out, MT_UNWIND_K_FREE, smp->pid, smp->tid, smp->time);
			mt_unwind_out_str(s->out, "ptr=0x");
			mt_unwind_out_x64(s->out, old);
			mt_unwind_out_str(s->out, " every=");
			mt_unwind_out_u64(s->out, every);
			mt_unwind_emit_nostack(s->emit, s->out);
		} else {
			s->st.internal++;
		}
		if (!ei->paired)
			return;
	}
	if (!ei->paired) {
		/* No return probe (-c N): a size that does not fit (calloc's or
		 * reallocarray's product wrapped) or above PTRDIFF_MAX cannot be
		 * allocated, and posix_memalign refuses an alignment that is not
		 * a power of two multiple of sizeof(void *) (EINVAL), so those
		 * calls failed; any other is taken as done. */
		int bad_align = ei->fn == 4 && (!si || (si & (si - 1)) || si % 8);
		if (overflow || size > (uint64_t)PTRDIFF_MAX || bad_align) {
			s->st.failed++;
			return;
		}
		mt_unwind_emit_head(s->emit, s->out, MT_UNWIND_K_ALLOC, smp->pid, smp->tid, smp->time);
		mt_unwind_emit_kv(s->out, "size", size, 1);
		mt_unwind_emit_kx(s->out, "ptr", 0);
		mt_unwind_out_str(s->out, " fn=");
		mt_unwind_out_str(s->out, alloc_fns[ei->fn]);
		mt_unwind_emit_kv(s->out, "every", every, 0);
		s->stack(s->stack_ctx, s->out, smp, 0);
		return;
	}
	/* Paired: format now (the maps are those of now), write at the return. */
	struct pending *p = calloc(1, sizeof(*p));
	if (!p) {
		s->nomem = 1;
		return;
	}
	p->tid = smp->tid;
	p->fn = ei->fn;
	p->internal = internal;
	p->old_ptr = old;
	p->memptr = ei->fn == 4 ? di : 0;
	p->size = size;
	p->overflow = overflow;
	p->time = smp->time;
	if (!internal && ei->fn != FN_FREE) {
		struct mt_unwind_out tmp;
		mt_unwind_out_init_mem(&tmp);
		mt_unwind_emit_head(s->emit, &tmp, MT_UNWIND_K_ALLOC, smp->pid, smp->tid, smp->time);
		mt_unwind_emit_kv(&tmp, "size", size, 1);
		p->line_head = mt_unwind_out_detach(&tmp);
		mt_unwind_out_init_mem(&tmp);
		mt_unwind_out_str(&tmp, " fn=");
		mt_unwind_out_str(&tmp, alloc_fns[ei->fn]);
		mt_unwind_emit_kv(&tmp, "every", every, 0);
		s->stack(s->stack_ctx, &tmp, smp, 0);
		p->line_tail = mt_unwind_out_detach(&tmp);
		if (!p->line_head || !p->line_tail) {
			s->nomem = 1;
			free(p->line_head);
			free(p->line_tail);
			free(p);
			return;
		}
	}
	p->next = s->pending;
	s->pending = p;
}

static void pending_unlink(struct mt_unwind_events *s, struct pending *p)
{
	for (struct pending **pp = &s->pending; *pp; pp = &(*pp)->next)
		if (*pp == p) {
			*pp = p->next;
			break;
		}
	free(p->line_head);
	free(p->line_tail);
	free(p);
}

/* The 8 bytes at addr from the sample's stack dump, or 0 when outside it. */
static uint64_t memptr_read(const struct mt_perf_sample *smp, uint64_t addr)
{
	uint64_t sp = preg(smp, R_SP), v;
	struct mt_unwind_memory dump = mt_unwind_sample_dump(smp, sp);
	return sp && mt_unwind_memory_read(&dump, addr, &v) == 0 ? v : 0;
}

/* A paired call that failed: its line, formatted at the entry (which
 * counted it as an alloc event), is not written. */
static void trace_failed(struct mt_unwind_events *s)
{
	s->st.failed++;
	s->emit->events--;
	s->emit->by_kind[MT_UNWIND_K_ALLOC]--;
}

static void trace_return(struct mt_unwind_events *s, const struct mt_perf_sample *smp,
			 const struct evinfo *ei)
{
	struct pending *p = pending_top(s, smp->tid, ei->fn);
	if (!p) {
		s->st.unpaired++;
		return;
	}
	uint64_t ret = preg(smp, R_AX);
	/* NULL: failed, but for size 0, which may give NULL; a size that does
	 * not fit (it wrapped to 0) always fails. */
	int allocated = ret || (p->size == 0 && !p->overflow);
	if (p->internal || p->fn == FN_FREE) {
		if (p->internal)
			s->st.internal++;
		pending_unlink(s, p);
		return;
	}
	if (p->fn == 4) {
		/* posix_memalign: AX is 0 or an error number, and the block's
		 * address went to *memptr, which the return probe's stack dump
		 * holds when memptr is on the stack (mt-capture since 2026-11-29). */
		if ((uint32_t)ret != 0) {	/* an int: EAX */
			trace_failed(s);	/* failed: nothing allocated */
			pending_unlink(s, p);
			return;
		}
		ret = memptr_read(smp, p->memptr);
		if (!ret)
			s->st.memptr_unknown++;
		allocated = 1;
	}
	/* realloc that moved or freed: the old block is gone.  Both lines carry
	 * the entry's time, the free first: stamped with the return's time, the
	 * free of a block resized in place sorted after its new allocation in
	 * mt-fold and "freed" it. */
	if ((p->fn == FN_REALLOC || p->fn == 3) && p->old_ptr && allocated) {
		mt_unwind_emit_head(s->emit, s->out, MT_UNWIND_K_FREE, smp->pid, smp->tid, p->time);
		mt_unwind_out_str(s->out, "ptr=0x");
		mt_unwind_out_x64(s->out, p->old_ptr);
		mt_unwind_out_str(s->out, " every=1");
		mt_unwind_emit_nostack(s->emit, s->out);
	}
	if (allocated) {
		mt_unwind_out_str(s->out, p->line_head);
		mt_unwind_emit_kx(s->out, "ptr", ret);
		mt_unwind_out_str(s->out, p->line_tail);
	} else {
		trace_failed(s);
	}
	pending_unlink(s, p);
}

/* ---- sample mode -------------------------------------------------------- */

/* The mark counters of (pid, tid), created zero (open addressing, linear
 * probing, at most half full). */
static struct marks *marks_of(struct mt_unwind_events *s, uint32_t pid, uint32_t tid)
{
	if (pid == 0)
		pid = UINT32_MAX;	/* keep 0 for empty slots */
	if (2 * (s->nr_marks + 1) > s->cap_marks) {
		size_t cap = s->cap_marks ? 2 * s->cap_marks : 64;
		struct marks *m = calloc(cap, sizeof(*m));
		if (!m) {	/* counted nowhere: the run fails */
			s->nomem = 1;
			memset(&s->marks_scratch, 0, sizeof(s->marks_scratch));
			return &s->marks_scratch;
		}
		for (size_t i = 0; i < s->cap_marks; i++) {
			struct marks *o = &s->marks[i];
			if (!o->pid)
				continue;
			size_t j = (o->pid * 0x9e3779b1u ^ o->tid * 0x85ebca6bu) & (cap - 1);
			while (m[j].pid)
				j = (j + 1) & (cap - 1);
			m[j] = *o;
		}
		free(s->marks);
		s->marks = m;
		s->cap_marks = cap;
	}
	size_t j = (pid * 0x9e3779b1u ^ tid * 0x85ebca6bu) & (s->cap_marks - 1);
	while (s->marks[j].pid) {
		if (s->marks[j].pid == pid && s->marks[j].tid == tid)
			return &s->marks[j];
		j = (j + 1) & (s->cap_marks - 1);
	}
	s->marks[j].pid = pid;
	s->marks[j].tid = tid;
	s->nr_marks++;
	return &s->marks[j];
}

/* An exec replaces the sampler: its counts (and what was seen) start again.
 * The slots stay used: few execs, and they are found again by key. */
static void marks_exec(struct mt_unwind_events *s, uint32_t pid)
{
	if (pid == 0)
		pid = UINT32_MAX;
	for (size_t i = 0; i < s->cap_marks; i++)
		if (s->marks[i].pid == pid) {
			memset(s->marks[i].seen, 0, sizeof(s->marks[i].seen));
			memset(s->marks[i].reported, 0, sizeof(s->marks[i].reported));
		}
}

/* A thread-scope report: the sampler made want[0] mt:alloc and want[1]
 * mt:free marker calls in thread tid.  Events the stream lacks, not yet
 * reported, become `lost` lines: reason=dropped when no LOST record came so
 * far (dropped silently on the way), else reason=unseen (the count
 * may include events the LOST records counted: they name no thread). */
static void marks_check(struct mt_unwind_events *s, uint32_t pid, uint32_t tid, uint64_t time,
			const uint64_t want[2])
{
	static const char *const what[2] = { "alloc", "free" };
	struct marks *m = marks_of(s, pid, tid);
	for (int k = 0; k < 2; k++) {
		if (want[k] <= m->seen[k] + m->reported[k])
			continue;
		uint64_t n = want[k] - m->seen[k] - m->reported[k];
		m->reported[k] += n;
		int silent = s->st.lost_records == 0;
		if (silent)
			s->st.marks_dropped += n;
		else
			s->st.marks_unseen += n;
		mt_unwind_emit_lost(s->emit, pid, tid, time, n, silent ? "dropped" : "unseen", what[k]);
	}
}

/* What mt-unwind knows of a process's current image (an exec or a fork
 * starts a new one). */
enum image_state {
	IMAGE_UNKNOWN,		/* no sign of the sampler (yet) */
	IMAGE_UNREPORTED,	/* runs the sampler, no process totals so far */
	IMAGE_REPORTED,		/* sent its process totals */
};

static enum image_state image_state(struct mt_unwind_events *s, uint32_t pid)
{
	uint64_t v;
	return mt_unwind_hashmap_get(&s->images, pid, &v) ? (enum image_state)v : IMAGE_UNKNOWN;
}

static void image_set(struct mt_unwind_events *s, uint32_t pid, enum image_state st)
{
	if (mt_unwind_hashmap_put(&s->images, pid, st) != 0)
		s->nomem = 1;
}

/* pid's image runs the sampler: it mapped libmt-sampler.so, or (a child
 * forked without exec, whose MMAPs are its parent's) a marker call of its
 * own came.  A vfork child, which shares its parent's sampler and makes no
 * marker call, is never counted. */
static void image_has_sampler(struct mt_unwind_events *s, uint32_t pid)
{
	if (image_state(s, pid) == IMAGE_UNKNOWN)
		image_set(s, pid, IMAGE_UNREPORTED);
}

/* pid's current image ends (exec, or the end of the input): one that ran
 * the sampler and never sent its process totals becomes a `lost` line, so
 * that a reader of the totals knows they leave it out. */
static void image_end(struct mt_unwind_events *s, uint32_t pid, uint64_t time)
{
	enum image_state st = image_state(s, pid);
	if (st == IMAGE_UNREPORTED) {
		s->st.silent_images++;
		mt_unwind_emit_lost(s->emit, pid, pid, time, 1, "no-totals", NULL);
	}
	if (st != IMAGE_UNKNOWN)	/* processes without the sampler get no entry */
		image_set(s, pid, IMAGE_UNKNOWN);
}

/* Is the input a sample-mode capture (it has the sampler's events)? */
static int is_sampler_input(struct mt_unwind_events *s)
{
	if (s->sampler_input < 0) {
		s->sampler_input = 0;
		for (size_t i = 0; i < mt_perf_reader_nr_evsels(s->reader); i++)
		{
			const struct evinfo *ei = evinfo_of(s, mt_perf_reader_evsel(s->reader, i));
			if (ei && ei->role == ROLE_MT_TOTALS)
				s->sampler_input = 1;
		}
	}
	return s->sampler_input;
}

/* pid's current image ends (its exec or its exit): in a sample-mode
 * capture, one with code mapped and no libmt-sampler.so among it never ran
 * the sampler, so none of its allocations is in the capture: a `lost` line
 * reason=no-sampler says so.  (A child forked without exec has its
 * parent's mappings, the sampler's among them.) */
static void image_unsampled_check(struct mt_unwind_events *s, uint32_t pid, uint64_t time)
{
	struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, pid);
	if (!sp || !sp->nr || mt_unwind_events_excluded(s, pid, pid) || !is_sampler_input(s))
		return;
	for (size_t i = 0; i < sp->nr; i++)
		if (mt_unwind_is_sampler_file(sp->maps[i].path))
			return;
	s->st.unsampled_images++;
	mt_unwind_emit_lost(s->emit, pid, pid, time, 1, "no-sampler", NULL);
	const struct mt_unwind_thread *th = mt_unwind_maps_thread(s->maps, pid);
	size_t used = strlen(s->st.unsampled_comms);
	if (th && th->comm[0] && used + strlen(th->comm) + 3 < sizeof(s->st.unsampled_comms) &&
	    !strstr(s->st.unsampled_comms, th->comm))
		snprintf(s->st.unsampled_comms + used, sizeof(s->st.unsampled_comms) - used, "%s%s",
			 used ? ", " : "", th->comm);
}

static void totals_flush(struct mt_unwind_events *s, uint32_t pid, int all)
{
	for (struct totals_pending **pp = &s->totals; *pp;) {
		struct totals_pending *t = *pp;
		if (all || t->pid == pid) {
			mt_unwind_out_str(s->out, t->line);
			*pp = t->next;
			free(t->line);
			free(t);
		} else {
			pp = &t->next;
		}
	}
}

/* A held totals line was replaced by a later one: it is not written. */
static void totals_superseded(struct mt_unwind_events *s)
{
	s->st.superseded++;
	s->emit->events--;
	s->emit->by_kind[MT_UNWIND_K_TOTALS]--;
}

static struct totals_pending **totals_find(struct mt_unwind_events *s, uint32_t pid, uint32_t tid)
{
	struct totals_pending **pp = &s->totals;
	while (*pp && ((*pp)->pid != pid || (*pp)->tid != tid))
		pp = &(*pp)->next;
	return pp;
}

/* Hold line (of pid; of its thread tid, or 0 for the process) until the
 * exec or the end, in place of the one held so far. */
static void totals_hold(struct mt_unwind_events *s, uint32_t pid, uint32_t tid,
			struct mt_unwind_out *line)
{
	struct totals_pending *t = *totals_find(s, pid, tid);
	if (t) {
		free(t->line);
		totals_superseded(s);
	} else {
		if (!(t = calloc(1, sizeof(*t)))) {
			s->nomem = 1;
			mt_unwind_out_release(line);
			return;
		}
		t->pid = pid;
		t->tid = tid;
		t->next = s->totals;
		s->totals = t;
	}
	if (!(t->line = mt_unwind_out_detach(line)))
		s->nomem = 1;
}

static void mt_totals(struct mt_unwind_events *s, const struct mt_perf_sample *smp)
{
	uint64_t scope = preg(smp, R_DI);
	uint32_t who = (uint32_t)preg(smp, R_R10);
	int process = scope == 2, at_exec = scope == 3;
	uint32_t pid = smp->pid, tid = process ? smp->pid : who;
	if (process)
		pid = tid = who ? who : smp->pid;
	if (filtered(s, pid, tid))
		return;
	struct mt_unwind_out tmp, *out = s->out;
	if (process || at_exec) {
		mt_unwind_out_init_mem(&tmp);
		out = &tmp;
	}
	mt_unwind_emit_head(s->emit, out, MT_UNWIND_K_TOTALS, pid, tid, smp->time);
	mt_unwind_out_str(out, process ? "scope=process" : "scope=thread");
	mt_unwind_emit_kv(out, "alloc_bytes", preg(smp, R_SI), 0);
	mt_unwind_emit_kv(out, "allocs", preg(smp, R_DX), 0);
	mt_unwind_emit_kv(out, "frees", preg(smp, R_CX), 0);
	mt_unwind_emit_kv(out, "freed_bytes", preg(smp, R_R8), 0);
	mt_unwind_emit_kv(out, "peak_bytes", preg(smp, R_R9), 0);
	if (process)
		mt_unwind_emit_kv(out, "peak_error", preg(smp, R_AX), 0);
	uint64_t forked;
	if (mt_unwind_hashmap_get(&s->forked, pid, &forked) && forked)
		mt_unwind_emit_kv(out, "forked", 1, 0);
	/* Each marker call is one allocation or one release: larger values are
	 * not mark counts (a sampler from before R13/R14 carried them). */
	uint64_t want[2] = { preg(smp, R_R13), preg(smp, R_R14) };
	int have_marks = want[0] <= preg(smp, R_DX) && want[1] <= preg(smp, R_CX);
	if (have_marks) {
		mt_unwind_emit_kv(out, "alloc_marks", want[0], 0);
		mt_unwind_emit_kv(out, "free_marks", want[1], 0);
	}
	/* The sampling rate, tagged "mt" in its top 16 bits (an older sampler
	 * left R15 as it was): what an input without any sample point needs
	 * for the intervals of its estimates (0 at that rate). */
	uint64_t r15 = preg(smp, R_R15);
	if (r15 >> 48 == 0x6d74 && (r15 & 0xffffffffffffULL))
		mt_unwind_emit_kv(out, "rate", r15 & 0xffffffffffffULL, 0);
	mt_unwind_emit_nostack(s->emit, out);
	if (process) {
		/* Only the last process report before an exec (or the end) counts. */
		image_set(s, pid, IMAGE_REPORTED);
		totals_hold(s, pid, 0, &tmp);
		return;
	}
	image_has_sampler(s, pid);
	if (have_marks)
		marks_check(s, pid, tid, smp->time, want);
	if (at_exec) {
		totals_hold(s, pid, tid, &tmp);
		return;
	}
	/* The thread's counts go on from those it reported at an exec that
	 * failed: this report replaces that one. */
	struct totals_pending **pp = totals_find(s, pid, tid), *t = *pp;
	if (t) {
		*pp = t->next;
		free(t->line);
		free(t);
		totals_superseded(s);
	}
}

/* " seq=N" when the sample has R9 (mt:alloc and mt:free of a sampler with
 * seq; an older one's mask lacks it). */
static void put_seq(struct mt_unwind_out *out, const struct mt_perf_sample *smp)
{
	if (smp->regs_abi && (smp->regs_mask >> MT_UNWIND_PREG_R9 & 1))
		mt_unwind_emit_kv(out, "seq", preg(smp, R_R9), 0);
}

/* A tick of the process timeline (capture-events.md, mt:tick): a line of
 * the process, PID/PID (R10, the pid the sampler saw, as totals). */
static void mt_tick(struct mt_unwind_events *s, const struct mt_perf_sample *smp)
{
	uint32_t who = (uint32_t)preg(smp, R_R10);
	uint32_t pid = who ? who : smp->pid;
	if (filtered(s, pid, pid))
		return;
	image_has_sampler(s, pid);
	struct mt_unwind_out *out = s->out;
	mt_unwind_emit_head(s->emit, out, MT_UNWIND_K_TICK, pid, pid, smp->time);
	uint64_t live = preg(smp, R_DI);
	mt_unwind_out_str(out, "live=");
	if ((int64_t)live < 0) {
		mt_unwind_out_char(out, '-');
		live = -live;
	}
	mt_unwind_out_u64(out, live);
	mt_unwind_emit_kv(out, "alloc_bytes", preg(smp, R_SI), 0);
	mt_unwind_emit_kv(out, "alloc_block_bytes", preg(smp, R_R8), 0);
	mt_unwind_emit_kv(out, "allocs", preg(smp, R_DX), 0);
	mt_unwind_emit_kv(out, "frees", preg(smp, R_CX), 0);
	uint64_t rss = preg(smp, R_R9);
	if (rss != UINT64_MAX)
		mt_unwind_emit_kv(out, "rss", rss, 0);
	mt_unwind_emit_kv(out, "peak", preg(smp, R_AX), 0);
	mt_unwind_emit_kv(out, "peak_time", preg(smp, R_R11), 0);
	mt_unwind_emit_kv(out, "peak_error", preg(smp, R_R12), 0);
	mt_unwind_emit_kv(out, "period", preg(smp, R_R14), 0);
	mt_unwind_emit_nostack(s->emit, out);
}

void mt_unwind_events_undecodable(struct mt_unwind_events *s)
{
	s->st.undecodable++;
	if (!s->o.decode_only)
		mt_unwind_emit_lost(s->emit, 0, 0, 0, 1, "undecodable", NULL);
}

void mt_unwind_events_sample(struct mt_unwind_events *s, const struct mt_perf_sample *smp)
{
	struct evinfo *ei = evinfo_of(s, smp->evsel);
	if (!ei)
		return;
	switch (ei->role) {
	case ROLE_MT_ALLOC:
		if (filtered(s, smp->pid, smp->tid))
			return;
		marks_of(s, smp->pid, smp->tid)->seen[0]++;
		image_has_sampler(s, smp->pid);
		mt_unwind_emit_head(s->emit, s->out, MT_UNWIND_K_ALLOC, smp->pid, smp->tid, smp->time);
		mt_unwind_emit_kv(s->out, "size", preg(smp, R_DI), 1);
		mt_unwind_emit_kx(s->out, "ptr", preg(smp, R_SI));
		{
			uint64_t fn = preg(smp, R_R8);
			mt_unwind_out_str(s->out, " fn=");
			mt_unwind_out_str(s->out, fn < NR_FNS ? alloc_fns[fn] : "unknown");
		}
		mt_unwind_emit_kv(s->out, "points", preg(smp, R_DX), 0);
		mt_unwind_emit_kv(s->out, "rate", preg(smp, R_CX), 0);
		put_seq(s->out, smp);
		s->stack(s->stack_ctx, s->out, smp, 1);
		break;
	case ROLE_MT_FREE:
		if (filtered(s, smp->pid, smp->tid))
			return;
		marks_of(s, smp->pid, smp->tid)->seen[1]++;
		image_has_sampler(s, smp->pid);
		mt_unwind_emit_head(s->emit, s->out, MT_UNWIND_K_FREE, smp->pid, smp->tid, smp->time);
		mt_unwind_out_str(s->out, "ptr=0x");
		mt_unwind_out_x64(s->out, preg(smp, R_DI));
		mt_unwind_emit_kv(s->out, "rate", preg(smp, R_CX), 0);
		put_seq(s->out, smp);
		mt_unwind_emit_nostack(s->emit, s->out);
		break;
	case ROLE_MT_TOTALS:
		mt_totals(s, smp);
		break;
	case ROLE_MT_TICK:
		mt_tick(s, smp);
		break;
	case ROLE_TRACE_ENTRY:
		trace_entry(s, smp, ei);
		break;
	case ROLE_TRACE_RETURN:
		trace_return(s, smp, ei);
		break;
	default:
		if (filtered(s, smp->pid, smp->tid))
			return;
		mt_unwind_emit_head(s->emit, s->out, MT_UNWIND_K_SAMPLE, smp->pid, smp->tid, smp->time);
		mt_unwind_out_str(s->out, "event=");
		{
			const char *n = event_name(s, smp->evsel);
			if (!*n)
				n = attr_name(s, ei, smp->evsel);
			for (const char *c = n; *c; c++)
				mt_unwind_out_char(s->out, (*c == ' ' || *c == '\t' || *c == '\n')
								  ? '_' : *c);
		}
		mt_unwind_emit_kv(s->out, "period", period_of(smp), 0);
		if (smp->evsel->attr.freq)
			mt_unwind_out_str(s->out, " freq=1");
		s->stack(s->stack_ctx, s->out, smp, 0);
		break;
	}
}


/* ---- other records ------------------------------------------------------ */

void mt_unwind_events_mmap(struct mt_unwind_events *s, const struct mt_perf_mmap *m)
{
	if (m->executable && mt_unwind_is_sampler_file(m->filename) &&
	    !mt_unwind_events_excluded(s, m->pid, m->pid))
		image_has_sampler(s, m->pid);
}

void mt_unwind_events_comm(struct mt_unwind_events *s, const struct mt_perf_comm *c)
{
	if (!c->exec)
		return;
	if (mt_unwind_hashmap_put(&s->forked, c->pid, 0) != 0)
		s->nomem = 1;
	totals_flush(s, c->pid, 0);
	marks_exec(s, c->pid);
	image_end(s, c->pid, c->sid.time);
	image_unsampled_check(s, c->pid, c->sid.time);
}

void mt_unwind_events_task(struct mt_unwind_events *s, uint32_t type,
			   const struct mt_perf_task *t)
{
	if (type == PERF_RECORD_FORK && t->pid != t->ppid) {
		image_end(s, t->pid, t->time);	/* a new process: a new image */
		/* Not perf's records made up for processes already running
		 * (time 0): those were not forked under us. */
		if (t->time && mt_unwind_hashmap_put(&s->forked, t->pid, 1) != 0)
			s->nomem = 1;
	}
	if (type == PERF_RECORD_EXIT && t->pid == t->tid)
		image_unsampled_check(s, t->pid, t->time);
}

void mt_unwind_events_lost(struct mt_unwind_events *s, uint32_t type,
			   const struct mt_perf_lost *l)
{
	s->st.lost_records++;
	s->st.lost_count += l->lost;
	if (s->o.decode_only)
		return;
	mt_unwind_emit_lost(s->emit, l->sid.pid, l->sid.tid, l->sid.time, l->lost,
			    type == PERF_RECORD_LOST ? "kernel" : "lost-samples", NULL);
}

int mt_unwind_events_wants_stack(struct mt_unwind_events *s, const struct mt_perf_evsel *e)
{
	const struct evinfo *ei = evinfo_of(s, e);
	if (!ei)
		return 0;
	switch (ei->role) {
	case ROLE_MT_FREE:
	case ROLE_MT_TOTALS:
	case ROLE_MT_TICK:
	case ROLE_TRACE_RETURN:
		return 0;
	default:
		return 1;
	}
}

void mt_unwind_events_finish(struct mt_unwind_events *s, uint64_t end)
{
	/* Trace entries whose return never came: the call was made. */
	while (s->pending) {
		struct pending *p = s->pending;
		if (!p->internal && p->line_head) {
			mt_unwind_out_str(s->out, p->line_head);
			mt_unwind_emit_kx(s->out, "ptr", 0);
			mt_unwind_out_str(s->out, p->line_tail);
			s->st.unpaired++;
		}
		pending_unlink(s, p);
	}
	totals_flush(s, 0, 1);
	for (size_t i = 0; i < s->images.cap; i++)
		if (s->images.keys[i] != MT_UNWIND_HASH_EMPTY)
			image_end(s, (uint32_t)s->images.keys[i], end);
}

/* ---- life --------------------------------------------------------------- */

int mt_unwind_events_new(struct mt_unwind_events **out, const struct mt_unwind_events_opts *o,
			 const struct mt_perf_reader *reader,
			 const struct mt_perf_features *features, struct mt_unwind_emit *emit,
			 struct mt_unwind_maps *maps, mt_unwind_stack_fn stack, void *ctx)
{
	struct mt_unwind_events *s = calloc(1, sizeof(*s));
	*out = s;
	if (!s)
		return MT_UNWIND_ENOMEM;
	s->o = *o;
	s->reader = reader;
	s->features = features;
	s->emit = emit;
	s->out = mt_unwind_emit_out(emit);
	s->maps = maps;
	s->stack = stack;
	s->stack_ctx = ctx;
	s->sampler_input = -1;
	return 0;
}

void mt_unwind_events_free(struct mt_unwind_events *s)
{
	if (!s)
		return;
	while (s->pending)
		pending_unlink(s, s->pending);
	while (s->totals) {
		struct totals_pending *t = s->totals;
		s->totals = t->next;
		free(t->line);
		free(t);
	}
	mt_unwind_hashmap_release(&s->images);
	mt_unwind_hashmap_release(&s->forked);
	free(s->marks);
	free(s->ev);
	free(s);
}

const struct mt_unwind_events_stats *mt_unwind_events_stats(const struct mt_unwind_events *s)
{
	return &s->st;
}

int mt_unwind_events_nomem(const struct mt_unwind_events *s)
{
	return s->nomem;
}
