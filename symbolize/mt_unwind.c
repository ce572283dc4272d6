/* mt-unwind: perf stack dumps to one text line per event (see
 * docs/formats/unwind-text.md and docs/unwind.md).  Thin: options, input,
 * the event kinds of docs/formats/capture-events.md, output and summary. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/cli.h"
#include "codec/mtz.h"
#include "codec/perf_stream.h"
#include "common/progress.h"
#include "symbolize/arch.h"
#include "symbolize/batch.h"
#include "symbolize/maps.h"
#include "symbolize/module.h"
#include "symbolize/order.h"
#include "symbolize/prefault.h"
#include "symbolize/out.h"
#include "symbolize/sym.h"
#include "symbolize/unwind.h"


#define RECORD_HEADER_BUILD_ID 67
#define RECORD_FINISHED_ROUND 68
#define MISC_BUILD_ID_SIZE (1 << 15)


/* At the end, the memory goes back to the system with the process: freeing
 * it first (every module's libdw sessions, the caches) took 2 ms of a 45 ms
 * run on a 200-process build, after the output was complete.  Builds with
 * AddressSanitizer free it all, so that its leak check still sees leaks. */
#if defined(__SANITIZE_ADDRESS__)	/* gcc */
#define FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)	/* clang */
#define FREE_AT_EXIT 1
#endif
#endif
#ifndef FREE_AT_EXIT
#define FREE_AT_EXIT 0
#endif

static void usage(FILE *f)
{
	fprintf(f,
"usage: mt-unwind [options] IN\n"
"Unwind and symbolise the stack dumps of a perf stream: one line per event.\n"
"IN is an .mtz file, a perf.data file or a perf pipe stream (perf record -z\n"
"included); '-' reads stdin.\n"
"Output format: docs/formats/unwind-text.md.\n"
"\n"
"  -o FILE              write to FILE instead of stdout\n"
"  --addrs              print every frame as [module+0xADDR] (ELF address)\n"
"  --srcline            append ' (file:line)' to each frame\n"
"  --no-inline          do not expand inlined calls\n"
"  --no-demangle        keep C++/Rust symbol names mangled\n"
"  --max-depth N        walk at most N physical frames (default 256)\n"
"  --pid LIST           only events of these processes (comma-separated)\n"
"  --tid LIST           only events of these threads (comma-separated)\n"
"  --debuginfo-path DIR search DIR (colon-separated list) for separate debug\n"
"                       info before /usr/lib/debug; debuginfod is used when\n"
"                       DEBUGINFOD_URLS is set\n"
"  --debug-cache DIR    keep inflated copies of compressed debug files, and\n"
"                       DWARF scope indexes, in DIR (default\n"
"                       $XDG_CACHE_HOME/mt/debug or ~/.cache/mt/debug):\n"
"                       later runs skip decompressing and indexing them\n"
"  --no-debug-cache     no such copies: decompress and index in every run\n"
"  --decode-only        read and parse every record, write nothing (benchmarks)\n"
"  -q, --quiet          no summary on stderr (warnings and errors still)\n"
"  -h, --help           this text\n"
"\n"
"Exit codes: 0 ok; 1 data problem (input truncated, corrupt or partly\n"
"undecodable: what could be read is still written); 2 usage; 3 environment\n"
"(cannot open or read the input, out of memory).\n");
}

/* ---- options ------------------------------------------------------------ */

struct idset {
	uint32_t *v;
	size_t n;
};

static int idset_parse(struct idset *s, const char *arg)
{
	const char *p = arg;
	while (*p) {
		char *end;
		errno = 0;
		unsigned long x = strtoul(p, &end, 10);
		if (end == p || errno || x > UINT32_MAX || (*end && *end != ','))
			return -1;
		uint32_t *v = realloc(s->v, (s->n + 1) * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->v[s->n++] = (uint32_t)x;
		p = *end ? end + 1 : end;
	}
	return s->n ? 0 : -1;
}

static int idset_has(const struct idset *s, uint32_t x)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == x)
			return 1;
	return 0;
}

struct opts {
	struct mt_unwind_symopts sym;
	unsigned max_depth;
	struct idset pids, tids;
	const char *debuginfo_path;
	const char *debug_cache;	/* NULL: the default directory */
	int no_debug_cache;
	const char *output;
	int decode_only;
	int quiet;
	const char *input;
};

/* ---- event roles, from evsel names (capture-events.md) ------------------ */

enum role {
	ROLE_UNKNOWN = 0,	/* not yet classified */
	ROLE_SAMPLE,		/* event mode and anything else */
	ROLE_MT_ALLOC,
	ROLE_MT_FREE,
	ROLE_MT_TOTALS,
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
	uint64_t time;		/* of the entry: the lines' time */
	struct pending *next;
};

/* ---- state -------------------------------------------------------------- */

struct state;
static void writer_end(struct state *s);

struct state {
	struct opts *o;
	struct mt_unwind_out fdout;	/* the real output */
	struct mt_unwind_batch b;	/* the output waiting for a flush */
	struct mt_unwind_writer *wr;	/* NULL: flushes write it here */
	struct mt_unwind_last_stack last;	/* for the flushes written here */
	int out_error;			/* the output's errno, as of the last flush */
	struct mt_perf_reader *reader;
	struct mtz_reader *mtz;
	struct mt_unwind_modules *modules;
	struct mt_unwind_maps *maps;
	struct evinfo *ev;
	size_t nr_ev;
	struct mt_unwind_frame *frames;
	struct pending *pending;
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
	uint64_t silent_images;
	/* Images of a sample-mode capture that never mapped the sampler
	 * (static programs, LD_PRELOAD cleared): in no figure at all. */
	uint64_t unsampled_images;
	char unsampled_comms[160];	/* the first ones' names, for the summary */
	int sampler_input;		/* -1 not known yet, else 0/1 */

	/* mt:alloc / mt:free events seen per thread, against the sampler's
	 * counts of its marker calls (see marks_check) */
	struct marks {
		uint32_t pid, tid;	/* pid 0: empty slot (0 is never a user pid) */
		uint64_t seen[2], reported[2];
	} *marks;
	size_t nr_marks, cap_marks;
	uint64_t marks_dropped, marks_unseen;

	/* counters for the summary */
	uint64_t events, by_kind[5], records;
	struct mt_unwind_frame_counts counts;	/* the writer's added when it ends */
	uint64_t ends[MT_UNWIND_END_COUNT];
	uint64_t memptr_unknown;	/* posix_memalign returns without the pointer */
	uint64_t undecodable, lost_records, lost_count, superseded, internal, unpaired,
		 filtered, no_regs;
	struct mt_unwind_stats st;
	struct file_name { uint64_t id; char *name; } *file_names;	/* EVENT_DESC */
	size_t nr_file_names;
	int data_error;
	struct mt_unwind_order *order;
	uint64_t round_max, prev_round_max;	/* newest time this round, last round */
	uint64_t order_overflows;
	/* Unwinding on arrival (see on_record): the input as a seekable file
	 * (-1: not one), the walk put_stack takes instead of walking, and the
	 * samples whose mappings changed before their turn, read again. */
	int spec_fd;
	const struct mt_unwind_frame *pre;
	unsigned pre_n;
	int pre_end;
	uint64_t spec_rewalks;
	struct mt_unwind_scopes_stats scopes;	/* the scope index cache */
	uint64_t callchains;		/* samples whose frames came from a CALLCHAIN */
	uint8_t *rebuf;
	size_t rebuf_cap;
};

enum { K_ALLOC, K_FREE, K_TOTALS, K_SAMPLE, K_LOST };
static const char *const kind_names[] = { "alloc", "free", "totals", "sample", "lost" };

static int oom(void)
{
	mt_error("out of memory");
	exit(MT_EXIT_ENV);
}

/* A perf.data file names its events in the EVENT_DESC feature, after the
 * data; read_file_features collected them by sample id. */
static const char *file_event_name(struct state *s, const struct mt_perf_evsel *e)
{
	for (size_t i = 0; i < s->nr_file_names; i++)
		for (size_t k = 0; k < e->nr_ids; k++)
			if (s->file_names[i].id == e->ids[k])
				return s->file_names[i].name;
	if (s->nr_file_names && mt_perf_reader_nr_evsels(s->reader) == 1)
		return s->file_names[0].name;
	return "";
}

/* A name for an event the input names nowhere (a perf.data file read from
 * a pipe: its names come after the data), from its attr: perf's generic
 * name (cpu-clock), else type and config; "#INDEX" after it when another
 * event has the same type and config, or that name, so that two events
 * never share a name (mt-fold does not add up different events). */
static const char *attr_name(struct state *s, struct evinfo *ei, const struct mt_perf_evsel *e)
{
	if (ei->attr_name[0])
		return ei->attr_name;
	const char *g = mt_perf_event_name(e->attr.type, e->attr.config);
	int k = g ? snprintf(ei->attr_name, sizeof(ei->attr_name), "%s", g)
		  : snprintf(ei->attr_name, sizeof(ei->attr_name), "type=%u,config=%#llx",
			     e->attr.type, (unsigned long long)e->attr.config);
	for (size_t i = 0; i < mt_perf_reader_nr_evsels(s->reader); i++) {
		const struct mt_perf_evsel *o = mt_perf_reader_evsel(s->reader, i);
		const char *named = o->name && *o->name ? o->name : file_event_name(s, o);
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

static struct evinfo *evinfo_of(struct state *s, const struct mt_perf_evsel *e)
{
	size_t n = mt_perf_reader_nr_evsels(s->reader);
	if (s->nr_ev < n) {
		struct evinfo *v = realloc(s->ev, n * sizeof(*v));
		if (!v)
			oom();
		memset(v + s->nr_ev, 0, (n - s->nr_ev) * sizeof(*v));
		s->ev = v;
		s->nr_ev = n;
	}
	struct evinfo *ei = &s->ev[e->index];
	if (ei->role != ROLE_UNKNOWN)
		return ei;
	const char *name = e->name ? e->name : "";
	if (!*name)
		name = file_event_name(s, e);
	ei->role = ROLE_SAMPLE;
	if (strcmp(name, "mt:alloc") == 0)
		ei->role = ROLE_MT_ALLOC;
	else if (strcmp(name, "mt:free") == 0)
		ei->role = ROLE_MT_FREE;
	else if (strcmp(name, "mt:totals") == 0)
		ei->role = ROLE_MT_TOTALS;
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
#define R_R13 MT_UNWIND_PREG_R13
#define R_R14 MT_UNWIND_PREG_R14
#define R_R15 MT_UNWIND_PREG_R15

/* ---- writing lines ------------------------------------------------------ */

static void put_comm(struct mt_unwind_out *out, struct state *s, uint32_t tid)
{
	struct mt_unwind_thread *t = mt_unwind_maps_thread(s->maps, tid);
	if (!t || !t->comm[0]) {
		mt_unwind_out_str(out, "?");
		return;
	}
	char c[sizeof(t->comm)];
	size_t i;
	for (i = 0; t->comm[i]; i++) {
		char ch = t->comm[i];
		c[i] = (ch == '\t' || ch == '\n' || ch == '\r' || ch == ';') ? '_' : ch;
	}
	mt_unwind_out_add(out, c, i);
}

static void put_head(struct mt_unwind_out *out, struct state *s, int kind, uint32_t pid,
		     uint32_t tid, uint64_t time)
{
	mt_unwind_out_str(out, kind_names[kind]);
	mt_unwind_out_char(out, '\t');
	mt_unwind_out_u64(out, pid);
	mt_unwind_out_char(out, '/');
	mt_unwind_out_u64(out, tid);
	mt_unwind_out_char(out, '\t');
	mt_unwind_out_u64(out, time);
	mt_unwind_out_char(out, '\t');
	put_comm(out, s, tid);
	mt_unwind_out_char(out, '\t');
	s->events++;
	s->by_kind[kind]++;
}

static void put_kv(struct mt_unwind_out *out, const char *key, uint64_t v, int first)
{
	if (!first)
		mt_unwind_out_char(out, ' ');
	mt_unwind_out_str(out, key);
	mt_unwind_out_char(out, '=');
	mt_unwind_out_u64(out, v);
}

static void put_kx(struct mt_unwind_out *out, const char *key, uint64_t v)
{
	mt_unwind_out_char(out, ' ');
	mt_unwind_out_str(out, key);
	mt_unwind_out_str(out, "=0x");
	mt_unwind_out_x64(out, v);
}

static void put_nostack(struct mt_unwind_out *out, struct state *s)
{
	mt_unwind_out_str(out, "\t end=none\n");
	s->ends[MT_UNWIND_END_NONE]++;
}

/* A `lost` line (docs/formats/unwind-text.md): count events, or process
 * images, of pid/tid lost for reason, with the marker they were of when
 * marker is not NULL. */
static void put_lost(struct state *s, uint32_t pid, uint32_t tid, uint64_t time, uint64_t count,
		     const char *reason, const char *marker)
{
	put_head(&s->b.out, s, K_LOST, pid, tid, time);
	put_kv(&s->b.out, "count", count, 1);
	mt_unwind_out_str(&s->b.out, " reason=");
	mt_unwind_out_str(&s->b.out, reason);
	if (marker) {
		mt_unwind_out_str(&s->b.out, " marker=");
		mt_unwind_out_str(&s->b.out, marker);
	}
	put_nostack(&s->b.out, s);
}

/* Is filename the preload sampler? */
static int is_sampler_file(const char *filename)
{
	const char *base = strrchr(filename, '/');
	return strncmp(base ? base + 1 : filename, "libmt-sampler.so", 16) == 0;
}

static int is_sampler(const struct mt_unwind_frame *f)
{
	return f->map && is_sampler_file(f->map->path);
}

/* The frames of the kernel's own frame-pointer walk (`perf record -g`: a
 * CALLCHAIN and no stack dump) into s->frames, leaf first: the user part
 * only, whose first entry is the pc and the others return addresses.
 * @return : the end reason. */
static int callchain_frames(struct state *s, const struct mt_perf_sample *smp, unsigned *nr)
{
	struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, smp->pid);
	const uint8_t *p = smp->callchain;
	int user = 0;
	unsigned n = 0;
	*nr = 0;
	for (uint64_t i = 0; i < smp->nr_callchain; i++) {
		uint64_t ip;
		memcpy(&ip, p + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {	/* a context marker */
			user = ip == (uint64_t)PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		if (n == s->o->max_depth) {
			*nr = n;
			return MT_UNWIND_END_DEPTH;
		}
		struct mt_unwind_frame *f = &s->frames[n++];
		f->pc = ip;
		f->lookup = n > 1 ? ip - 1 : ip;
		f->map = sp ? mt_unwind_maps_find(s->maps, sp, f->lookup) : NULL;
	}
	*nr = n;
	if (n == 0)
		return MT_UNWIND_END_NONE;
	/* A chain that runs into no mapping was cut by a frame without a
	 * frame pointer, as perf shows it ([unknown] frames). */
	return s->frames[n - 1].map ? MT_UNWIND_END_COMPLETE : MT_UNWIND_END_UNKNOWN_MODULE;
}

/* A sample's stack dump as the walk reads it: its valid bytes (dyn_size,
 * never more than were copied), at base (the sample's stack pointer). */
static struct mt_unwind_memory dump_of(const struct mt_perf_sample *smp, uint64_t base)
{
	uint64_t n = smp->stack ? smp->stack_dyn_size : 0;
	if (n > smp->stack_size)
		n = smp->stack_size;
	return (struct mt_unwind_memory){ .base = base, .data = smp->stack, .size = n };
}

/* Unwind the sample and write "\tSTACK end=R\n" (deferred when out is the
 * main buffer). */
static void put_stack(struct mt_unwind_out *out, struct state *s,
		      const struct mt_perf_sample *smp, int drop_sampler)
{
	unsigned n = 0;
	int end;
	const struct mt_unwind_frame *fr = s->frames;
	struct mt_unwind_regs regs;
	if (s->pre) {	/* walked on arrival, in the same mappings */
		fr = s->pre;
		n = s->pre_n;
		end = s->pre_end;
		s->pre = NULL;
	} else if (!(smp->sample_type & PERF_SAMPLE_STACK_USER) && smp->callchain) {
		end = callchain_frames(s, smp, &n);
		s->callchains++;
	} else if (smp->regs_abi == 0 ||
		   mt_unwind_arch_regs_from_perf(&regs, smp->regs_mask, smp->regs,
						 smp->nr_regs) != 0) {
		s->no_regs++;
		put_nostack(out, s);
		return;
	} else {
		struct mt_unwind_memory mem = dump_of(smp, regs.r[MT_UNWIND_REG_SP]);
		struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, smp->pid);
		end = mt_unwind_walk(s->maps, sp, &regs, &mem, s->frames, s->o->max_depth, &n,
				     &s->st);
	}
	if (drop_sampler && n > 0 && is_sampler(&fr[n - 1])) {
		/* The walk never left the sampler: the kernel copied (almost)
		 * none of the user stack.  Name that rather than the marker, so
		 * such samples group under one honest root. */
		mt_unwind_out_str(out, "\t[no user stack] end=");
		mt_unwind_out_str(out, mt_unwind_end_str(end));
		mt_unwind_out_char(out, '\n');
		s->counts.frames++;
		s->ends[end]++;
		return;
	}
	unsigned first = 0;
	if (drop_sampler)	/* keep only the outermost sampler frame */
		while (first + 1 < n && is_sampler(&fr[first]) &&
		       is_sampler(&fr[first + 1]))
			first++;
	mt_unwind_out_char(out, '\t');
	if (out == &s->b.out) {
		/* Deferred: remember the frames; their text is made at the next
		 * flush, when the modules' loaders have had time to finish. */
		if (mt_unwind_batch_reserve(&s->b, n - first) != 0)
			oom();
		struct mt_unwind_seg *g = &s->b.segs[s->b.nr_segs++];
		g->text_end = out->len;
		g->fr_begin = s->b.nr_dframes;
		g->fr_count = n - first;
		for (unsigned i = n; i-- > first;) {
			const struct mt_unwind_frame *f = &fr[i];
			struct mt_unwind_dframe *d = &s->b.dframes[s->b.nr_dframes++];
			struct mt_unwind_module *m = f->map ? f->map->mod : NULL;
			d->trim = drop_sampler && i == first && is_sampler(f);
			if (m && m->state == MT_UNWIND_MOD_OK && f->map->delta_ok) {
				d->mod = m;
				d->vaddr = f->lookup + (uint64_t)f->map->delta;
			} else {
				char tmp[300];
				size_t k = mt_unwind_sym_unknown(tmp, sizeof(tmp), f->map, f->pc);
				d->mod = NULL;
				d->vaddr = s->b.unk.len;
				d->len = (uint32_t)k;
				mt_unwind_out_add(&s->b.unk, tmp, k);
			}
		}
	} else {
		for (unsigned i = n; i-- > first;) {
			const struct mt_unwind_frame *f = &fr[i];
			struct mt_unwind_module *m = f->map ? f->map->mod : NULL;
			struct mt_unwind_dframe d = { .trim = drop_sampler && i == first && is_sampler(f) };
			if (m && m->state == MT_UNWIND_MOD_OK && f->map->delta_ok) {
				d.mod = m;
				d.vaddr = f->lookup + (uint64_t)f->map->delta;
				if (s->wr)	/* one thread symbolises at a time */
					writer_end(s);
				mt_unwind_put_frame(out, &s->o->sym, &d, &s->counts);
			} else {
				char tmp[300];
				size_t k = mt_unwind_sym_unknown(tmp, sizeof(tmp), f->map, f->pc);
				mt_unwind_out_add(out, tmp, k);
				s->counts.frames++;
			}
			if (i > first)
				mt_unwind_out_char(out, ';');
		}
	}
	mt_unwind_out_str(out, " end=");
	mt_unwind_out_str(out, mt_unwind_end_str(end));
	mt_unwind_out_char(out, '\n');
	s->ends[end]++;
}

/* From now on the main thread symbolises: trace mode formats each entry's
 * line when it comes (its mappings may be gone at the return). */
static void writer_end(struct state *s)
{
	mt_unwind_writer_stop(s->wr, &s->counts);
	s->wr = NULL;
}

/* Write the deferred lines (through the writer when there is one). */
static void defer_flush(struct state *s)
{
	if (s->b.out.error || s->b.unk.error)
		oom();
	if (s->wr) {
		s->out_error = mt_unwind_writer_give(s->wr, &s->b);
		return;
	}
	mt_unwind_batch_write(&s->fdout, &s->b, &s->o->sym, &s->counts, &s->last);
	s->out_error = s->fdout.error;
}

/* Flush once enough is buffered.  A flush waits for the loaders still at
 * work, so while there are some the buffer is what overlaps their work;
 * afterwards small flushes keep the buffers in cache (growing them to
 * megabytes cost page faults and memory traffic on every event), a little
 * larger with a writer so that handing over costs little (4096 events: 5%
 * faster than 256 on the bench file; 1024: another 2-4% less CPU and wall
 * than 4096, 30 runs each, as the main thread waited 0-22 ms per run for
 * the writer to finish a big batch). */
static void defer_check(struct state *s)
{
	size_t batch = s->wr ? 1024 : 256;
	if (s->b.nr_segs >= 32768 || s->b.out.len >= ((size_t)16 << 20) ||
	    (s->b.nr_segs >= batch && !mt_unwind_modules_loading(s->modules)))
		defer_flush(s);
	if (s->b.out.error)
		oom();
}

/* --pid/--tid leave this event out (not counted: see filtered). */
static int excluded(const struct state *s, uint32_t pid, uint32_t tid)
{
	return (s->o->pids.n && !idset_has(&s->o->pids, pid)) ||
	       (s->o->tids.n && !idset_has(&s->o->tids, tid));
}

static int filtered(struct state *s, uint32_t pid, uint32_t tid)
{
	if (excluded(s, pid, tid)) {
		s->filtered++;
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

static struct pending *pending_top(struct state *s, uint32_t tid, int fn)
{
	for (struct pending *p = s->pending; p; p = p->next)
		if (p->tid == tid && (fn < 0 || p->fn == fn))
			return p;
	return NULL;
}

static void trace_entry(struct state *s, const struct mt_perf_sample *smp,
			const struct evinfo *ei)
{
	int internal = pending_top(s, smp->tid, -1) != NULL;
	uint64_t di = preg(smp, R_DI), si = preg(smp, R_SI), dx = preg(smp, R_DX);
	uint64_t size = 0, old = 0;
	switch (ei->fn) {
	case 0: case 7: case 8: size = di; break;		/* malloc valloc pvalloc */
	case 1: size = di * si; break;				/* calloc */
	case 2: old = di; size = si; break;			/* realloc */
	case 3: old = di; size = si * dx; break;		/* reallocarray */
	case 4: size = dx; break;				/* posix_memalign */
	case 5: case 6: size = si; break;			/* aligned_alloc memalign */
	case FN_FREE: old = di; break;
	}
	if (internal && !ei->paired) {
		s->internal++;
		return;
	}
	if (!internal && filtered(s, smp->pid, smp->tid))
		internal = 1;	/* still tracked so its return pairs */
	uint64_t every = period_of(smp);
	if (ei->fn == FN_FREE) {
		if (!internal) {
			put_head(&s->b.out, s, K_FREE, smp->pid, smp->tid, smp->time);
			mt_unwind_out_str(&s->b.out, "ptr=0x");
			mt_unwind_out_x64(&s->b.out, old);
			mt_unwind_out_str(&s->b.out, " every=");
			mt_unwind_out_u64(&s->b.out, every);
			put_nostack(&s->b.out, s);
		} else {
			s->internal++;
		}
		if (!ei->paired)
			return;
	}
	if (!ei->paired) {
		put_head(&s->b.out, s, K_ALLOC, smp->pid, smp->tid, smp->time);
		put_kv(&s->b.out, "size", size, 1);
		put_kx(&s->b.out, "ptr", 0);
		mt_unwind_out_str(&s->b.out, " fn=");
		mt_unwind_out_str(&s->b.out, alloc_fns[ei->fn]);
		put_kv(&s->b.out, "every", every, 0);
		put_stack(&s->b.out, s, smp, 0);
		return;
	}
	/* Paired: format now (the maps are those of now), write at the return. */
	struct pending *p = calloc(1, sizeof(*p));
	if (!p)
		oom();
	p->tid = smp->tid;
	p->fn = ei->fn;
	p->internal = internal;
	p->old_ptr = old;
	p->memptr = ei->fn == 4 ? di : 0;
	p->size = size;
	p->time = smp->time;
	if (!internal && ei->fn != FN_FREE) {
		struct mt_unwind_out tmp;
		mt_unwind_out_init_mem(&tmp);
		put_head(&tmp, s, K_ALLOC, smp->pid, smp->tid, smp->time);
		put_kv(&tmp, "size", size, 1);
		p->line_head = mt_unwind_out_detach(&tmp);
		mt_unwind_out_init_mem(&tmp);
		mt_unwind_out_str(&tmp, " fn=");
		mt_unwind_out_str(&tmp, alloc_fns[ei->fn]);
		put_kv(&tmp, "every", every, 0);
		put_stack(&tmp, s, smp, 0);
		p->line_tail = mt_unwind_out_detach(&tmp);
		if (!p->line_head || !p->line_tail)
			oom();
	}
	p->next = s->pending;
	s->pending = p;
}

static void pending_unlink(struct state *s, struct pending *p)
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
	struct mt_unwind_memory dump = dump_of(smp, sp);
	return sp && mt_unwind_memory_read(&dump, addr, &v) == 0 ? v : 0;
}

static void trace_return(struct state *s, const struct mt_perf_sample *smp,
			 const struct evinfo *ei)
{
	struct pending *p = pending_top(s, smp->tid, ei->fn);
	if (!p) {
		s->unpaired++;
		return;
	}
	uint64_t ret = preg(smp, R_AX);
	int allocated = ret || p->size == 0;	/* NULL: failed (size 0 may give NULL) */
	if (p->internal || p->fn == FN_FREE) {
		if (p->internal)
			s->internal++;
		pending_unlink(s, p);
		return;
	}
	if (p->fn == 4) {
		/* posix_memalign: AX is 0 or an error number, and the block's
		 * address went to *memptr, which the return probe's stack dump
		 * holds when memptr is on the stack (mt-capture since 2026-11-29). */
		if ((uint32_t)ret != 0) {	/* an int: EAX */
			pending_unlink(s, p);	/* failed: nothing allocated */
			return;
		}
		ret = memptr_read(smp, p->memptr);
		if (!ret)
			s->memptr_unknown++;
		allocated = 1;
	}
	/* realloc that moved or freed: the old block is gone.  Both lines carry
	 * the entry's time, the free first: stamped with the return's time, the
	 * free of a block resized in place sorted after its new allocation in
	 * mt-fold and "freed" it. */
	if ((p->fn == FN_REALLOC || p->fn == 3) && p->old_ptr && allocated) {
		put_head(&s->b.out, s, K_FREE, smp->pid, smp->tid, p->time);
		mt_unwind_out_str(&s->b.out, "ptr=0x");
		mt_unwind_out_x64(&s->b.out, p->old_ptr);
		mt_unwind_out_str(&s->b.out, " every=1");
		put_nostack(&s->b.out, s);
	}
	if (allocated) {
		mt_unwind_out_str(&s->b.out, p->line_head);
		put_kx(&s->b.out, "ptr", ret);
		mt_unwind_out_str(&s->b.out, p->line_tail);
	}
	pending_unlink(s, p);
}

/* ---- sample mode -------------------------------------------------------- */

/* The mark counters of (pid, tid), created zero (open addressing, linear
 * probing, at most half full). */
static struct marks *marks_of(struct state *s, uint32_t pid, uint32_t tid)
{
	if (pid == 0)
		pid = UINT32_MAX;	/* keep 0 for empty slots */
	if (2 * (s->nr_marks + 1) > s->cap_marks) {
		size_t cap = s->cap_marks ? 2 * s->cap_marks : 64;
		struct marks *m = calloc(cap, sizeof(*m));
		if (!m)
			oom();
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
static void marks_exec(struct state *s, uint32_t pid)
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
static void marks_check(struct state *s, uint32_t pid, uint32_t tid, uint64_t time,
			const uint64_t want[2])
{
	static const char *const what[2] = { "alloc", "free" };
	struct marks *m = marks_of(s, pid, tid);
	for (int k = 0; k < 2; k++) {
		if (want[k] <= m->seen[k] + m->reported[k])
			continue;
		uint64_t n = want[k] - m->seen[k] - m->reported[k];
		m->reported[k] += n;
		int silent = s->lost_records == 0;
		if (silent)
			s->marks_dropped += n;
		else
			s->marks_unseen += n;
		put_lost(s, pid, tid, time, n, silent ? "dropped" : "unseen", what[k]);
	}
}

/* What mt-unwind knows of a process's current image (an exec or a fork
 * starts a new one). */
enum image_state {
	IMAGE_UNKNOWN,		/* no sign of the sampler (yet) */
	IMAGE_UNREPORTED,	/* runs the sampler, no process totals so far */
	IMAGE_REPORTED,		/* sent its process totals */
};

static enum image_state image_state(struct state *s, uint32_t pid)
{
	uint64_t v;
	return mt_unwind_hashmap_get(&s->images, pid, &v) ? (enum image_state)v : IMAGE_UNKNOWN;
}

static void image_set(struct state *s, uint32_t pid, enum image_state st)
{
	if (mt_unwind_hashmap_put(&s->images, pid, st) != 0)
		oom();
}

/* pid's image runs the sampler: it mapped libmt-sampler.so, or (a child
 * forked without exec, whose MMAPs are its parent's) a marker call of its
 * own came.  A vfork child, which shares its parent's sampler and makes no
 * marker call, is never counted. */
static void image_has_sampler(struct state *s, uint32_t pid)
{
	if (image_state(s, pid) == IMAGE_UNKNOWN)
		image_set(s, pid, IMAGE_UNREPORTED);
}

/* pid's current image ends (exec, or the end of the input): one that ran
 * the sampler and never sent its process totals becomes a `lost` line, so
 * that a reader of the totals knows they leave it out. */
static void image_end(struct state *s, uint32_t pid, uint64_t time)
{
	enum image_state st = image_state(s, pid);
	if (st == IMAGE_UNREPORTED) {
		s->silent_images++;
		put_lost(s, pid, pid, time, 1, "no-totals", NULL);
	}
	if (st != IMAGE_UNKNOWN)	/* processes without the sampler get no entry */
		image_set(s, pid, IMAGE_UNKNOWN);
}

/* Is the input a sample-mode capture (it has the sampler's events)? */
static int is_sampler_input(struct state *s)
{
	if (s->sampler_input < 0) {
		s->sampler_input = 0;
		for (size_t i = 0; i < mt_perf_reader_nr_evsels(s->reader); i++)
			if (evinfo_of(s, mt_perf_reader_evsel(s->reader, i))->role == ROLE_MT_TOTALS)
				s->sampler_input = 1;
	}
	return s->sampler_input;
}

/* pid's current image ends (its exec or its exit): in a sample-mode
 * capture, one with code mapped and no libmt-sampler.so among it never ran
 * the sampler, so none of its allocations is in the capture: a `lost` line
 * reason=no-sampler says so.  (A child forked without exec has its
 * parent's mappings, the sampler's among them.) */
static void image_unsampled_check(struct state *s, uint32_t pid, uint64_t time)
{
	struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, pid);
	if (!sp || !sp->nr || excluded(s, pid, pid) || !is_sampler_input(s))
		return;
	for (size_t i = 0; i < sp->nr; i++)
		if (is_sampler_file(sp->maps[i].path))
			return;
	s->unsampled_images++;
	put_lost(s, pid, pid, time, 1, "no-sampler", NULL);
	const struct mt_unwind_thread *th = mt_unwind_maps_thread(s->maps, pid);
	size_t used = strlen(s->unsampled_comms);
	if (th && th->comm[0] && used + strlen(th->comm) + 3 < sizeof(s->unsampled_comms) &&
	    !strstr(s->unsampled_comms, th->comm))
		snprintf(s->unsampled_comms + used, sizeof(s->unsampled_comms) - used, "%s%s",
			 used ? ", " : "", th->comm);
}

static void totals_flush(struct state *s, uint32_t pid, int all)
{
	for (struct totals_pending **pp = &s->totals; *pp;) {
		struct totals_pending *t = *pp;
		if (all || t->pid == pid) {
			mt_unwind_out_str(&s->b.out, t->line);
			*pp = t->next;
			free(t->line);
			free(t);
		} else {
			pp = &t->next;
		}
	}
}

/* A held totals line was replaced by a later one: it is not written. */
static void totals_superseded(struct state *s)
{
	s->superseded++;
	s->events--;
	s->by_kind[K_TOTALS]--;
}

static struct totals_pending **totals_find(struct state *s, uint32_t pid, uint32_t tid)
{
	struct totals_pending **pp = &s->totals;
	while (*pp && ((*pp)->pid != pid || (*pp)->tid != tid))
		pp = &(*pp)->next;
	return pp;
}

/* Hold line (of pid; of its thread tid, or 0 for the process) until the
 * exec or the end, in place of the one held so far. */
static void totals_hold(struct state *s, uint32_t pid, uint32_t tid, struct mt_unwind_out *line)
{
	struct totals_pending *t = *totals_find(s, pid, tid);
	if (t) {
		free(t->line);
		totals_superseded(s);
	} else {
		if (!(t = calloc(1, sizeof(*t))))
			oom();
		t->pid = pid;
		t->tid = tid;
		t->next = s->totals;
		s->totals = t;
	}
	if (!(t->line = mt_unwind_out_detach(line)))
		oom();
}

static void mt_totals(struct state *s, const struct mt_perf_sample *smp)
{
	uint64_t scope = preg(smp, R_DI);
	uint32_t who = (uint32_t)preg(smp, R_R10);
	int process = scope == 2, at_exec = scope == 3;
	uint32_t pid = smp->pid, tid = process ? smp->pid : who;
	if (process)
		pid = tid = who ? who : smp->pid;
	if (filtered(s, pid, tid))
		return;
	struct mt_unwind_out tmp, *out = &s->b.out;
	if (process || at_exec) {
		mt_unwind_out_init_mem(&tmp);
		out = &tmp;
	}
	put_head(out, s, K_TOTALS, pid, tid, smp->time);
	mt_unwind_out_str(out, process ? "scope=process" : "scope=thread");
	put_kv(out, "alloc_bytes", preg(smp, R_SI), 0);
	put_kv(out, "allocs", preg(smp, R_DX), 0);
	put_kv(out, "frees", preg(smp, R_CX), 0);
	put_kv(out, "freed_bytes", preg(smp, R_R8), 0);
	put_kv(out, "peak_bytes", preg(smp, R_R9), 0);
	if (process)
		put_kv(out, "peak_error", preg(smp, R_AX), 0);
	uint64_t forked;
	if (mt_unwind_hashmap_get(&s->forked, pid, &forked) && forked)
		put_kv(out, "forked", 1, 0);
	/* Each marker call is one allocation or one release: larger values are
	 * not mark counts (a sampler from before R13/R14 carried them). */
	uint64_t want[2] = { preg(smp, R_R13), preg(smp, R_R14) };
	int have_marks = want[0] <= preg(smp, R_DX) && want[1] <= preg(smp, R_CX);
	if (have_marks) {
		put_kv(out, "alloc_marks", want[0], 0);
		put_kv(out, "free_marks", want[1], 0);
	}
	/* The sampling rate, tagged "mt" in its top 16 bits (an older sampler
	 * left R15 as it was): what an input without any sample point needs
	 * for the intervals of its estimates (0 at that rate). */
	uint64_t r15 = preg(smp, R_R15);
	if (r15 >> 48 == 0x6d74 && (r15 & 0xffffffffffffULL))
		put_kv(out, "rate", r15 & 0xffffffffffffULL, 0);
	put_nostack(out, s);
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

/* A record that does not parse: counted, and a `lost` line (none with
 * --decode-only, which writes no lines). */
static void on_undecodable(struct state *s)
{
	s->undecodable++;
	if (!s->o->decode_only)
		put_lost(s, 0, 0, 0, 1, "undecodable", NULL);
}

static void handle_sample(struct state *s, const struct mt_perf_sample *smp)
{
	struct evinfo *ei = evinfo_of(s, smp->evsel);
	switch (ei->role) {
	case ROLE_MT_ALLOC:
		if (filtered(s, smp->pid, smp->tid))
			return;
		marks_of(s, smp->pid, smp->tid)->seen[0]++;
		image_has_sampler(s, smp->pid);
		put_head(&s->b.out, s, K_ALLOC, smp->pid, smp->tid, smp->time);
		put_kv(&s->b.out, "size", preg(smp, R_DI), 1);
		put_kx(&s->b.out, "ptr", preg(smp, R_SI));
		{
			uint64_t fn = preg(smp, R_R8);
			mt_unwind_out_str(&s->b.out, " fn=");
			mt_unwind_out_str(&s->b.out, fn < NR_FNS ? alloc_fns[fn] : "unknown");
		}
		put_kv(&s->b.out, "points", preg(smp, R_DX), 0);
		put_kv(&s->b.out, "rate", preg(smp, R_CX), 0);
		put_stack(&s->b.out, s, smp, 1);
		break;
	case ROLE_MT_FREE:
		if (filtered(s, smp->pid, smp->tid))
			return;
		marks_of(s, smp->pid, smp->tid)->seen[1]++;
		image_has_sampler(s, smp->pid);
		put_head(&s->b.out, s, K_FREE, smp->pid, smp->tid, smp->time);
		mt_unwind_out_str(&s->b.out, "ptr=0x");
		mt_unwind_out_x64(&s->b.out, preg(smp, R_DI));
		put_kv(&s->b.out, "rate", preg(smp, R_CX), 0);
		put_nostack(&s->b.out, s);
		break;
	case ROLE_MT_TOTALS:
		mt_totals(s, smp);
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
		put_head(&s->b.out, s, K_SAMPLE, smp->pid, smp->tid, smp->time);
		mt_unwind_out_str(&s->b.out, "event=");
		{
			const char *n = smp->evsel->name && *smp->evsel->name ? smp->evsel->name
									   : file_event_name(s, smp->evsel);
			if (!*n)
				n = attr_name(s, ei, smp->evsel);
			for (const char *c = n; *c; c++)
				mt_unwind_out_char(&s->b.out, (*c == ' ' || *c == '\t' || *c == '\n')
								  ? '_' : *c);
		}
		put_kv(&s->b.out, "period", period_of(smp), 0);
		if (smp->evsel->attr.freq)
			mt_unwind_out_str(&s->b.out, " freq=1");
		put_stack(&s->b.out, s, smp, 0);
		break;
	}
}

/* ---- other records ------------------------------------------------------ */

static void on_build_id(struct state *s, const uint8_t *p, size_t n, uint16_t misc)
{
	/* header (8), pid (4), build_id[24] (20 + size byte + pad), filename */
	if (n < 8 + 4 + 24 + 1)
		return;
	unsigned len = (misc & MISC_BUILD_ID_SIZE) ? p[8 + 4 + 20] : 20;
	if (len > 20)
		len = 20;
	const char *name = (const char *)p + 36;
	if (!memchr(name, '\0', n - 36))
		return;
	/* perf pads 20-byte ids; trailing zero bytes are not part of sha1 ids */
	if (mt_unwind_maps_add_build_id(s->maps, name, p + 12, len) != 0)
		oom();
}

static void process(struct state *s, const struct perf_event_header *h)
{
	switch (h->type) {
	case PERF_RECORD_SAMPLE: {
		struct mt_perf_sample smp;
		if (mt_perf_sample_parse(s->reader, h, &smp) != 0)
			on_undecodable(s);
		else
			handle_sample(s, &smp);
		return;
	}
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		struct mt_perf_mmap m;
		if (mt_perf_mmap_parse(s->reader, h, &m) != 0) {
			s->undecodable++;
			s->data_error = 1;
			return;
		}
		if (mt_unwind_maps_mmap(s->maps, m.pid, m.start, m.len, m.pgoff, m.filename,
					m.build_id, m.build_id_size, m.executable) != 0)
			oom();
		if (m.executable && is_sampler_file(m.filename) && !excluded(s, m.pid, m.pid))
			image_has_sampler(s, m.pid);
		return;
	}
	case PERF_RECORD_COMM: {
		struct mt_perf_comm c;
		if (mt_perf_comm_parse(s->reader, h, &c) != 0) {
			s->undecodable++;
			return;
		}
		if (c.exec) {
			if (mt_unwind_hashmap_put(&s->forked, c.pid, 0) != 0)
				oom();
			totals_flush(s, c.pid, 0);
			marks_exec(s, c.pid);
			image_end(s, c.pid, c.sid.time);
			image_unsampled_check(s, c.pid, c.sid.time);
		}
		if (mt_unwind_maps_comm(s->maps, c.pid, c.tid, c.comm, c.exec) != 0)
			oom();
		return;
	}
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT: {
		struct mt_perf_task t;
		if (mt_perf_task_parse(s->reader, h, &t) != 0) {
			s->undecodable++;
			return;
		}
		if (h->type == PERF_RECORD_FORK && t.pid != t.ppid) {
			image_end(s, t.pid, t.time);	/* a new process: a new image */
			/* Not perf's records made up for processes already
			 * running (time 0): those were not forked under us. */
			if (t.time && mt_unwind_hashmap_put(&s->forked, t.pid, 1) != 0)
				oom();
		}
		if (h->type == PERF_RECORD_EXIT && t.pid == t.tid)
			image_unsampled_check(s, t.pid, t.time);
		int rc = h->type == PERF_RECORD_FORK
			 ? mt_unwind_maps_fork(s->maps, t.pid, t.ppid, t.tid, t.ptid)
			 : mt_unwind_maps_exit(s->maps, t.pid, t.tid);
		if (rc != 0)
			oom();
		return;
	}
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES: {
		struct mt_perf_lost l;
		if (mt_perf_lost_parse(s->reader, h, &l) != 0) {
			s->undecodable++;
			return;
		}
		s->lost_records++;
		s->lost_count += l.lost;
		if (s->o->decode_only)
			return;
		put_lost(s, l.sid.pid, l.sid.tid, l.sid.time, l.lost,
			 h->type == PERF_RECORD_LOST ? "kernel" : "lost-samples", NULL);
		return;
	}
	}
}

/* A sample waiting in the queue: parsed, with only the valid part of its
 * stack dump kept (copying whole 8 KiB dumps was a fifth of the time). */
struct queued_sample {
	size_t evsel_index;
	/* Walked on arrival (spec): nframes frames follow instead of the
	 * stack, valid while the space sp is at generation gen; otherwise the
	 * record (size bytes at offset in the file) is read again. */
	int spec, end;
	unsigned nframes;
	struct mt_unwind_space *sp;
	uint64_t gen, offset, size;
	struct mt_perf_sample smp;	/* stack and evsel re-pointed on release */
};

/* The part of q that is queued: up to its last register (smp.regs comes
 * last and has room for 64; a sample has ~17), a multiple of 8.  The
 * frames, stack or callchain follow it in the queue. */
static size_t queued_len(const struct queued_sample *q)
{
	return offsetof(struct queued_sample, smp.regs) + 8 * (size_t)q->smp.nr_regs;
}

static void *queued_tail(struct queued_sample *q)
{
	return (char *)q + queued_len(q);
}

/* Read a queued sample's record again from the file: its mappings changed
 * between its arrival and its turn.  @return : 0, or -1 (reported). */
static int reread(struct state *s, const struct queued_sample *q, struct mt_perf_sample *out)
{
	if (q->size > s->rebuf_cap) {
		free(s->rebuf);
		s->rebuf_cap = 0;
		/* 8-aligned: the record is read as a header. */
		if (!(s->rebuf = aligned_alloc(8, (q->size + 7) & ~(uint64_t)7)))
			oom();
		s->rebuf_cap = q->size;
	}
	const struct perf_event_header *h = (const void *)s->rebuf;
	ssize_t k = pread(s->spec_fd, s->rebuf, q->size, (off_t)q->offset);
	if (k != (ssize_t)q->size || h->type != PERF_RECORD_SAMPLE || h->size != q->size ||
	    mt_perf_sample_parse(s->reader, h, out) != 0) {
		mt_error("'%s': offset %" PRIu64 ": the sample could not be read again: %s",
			 s->o->input, q->offset, k < 0 ? strerror(errno) : "the file changed");
		s->data_error = 1;
		return -1;
	}
	return 0;
}

enum { Q_RECORD, Q_SAMPLE };

static void process_cb(int kind, void *data, size_t size, void *ctx)
{
	struct state *s = ctx;
	(void)size;
	if (kind == Q_RECORD) {
		process(s, data);
		return;
	}
	struct queued_sample *q = data;
	/* The evsel array may have grown (moved) since. */
	q->smp.evsel = mt_perf_reader_evsel(s->reader, q->evsel_index);
	if (q->spec) {
		struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, q->smp.pid);
		q->smp.callchain = NULL;	/* not kept: the walk is */
		if (sp == q->sp && sp->gen == q->gen) {	/* q->sp: never NULL */
			/* The walk depends on the mappings only: still right. */
			s->pre = queued_tail(q);
			s->pre_n = q->nframes;
			s->pre_end = q->end;
			handle_sample(s, &q->smp);
			s->pre = NULL;
			return;
		}
		s->spec_rewalks++;
		struct mt_perf_sample smp;
		if (reread(s, q, &smp) != 0) {
			on_undecodable(s);
			return;
		}
		smp.evsel = q->smp.evsel;
		handle_sample(s, &smp);
		return;
	}
	q->smp.stack = q->smp.stack_dyn_size ? queued_tail(q) : NULL;
	if (q->smp.callchain)	/* queued in the stack's place when there is none */
		q->smp.callchain = q->smp.stack ? NULL : queued_tail(q);
	handle_sample(s, &q->smp);
}

/* Walk a sample's stack on arrival, with the mappings as they are now,
 * so that only its frames wait in the time-ordering queue and not its
 * stack dump (copying the dumps was a fifth of the time).  The walk is a
 * function of the registers, the dump and the space's mappings alone; if
 * those change before the sample's turn, the record is read again from
 * the file.  @return : 1 walked and queued (at time t), 0 not worth it. */
static int spec_walk(struct state *s, struct queued_sample *q, size_t n, uint64_t t)
{
	const struct mt_perf_sample *smp = &q->smp;
	if (s->spec_fd < 0 || n < 512 || smp->regs_abi == 0)
		return 0;
	switch (evinfo_of(s, smp->evsel)->role) {
	case ROLE_MT_FREE:
	case ROLE_MT_TOTALS:
	case ROLE_TRACE_RETURN:
		return 0;	/* no stack wanted */
	default:
		break;
	}
	if (excluded(s, smp->pid, smp->tid))
		return 0;	/* counted when its turn comes */
	/* No address space yet: its process's FORK, COMM and MMAP records
	 * are still queued, and the walk would be made again (1720 of 5527
	 * samples of a make -j2 recording, each read again from the file). */
	struct mt_unwind_space *sp = mt_unwind_maps_space(s->maps, smp->pid);
	if (!sp)
		return 0;
	struct mt_unwind_regs regs;
	if (mt_unwind_arch_regs_from_perf(&regs, smp->regs_mask, smp->regs, smp->nr_regs) != 0)
		return 0;
	struct mt_unwind_memory mem = dump_of(smp, regs.r[MT_UNWIND_REG_SP]);
	/* The frames go straight into the queue, after the sample. */
	size_t head = queued_len(q);
	uint8_t *room = mt_unwind_order_reserve(s->order,
						head + s->o->max_depth * sizeof(*s->frames));
	if (!room)
		oom();
	struct mt_unwind_frame *fr = (struct mt_unwind_frame *)(room + head);
	unsigned nr = 0;
	q->end = mt_unwind_walk(s->maps, sp, &regs, &mem, fr, s->o->max_depth, &nr, &s->st);
	q->nframes = nr;
	q->sp = sp;
	q->gen = sp->gen;
	q->spec = 1;
	q->smp.stack = NULL;
	memcpy(room, q, head);
	mt_unwind_order_commit(s->order, Q_SAMPLE, head + nr * sizeof(*fr), t);
	return 1;
}

/* The time of a record that takes part in ordering; 0 when it has none
 * (such records sort first, as in perf). */
static int record_time(struct state *s, const struct perf_event_header *h, uint64_t *t)
{
	union {
		struct mt_perf_mmap m;
		struct mt_perf_comm c;
		struct mt_perf_task k;
		struct mt_perf_lost l;
	} u;
	switch (h->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (mt_perf_mmap_parse(s->reader, h, &u.m) != 0)
			return -1;
		*t = u.m.sid.time;
		return 0;
	case PERF_RECORD_COMM:
		if (mt_perf_comm_parse(s->reader, h, &u.c) != 0)
			return -1;
		*t = u.c.sid.time;
		return 0;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (mt_perf_task_parse(s->reader, h, &u.k) != 0)
			return -1;
		*t = u.k.time;
		return 0;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		if (mt_perf_lost_parse(s->reader, h, &u.l) != 0)
			return -1;
		*t = u.l.sid.time;
		return 0;
	}
	return -1;
}

#define ORDER_MAX_BYTES ((size_t)512 << 20)

static void on_record(struct state *s, const struct mt_perf_item *it)
{
	const struct perf_event_header *h = it->header;
	uint64_t t;
	s->records++;
	if (h->type == RECORD_HEADER_BUILD_ID) {
		on_build_id(s, it->data, it->size, h->misc);
		return;
	}
	if (h->type == RECORD_FINISHED_ROUND) {
		if (mt_unwind_order_flush(s->order, s->prev_round_max, process_cb, s) != 0)
			oom();
		s->prev_round_max = s->round_max;
		return;
	}
	if (h->type == PERF_RECORD_SAMPLE) {
		struct queued_sample q;
		if (mt_perf_sample_parse(s->reader, h, &q.smp) != 0) {
			on_undecodable(s);
			return;
		}
		if (s->o->decode_only)
			return;
		t = q.smp.time;
		q.evsel_index = (size_t)q.smp.evsel->index;
		q.spec = 0;
		q.offset = it->offset;
		q.size = h->size;
		size_t n = dump_of(&q.smp, 0).size;
		q.smp.stack_dyn_size = n;
		int rc = 0;
		if (!it->unpacked && spec_walk(s, &q, n, t)) {	/* unpacked: no offset to read again */
			/* queued */
		} else if (n == 0 && q.smp.callchain) {
			/* The callchain waits in the queue instead of the stack. */
			rc = mt_unwind_order_push(s->order, Q_SAMPLE, &q, queued_len(&q),
						  q.smp.callchain, 8 * q.smp.nr_callchain, t);
		} else {
			rc = mt_unwind_order_push(s->order, Q_SAMPLE, &q, queued_len(&q), q.smp.stack,
						  n, t);
		}
		if (rc != 0)
			oom();
	} else {
		if (s->o->decode_only) {
			record_time(s, h, &t);
			return;
		}
		if (record_time(s, h, &t) != 0) {
			process(s, h);	/* not ordered, or undecodable: reported there */
			return;
		}
		if (mt_unwind_order_push(s->order, Q_RECORD, h, h->size, NULL, 0, t) != 0)
			oom();
	}
	if (t > s->round_max)
		s->round_max = t;
	if (mt_unwind_order_bytes(s->order) > ORDER_MAX_BYTES) {
		/* No FINISHED_ROUND for too long: release all but the newest. */
		s->order_overflows++;
		if (mt_unwind_order_flush(s->order, s->prev_round_max, process_cb, s) != 0)
			oom();
		if (mt_unwind_order_bytes(s->order) > ORDER_MAX_BYTES / 2 &&
		    mt_unwind_order_flush(s->order, s->round_max, process_cb, s) != 0)
			oom();
		s->prev_round_max = s->round_max;
	}
}

/* Start loading the next record of a mapped file while this one is
 * unwound: its header, registers and the top of its stack, where the first
 * frames are, and its last word (dyn_size, after 8 KiB of dump: the parse's
 * one cache miss).  The walk's reads of a dump are otherwise cache misses
 * one after the other.  The next header was itself prefetched one record
 * earlier, so reading its size does not wait.  1 KiB ahead: 4-6% less CPU
 * on bench/unwind.sh's file than none (2 KiB and more: less); the last
 * word: another 4-5% less wall time. */
static void prefetch_next(const struct mt_perf_item *it, const void *map, size_t map_len)
{
	if (!map)
		return;
	const char *next = (const char *)it->header + it->header->size;
	const char *end = (const char *)map + map_len;
	if (next < (const char *)map || next >= end)
		return;	/* not a record of the mapping */
	for (size_t k = 0; k < 1024 && next + k < end; k += 64)
		__builtin_prefetch(next + k);
	if (next + sizeof(struct perf_event_header) <= end) {
		uint16_t size;	/* a damaged file's next record may be misaligned */
		memcpy(&size, next + offsetof(struct perf_event_header, size), sizeof(size));
		if (size >= 8 && next + size <= end)
			__builtin_prefetch(next + size - 8);
	}
}

static void read_event_desc(struct state *s, const uint8_t *p, uint64_t n)
{
	uint32_t nr, asz;
	if (n < 8)
		return;
	memcpy(&nr, p, 4);
	memcpy(&asz, p + 4, 4);
	uint64_t off = 8;
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t nids, len;
		if (off + asz + 8 > n)
			return;
		off += asz;
		memcpy(&nids, p + off, 4);
		memcpy(&len, p + off + 4, 4);
		off += 8;
		if (len > n - off || (uint64_t)nids * 8 > n - off - len)
			return;
		const char *name = (const char *)p + off;
		if (!memchr(name, '\0', len))
			return;
		off += len;
		for (uint32_t k = 0; k < nids; k++, off += 8) {
			struct file_name *v = realloc(s->file_names,
						      (s->nr_file_names + 1) * sizeof(*v));
			if (!v || !(name = strdup(name)))
				oom();
			s->file_names = v;
			memcpy(&v[s->nr_file_names].id, p + off, 8);
			v[s->nr_file_names++].name = (char *)name;
		}
		if (nids == 0) {	/* a single event without ids */
			struct file_name *v = realloc(s->file_names,
						      (s->nr_file_names + 1) * sizeof(*v));
			if (!v || !(name = strdup(name)))
				oom();
			s->file_names = v;
			v[s->nr_file_names].id = UINT64_MAX;
			v[s->nr_file_names++].name = (char *)name;
		}
	}
}

/* Where the bytes of a perf.data file come from: the file itself, or (an
 * .mtz of one) its decoded tail, from the feature sections on. */
struct feat_src {
	int fd;			/* >= 0: pread it */
	const uint8_t *tail;	/* else these original bytes... */
	uint64_t tail_off, tail_len;	/* ...from this offset on */
};

static int src_pread(const struct feat_src *f, void *buf, uint64_t n, uint64_t off)
{
	if (f->fd >= 0)
		return pread(f->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
	if (off < f->tail_off || off - f->tail_off > f->tail_len ||
	    n > f->tail_len - (off - f->tail_off))
		return -1;
	memcpy(buf, f->tail + (off - f->tail_off), n);
	return 0;
}

/* Read one feature section of a perf.data file.  @return : malloc'd bytes
 * (*n set) or NULL when absent or unreadable. */
static uint8_t *read_feature(const struct feat_src *src, const uint64_t feat[4], uint64_t doff,
			     uint64_t dsize, int bit, uint64_t *n)
{
	if (!(feat[bit / 64] & (1ULL << (bit % 64))))
		return NULL;
	int idx = 0;
	for (int b = 0; b < bit; b++)
		idx += (feat[b / 64] >> (b % 64)) & 1;
	uint64_t sec[2];
	if (src_pread(src, sec, sizeof(sec), doff + dsize + (uint64_t)idx * 16) != 0)
		return NULL;
	if (sec[1] > (64u << 20))
		return NULL;
	uint8_t *buf = malloc(sec[1] ? sec[1] : 1);
	if (!buf)
		oom();
	if (src_pread(src, buf, sec[1], sec[0]) != 0) {
		free(buf);
		return NULL;
	}
	*n = sec[1];
	return buf;
}

/* The header fields of a perf.data file (its first 104 bytes) that locate
 * the feature sections.  @return : 0, or -1 when hdr is not one. */
static int file_header(const uint8_t hdr[104], uint64_t *doff, uint64_t *dsize, uint64_t feat[4])
{
	uint64_t hsize;
	if (memcmp(hdr, "PERFILE2", 8))
		return -1;
	memcpy(&hsize, hdr + 8, 8);
	if (hsize < 104)
		return -1;	/* a pipe header */
	memcpy(doff, hdr + 40, 8);
	memcpy(dsize, hdr + 48, 8);
	memcpy(feat, hdr + 72, 32);
	return 0;
}

/* perf.data keeps its build-id table and event names after the data: read
 * them first. */
static void read_file_features(struct state *s, const uint8_t hdr[104], const struct feat_src *src)
{
	uint64_t doff, dsize, feat[4];
	if (file_header(hdr, &doff, &dsize, feat) != 0)
		return;
	uint64_t n;
	uint8_t *buf = read_feature(src, feat, doff, dsize, 12 /* EVENT_DESC */, &n);
	if (buf)
		read_event_desc(s, buf, n);
	free(buf);
	buf = read_feature(src, feat, doff, dsize, 2 /* BUILD_ID */, &n);
	if (!buf)
		return;
	for (uint64_t off = 0; off + 8 <= n;) {
		struct perf_event_header h;
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < 8 || off + h.size > n)
			break;
		on_build_id(s, buf + off, h.size, h.misc);
		off += h.size;
	}
	free(buf);
}

/* The same for an .mtz of a perf.data file, whose first 104 decoded bytes
 * are hdr: the frames from the feature sections on are decoded on their own
 * (a second reader on the file, positioned by mtz_reader_seek).  Without
 * this the events of such a file have no names.  @return : 0, or -1 (the
 * caller warns). */
static int read_mtz_features(struct state *s, const char *path, const uint8_t hdr[104])
{
	uint64_t doff, dsize, feat[4], start;
	if (file_header(hdr, &doff, &dsize, feat) != 0 || doff + dsize < doff)
		return 0;	/* a pipe stream: names come with it */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct mtz_reader *m = NULL;
	struct mt_unwind_out tail;	/* the original bytes from doff + dsize on */
	mt_unwind_out_init_mem(&tail);
	int rc = -1;
	if (fd < 0 || mtz_reader_fdopen(&m, fd, path) != 0)
		goto out;
	mtz_reader_set_threads(m, 0);
	if (mtz_reader_seek(m, doff + dsize, &start) != 0)
		goto out;
	uint64_t want = doff + dsize, pos = start;
	for (;;) {	/* from the frame's start to the end: at most 64 MiB kept */
		const void *p;
		ssize_t k = mtz_reader_chunk(m, &p);
		if (k < 0)
			goto out;
		if (k == 0)
			break;
		const char *q = p;
		uint64_t n = (uint64_t)k;
		if (pos < want) {	/* before the feature sections */
			uint64_t sk = want - pos < n ? want - pos : n;
			q += sk;
			n -= sk;
			pos += sk;
		}
		if (n > ((uint64_t)64 << 20) - tail.len)
			goto out;
		mt_unwind_out_add(&tail, q, (size_t)n);
		if (tail.error)
			oom();
		pos += n;
	}
	if (tail.len == 0 || mtz_reader_damage(m))
		goto out;
	struct feat_src src = { .fd = -1, .tail = (const uint8_t *)tail.buf, .tail_off = want,
				.tail_len = tail.len };
	read_file_features(s, hdr, &src);
	rc = 0;
out:
	mtz_reader_free(m);
	if (fd >= 0)
		close(fd);
	mt_unwind_out_release(&tail);
	return rc;
}

/* ---- input -------------------------------------------------------------- */

/* Replays the bytes read to sniff the format, then reads the fd. */
struct sniff {
	int fd;
	uint8_t head[8];
	size_t n, pos;
	uint64_t done;		/* bytes read from fd, for the progress line */
	int at_offsets;		/* the reader has fd itself: progress from offsets */
};

static ssize_t sniff_read(void *ctx, void *buf, size_t len)
{
	struct sniff *sn = ctx;
	if (sn->pos < sn->n) {
		size_t k = sn->n - sn->pos;
		if (k > len)
			k = len;
		memcpy(buf, sn->head + sn->pos, k);
		sn->pos += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r = read(sn->fd, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		/* The .mtz reader may read from its worker threads. */
		if (r > 0)
			__atomic_fetch_add(&sn->done, (uint64_t)r, __ATOMIC_RELAXED);
		return r;
	}
}

/* The decoded stream of an .mtz, its first bytes kept (a perf.data file's
 * header tells where its feature sections are). */
struct head {
	struct mtz_reader *mtz;
	uint8_t bytes[104];
	size_t n;
};

/* The decoder's buffers, lent to the perf reader (no copy of the stream). */
static ssize_t head_chunk(void *ctx, const void **data)
{
	struct head *h = ctx;
	ssize_t k = mtz_reader_chunk(h->mtz, data);
	if (k > 0 && h->n < sizeof(h->bytes)) {
		size_t c = sizeof(h->bytes) - h->n < (size_t)k ? sizeof(h->bytes) - h->n : (size_t)k;
		memcpy(h->bytes + h->n, *data, c);
		h->n += c;
	}
	return k;
}

static void mtz_warn(void *ctx, const char *msg)
{
	(void)ctx;
	mt_warn("%s", msg);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- summary ------------------------------------------------------------ */

struct modsum {
	uint64_t hits, misses;
	unsigned modules, mismatches;
	int quiet;
};

static void module_summary(struct mt_unwind_module *m, void *arg)
{
	struct modsum *ms = arg;
	ms->modules++;
	ms->hits += m->rules.hits + m->frames.hits;
	ms->misses += m->rules.misses + m->frames.misses;
	if (m->state == MT_UNWIND_MOD_MISMATCH) {
		char want[41], got[41];
		mt_build_id_hex(want, m->want_id, m->want_id_len);
		mt_build_id_hex(got, m->file_id, m->file_id_len);
		ms->mismatches++;
		mt_warn("'%s': build-id mismatch (recorded %s, file has %s): "
			"its frames are not symbolised and are marked _[x]", m->path,
			want, got[0] ? got : "none");
	}
}

static void summary(struct state *s, double secs)
{
	struct modsum ms = { 0 };
	mt_unwind_modules_each(s->modules, module_summary, &ms);
	if (s->o->quiet)
		return;
	mt_info("%" PRIu64 " events (alloc %" PRIu64 ", free %" PRIu64
		", totals %" PRIu64 ", sample %" PRIu64 ", lost %" PRIu64 ") from %" PRIu64
		" records in %.3f s: %.0f events/s", s->events, s->by_kind[K_ALLOC],
		s->by_kind[K_FREE], s->by_kind[K_TOTALS], s->by_kind[K_SAMPLE],
		s->by_kind[K_LOST], s->records, secs, secs > 0 ? s->events / secs : 0.0);
	mt_info("%" PRIu64 " frames (%" PRIu64 " inline); steps: %" PRIu64
		" CFI, %" PRIu64 " frame pointer, %" PRIu64 " CFI rows not compiled",
		s->counts.frames, s->counts.inl, s->st.steps_cfi, s->st.steps_fp, s->st.rules_failed);
	char ends[512];
	size_t k = 0;
	uint64_t walked = 0;
	for (int e = 0; e < MT_UNWIND_END_COUNT; e++) {
		k += (size_t)snprintf(ends + k, sizeof(ends) - k, " %s %" PRIu64,
				      mt_unwind_end_str(e), s->ends[e]);
		walked += e == MT_UNWIND_END_NONE ? 0 : s->ends[e];
	}
	mt_info("stack ends:%s", ends);
	/* Deep stacks (an LLVM-based compiler) need more than the 8 KiB
	 * that perf and mt-capture copy by default (5% of the stacks, and 3
	 * at least: as mt-fold's mt_fold_dumps_too_small). */
	if (s->ends[MT_UNWIND_END_DUMP] >= 3 && s->ends[MT_UNWIND_END_DUMP] * 20 >= walked)
		mt_info("%" PRIu64 " of %" PRIu64 " stacks end where their stack dump "
			"ends: their outer callers are missing; record with a larger dump "
			"(mt-capture --stack-size 65528, perf record --call-graph dwarf,65528)",
			s->ends[MT_UNWIND_END_DUMP], walked);
	uint64_t probes = s->st.memo_hits + s->st.memo_misses;
	uint64_t look = ms.hits + ms.misses;
	mt_info("%u modules, %u build-id mismatches; cache hit rate: pc memo %.2f%% of %"
		PRIu64 " frame lookups, rule and symbol caches behind it %.2f%% of %" PRIu64,
		ms.modules, ms.mismatches,
		probes ? 100.0 * s->st.memo_hits / probes : 0.0, probes,
		look ? 100.0 * ms.hits / look : 0.0, look);
	struct mt_unwind_debug_cache_stats dc = mt_unwind_modules_debug_cache_stats(s->modules);
	if (dc.hits || dc.written || dc.failed || dc.bad)
		mt_info("debug cache: %u inflated copies used, %u written, %u unsound"
			" ones ignored, %u could not be written", dc.hits, dc.written,
			dc.bad, dc.failed);
	const struct mt_unwind_scopes_stats *sc = &s->scopes;
	if (sc->loaded || sc->saved || sc->unsound || sc->failed)
		mt_info("scope index cache: %u indexes read, %u built, %u saved, %u"
			" unsound files ignored, %u files could not be written",
			sc->loaded, sc->built, sc->saved, sc->unsound, sc->failed);
	if (s->callchains)
		mt_info("%" PRIu64 " samples had no stack dump: their frames are the"
			" kernel's frame-pointer callchains", s->callchains);
	if (s->spec_rewalks)
		mt_info("%" PRIu64 " samples unwound again: their mappings changed"
			" while they waited for earlier records", s->spec_rewalks);
	if (s->lost_records)
		mt_info("the recording lost %" PRIu64 " events (%" PRIu64
			" LOST records)", s->lost_count, s->lost_records);
	if (s->marks_dropped)
		mt_info("%" PRIu64 " marker events are missing without a LOST"
			" record", s->marks_dropped);
	if (s->marks_unseen)
		mt_info("%" PRIu64 " marker events the sampler made are missing"
			" (the LOST records may account for them)", s->marks_unseen);
	if (s->silent_images)
		mt_info("%" PRIu64 " process images ran libmt-sampler.so and sent no"
			" process totals (killed by a signal, ended by a bare exit system call, still running at"
			" the end, or could not reach the capture): `lost` lines reason=no-totals;"
			" their allocations since their last report are in no totals",
			s->silent_images);
	if (s->unsampled_images)
		mt_info("%" PRIu64 " process images never loaded libmt-sampler.so (%s):"
			" static programs, or LD_PRELOAD cleared; `lost` lines reason=no-sampler:"
			" their allocations are in no figure", s->unsampled_images,
			s->unsampled_comms[0] ? s->unsampled_comms : "names unknown");
	if (s->memptr_unknown)
		mt_info("%" PRIu64 " posix_memalign calls written with ptr=0x0: the"
			" pointer was not in the return's stack dump (not on the stack, or a"
			" recording made before mt-capture copied it)", s->memptr_unknown);
	if (s->undecodable || s->no_regs || s->filtered || s->superseded || s->internal ||
	    s->unpaired)
		mt_info("%" PRIu64 " undecodable records, %" PRIu64
			" samples without registers, %" PRIu64 " filtered out, %" PRIu64
			" superseded totals reports, %" PRIu64 " allocator-internal calls, %"
			PRIu64 " unpaired returns", s->undecodable, s->no_regs,
			s->filtered, s->superseded, s->internal, s->unpaired);
}

/* ---- main --------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_ADDRS = 256, O_SRCLINE, O_NOINLINE, O_NODEMANGLE, O_MAXDEPTH, O_PID, O_TID,
	       O_DEBUGINFO, O_DECODE, O_DEBUG_CACHE, O_NO_DEBUG_CACHE };
	static const struct option lo[] = {
		{ "addrs", no_argument, NULL, O_ADDRS },
		{ "srcline", no_argument, NULL, O_SRCLINE },
		{ "no-inline", no_argument, NULL, O_NOINLINE },
		{ "no-demangle", no_argument, NULL, O_NODEMANGLE },
		{ "max-depth", required_argument, NULL, O_MAXDEPTH },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "debuginfo-path", required_argument, NULL, O_DEBUGINFO },
		{ "decode-only", no_argument, NULL, O_DECODE },
		{ "debug-cache", required_argument, NULL, O_DEBUG_CACHE },
		{ "no-debug-cache", no_argument, NULL, O_NO_DEBUG_CACHE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	o->max_depth = 256;
	int c;
	while ((c = getopt_long(argc, argv, "o:qh", lo, NULL)) != -1) {
		char *end;
		unsigned long v;
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); exit(0);
		case O_ADDRS: o->sym.addrs = 1; break;
		case O_SRCLINE: o->sym.srcline = 1; break;
		case O_NOINLINE: o->sym.no_inline = 1; break;
		case O_NODEMANGLE: o->sym.no_demangle = 1; break;
		case O_DECODE: o->decode_only = 1; break;
		case O_DEBUGINFO: o->debuginfo_path = optarg; break;
		case O_DEBUG_CACHE: o->debug_cache = optarg; o->no_debug_cache = 0; break;
		case O_NO_DEBUG_CACHE: o->no_debug_cache = 1; break;
		case O_MAXDEPTH:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > 65536) {
				mt_error("--max-depth: '%s' is not a number in 1..65536", optarg);
				return -1;
			}
			o->max_depth = (unsigned)v;
			break;
		case O_PID:
		case O_TID:
			if (idset_parse(c == O_PID ? &o->pids : &o->tids, optarg) != 0) {
				mt_error("--%s: '%s' is not a comma-separated list of ids",
					 c == O_PID ? "pid" : "tid", optarg);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (optind + 1 != argc) {
		mt_error("%s", optind >= argc ? "no input given"
							    : "more than one input given");
		return -1;
	}
	o->input = argv[optind];
	return 0;
}

int main(int argc, char **argv)
{
	mt_cli_init("mt-unwind");
	struct opts o = { 0 };
	struct state s = { .o = &o, .spec_fd = -1, .sampler_input = -1 };
	int status = 0, fd = -1, out_fd = 1;
	/* Heaps grow 16 MiB past each request (address space only: pages
	 * are touched as they are used).  By default the threads' heaps grew
	 * a little at a time, 959 mprotect calls on a make -j2 recording of
	 * 200 processes (31 with it): 32.4 -> 31.0 ms, medians of 41 interleaved
	 * runs; python3.11d: no change. */
	mallopt(M_TOP_PAD, 16 << 20);
	if (parse_args(argc, argv, &o) != 0) {
		fprintf(stderr, "usage: mt-unwind [options] IN   (see --help)\n");
		status = MT_EXIT_USAGE;
		goto out;
	}
	const char *name = strcmp(o.input, "-") == 0 ? "<stdin>" : o.input;
	fd = strcmp(o.input, "-") == 0 ? 0 : open(o.input, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		mt_error("cannot open '%s': %s", o.input, strerror(errno));
		status = MT_EXIT_ENV;
		goto out;
	}
	struct sniff sn = { .fd = fd };
	struct head head = { 0 };
	while (sn.n < sizeof(sn.head)) {
		ssize_t r = read(fd, sn.head + sn.n, sizeof(sn.head) - sn.n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			mt_error("cannot read '%s': %s", name, strerror(errno));
			status = MT_EXIT_ENV;
			goto out;
		}
		if (r == 0)
			break;
		sn.n += (size_t)r;
	}
	if (sn.n == 0) {
		mt_error("'%s' is empty", name);
		status = MT_EXIT_DATA;
		goto out;
	}
	int rc;
	if (mtz_is_mtz(sn.head, sn.n)) {
		rc = mtz_reader_new(&s.mtz, sniff_read, &sn, name);
		if (rc != 0) {
			mt_error("'%s': %s", name, mtz_strerror(rc));
			status = rc == MTZ_ENOMEM ? MT_EXIT_ENV : MT_EXIT_DATA;
			goto out;
		}
		/* One decoding worker: a second one competes with the writer
		 * thread for the other core and fills one more 32 MiB frame
		 * buffer (bench/unwind.sh's .mtz: 131-133 -> 116-124 ms). */
		mtz_reader_set_threads(s.mtz, 1);
		mtz_reader_set_warn(s.mtz, mtz_warn, NULL);
		head.mtz = s.mtz;
		rc = mt_perf_reader_new_chunked(&s.reader, head_chunk, &head, name);
	} else if (fd != 0 && lseek(fd, 0, SEEK_SET) == 0) {
		/* A regular file: the reader maps it (no copy through read). */
		rc = mt_perf_reader_fdopen(&s.reader, fd, name);
		sn.at_offsets = 1;
	} else {
		rc = mt_perf_reader_new(&s.reader, sniff_read, &sn, name);
	}
	if (rc == 0)	/* perf record -z: the records inside COMPRESSED ones */
		rc = mt_perf_reader_unpack(s.reader);
	if (rc != 0) {
		mt_error("'%s': %s", name,
			s.reader ? mt_perf_reader_error(s.reader) : mt_perf_strerror(rc));
		status = rc == MT_PERF_ENOMEM || rc == MT_PERF_EIO ? MT_EXIT_ENV : MT_EXIT_DATA;
		goto out;
	}
	if (o.output && !o.decode_only) {
		out_fd = open(o.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (out_fd < 0) {
			mt_error("cannot open '%s': %s", o.output, strerror(errno));
			status = MT_EXIT_ENV;
			goto out;
		}
	}
	if (mt_unwind_modules_new(&s.modules, o.debuginfo_path) != 0 ||
	    mt_unwind_maps_new(&s.maps, s.modules) != 0 ||
	    mt_unwind_order_new(&s.order) != 0 ||
	    !(s.frames = calloc(o.max_depth, sizeof(*s.frames))))
		oom();
	if (!o.no_debug_cache) {
		char *dir = o.debug_cache ? NULL : mt_unwind_debug_cache_default_dir();
		mt_unwind_modules_set_debug_cache(s.modules, o.debug_cache ? o.debug_cache : dir);
		free(dir);
	}
	mt_unwind_out_init_fd(&s.fdout, o.decode_only ? -1 : out_fd);
	if (!o.decode_only)
		s.wr = mt_unwind_writer_start(&s.fdout, &o.sym);
	mt_unwind_out_init_mem(&s.b.out);
	mt_unwind_out_init_mem(&s.b.unk);
	mt_unwind_last_stack_init(&s.last);
	/* Loaders read symbols (and DWARF for inline frames or file:line) in a
	 * libdwfl session of their own; --addrs with inline frames needs the
	 * DWARF too, and a session apart from the unwinder's (see cfi.c). */
	int need_dwarf = !o.sym.no_inline || o.sym.srcline;
	if (!o.decode_only && (!o.sym.addrs || need_dwarf))
		mt_unwind_modules_prefetch(s.modules, need_dwarf);
	struct stat st;
	int regular = fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
	if (!s.mtz && regular) {
		uint8_t hdr[104];
		struct feat_src src = { .fd = fd };
		if (src_pread(&src, hdr, sizeof(hdr), 0) == 0)
			read_file_features(&s, hdr, &src);
		/* records can be read again at their offsets */
		if (fd != 0 && !o.decode_only)
			s.spec_fd = fd;
	} else if (s.mtz && regular && head.n == sizeof(head.bytes) && !o.decode_only &&
		   read_mtz_features(&s, fd == 0 ? "/proc/self/fd/0" : o.input, head.bytes) != 0) {
		/* An .mtz of a perf.data file: its names and build-ids are in the
		 * feature sections at the end of the original. */
		mt_warn("'%s': the event names and build-ids of the perf.data"
			" file inside could not be read (damaged end?): events are named by their"
			" attrs only", name);
	} else if (!regular && !o.decode_only && mt_perf_reader_format(s.reader) == MT_PERF_FILE) {
		mt_warn("'%s': a perf.data file read from a pipe: its event"
			" names and build-ids come after the data and cannot be read first: events"
			" are named by their attrs only (give the file by name)", name);
	}

	size_t map_len;
	const void *map = mt_perf_reader_mapping(s.reader, &map_len);
	struct mt_unwind_prefault *prefault = mt_unwind_prefault_start(map, map_len,
									!o.decode_only);
	double t0 = now();
	struct mt_progress progress;
	mt_progress_init(&progress, mt_prog(), mt_progress_input_size(fd), o.quiet);
	unsigned long nr_items = 0;
	if (!o.decode_only) {
		mt_unwind_out_str(&s.b.out, "# mt-unwind 1\n# input: ");
		mt_unwind_out_str(&s.b.out, name);
		mt_unwind_out_str(&s.b.out, "\n");
	}
	struct mt_perf_item it;
	for (;;) {
		rc = mt_perf_reader_next(s.reader, &it);
		if (rc < 0 && !mt_perf_reader_fatal(s.reader)) {
			/* A record whose size holds and whose content does not
			 * (an id no attr has, fields past its end): counted,
			 * named (the first few), and reading goes on after it. */
			if (s.undecodable < 10)
				mt_error("'%s': %s: skipped", name, mt_perf_reader_error(s.reader));
			on_undecodable(&s);
			continue;
		}
		if (rc != 1)
			break;
		if (it.kind == MT_PERF_ITEM_RECORD) {
			if (!it.unpacked)
				prefetch_next(&it, map, map_len);
			on_record(&s, &it);
		}
		defer_check(&s);
		if (s.out_error)
			break;
		/* Records are copied or read again with pread: the mapping is
		 * needed from here on only (64 records: about 512 KiB). */
		if ((++nr_items & 63) == 0 && map)
			mt_unwind_prefault_done(prefault, it.offset);
		if ((nr_items & 1023) == 0)
			mt_progress_update(&progress, sn.at_offsets ? it.offset
					   : __atomic_load_n(&sn.done, __ATOMIC_RELAXED));
	}
	if (rc < 0) {
		mt_error("'%s': %s", name, mt_perf_reader_error(s.reader));
		status = rc == MT_PERF_EIO || rc == MT_PERF_ENOMEM ? MT_EXIT_ENV : MT_EXIT_DATA;
	}
	mt_unwind_prefault_stop(prefault);
	if (mt_unwind_order_flush(s.order, UINT64_MAX, process_cb, &s) != 0)
		oom();
	/* Trace entries whose return never came: the call was made. */
	while (s.pending) {
		struct pending *p = s.pending;
		if (!p->internal && p->line_head) {
			mt_unwind_out_str(&s.b.out, p->line_head);
			put_kx(&s.b.out, "ptr", 0);
			mt_unwind_out_str(&s.b.out, p->line_tail);
			s.unpaired++;
		}
		pending_unlink(&s, p);
	}
	totals_flush(&s, 0, 1);
	for (size_t i = 0; i < s.images.cap; i++)
		if (s.images.keys[i] != MT_UNWIND_HASH_EMPTY)
			image_end(&s, (uint32_t)s.images.keys[i], s.round_max);
	mt_unwind_hashmap_release(&s.images);
	mt_unwind_hashmap_release(&s.forked);
	defer_flush(&s);
	if (s.wr)
		writer_end(&s);
	mt_unwind_out_flush(&s.fdout);
	mt_progress_release(&progress);
	double secs = now() - t0;
	if (s.b.out.error || s.b.unk.error)
		oom();
	if (s.fdout.error) {
		mt_error("cannot write '%s': %s", o.output ? o.output : "<stdout>",
			strerror(s.fdout.error));
		status = MT_EXIT_ENV;
		goto out;
	}
	if (s.mtz && mtz_reader_damage(s.mtz)) {
		mt_error("'%s': damaged: %" PRIu64 " parts could not be read",
			name, mtz_reader_damage(s.mtz));
		if (!status)
			status = MT_EXIT_DATA;
	}
	if ((s.undecodable || s.data_error) && !status)
		status = MT_EXIT_DATA;
	/* after the output: a reader of it need not wait */
	s.scopes = mt_unwind_modules_save_scopes(s.modules);
	summary(&s, secs);
	if (o.output && out_fd != 1) {
		int e = close(out_fd);
		out_fd = 1;
		if (e != 0) {
			mt_error("cannot write '%s': %s", o.output, strerror(errno));
			status = MT_EXIT_ENV;
		}
	}
out:
	if (s.wr)
		writer_end(&s);
	if (out_fd > 1)
		close(out_fd);
	if (!FREE_AT_EXIT)
		return status;
	mt_unwind_order_free(s.order);
	mt_perf_reader_free(s.reader);
	mtz_reader_free(s.mtz);
	mt_unwind_maps_free(s.maps);
	mt_unwind_modules_free(s.modules);
	mt_unwind_batch_release(&s.b);
	mt_unwind_last_stack_release(&s.last);
	mt_unwind_out_release(&s.fdout);
	free(s.frames);
	free(s.rebuf);
	free(s.marks);
	free(s.ev);
	for (size_t i = 0; i < s.nr_file_names; i++)
		free(s.file_names[i].name);
	free(s.file_names);
	free(o.pids.v);
	free(o.tids.v);
	if (fd > 0)
		close(fd);
	return status;
}
