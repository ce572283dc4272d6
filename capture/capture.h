/* mt-capture internals shared by its files: event specs, the ELF symbol
 * lookup, /proc synthesis and the capture run.  Functions return 0 or -1
 * with a message (git style, no program prefix) in err[MT_CAPTURE_ERRLEN].
 */
#ifndef MT_CAPTURE_H
#define MT_CAPTURE_H

#include <limits.h>
#include <signal.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

#define MT_CAPTURE_ERRLEN 512
#define MT_CAPTURE_MAX_EVENTS 24

/* x86_64 perf registers AX..R15 without DS ES FS GS: what perf itself asks
 * for with --call-graph dwarf, and what the unwinder needs anywhere in a
 * function (event and trace modes; mt:totals, which uses thirteen of them). */
#define MT_CAPTURE_REGS_MASK 0xff0fffULL
/* The kernel writes a sample's registers one by one, about 30 ns apiece
 * here, so sample mode's markers ask only for what is read there.  mt:alloc:
 * the arguments DI SI DX CX R8 and what unwinding from a function's entry
 * can use (BX BP SP IP R12..R15: the callee-saved registers and the stack
 * ones; the caller-saved rest holds nothing a caller's frame rule refers to
 * at a call).  mt:free: the arguments. */
#define MT_CAPTURE_REGS_ENTRY 0xf101feULL
#define MT_CAPTURE_REGS_ARGS 0x1003cULL

/* posix_memalign's return probe copies this much of the stack above its
 * caller's stack pointer: the block's address is stored through memptr,
 * usually a local of the caller or of a wrapper just above it. */
#define MT_CAPTURE_MEMPTR_DUMP 1024

enum mt_capture_mode { MT_CAPTURE_SAMPLE, MT_CAPTURE_TRACE, MT_CAPTURE_EVENT };

/* One event to open: its attr, the name written to the stream and, for
 * uprobes, the path that attr.config1 points to (so it must not move while
 * the event is opened: specs live in a fixed array). */
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

/* File offset of the function symbol name in the ELF file path (what the
 * uprobe PMU's config2 wants): its address mapped through the PT_LOAD
 * segment that holds it.  Looks in .symtab, then .dynsym.
 * @return : 0, 1 when the file has no such function, -1 on error (err). */
int mt_capture_elf_func_offset(const char *path, const char *name, uint64_t *offset,
			       char *err);

/* The uprobe PMU's type from sysfs.  @return : the type or -1 (err). */
int mt_capture_uprobe_type(char *err);

/* Add the sample mode's markers in sampler (mt:alloc, mt:free, mt:totals):
 * uprobes, or with ring, events written from the sample ring (then every
 * event's clock is CLOCK_MONOTONIC, the ring's).  @return : 0 or -1 (err). */
int mt_capture_events_sample(struct mt_capture_events *evs, const char *sampler,
			     unsigned stack_size, int ring, char *err);

/* Add trace mode's entry (and, when period is 1, return) probes on the
 * allocator functions lib defines.  @return : 0 or -1 (err). */
int mt_capture_events_trace(struct mt_capture_events *evs, const char *lib,
			    unsigned stack_size, uint64_t period, char *err);

/* Add one event by name (cpu-clock, cycles, ...; a tracepoint SYSTEM:EVENT;
 * a raw hardware event rHEX), freq Hz when freq is not 0, else every period
 * events; neither: 999 Hz, or every hit of a tracepoint.
 * @return : 0, MT_CAPTURE_EUSAGE (no such event, or not a name), or -1
 * (tracefs could not tell); err filled. */
int mt_capture_events_named(struct mt_capture_events *evs, const char *name,
			    unsigned stack_size, uint64_t freq, uint64_t period, char *err);

struct mt_perf_writer;

/* Write synthesized COMM (one per thread) and MMAP2 (executable mappings)
 * records for the running process pid, as the kernel would have for a
 * process started under capture; id is the tracking event's sample id.
 * @return : 0 or -1 (err); *records counts what was written. */
int mt_capture_proc_synthesize(struct mt_perf_writer *w, pid_t pid, uint64_t id,
			       uint64_t *records, char *err);

/* The threads of pid from /proc/pid/task.  @return : count (>= 1) with a
 * malloc'd array in *tids, or -1 (err). */
int mt_capture_proc_threads(pid_t pid, pid_t **tids, char *err);

/* ---- the sample ring (capture_ring.c, sample_ring.h) -------------------- */

struct mt_capture_ring;
struct mt_perf_writer;

/* A sample ring of data_size bytes (a power of two, >= 64 KiB) whose
 * mt:alloc records copy up to stack_size bytes of stack; wait: a sample
 * that finds it full waits for room (else it is dropped, and counted).
 * *env gets the NAME=VALUE string (malloc'd) that tells the sampler where
 * it is.  @return : 0 or -1 (err). */
int mt_capture_ring_new(struct mt_capture_ring **out, size_t data_size, unsigned stack_size,
			int wait, char **env, char *err);
void mt_capture_ring_free(struct mt_capture_ring *r);

/* How long the command's threads waited for room in the ring, added up
 * (ns; as the command reports it). */
uint64_t mt_capture_ring_waited_ns(const struct mt_capture_ring *r);

/* Allocate the ring's pages now (7 ms for 8 MiB here), while the command
 * starts, rather than in its first writes; mt-capture's own reads then
 * find them mapped, and the command's page faults map 16 at a time. */
void mt_capture_ring_populate(struct mt_capture_ring *r);

/* Tell the command's processes that nobody reads the ring any more (a
 * command that outlives the capture then neither fills it nor waits for
 * room). */
void mt_capture_ring_close(struct mt_capture_ring *r);

/* The attr and sample id that records of kind are written with. */
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

/* Write the complete records reserved before the call as samples, and a
 * LOST record per kind for what was dropped since the last call.
 * @return : 0 or the writer's error. */
int mt_capture_ring_drain(struct mt_capture_ring *r, struct mt_perf_writer *w,
			  struct mt_capture_ring_drain *d);

/* ---- the capture run ---------------------------------------------------- */

enum {
	MT_CAPTURE_EPERM = -2,		/* perf_event_open denied */
	MT_CAPTURE_ENOEXEC = -3,	/* the command could not be run */
	MT_CAPTURE_EWRITE = -4,		/* the output failed */
	MT_CAPTURE_EUSAGE = -5,		/* an event name that names none */
};

struct mt_capture_run_opts {
	struct mt_capture_events *evs;
	pid_t pid;		/* -p: attach to this running process, or 0 */
	char *const *argv;	/* else run this command */
	char *const *env;	/* NAME=VALUE strings to set in the command, NULL-ended */
	unsigned mmap_pages;	/* per CPU ring, a power of two */
	struct mt_capture_ring *ring;	/* sample mode's ring, or NULL */
	int out_fd;		/* closed by mt_capture_run once the stream is complete */
	const char *out_name;
	/* The file whose code the capture needs the command to run (the
	 * sampler, or trace mode's probed copy), as the kernel names it in
	 * MMAP records: its mappings are counted (st->watch_maps); NULL: none. */
	const char *watch;
	/* When watch is a private copy (trace mode; --no-ring's sampler), the
	 * file it copies: MMAP records name it instead (the copy is deleted at
	 * the end; its bytes and build-id are the original's).  NULL: none. */
	const char *watch_as;
	/* Set by the SIGINT/SIGTERM handlers: how many arrived, the last one. */
	const volatile sig_atomic_t *stops, *stop_signal;
};

struct mt_capture_stats {
	uint64_t samples, lost, records, bytes;
	uint64_t unfollowed;	/* -p with uprobes: threads/children created meanwhile */
	uint64_t watch_maps;	/* executable mappings of o->watch seen */
	uint64_t ring_abandoned;	/* sample ring: records whose writer stopped midway */
	uint64_t ring_unread;	/* sample ring: bytes held back by an incomplete record, at the end */
	uint64_t ring_gap_bytes;	/* sample ring: bytes of writers that died before
					 * their first store, read past */
	int ring_damaged;	/* sample ring: an impossible record stopped the reading */
	double seconds;
	int status;		/* the command's wait status (launch mode) */
	int exited;		/* status is valid */
	int detached;		/* stopped by a second signal, command left running */
};

/* Open the events on the command (started here, enabled at its exec) or on
 * every thread of pid, write the stream to out_fd until the command exits,
 * pid disappears or *stop is set, and fill *st.  The first stop signal is
 * passed on to a launched command and capture goes on until it exits; a
 * second one ends the capture at once.  The stream is complete in every case
 * where the output could be written.
 * @return : 0, -1 (err), or an MT_CAPTURE_E* code (err filled). */
int mt_capture_run(const struct mt_capture_run_opts *o, struct mt_capture_stats *st, char *err);

#endif
