/* The sampler's side of the sample ring (sample_ring.h): attaching to the
 * ring mt-capture names in the environment, and the record each marker
 * writes there instead of waiting for a uprobe. */
#ifndef MT_SAMPLER_RING_H
#define MT_SAMPLER_RING_H

#include <stdint.h>
#include <sys/types.h>

/* Nonzero once attached: the markers (sampler_x86_64.S) then call
 * mt_sampler_ring_emit. */
extern int mt_sampler_ring_on;

/* Attach to the ring $MT_SAMPLER_RING names ("TOKEN:PATH"), if set; a
 * failure is said on stderr (this process's events cannot be captured).
 * pid: the process's.  Called once, from the sampler's init. */
void mt_sampler_ring_init(pid_t pid);

/* In a fork()ed child: its pid, and the forking thread's new tid. */
void mt_sampler_ring_after_fork(pid_t pid);

/* Called by a marker with the registers as at its entry (perf's x86_64
 * numbering; kind: MT_SAMPLE_RING_ALLOC, _FREE, _TOTALS or _TICK). */
void mt_sampler_ring_emit(uint64_t kind, const uint64_t *regs);

#endif
