/* A profile: mt-unwind events aggregated by stack, thread and process.
 *
 * Events go in one at a time (any order, any number of inputs: adding is the
 * same whether the events came from one file or several); the profile keeps
 * an estimate accumulator per stack and metric, the same per thread, the
 * sampler's exact totals, and the allocations and frees it needs to decide
 * what is still live.  mt_fold_profile_finish() matches frees to allocations
 * and completes the inuse metrics; after it the profile is read-only.
 *
 * Liveness (the inuse metrics): allocations and frees are grouped by pid and
 * pointer and put in time order, ties kept in input order (files in the
 * order given).  A free ends the allocation live at that pointer, if any (else
 * it counts as an unmatched free); an allocation at a pointer that is already
 * live ends the earlier one (a realloc in place or a free that was not
 * recorded: counted as an implicit free).  Allocations live at the end of the
 * input are the inuse set.  Allocations with ptr=0 cannot be matched and are
 * left out of inuse (counted).
 */
#ifndef MT_FOLD_PROFILE_H
#define MT_FOLD_PROFILE_H

#include <stdint.h>
#include <stdio.h>

#include "fold/est.h"
#include "fold/hist.h"
#include "fold/line.h"
#include "fold/live.h"
#include "fold/timeline.h"

enum mt_fold_metric {
	MT_FOLD_ALLOC_BYTES,
	MT_FOLD_ALLOC_OBJECTS,
	MT_FOLD_INUSE_BYTES,
	MT_FOLD_INUSE_OBJECTS,
	MT_FOLD_SAMPLES,
	MT_FOLD_PERIOD,
	/* live at the peak moment (or --at), and temporary allocations */
	MT_FOLD_PEAK_BYTES,
	MT_FOLD_PEAK_OBJECTS,
	MT_FOLD_TEMP_BYTES,
	MT_FOLD_TEMP_OBJECTS,
	MT_FOLD_NMETRICS
};

static inline int mt_fold_metric_is_peak(enum mt_fold_metric m)
{
	return m == MT_FOLD_PEAK_BYTES || m == MT_FOLD_PEAK_OBJECTS;
}
static inline int mt_fold_metric_is_temp(enum mt_fold_metric m)
{
	return m == MT_FOLD_TEMP_BYTES || m == MT_FOLD_TEMP_OBJECTS;
}

/* @return : "alloc_bytes" etc.; the unit ("bytes", "objects", "samples",
 * "events" for period). */
const char *mt_fold_metric_name(enum mt_fold_metric m);
const char *mt_fold_metric_unit(enum mt_fold_metric m);

/* Is the sampler's figure an interval of metric m is cut at ("^", the
 * snapshot's bound) the metric's exact value, a total?  For peak_bytes it
 * is only a top: the exact block peak, which the requested bytes live
 * cannot exceed. */
static inline int mt_fold_metric_bound_exact(enum mt_fold_metric m)
{
	return m != MT_FOLD_PEAK_BYTES;
}

/* That figure's name: "exact total" or "exact block peak". */
const char *mt_fold_metric_bound_name(enum mt_fold_metric m);

/* @return : 0 with *m set, or -1 for an unknown name. */
int mt_fold_metric_parse(const char *name, enum mt_fold_metric *m);

/* Root frames added above each stack, in this order. */
enum {
	MT_FOLD_PREFIX_COMM = 1,	/* the thread's command name */
	MT_FOLD_PREFIX_PID = 2,		/* "pid N" */
	MT_FOLD_PREFIX_TID = 4,		/* "tid N" */
	MT_FOLD_PREFIX_LABELS = 8,	/* the input's labels, "k=v,k=v" (may be
					 * empty): mt_fold_profile_input_labels */
};

/* The frame written for an event without a stack. */
#define MT_FOLD_NO_STACK "[no stack]"

/* Exact figures from the sampler's totals lines, summed over lines. */
struct mt_fold_totals {
	/* 128 bits: the sums of many lines' 64-bit figures do not wrap */
	mt_fold_u128 alloc_bytes, allocs, frees, freed_bytes, peak_bytes, peak_error;
	uint64_t lines;		/* 0: none seen */
	/* Lines of forked images (forked=1): their frees count blocks their
	 * parent allocated, so allocs - frees is not what their own
	 * allocations leave live. */
	uint64_t forked_lines;
};

struct mt_fold_thread {
	uint32_t pid, tid;
	const char *comm;	/* latest name seen; owned by the profile */
	struct mt_fold_est est[MT_FOLD_NMETRICS];
	struct mt_fold_totals totals;	/* scope=thread lines */
};

struct mt_fold_process {
	uint32_t pid;
	struct mt_fold_totals totals;	/* scope=process lines */
	mt_fold_u128 silent_images;	/* images that sent none (reason=no-totals) */
};

#define MT_FOLD_MAX_EVENTS 8

/* What came in, for the report header and for warnings. */
struct mt_fold_counts {
	uint64_t lines;		/* all lines read, comments included */
	uint64_t events;	/* parsed event lines */
	uint64_t kind[MT_FOLD_NKINDS];	/* by enum mt_fold_kind */
	uint64_t bad_lines;	/* rejected: not folded */
	/* Lost events: the sum of the counts of the `lost` lines, but for
	 * reason=unseen ones (the sampler's marker calls that a stream lacks,
	 * after its LOST records: maybe the same events), which raise it only
	 * where a stream's unseen calls exceed its kernel losses.  lost_records:
	 * the lines other than unseen ones; unseen_events: their counts. */
	uint64_t lost_records;
	mt_fold_u128 lost_events, unseen_events;
	mt_fold_u128 silent_images;	/* `lost` reason=no-totals: images without totals */
	mt_fold_u128 unsampled_images;	/* `lost` reason=no-sampler: images without the sampler */
	uint64_t truncated;	/* stacks ending other than complete/none */
	uint64_t end_of_dump;	/* of them end=end-of-dump: the dump was too small */
	uint64_t stacks;	/* events with a stack walked (end other than none) */
	uint64_t no_stack;	/* alloc/sample events with no frames */
	uint64_t sample_allocs, trace_allocs;	/* by mode (rate= or every=) */
	uint64_t full_allocs;	/* of them rate=1 or every=1: recorded exactly */
	uint64_t rate_min, rate_max;	/* sample mode rates seen (bytes) */
	uint64_t every_min, every_max;	/* trace mode every=N seen */
	uint64_t unmatched_frees, implicit_frees;
	uint64_t no_ptr_allocs;	/* left out of inuse */
	uint64_t freq_samples;	/* event samples from a frequency (-F) */
	/* Sample lines by their event= name, the first MT_FOLD_MAX_EVENTS names
	 * (more_events: lines of further names); those left out by
	 * mt_fold_profile_only_event are counted here, and in nothing else. */
	struct mt_fold_event_name {
		const char *name;	/* owned by the profile */
		uint64_t samples;
	} event_names[MT_FOLD_MAX_EVENTS];
	unsigned nr_event_names;
	uint64_t more_events;
	uint64_t other_event_samples;	/* left out: another event than the one asked */
	uint64_t filtered_out;	/* events left out by mt_fold_profile_filter */
	uint64_t time_first, time_last;	/* earliest, latest TIME > 0 folded */
	uint64_t seq_allocs, seq_frees;	/* alloc and free lines with seq= */
	uint64_t peak_unticked;	/* sampled allocations of processes without a
				 * tick: in no peak figure (without --at) */
	const char *event;	/* the event whose sample lines are folded: the
				 * input's one, or the one asked for; NULL: none,
				 * or several (owned by the profile or its caller) */
};

/* An event name as messages and the report show it: the lines without
 * event= (name "") as --event '' chooses them. */
static inline const char *mt_fold_event_label(const char *name)
{
	return *name ? name : "'' (lines without event=)";
}

/* Do enough stacks end at the end of their dump (more than 1%, as
 * mt-unwind says, and 3 at least: one deep stack among a dozen samples is
 * no pattern) that the capture should have copied more of the stack?  At
 * 1.5% cut, cc1's outer functions came out 1.7% low. */
static inline int mt_fold_dumps_too_small(const struct mt_fold_counts *c)
{
	return c->end_of_dump >= 3 && c->end_of_dump * 100 > c->stacks;
}

struct mt_fold_profile;

/* @param prefix : MT_FOLD_PREFIX_* bits.
 * @return : a new empty profile, or NULL when out of memory. */
struct mt_fold_profile *mt_fold_profile_new(unsigned prefix);

/* Accepts NULL. */
void mt_fold_profile_free(struct mt_fold_profile *p);

/* Fold only the sample lines of event name (event=NAME), before the first
 * add: the periods of different events (cpu-clock and page-faults, cycles
 * and instructions) do not add up.  name must outlive p. */
void mt_fold_profile_only_event(struct mt_fold_profile *p, const char *name);

/* Which threads to fold (--only-pid/--only-tid/--only-comm): an event is
 * kept when its pid is one of pids (or none given), its tid one of tids and
 * its comm one of comms, likewise.  Lost lines that name no thread's image
 * (kernel losses, undecodable records) are always kept: a loss is never
 * hidden.  Tick lines (a process's) are kept by their pid alone, so the
 * peak moment of a thread's process stays known under --only-tid.  The
 * rest are counted in counts.filtered_out.  The arrays must
 * outlive p; set before the first add. */
struct mt_fold_filter {
	const uint32_t *pids, *tids;
	unsigned npids, ntids;
	const char *const *comms;
	unsigned ncomms;
};
void mt_fold_profile_filter(struct mt_fold_profile *p, const struct mt_fold_filter *f);

struct mt_fold_locs;

/* Keep the location details of mt-unwind --pprof-info input (module lines,
 * addresses, functions' first lines) in the stack keys, renumbered through
 * locs (fold/locs.h; shared by profiles merged into one pprof file; must
 * outlive p), before the first read.  Without this they are taken off. */
void mt_fold_profile_keep_locations(struct mt_fold_profile *p, struct mt_fold_locs *locs);

/* The labels of the inputs read from now on ("k=v,k=v", no ';'; NULL or ""
 * for none; copied), for mt-fold --pprof's FILE@LABELS: with
 * MT_FOLD_PREFIX_LABELS they are a prefix frame of every stack key, and
 * allocations and frees of inputs with other labels are never matched (two
 * hosts' pid 4121 are two processes).  @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_profile_input_labels(struct mt_fold_profile *p, const char *labels);

/* Add one parsed event; its strings are copied.
 * @return : 0, MT_FOLD_ENOMEM, or MT_FOLD_ESTATE after finish. */
int mt_fold_profile_add(struct mt_fold_profile *p, const struct mt_fold_event *ev);

/* Called for each rejected line; file is the name given to read. */
typedef void (*mt_fold_bad_line_fn)(void *ctx, const char *file, uint64_t lineno,
				    int err, const char *bad_key);

/* Read mt-unwind text from f until EOF, adding its events.  Bad lines are
 * counted (counts.bad_lines), passed to bad (may be NULL) and skipped.  A
 * line too long to buffer is MT_FOLD_ENOMEM, not the end of the input.
 * @return : 0, MT_FOLD_EIO (errno kept), MT_FOLD_ENOMEM or MT_FOLD_ESTATE. */
int mt_fold_profile_read(struct mt_fold_profile *p, FILE *f, const char *name,
			 mt_fold_bad_line_fn bad, void *ctx);

/* The number of the line the last mt_fold_profile_read stopped at: the
 * last line read, or the one it failed to read (MT_FOLD_EIO, ENOMEM). */
uint64_t mt_fold_profile_read_line(const struct mt_fold_profile *p);

/* Match frees to allocations and complete the inuse metrics.  Idempotent.
 * @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_profile_finish(struct mt_fold_profile *p);

/* Number of prefix frames at the root of every stack key. */
unsigned mt_fold_profile_prefix_frames(const struct mt_fold_profile *p);

/* Distinct stacks, ids 0 .. count-1. */
uint32_t mt_fold_profile_stack_count(const struct mt_fold_profile *p);

/* Stack id's key (prefix frames and frames joined by ';', NUL-terminated,
 * length in *len if not NULL) and its accumulators (MT_FOLD_NMETRICS of
 * them); both valid while p lives. */
const char *mt_fold_profile_stack(const struct mt_fold_profile *p, uint32_t id,
				  size_t *len, const struct mt_fold_est **est);

uint32_t mt_fold_profile_thread_count(const struct mt_fold_profile *p);
const struct mt_fold_thread *mt_fold_profile_thread(const struct mt_fold_profile *p,
						    uint32_t i);
uint32_t mt_fold_profile_process_count(const struct mt_fold_profile *p);
const struct mt_fold_process *mt_fold_profile_process(const struct mt_fold_profile *p,
						      uint32_t i);
const struct mt_fold_counts *mt_fold_profile_counts(const struct mt_fold_profile *p);

/* The moment of the peak metrics: ns after the first event (counts.
 * time_first) for every process, instead of each process's peak moment
 * (--at).  Before finish. */
void mt_fold_profile_at(struct mt_fold_profile *p, uint64_t ns_from_start);

/* Keep what was live at the end of each of n equal time buckets of the run,
 * by stack (fold/live.h; 0, the default: not kept).  Before finish. */
void mt_fold_profile_live_buckets(struct mt_fold_profile *p, unsigned n);

/* After finish: those figures, or NULL when not asked for. */
const struct mt_fold_live *mt_fold_profile_live(const struct mt_fold_profile *p);

/* -1: no --at (per process peak moments); else the moment in perf time. */
int64_t mt_fold_profile_at_time(const struct mt_fold_profile *p);

/* Keep the size and lifetime histograms (the default), or not (on 0):
 * collapsed stacks and pprof profiles do not show them.  Before the first
 * add. */
void mt_fold_profile_histograms(struct mt_fold_profile *p, int on);

/* The tick points (finished with the profile). */
const struct mt_fold_timeline *mt_fold_profile_timeline(const struct mt_fold_profile *p);

/* Overall histograms after finish: requested sizes of the sampled
 * allocations; lifetimes in ns and in allocations between (same thread,
 * seq=) of the freed ones; and the objects freed and not freed. */
struct mt_fold_hists {
	struct mt_fold_hist sizes, life_ns, life_allocs;
	struct mt_fold_est freed, not_freed, freed_bytes, not_freed_bytes;
};
const struct mt_fold_hists *mt_fold_profile_hists(const struct mt_fold_profile *p);

/* Stack id's histogram cells (sizes and lifetimes in ns), after finish. */
const struct mt_fold_cells *mt_fold_profile_stack_cells(const struct mt_fold_profile *p,
							uint32_t id);

/* Metric shown when the user names none: alloc_bytes when the input has
 * allocations, period for pure event (CPU) captures. */
enum mt_fold_metric mt_fold_profile_default_metric(const struct mt_fold_profile *p);

#endif
