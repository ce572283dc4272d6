/* Event specs for the three modes (attr fields: docs/formats/capture-events.md). */
#include "capture/capture_events.h"
#include "capture/capture_elf.h"
#include "capture/sample_ring.h"
#include "codec/perf_stream.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* A new event with the attr bits every mode sets; the first one added
 * carries the side-band records (MMAP2, COMM, FORK/EXIT).
 * @return : the event, or NULL when there are MT_CAPTURE_MAX_EVENTS
 * (err: MT_CAPTURE_ETOOMANY). */
/* One event to open: its attr, the name written to the stream and, for
 * uprobes, the path that attr.config1 points to (so it must not move while
 * the event is opened: events live in a fixed array). */
struct mt_capture_event {
	char name[128];
	struct perf_event_attr attr;
	char path[PATH_MAX];
	/* Not opened: its samples come from the sample ring, records of this
	 * kind (MT_SAMPLE_RING_ALLOC, ...); 0 for a real event. */
	int ring_kind;
};

struct mt_capture_events {
	struct mt_capture_event ev[MT_CAPTURE_MAX_EVENTS];
	int nr;
};

int mt_capture_events_new(struct mt_capture_events **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : MT_CAPTURE_ENOMEM;
}

void mt_capture_events_free(struct mt_capture_events *evs)
{
	free(evs);
}

int mt_capture_events_nr(const struct mt_capture_events *evs)
{
	return evs->nr;
}

const char *mt_capture_events_name(const struct mt_capture_events *evs, int i)
{
	return evs->ev[i].name;
}

struct perf_event_attr *mt_capture_events_attr(struct mt_capture_events *evs, int i)
{
	return &evs->ev[i].attr;
}

const char *mt_capture_events_uprobe_path(const struct mt_capture_events *evs, int i)
{
	return evs->ev[i].path[0] ? evs->ev[i].path : NULL;
}

int mt_capture_events_ring_kind(const struct mt_capture_events *evs, int i)
{
	return evs->ev[i].ring_kind;
}

int mt_capture_events_track_apart(struct mt_capture_events *evs, struct mt_capture_err *err)
{
	if (evs->nr >= MT_CAPTURE_MAX_EVENTS) {
		char max[16];
		snprintf(max, sizeof(max), "%d", MT_CAPTURE_MAX_EVENTS);
		return mt_capture_err_set(err, MT_CAPTURE_ETOOMANY, 0, max, NULL);
	}
	memmove(&evs->ev[1], &evs->ev[0], sizeof(evs->ev[0]) * (size_t)evs->nr);
	evs->nr++;
	struct mt_capture_event *d = &evs->ev[0];
	*d = evs->ev[1];
	snprintf(d->name, sizeof(d->name), "dummy:u");
	d->path[0] = 0;
	d->ring_kind = 0;
	d->attr.type = PERF_TYPE_SOFTWARE;
	d->attr.config = PERF_COUNT_SW_DUMMY;
	d->attr.uprobe_path = 0;
	d->attr.probe_offset = 0;
	struct perf_event_attr *a = &evs->ev[1].attr;
	a->mmap = a->mmap2 = a->mmap_data = a->comm = a->comm_exec = a->task = a->build_id = 0;
	/* The paths moved with their events. */
	for (int i = 1; i < evs->nr; i++)
		if (evs->ev[i].path[0])
			evs->ev[i].attr.uprobe_path = (uint64_t)(uintptr_t)evs->ev[i].path;
	return 0;
}

static struct mt_capture_event *event_add(struct mt_capture_events *evs, const char *name,
					  unsigned stack_size, int with_stack,
					  struct mt_capture_err *err)
{
	if (evs->nr >= MT_CAPTURE_MAX_EVENTS) {
		char max[16];
		snprintf(max, sizeof(max), "%d", MT_CAPTURE_MAX_EVENTS);
		mt_capture_err_set(err, MT_CAPTURE_ETOOMANY, 0, max, NULL);
		return NULL;
	}
	struct mt_capture_event *e = &evs->ev[evs->nr++];
	memset(e, 0, sizeof(*e));
	snprintf(e->name, sizeof(e->name), "%s", name);
	struct perf_event_attr *a = &e->attr;
	a->size = sizeof(*a);
	a->sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			 PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER;
	if (with_stack) {
		/* perf script unwinds the dump only for evsels with CALLCHAIN. */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_user = 1;
		a->sample_stack_user = stack_size;
	}
	a->sample_regs_user = MT_CAPTURE_REGS_MASK;
	a->sample_period = 1;
	a->read_format = PERF_FORMAT_ID;
	a->inherit = 1;
	a->sample_id_all = 1;
	a->disabled = 1;
	a->exclude_hv = 1;
	if (evs->nr == 1) {	/* the tracking event */
		a->mmap = 1;
		a->mmap2 = 1;
		a->mmap_data = 1;
		a->comm = 1;
		a->comm_exec = 1;
		a->task = 1;
		a->build_id = 1;
	}
	return e;
}

/* Every period-th event.  The kernel records every software and uprobe
 * event whatever the period when PERF_SAMPLE_PERIOD is asked for (it then
 * reports each one's count), so a period above 1 drops that field: the
 * weight is attr.sample_period, as in `perf record -c`. */
static void set_period(struct perf_event_attr *a, uint64_t period)
{
	a->sample_period = period;
	if (period > 1)
		a->sample_type &= ~(uint64_t)PERF_SAMPLE_PERIOD;
}

int mt_capture_uprobe_type(struct mt_capture_err *err)
{
	const char *p = "/sys/bus/event_source/devices/uprobe/type";
	FILE *f = fopen(p, "re");
	int type = -1;
	if (!f)
		return mt_capture_err_set(err, MT_CAPTURE_ENOUPROBE, errno, p, NULL);
	if (fscanf(f, "%d", &type) != 1 || type < 0)
		type = mt_capture_err_set(err, MT_CAPTURE_EUPROBETYPE, 0, p, NULL);
	fclose(f);
	return type;
}

/* A uprobe (or uretprobe) on function fn of path.  @return : 0, 1 when
 * path does not define fn, or an error code (err filled). */
static int uprobe_add(struct mt_capture_events *evs, const char *name, const char *path,
		      const char *fn, int ret, unsigned stack_size, int with_stack,
		      uint64_t *offset_out, struct mt_capture_err *err)
{
	uint64_t off;
	int rc = mt_capture_elf_func_offset(path, fn, &off, err);
	if (rc)
		return rc;
	int type = mt_capture_uprobe_type(err);
	if (type < 0)
		return type;
	struct mt_capture_event *e = event_add(evs, name, stack_size, with_stack, err);
	if (!e)
		return MT_CAPTURE_ETOOMANY;
	snprintf(e->path, sizeof(e->path), "%s", path);
	e->attr.type = (uint32_t)type;
	e->attr.config = ret ? 1 : 0;	/* format/retprobe: config:0 */
	e->attr.uprobe_path = (uint64_t)(uintptr_t)e->path;
	e->attr.probe_offset = off;
	if (offset_out)
		*offset_out = off;
	return 0;
}

int mt_capture_events_sample(struct mt_capture_events *evs, const char *sampler,
			     unsigned stack_size, int ring, struct mt_capture_err *err)
{
	/* optional: a sampler from before the timeline (-p on a process that
	 * preloads an older one) has no tick marker, and is captured without */
	static const struct {
		const char *name, *fn;
		int stack;
		uint64_t regs;
		int ring_kind;
		int optional;
	} markers[] = {
		{ "mt:alloc", "mt_sampler_mark_alloc", 1, MT_CAPTURE_REGS_ENTRY, MT_SAMPLE_RING_ALLOC, 0 },
		{ "mt:free", "mt_sampler_mark_free", 0, MT_CAPTURE_REGS_ARGS, MT_SAMPLE_RING_FREE, 0 },
		{ "mt:totals", "mt_sampler_mark_totals", 0, MT_CAPTURE_REGS_MASK, MT_SAMPLE_RING_TOTALS,
		  0 },
		{ "mt:tick", "mt_sampler_mark_tick", 0, MT_CAPTURE_REGS_MASK, MT_SAMPLE_RING_TICK, 1 },
	};
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		int rc = uprobe_add(evs, markers[i].name, sampler, markers[i].fn, 0, stack_size,
				    markers[i].stack, NULL, err);
		if (rc > 0 && markers[i].optional)
			continue;
		if (rc > 0)
			rc = mt_capture_err_set(err, MT_CAPTURE_ENOTSAMPLER, 0, sampler, markers[i].fn);
		if (rc)
			return rc;
		struct mt_capture_event *e = &evs->ev[evs->nr - 1];
		e->attr.sample_regs_user = markers[i].regs;
		if (ring)
			e->ring_kind = markers[i].ring_kind;
		/* One clock for the samples' TIME and the sampler's own times
		 * (the ring's records, mt:tick's peak_time): CLOCK_MONOTONIC,
		 * through the ring or not.  The tracking event is a copy of the
		 * first (mt_capture_events_track_apart). */
		e->attr.use_clockid = 1;
		e->attr.clockid = CLOCK_MONOTONIC;
	}
	return 0;
}

int mt_capture_events_trace(struct mt_capture_events *evs, const char *lib,
			    unsigned stack_size, uint64_t period, struct mt_capture_err *err)
{
	/* memalign before aligned_alloc: glibc 2.36 makes them one function,
	 * which gets one probe named after the first. */
	static const char *const fns[] = {
		"malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign",
		"memalign", "aligned_alloc", "valloc", "pvalloc",
	};
	uint64_t seen[sizeof(fns) / sizeof(fns[0])];
	int nseen = 0, probes = 0;
	char group[64];
	const char *base = strrchr(lib, '/');
	base = base ? base + 1 : lib;
	size_t glen = strcspn(base, ".");
	snprintf(group, sizeof(group), "probe_%.*s", (int)(glen < 50 ? glen : 50), base);

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		uint64_t off;
		int rc = mt_capture_elf_func_offset(lib, fns[i], &off, err);
		if (rc < 0)
			return rc;
		if (rc > 0)
			continue;
		int dup = 0;
		for (int j = 0; j < nseen; j++)
			dup |= seen[j] == off;
		if (dup)
			continue;
		seen[nseen++] = off;
		char name[128];
		int is_free = !strcmp(fns[i], "free");
		snprintf(name, sizeof(name), "%s:%s", group, fns[i]);
		rc = uprobe_add(evs, name, lib, fns[i], 0, stack_size, !is_free, NULL, err);
		if (rc)
			return rc;
		set_period(&evs->ev[evs->nr - 1].attr, period);
		probes++;
		if (period == 1 && !is_free) {
			snprintf(name, sizeof(name), "%s:%s__return", group, fns[i]);
			rc = uprobe_add(evs, name, lib, fns[i], 1, stack_size, 0, NULL, err);
			if (rc)
				return rc;
			if (!strcmp(fns[i], "posix_memalign")) {
				/* The new block's address is in memory, at memptr. */
				struct perf_event_attr *a = &evs->ev[evs->nr - 1].attr;
				a->sample_type |= PERF_SAMPLE_STACK_USER;
				a->sample_stack_user = MT_CAPTURE_MEMPTR_DUMP;
			}
		}
	}
	if (!probes)
		return mt_capture_err_set(err, MT_CAPTURE_ENOALLOCATOR, 0, lib, NULL);
	return 0;
}

/* Where tracefs may be mounted. */
static const char *const tracefs_dirs[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };

/* The id of tracepoint SYS:NAME (sched:sched_switch, syscalls:sys_enter_write,
 * a uprobe that perf probe made) from tracefs, as perf finds it.
 * @return : the id, or MT_CAPTURE_ETPNAME (not a name), ETPUNKNOWN (no such
 * tracepoint), ETPDENIED or ENOTRACEFS (tracefs not readable or not
 * mounted); err filled. */
static long long tracepoint_id(const char *name, struct mt_capture_err *err)
{
	const char *colon = strchr(name, ':');
	size_t sys_len = colon ? (size_t)(colon - name) : 0;
	/* Both parts are file names in tracefs: nothing that could climb out. */
	int ok = colon && sys_len && colon[1] && !strchr(colon + 1, ':');
	for (const char *c = name; ok && *c; c++)
		ok = c == colon || *c == '_' || *c == '-' || *c == '.' ||
		     (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z');
	if (!ok || strstr(name, ".."))
		return mt_capture_err_set(err, MT_CAPTURE_ETPNAME, 0, name, NULL);
	/* The first place where tracefs answers decides: a second one (under
	 * debugfs, root only) would turn "no such tracepoint" into "denied". */
	int denied = 0, mounted = 0;
	for (size_t i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]) && !mounted; i++) {
		char path[512];
		snprintf(path, sizeof(path), "%s/events/header_page", tracefs_dirs[i]);
		if (access(path, F_OK) != 0) {
			denied |= errno == EACCES || errno == EPERM;
			continue;
		}
		mounted = 1;
		int k = snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", tracefs_dirs[i],
				 (int)sys_len, name, colon + 1);
		FILE *f = k > 0 && (size_t)k < sizeof(path) ? fopen(path, "re") : NULL;
		if (!f) {
			denied = errno == EACCES || errno == EPERM;
			break;
		}
		long long id = -1;
		if (fscanf(f, "%lld", &id) != 1)
			id = -1;
		fclose(f);
		if (id >= 0)
			return id;
	}
	return mt_capture_err_set(err, denied ? MT_CAPTURE_ETPDENIED : !mounted ? MT_CAPTURE_ENOTRACEFS
				       : MT_CAPTURE_ETPUNKNOWN, 0, name, NULL);
}

/* A raw hardware event, r and its hex config (r003c), as perf writes it.
 * @return : 1 with *config, or 0 when name is not one. */
static int raw_event(const char *name, uint64_t *config)
{
	if (name[0] != 'r' || !name[1] || strlen(name) > 17)
		return 0;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(name + 1, &end, 16);
	if (*end || errno || name[1] == '-' || name[1] == '+')
		return 0;
	*config = v;
	return 1;
}

int mt_capture_events_named(struct mt_capture_events *evs, const char *name,
			    unsigned stack_size, uint64_t freq, uint64_t period,
			    struct mt_capture_err *err)
{
	uint32_t type = 0;
	uint64_t config = 0;
	int known = mt_perf_event_by_name(name, &type, &config);
	if (!known && strchr(name, ':')) {
		long long id = tracepoint_id(name, err);
		if (id < 0)
			return (int)id;
		type = PERF_TYPE_TRACEPOINT;
		config = (uint64_t)id;
		known = 1;
		if (!freq && !period)
			period = 1;	/* as perf: every hit, a frequency means little */
	}
	if (!known && raw_event(name, &config)) {
		type = PERF_TYPE_RAW;
		known = 1;
	}
	if (!known) {
		char list[sizeof(err->detail)];
		size_t n = 0;
		list[0] = 0;
		for (size_t i = 0; mt_perf_event_nth(i) && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? " " : "",
					      mt_perf_event_nth(i));
		return mt_capture_err_set(err, MT_CAPTURE_EEVENT, 0, name, list);
	}
	struct mt_capture_event *e = event_add(evs, name, stack_size, 1, err);
	if (!e)
		return MT_CAPTURE_ETOOMANY;
	e->attr.type = type;
	e->attr.config = config;
	if (!freq && !period)
		freq = 999;
	if (freq) {
		e->attr.freq = 1;
		e->attr.sample_freq = freq;
	} else {
		set_period(&e->attr, period);
	}
	return 0;
}
