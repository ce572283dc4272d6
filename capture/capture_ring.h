/* mt-capture's side of the sample ring (sample_ring.h): make the ring, and
 * turn its records into the perf samples of the mt:alloc, mt:free and
 * mt:totals events. */
#ifndef MT_CAPTURE_RING_H
#define MT_CAPTURE_RING_H

#include "capture/capture_err.h"

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_capture_ring;
struct mt_perf_writer;

/* A sample ring of data_size bytes (a power of two, >= 64 KiB) in a memfd
 * that the command's processes map, whose mt:alloc records copy up to
 * stack_size bytes of stack; wait: a sample that finds it full waits for
 * room (else it is dropped, and counted).  *env gets the NAME=VALUE string
 * (malloc'd: the caller frees it) that tells the sampler where the ring is;
 * it names this process's descriptor, so the ring must live until the
 * command's processes have mapped it (until the capture ends).
 * @return : 0 with *out (freed with mt_capture_ring_free), or
 * MT_CAPTURE_ENOMEM, ERING (err filled; *out and *env untouched). */
int mt_capture_ring_new(struct mt_capture_ring **out, size_t data_size, unsigned stack_size,
			int wait, char **env, struct mt_capture_err *err);

/* The NAME=VALUE string naming the ring as descriptor mt_capture_ring_fd
 * of process holder (this one, or a child that holds it for a command run
 * as another user: capture_user.h), malloc'd.  @return : NULL on ENOMEM. */
char *mt_capture_ring_env(const struct mt_capture_ring *r, pid_t holder);
int mt_capture_ring_fd(const struct mt_capture_ring *r);

/* Unmap and close the ring; r may be NULL.  Processes that still map it
 * keep their mapping. */
void mt_capture_ring_free(struct mt_capture_ring *r);

/* How long the command's threads waited for room in the ring, added up
 * (ns; as the command reports it: the program may write anything there). */
uint64_t mt_capture_ring_waited_ns(const struct mt_capture_ring *r);

/* Allocate the ring's pages now, while the command starts, rather than in
 * its first writes; mt-capture's own reads then find them mapped, and the
 * command's page faults map 16 at a time.  A hint: nothing fails. */
void mt_capture_ring_populate(struct mt_capture_ring *r);

/* Tell the command's processes that nobody reads the ring any more (a
 * command that outlives the capture then neither fills it nor waits for
 * room).  Drains after it still read what was written before. */
void mt_capture_ring_close(struct mt_capture_ring *r);

/* The attr (copied) and sample id that records of kind (MT_SAMPLE_RING_ALLOC,
 * FREE, TOTALS) are written with; set for every kind before the first drain. */
void mt_capture_ring_event(struct mt_capture_ring *r, int kind, const struct perf_event_attr *attr,
			   uint64_t id);

struct mt_capture_ring_drain {
	uint64_t samples;	/* written */
	uint64_t bytes;		/* of the ring consumed */
	uint64_t lost;		/* records the ring had no room for (LOST records written) */
	uint64_t abandoned;	/* incomplete records skipped: their writer stopped */
	uint64_t unread;	/* bytes reserved and not read yet */
	uint64_t gap_bytes;	/* read past so far: writers that died before their
				 * first store (their records' kinds unknown) */
	int pending;		/* stopped at a record still being written */
	int damaged;		/* the ring holds an impossible record: reading stopped */
};

/* Write the complete records reserved before the call to w as samples, and
 * a LOST record per kind for what was dropped since the last call; *d is
 * filled with what this call did (gap_bytes, damaged: so far).  Once the
 * writer fails, records are still consumed, and not written.
 * @return : 0, or MT_CAPTURE_EWRITE when the writer failed (its message:
 * mt_perf_writer_error). */
int mt_capture_ring_drain(struct mt_capture_ring *r, struct mt_perf_writer *w,
			  struct mt_capture_ring_drain *d);

#endif
