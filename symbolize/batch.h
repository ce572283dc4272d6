/* mt-unwind's output waiting for its frames' text, and the writer thread
 * that fills it in.
 *
 * Lines are made on the main thread with holes where a stack's frames go:
 * the frames are kept as (module, ELF address) and symbolised when the batch
 * is written, after the modules' loader threads have had time to load
 * symbols and DWARF.  Symbolising and formatting was a sixth of the main
 * thread's work; a writer thread does it on the second core while the main
 * thread unwinds the next batches.  Batches are moved, never copied.
 */
#ifndef MT_UNWIND_BATCH_H
#define MT_UNWIND_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/error.h"
#include "symbolize/module.h"
#include "symbolize/out.h"
#include "symbolize/sym.h"

/* After text_end bytes of the batch's text come fr_count frames. */
struct mt_unwind_seg {
	size_t text_end;
	size_t fr_begin;
	uint32_t fr_count;
};

struct mt_unwind_dframe {
	struct mt_unwind_module *mod;	/* NULL: text in batch.unk at vaddr, len */
	uint64_t vaddr;
	uint32_t len;
	uint8_t trim;			/* sampler entry: physical frame only */
};

struct mt_unwind_batch {
	struct mt_unwind_out out;	/* the lines' text */
	struct mt_unwind_out unk;	/* texts of frames without a module */
	struct mt_unwind_seg *segs;
	size_t nr_segs, cap_segs;
	struct mt_unwind_dframe *dframes;
	size_t nr_dframes, cap_dframes;
};

/* Frames written (inline ones included), and inline frames among them. */
struct mt_unwind_frame_counts {
	uint64_t frames, inl;
};

/* Room for one more segment of nframes frames.
 * @return : 0 or MT_UNWIND_ENOMEM. */
int mt_unwind_batch_reserve(struct mt_unwind_batch *b, size_t nframes);

void mt_unwind_batch_release(struct mt_unwind_batch *b);

/* --pprof-info: for each of the n frames fr whose module has no number
 * yet, number it and write "# module N BUILDID PATH\n" to @to (BUILDID in
 * hex, "-" when none; a newline in PATH as '_').  Called before the line
 * holding the frames, by the thread that symbolises. */
void mt_unwind_put_modules(struct mt_unwind_out *to, const struct mt_unwind_dframe *fr,
			   size_t n);

/* Write one frame's text (the physical frame and its inline frames), and
 * with --pprof-info " @N+0xADDR": its module's number and ELF address. */
void mt_unwind_put_frame(struct mt_unwind_out *to, const struct mt_unwind_symopts *o,
			 const struct mt_unwind_dframe *d, struct mt_unwind_frame_counts *c);

/* The last stack written, kept so that the next one copies the outer
 * frames it shares (most of a CPU profile's: nine in ten with python3.11d)
 * instead of looking each one's text up and copying it on its own. */
struct mt_unwind_last_stack {
	struct mt_unwind_out text;	/* its frames' text, joined by ';' */
	struct mt_unwind_dframe *fr;	/* its frames, root first */
	struct mt_unwind_last_frame {
		size_t end;		/* text's length up to this frame's end */
		uint64_t frames, inl;	/* counted up to this frame */
	} *at;
	uint32_t n, cap;
};

void mt_unwind_last_stack_init(struct mt_unwind_last_stack *l);
void mt_unwind_last_stack_release(struct mt_unwind_last_stack *l);

/* Write b's lines to @to: text, frames, text, ... and empty b.  last: the
 * stack written before (initialised), replaced by b's last. */
void mt_unwind_batch_write(struct mt_unwind_out *to, struct mt_unwind_batch *b,
			   const struct mt_unwind_symopts *o, struct mt_unwind_frame_counts *c,
			   struct mt_unwind_last_stack *last);

struct mt_unwind_writer;

/* A thread writing batches to @to (which it alone then uses) with options o.
 * Only it symbolises from now on (see mt_unwind_sym_get).
 * @return : the writer, or NULL (then write batches in the caller). */
struct mt_unwind_writer *mt_unwind_writer_start(struct mt_unwind_out *to,
						const struct mt_unwind_symopts *o);

/* Queue b for the writer (waiting only while 32 batches or 64 MiB are
 * queued); b comes back empty.  @return : the output's errno so far (0: none). */
int mt_unwind_writer_give(struct mt_unwind_writer *w, struct mt_unwind_batch *b);

/* Write what is left, join the thread, add its counts to c; frees w. */
void mt_unwind_writer_stop(struct mt_unwind_writer *w, struct mt_unwind_frame_counts *c);

#endif
