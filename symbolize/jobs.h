/* mt-unwind -j N: stack walks on worker threads, with output identical to
 * one thread's.
 *
 * The replay (replay.c) walks each sample of a perf.data file on arrival,
 * against the address spaces as they are then, and queues the frames for
 * the sample's turn in time order.  The spaces change only when queued
 * records are released (at a FINISHED_ROUND, at the end, or before a
 * record that is not queued): between two releases they are frozen.  So
 * the walks of one round are independent: the replay hands each to the
 * pool (mt_unwind_jobs_add: registers, the dump in the file's mapping, the
 * space, room for the frames in the queue's entry) and waits for them all
 * (mt_unwind_jobs_drain) before it changes a space.  What a walk yields is
 * a function of its registers, dump and mappings alone, so the queue, and
 * the output, are the same bytes whatever thread walked what.
 *
 * Caches: a module's rules (cfi.c) and the module itself are shared by
 * every space and thread; each thread keeps its own memo of (space, pc) ->
 * (mapping, rule) and of (module, address) -> rule in front of them, read
 * and written without a lock.  Only a miss of both takes the one lock that
 * serialises libdw (rules compiled from CFI, modules opened), which no
 * two threads may use on one Dwfl at a time.
 */
#ifndef MT_UNWIND_JOBS_H
#define MT_UNWIND_JOBS_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/arch.h"
#include "symbolize/cfi.h"
#include "symbolize/maps.h"
#include "symbolize/unwind.h"

struct mt_unwind_jobs;

/* A pool of threads - 1 workers (the caller's thread is the last one,
 * during mt_unwind_jobs_drain) walking in mp's spaces, at most max_depth
 * frames.  threads >= 2.  @return : 0, or MT_UNWIND_ENOMEM (no thread
 * could be started, or no memory). */
int mt_unwind_jobs_new(struct mt_unwind_jobs **out, unsigned threads, struct mt_unwind_maps *mp,
		       unsigned max_depth);

/* Ends the workers (after a drain) and frees the pool.  Accepts NULL. */
void mt_unwind_jobs_free(struct mt_unwind_jobs *j);

/* Where a walk's outcome goes: its frames (room for max_depth), their
 * number, the end reason and mt_unwind_stats' last_other_stack.  Written
 * by some thread before mt_unwind_jobs_drain returns. */
struct mt_unwind_job_out {
	struct mt_unwind_frame *frames;
	unsigned *nframes;
	int *end, *other_stack;
};

/* Queue a walk of sp (frozen until the next drain) from regs (copied) in
 * mem (mem->data must stay valid until the drain).  @return : 0, or
 * MT_UNWIND_ENOMEM (then nothing was queued: walk it in the caller). */
int mt_unwind_jobs_add(struct mt_unwind_jobs *j, struct mt_unwind_space *sp,
		       const struct mt_unwind_regs *regs, const struct mt_unwind_memory *mem,
		       const struct mt_unwind_job_out *out);

/* Walks queued and not yet drained. */
size_t mt_unwind_jobs_pending(const struct mt_unwind_jobs *j);

/* Walk what is queued (on this thread too) and wait until every walk is
 * done; add their counts to stats.  @return : the frames they found. */
uint64_t mt_unwind_jobs_drain(struct mt_unwind_jobs *j, struct mt_unwind_stats *stats);

/* The CPUs this process may run on (sched_getaffinity), at least 1. */
unsigned mt_unwind_jobs_cpus(void);

#endif
