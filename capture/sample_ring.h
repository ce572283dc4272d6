/* The sample ring: shared memory through which libmt-sampler.so hands its
 * marker events (mt:alloc with registers and a stack copy, mt:free,
 * mt:totals, mt:tick) to mt-capture, which writes them to the stream as the perf
 * samples the markers' uprobes would have produced.  A uprobe hit costs
 * traps and kernel copying per sampled object; a write here is a memcpy of
 * the stack and a few stores (the two compared: bench/capture.sh, with and
 * without --no-ring).
 *
 * Many producers (every thread of every process of the command, which
 * inherit the mapping across fork and map it again after exec), one
 * consumer.  A producer reserves space by moving head with a CAS, fills
 * its record and publishes it by storing its commit word last.  The
 * consumer reads records in head order and moves tail past them.  Records
 * are 16-byte aligned and never wrap: one that would is preceded by a pad
 * record to the end of the data area.  A commit word holds the record's
 * absolute position XOR MT_SAMPLE_RING_COMMIT, so stale bytes from an
 * earlier lap are not taken for a commit.  When a record does not fit, the
 * producer waits for room (see wait in the header) or counts it in
 * lost[kind] instead.  Nothing here allocates or
 * takes a lock: the sampler calls it inside malloc and signal handlers.
 * Layout and protocol: docs/formats/sample-ring.md.
 */
#ifndef MT_SAMPLE_RING_H
#define MT_SAMPLE_RING_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define MT_SAMPLE_RING_MAGIC 0x32676e697274746dULL	/* "mttring2" */
#define MT_SAMPLE_RING_COMMIT 0x6d74636f6d6d6974ULL
#define MT_SAMPLE_RING_RESERVED 0x6d74726573657276ULL
#define MT_SAMPLE_RING_HEADER 4096	/* bytes before the data area */
#define MT_SAMPLE_RING_ENV "MT_SAMPLER_RING"
#define MT_SAMPLE_RING_WAKE SIGURG	/* ignored by default: harmless anywhere else */

/* Record kinds: the marker events, and padding. */
enum { MT_SAMPLE_RING_PAD, MT_SAMPLE_RING_ALLOC, MT_SAMPLE_RING_FREE, MT_SAMPLE_RING_TOTALS,
       MT_SAMPLE_RING_TICK, MT_SAMPLE_RING_KINDS };

/* perf's x86_64 user register numbering (PERF_REG_X86_*), all 24 slots. */
#define MT_SAMPLE_RING_REGS 24

struct mt_sample_ring_header {
	uint64_t magic;
	uint64_t token;		/* random: the file the environment names is ours */
	uint64_t data_size;	/* a power of two */
	uint64_t stack_size;	/* bytes of stack an ALLOC record copies (at most) */
	uint64_t closed;	/* set by the consumer when it stops reading */
	uint64_t pid_ns;	/* inode of the consumer's pid namespace */
	uint64_t reader_pid;	/* the consumer, woken with SIGURG ... */
	uint64_t wake;		/* ... by the writer that sets this (once per drain) */
	uint64_t wait;		/* nonzero: a sample that finds the ring full waits
				 * for the consumer to make room (totals always do) */
	uint64_t waited_ns;	/* the writers' waits for room, added up */
	uint64_t head __attribute__((aligned(64)));	/* bytes reserved, ever */
	uint64_t tail __attribute__((aligned(64)));	/* bytes consumed, ever */
	uint64_t lost[MT_SAMPLE_RING_KINDS] __attribute__((aligned(64)));
};

struct mt_sample_ring_record {
	/* position ^ MT_SAMPLE_RING_RESERVED once size and kind are set,
	 * position ^ MT_SAMPLE_RING_COMMIT once the record is complete */
	uint64_t commit;
	uint32_t size;		/* bytes of the whole record, a multiple of 16 */
	uint32_t kind;
	/* ALLOC, FREE, TOTALS and TICK records only: */
	uint32_t pid, tid;
	uint64_t time;		/* CLOCK_MONOTONIC, ns */
	uint64_t regs[MT_SAMPLE_RING_REGS];	/* as at the marker's entry */
	uint64_t stack_size;	/* bytes asked for */
	uint64_t dyn_size;	/* bytes copied, which follow */
	unsigned char stack[];
};

#define MT_SAMPLE_RING_PAD_SIZE 16	/* a pad record: commit, size, kind */

/* One side's view.  The size, and the consumer's tail, are the side's own
 * copies: the shared memory is the program's to write over, so nothing that
 * bounds an access is read from it. */
struct mt_sample_ring {
	struct mt_sample_ring_header *h;
	unsigned char *data;
	uint64_t size, mask;
	uint64_t tail;		/* consumer: bytes consumed (stored to h->tail) */
};

/* The inode of the calling process's pid namespace (0 if unknown): the
 * pids in records are the writer's, the kernel's records use the
 * reader's, so both must see the same. */
uint64_t mt_sample_ring_pid_ns(void);

/* The ring's clock, in ns: CLOCK_MONOTONIC, which records' times use (and
 * the capture's events, through use_clockid). */
uint64_t mt_sample_ring_now(void);

/* Attach to a mapped ring of map_size bytes.  @return : 0, or -1 when the
 * header is not a ring of that size with that token. */
int mt_sample_ring_attach(struct mt_sample_ring *r, void *map, size_t map_size, uint64_t token);

/* Producer: room for a record of len bytes (rounded up to 16) written by
 * thread tid of process pid.  Samples (ALLOC, FREE) leave the last
 * sixteenth of the ring to TOTALS and TICK records, so that the exact
 * totals and the timeline get through a ring that samples keep full.
 * @return : the record (size, kind, pid, tid set; *pos its position), or
 * NULL when the ring is full (the caller retries or calls
 * mt_sample_ring_lose). */
struct mt_sample_ring_record *mt_sample_ring_reserve(struct mt_sample_ring *r, size_t len,
						     uint32_t kind, uint32_t pid, uint32_t tid,
						     uint64_t *pos);
/* Producer: after a commit, wake the consumer when the ring is half full
 * and nobody has since its last drain. */
void mt_sample_ring_wake(struct mt_sample_ring *r);
/* Producer: count a record of kind that found no room. */
void mt_sample_ring_lose(struct mt_sample_ring *r, uint32_t kind);
/* Producer: publish the record reserved at pos. */
void mt_sample_ring_commit(struct mt_sample_ring *r, struct mt_sample_ring_record *rec,
			   uint64_t pos);

/* Consumer: the record at tail when it is complete and lies before limit
 * (a head read earlier); pad records are skipped.  *copy gets the record's
 * fixed part, checked (the shared one may change under us: use only the
 * copy), *stack its copy->dyn_size stack bytes (their values may change,
 * not where they are).
 * @return : 1, 0 nothing before limit, -1 the record at tail is not
 * complete yet, -2 the ring is damaged (a record that cannot be). */
int mt_sample_ring_next(struct mt_sample_ring *r, uint64_t limit,
			struct mt_sample_ring_record *copy, const unsigned char **stack);
/* Consumer: done with the record mt_sample_ring_next gave (copy). */
void mt_sample_ring_release(struct mt_sample_ring *r, const struct mt_sample_ring_record *copy);
/* Consumer: the incomplete record at tail, as far as its writer set it up:
 * @return : 0 with kind, pid and tid (reserved: size known), -1 not even
 * that (its writer is between reserving and its first stores). */
int mt_sample_ring_stuck(struct mt_sample_ring *r, uint64_t limit, uint32_t *kind, uint32_t *pid,
			 uint32_t *tid);
/* Consumer: skip the incomplete record at tail (its writer is gone), whose
 * size mt_sample_ring_stuck found.  @return : 0, or -1 when it cannot. */
int mt_sample_ring_skip(struct mt_sample_ring *r, uint64_t limit);
/* Consumer: past an incomplete record at tail whose writer died before
 * writing anything (exit_group of its process, SIGKILL, between its
 * reserving and its first store): its size is unknown, so move tail to
 * the next position before limit that holds a record's commit or reserved
 * word for that very position (16-byte steps), and a plausible record.
 * @return : the bytes skipped, 0 when no such record is there (yet). */
uint64_t mt_sample_ring_resync(struct mt_sample_ring *r, uint64_t limit);

static inline uint64_t mt_sample_ring_head(const struct mt_sample_ring *r)
{
	return __atomic_load_n(&r->h->head, __ATOMIC_ACQUIRE);
}

#endif
