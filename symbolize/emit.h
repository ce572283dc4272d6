/* mt-unwind's text writer: the lines of docs/formats/unwind-text.md, the
 * counterpart of fold/line.c, which reads them.
 *
 * Lines are made in a batch whose stacks' frame texts are filled in when
 * the batch is flushed (batch.h): through the writer thread while there is
 * one, else here.  Out of memory is sticky (nomem) and the caller's to
 * report: nothing here prints or exits.
 */
#ifndef MT_UNWIND_EMIT_H
#define MT_UNWIND_EMIT_H

#include <stdint.h>

#include "symbolize/batch.h"
#include "symbolize/maps.h"
#include "symbolize/out.h"
#include "symbolize/sym.h"
#include "symbolize/unwind.h"

/* Event kinds: the first field of a line. */
enum mt_unwind_kind {
	MT_UNWIND_K_ALLOC,
	MT_UNWIND_K_FREE,
	MT_UNWIND_K_TOTALS,
	MT_UNWIND_K_SAMPLE,
	MT_UNWIND_K_LOST,
	MT_UNWIND_K_TICK,
	MT_UNWIND_K_COUNT
};

struct mt_unwind_emit {
	struct mt_unwind_out fdout;	/* the real output */
	struct mt_unwind_batch b;	/* b.out: the lines waiting for a flush */
	struct mt_unwind_writer *wr;	/* NULL: flushes write here */
	struct mt_unwind_last_stack last;	/* for the flushes made here */
	const struct mt_unwind_symopts *sym;
	struct mt_unwind_maps *maps;	/* the threads' names */
	struct mt_unwind_modules *modules;
	int out_error;			/* the output's errno, as of the last flush */
	int nomem;			/* a buffer could not grow: lines are missing */
	/* Counts for the summary. */
	uint64_t events, by_kind[MT_UNWIND_K_COUNT];
	struct mt_unwind_frame_counts counts;	/* the writer's added when it ends */
	uint64_t ends[MT_UNWIND_END_COUNT];
};

/* Writes to fd (-1: nowhere, for --decode-only), with a writer thread when
 * threaded.  sym, maps and modules must outlive e. */
void mt_unwind_emit_init(struct mt_unwind_emit *e, int fd, int threaded,
			 const struct mt_unwind_symopts *sym, struct mt_unwind_maps *maps,
			 struct mt_unwind_modules *modules);

/* Flushes nothing (see mt_unwind_emit_finish); frees the buffers. */
void mt_unwind_emit_release(struct mt_unwind_emit *e);

/* The lines' buffer: lines written here go out at the next flush.  Other
 * buffers (made with mt_unwind_out_init_mem) hold lines for later. */
static inline struct mt_unwind_out *mt_unwind_emit_out(struct mt_unwind_emit *e)
{
	return &e->b.out;
}

/* "KIND\tPID/TID\tTIME\tCOMM\t": the head of a line, counted as an event. */
void mt_unwind_emit_head(struct mt_unwind_emit *e, struct mt_unwind_out *out,
			 enum mt_unwind_kind kind, uint32_t pid, uint32_t tid, uint64_t time);

/* " KEY=V" (no space when first) and " KEY=0xV". */
void mt_unwind_emit_kv(struct mt_unwind_out *out, const char *key, uint64_t v, int first);
void mt_unwind_emit_kx(struct mt_unwind_out *out, const char *key, uint64_t v);

/* "\t end=none\n": a line without a stack. */
void mt_unwind_emit_nostack(struct mt_unwind_emit *e, struct mt_unwind_out *out);

/* A `lost` line: count events (or process images) of pid/tid lost for
 * reason, of the marker named (or none). */
void mt_unwind_emit_lost(struct mt_unwind_emit *e, uint32_t pid, uint32_t tid, uint64_t time,
			 uint64_t count, const char *reason, const char *marker);

/* "\tSTACK end=R\n" for n frames fr (leaf first) that ended for reason end.
 * drop_sampler: the stack of a sampler marker (sample mode), whose frames
 * inside libmt-sampler.so but the outermost are left out.  Written into the
 * lines' buffer, a stack's frames are symbolised at the flush; into another,
 * now (a trace entry's line, kept until its return). */
void mt_unwind_emit_stack(struct mt_unwind_emit *e, struct mt_unwind_out *out,
			  const struct mt_unwind_frame *fr, unsigned n, int end, int drop_sampler);

/* Flush once enough lines are buffered. */
void mt_unwind_emit_check(struct mt_unwind_emit *e);

/* Write what is buffered, end the writer thread, flush the output.
 * @return : 0, or the output's errno. */
int mt_unwind_emit_finish(struct mt_unwind_emit *e);

/* Is filename the preload sampler, libmt-sampler.so? */
int mt_unwind_is_sampler_file(const char *filename);

#endif
