/* The .mtz sample coder: a sample's user stack dump and user registers
 * XOR-coded against the same thread's previous sample (codec internal; the
 * entry layout is in docs/formats/mtz.md).
 *
 * The coder knows nothing of perf's formats: a sample is described by a
 * struct mtz_sample_view (where its registers and valid stack bytes sit in
 * the record).  The stack bytes cover [sp, sp + dyn_size), sp being the
 * sample's stack pointer register (0 when the sample has none); the previous
 * copy is aligned to them by absolute address, bytes it does not cover count
 * as zero.  The XOR is sent as one presence bit per 512-byte group, then for
 * each present group a 64-bit mask of its nonzero 8-byte words and those
 * words.  A thread without a reference gets a keyframe (XOR against zeros,
 * ref_hash 0).
 *
 * The encoder runs a decoder of its own on every entry it emits and sends a
 * keyframe instead when the entry does not give the record back ("fallback").
 */
#ifndef MTZ_DELTA_H
#define MTZ_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "codec/mtz_buf.h"

#define MTZ_GROUP_SIZE 512		/* bytes per group: 64 words, one u64 mask */
#define MTZ_MAX_REGS 64

/* Entry tags inside a frame. */
enum { MTZ_TAG_PASS = 1, MTZ_TAG_SAMPLE = 2, MTZ_TAG_BLOB = 3 };

/* Fixed bytes of a SAMPLE entry after its tag. */
#define MTZ_SAMPLE_FIXED 32

struct mtz_sample_view {
	const uint8_t *rec;	/* the whole record */
	size_t rec_size;	/* at most 65535 (perf_event_header.size) */
	uint32_t tid;		/* the thread whose references are used */
	size_t regs_offset;	/* nr_regs u64 values at rec + regs_offset */
	unsigned nr_regs;	/* at most MTZ_MAX_REGS; 0 when none */
	int sp_index;		/* index of the stack pointer in regs, -1: none */
	size_t stack_offset;	/* dyn_size valid stack bytes at rec + stack_offset */
	size_t dyn_size;
};

/* A thread's reference: its last coded sample (exposed for tests). */
struct mtz_delta_ref {
	uint32_t tid;
	uint32_t gen;		/* live when equal to the table's generation */
	uint64_t sp;
	uint64_t hash;		/* mtz_hash of bytes[0..dyn_size) */
	uint8_t *bytes;
	size_t dyn_size, cap;
	unsigned nr_regs;
	uint64_t regs[MTZ_MAX_REGS];
};

struct mtz_delta_stats {
	uint64_t coded;		/* SAMPLE entries emitted or decoded */
	uint64_t keyframes;	/* of which without a reference */
	uint64_t fallbacks;	/* keyframes sent after a delta failed to verify */
	uint64_t stack_bytes;	/* valid stack bytes coded */
};

/* ---- encoder ---------------------------------------------------------- */

struct mtz_delta_enc;

/* @return : 0 or MTZ_ENOMEM (with *out NULL). */
int mtz_delta_enc_new(struct mtz_delta_enc **out);

/* Accepts NULL. */
void mtz_delta_enc_free(struct mtz_delta_enc *e);

/* Forgets every reference (start of a frame): the next sample of each
 * thread is a keyframe. */
void mtz_delta_enc_reset(struct mtz_delta_enc *e);

/* Appends the SAMPLE entry (tag included) coding s to out, after checking
 * that it decodes back to s's record.
 * @return : 0, MTZ_EFORMAT (s is inconsistent: nothing appended),
 *           MTZ_ENOMEM, or MTZ_EHASH (not even a keyframe verified: a bug). */
int mtz_delta_enc_sample(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
			 struct mtz_buf *out);

const struct mtz_delta_stats *mtz_delta_enc_stats(const struct mtz_delta_enc *e);

/* The encoder's own reference for tid, NULL when it holds none.  For tests,
 * which alter it to check that a stale reference is caught. */
struct mtz_delta_ref *mtz_delta_enc_ref(struct mtz_delta_enc *e, uint32_t tid);

/* ---- decoder ---------------------------------------------------------- */

struct mtz_delta_dec;

int mtz_delta_dec_new(struct mtz_delta_dec **out);
void mtz_delta_dec_free(struct mtz_delta_dec *d);
void mtz_delta_dec_reset(struct mtz_delta_dec *d);

/* Decodes the SAMPLE entry at in (just after its tag; n bytes available)
 * and appends the record to out.  On success *used is the entry's size and
 * the thread's reference moves to this sample; on failure out and the
 * references are as they were.
 * @return : 0, MTZ_ETRUNC (entry runs past n), MTZ_EFORMAT (a field out of
 *           bounds), MTZ_EREF (ref_hash names no reference held for the
 *           thread), MTZ_EHASH (rebuilt stack does not hash to the entry's
 *           hash), MTZ_ENOMEM. */
int mtz_delta_dec_sample(struct mtz_delta_dec *d, const uint8_t *in, size_t n,
			 size_t *used, struct mtz_buf *out);

const struct mtz_delta_stats *mtz_delta_dec_stats(const struct mtz_delta_dec *d);

#endif
