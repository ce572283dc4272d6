/* mt-unwind's replay of a perf stream: records in time order, each applied
 * to the address spaces (maps.h) and given its meaning (events.h).
 *
 * Records are released from a time-ordering queue at each FINISHED_ROUND
 * (or when too much is queued).  A sample is unwound on arrival, with the
 * mappings as they are then, so that only its frames wait in the queue and
 * not its stack dump; if those mappings change before its turn, it is read
 * again from the file and unwound then.  A sample not unwound on arrival
 * (its process has no space yet, or a record still queued will change
 * it) waits with its stack dump, or, in the file's mapping, without it.
 *
 * Out of memory is sticky (mt_unwind_replay_nomem); nothing here prints:
 * a sample that cannot be read again is reported through the warn callback.
 */
#ifndef MT_UNWIND_REPLAY_H
#define MT_UNWIND_REPLAY_H

#include <stdint.h>

#include "codec/perf_stream.h"
#include "symbolize/error.h"
#include "symbolize/emit.h"
#include "symbolize/events.h"
#include "symbolize/maps.h"
#include "symbolize/unwind.h"

struct mt_unwind_replay;

struct mt_unwind_replay_opts {
	unsigned max_depth;	/* physical frames walked at most */
	int decode_only;	/* parse and count, write nothing */
	unsigned jobs;		/* threads that walk (symbolize/jobs.h); 0, 1: this one */
	int spec_fd;		/* the input as a file records can be read again
				 * from at their offsets, or -1 */
	const char *input;	/* the input's name, for messages */
	void (*warn)(void *ctx, const char *msg);
	void *warn_ctx;
};

/* Counts for the summary. */
struct mt_unwind_replay_stats {
	uint64_t records;	/* records given */
	uint64_t callchains;	/* samples whose frames came from a CALLCHAIN */
	uint64_t no_regs;	/* samples without registers */
	uint64_t spec_rewalks;	/* samples unwound again at their turn */
	uint64_t order_overflows;	/* releases forced by the queue's size */
	unsigned pool_threads;	/* -j: threads walking (0: no pool) */
	uint64_t pool_walks;	/* walks the pool made (on arrival) */
	/* Stacks that end where their dump ends (end-of-dump) although a
	 * larger dump would not reach further: past a signal frame onto
	 * another stack (a handler on an alternate signal stack), with the
	 * largest dump perf allows, or with a dump that held the whole stack
	 * (shorter than asked: the copy reached the stack's end). */
	uint64_t dump_other_stack, dump_at_max, dump_whole;
	struct mt_unwind_stats walk;
};

/* The largest stack dump perf can take (perf_event_open's
 * sample_stack_user: a u16 record size less the headers, 8-aligned). */
#define MT_UNWIND_DUMP_MAX 65528u

/* A replay of reader's records into maps, writing through emit; all must
 * outlive rp.  Its events are set with mt_unwind_replay_set_events before
 * the first record.  @return : 0, or MT_UNWIND_ENOMEM. */
int mt_unwind_replay_new(struct mt_unwind_replay **rp, const struct mt_unwind_replay_opts *o,
			 struct mt_perf_reader *reader, struct mt_unwind_maps *maps,
			 struct mt_unwind_emit *emit);
void mt_unwind_replay_set_events(struct mt_unwind_replay *rp, struct mt_unwind_events *ev);

/* Accepts NULL. */
void mt_unwind_replay_free(struct mt_unwind_replay *rp);

/* The events' mt_unwind_stack_fn (ctx: the replay): smp's stack, unwound
 * now or on arrival. */
void mt_unwind_replay_put_stack(void *ctx, struct mt_unwind_out *out,
				const struct mt_perf_sample *smp, int drop_sampler);

/* One record item of the reader.  map, map_len: the reader's mapping of
 * the input (NULL: none), whose next record is prefetched. */
void mt_unwind_replay_record(struct mt_unwind_replay *rp, const struct mt_perf_item *it,
			     const void *map, size_t map_len);

/* A HEADER_BUILD_ID record's content (or one of a perf.data file's
 * BUILD_ID section): the build-id the recording saw for a file. */
void mt_unwind_replay_build_id(struct mt_unwind_replay *rp, const struct mt_perf_build_id *b);

/* Release everything still queued, at the end of the input. */
void mt_unwind_replay_finish(struct mt_unwind_replay *rp);

/* The file offset of the oldest record still queued in the mapping, for
 * the reader's offset: the reader may let go of the mapping before it. */
uint64_t mt_unwind_replay_keep_from(const struct mt_unwind_replay *rp, uint64_t offset);

/* The newest time seen (the end of the recording, at the end). */
uint64_t mt_unwind_replay_last_time(const struct mt_unwind_replay *rp);

const struct mt_unwind_replay_stats *mt_unwind_replay_stats(const struct mt_unwind_replay *rp);

/* Did memory run out?  Did a record that had to be read again fail? */
int mt_unwind_replay_nomem(const struct mt_unwind_replay *rp);
int mt_unwind_replay_data_error(const struct mt_unwind_replay *rp);

/* Records other than samples that did not parse (counted, no line). */
uint64_t mt_unwind_replay_undecodable(const struct mt_unwind_replay *rp);

#endif
