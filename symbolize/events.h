/* What mt's capture events mean (docs/formats/capture-events.md), as
 * mt-unwind's lines (docs/formats/unwind-text.md): an event's role from its
 * name (sampler markers, trace probes, anything else); trace entries paired
 * with their returns; the sampler's marker counts checked against the
 * events that came; which process images ran the sampler and sent their
 * totals; the exact totals, held until an exec or the end so that a failed
 * exec's report is superseded.
 *
 * Records are given in time order (replay.h).  Out of memory is sticky
 * (mt_unwind_events_nomem); nothing here prints or exits.
 */
#ifndef MT_UNWIND_EVENTS_H
#define MT_UNWIND_EVENTS_H

#include <stdint.h>

#include "codec/perf_stream.h"
#include "symbolize/error.h"
#include "symbolize/emit.h"
#include "symbolize/maps.h"

struct mt_unwind_events;

/* A sample's stack dump as the walk reads it: its valid bytes (dyn_size,
 * never more than were copied), at base (the sample's stack pointer). */
static inline struct mt_unwind_memory mt_unwind_sample_dump(const struct mt_perf_sample *smp,
							    uint64_t base)
{
	uint64_t n = smp->stack ? smp->stack_dyn_size : 0;
	if (n > smp->stack_size)
		n = smp->stack_size;
	return (struct mt_unwind_memory){ .base = base, .data = smp->stack, .size = n };
}

/* Unwinds smp and writes its "\tSTACK end=R\n" into out (emit.h's
 * mt_unwind_emit_stack).  drop_sampler: a sampler marker's stack. */
typedef void (*mt_unwind_stack_fn)(void *ctx, struct mt_unwind_out *out,
				   const struct mt_perf_sample *smp, int drop_sampler);

/* Which pids and tids --pid and --tid keep (an empty list keeps all). */
struct mt_unwind_idset {
	uint32_t *v;
	size_t n;
};

struct mt_unwind_events_opts {
	const struct mt_unwind_idset *pids, *tids;	/* may be NULL */
	int decode_only;	/* no lines: records are only counted */
};

/* Counts for the summary. */
struct mt_unwind_events_stats {
	uint64_t lost_records, lost_count;	/* LOST and LOST_SAMPLES records */
	uint64_t undecodable;		/* records that do not parse */
	uint64_t filtered;		/* events --pid/--tid left out */
	uint64_t superseded;		/* totals reports replaced by later ones */
	uint64_t internal;		/* allocator calls made inside another */
	uint64_t unpaired;		/* trace returns without entry, or entries without */
	uint64_t memptr_unknown;	/* posix_memalign returns without the pointer */
	uint64_t failed;		/* trace: allocator calls that failed (no allocation) */
	uint64_t marks_dropped, marks_unseen;	/* marker events missing */
	uint64_t silent_images;		/* ran the sampler, sent no process totals */
	uint64_t unsampled_images;	/* a sample-mode capture's images without the sampler */
	char unsampled_comms[160];	/* the first ones' names */
};

/* Events of reader's stream (its evsels name them; features, which may be
 * NULL, names those it does not) written through emit; maps is the
 * address-space replay's (replay.h), stack writes stacks (ctx passed on).
 * All must outlive ev.  @return : 0, or MT_UNWIND_ENOMEM. */
int mt_unwind_events_new(struct mt_unwind_events **ev, const struct mt_unwind_events_opts *o,
			 const struct mt_perf_reader *reader,
			 const struct mt_perf_features *features, struct mt_unwind_emit *emit,
			 struct mt_unwind_maps *maps, mt_unwind_stack_fn stack, void *ctx);

/* Accepts NULL. */
void mt_unwind_events_free(struct mt_unwind_events *ev);

/* A SAMPLE record. */
void mt_unwind_events_sample(struct mt_unwind_events *ev, const struct mt_perf_sample *smp);

/* Does a sample of e get a stack?  (No for frees, totals, trace returns.) */
int mt_unwind_events_wants_stack(struct mt_unwind_events *ev, const struct mt_perf_evsel *e);

/* Do --pid/--tid leave out the events of pid/tid? */
int mt_unwind_events_excluded(const struct mt_unwind_events *ev, uint32_t pid, uint32_t tid);

/* Other records, each before the address-space replay applies it. */
void mt_unwind_events_mmap(struct mt_unwind_events *ev, const struct mt_perf_mmap *m);
void mt_unwind_events_comm(struct mt_unwind_events *ev, const struct mt_perf_comm *c);
void mt_unwind_events_task(struct mt_unwind_events *ev, uint32_t type,
			   const struct mt_perf_task *t);
void mt_unwind_events_lost(struct mt_unwind_events *ev, uint32_t type,
			   const struct mt_perf_lost *l);

/* A record that does not parse: counted, and a `lost` line (none when
 * decode_only). */
void mt_unwind_events_undecodable(struct mt_unwind_events *ev);

/* The end of the input, at time end: trace entries whose return never
 * came, the totals held, the images that sent none. */
void mt_unwind_events_finish(struct mt_unwind_events *ev, uint64_t end);

const struct mt_unwind_events_stats *mt_unwind_events_stats(const struct mt_unwind_events *ev);

/* Did memory run out (some lines are then missing)? */
int mt_unwind_events_nomem(const struct mt_unwind_events *ev);

#endif
