/* The .mtz sample coder: a sample's user stack dump, registers and the rest
 * of its record coded against one of the same thread's last samples (codec
 * internal; docs/formats/mtz.md has the byte layout).
 *
 * The reference is one of the same thread's last MTZ_REFS samples in the
 * frame, the one whose stack is most alike (a CPU profile's thread moves
 * between a few call paths); the entry names it by its index.
 *
 * The coder knows nothing of perf's formats: a sample is described by a
 * struct mtz_sample_view.  Its record is cut into
 *   head    [0, stack_offset)           the fields before the stack dump,
 *                                        registers included
 *   stack   dyn_size valid bytes        the user stack from sp upwards
 *   pad     stack_size - dyn_size bytes what the kernel left in the ring
 *                                        buffer there (kept bit for bit)
 *   tail    the rest (dyn_size and later fields)
 * The head is XORed with the reference's head when both have the same
 * length; the stack is XORed with the reference's stack aligned by
 * absolute address (bytes the reference does not cover count as zero);
 * the pad, being stale ring bytes, is XORed with earlier output of the frame
 * (segments at distances the encoder looks for, or zeros).  An XOR is sent as one
 * presence bit per 512-byte group, then for each present group a 64-bit mask
 * of its nonzero 8-byte words and those words.  A thread without a reference
 * gets a keyframe (ref_hash 0: stack XOR zeros, head as it is).
 *
 * Entries are spread over sections (ops, hashes, heads, codes, pass) so that
 * zstd sees like data together.  The encoder decodes every entry it emits
 * with a decoder of its own and, when the record does not come back exactly,
 * emits a plain keyframe instead ("fallback").
 */
#ifndef MTZ_DELTA_H
#define MTZ_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

#define MTZ_GROUP_SIZE 512		/* bytes per group: 64 words, one u64 mask */
#define MTZ_MAX_REGS 64

/* Entry tags (first byte of each entry in the ops section). */
enum { MTZ_TAG_PASS = 1, MTZ_TAG_SAMPLE = 2, MTZ_TAG_BLOB = 3 };

/* Sections of a frame, in payload order (version 1 frames have the first
 * five: their pad codes are in the code section). */
enum { MTZ_SEC_OPS, MTZ_SEC_HASH, MTZ_SEC_HEAD, MTZ_SEC_CODE, MTZ_SEC_PASS, MTZ_SEC_PAD,
       MTZ_NSEC };
#define MTZ_NSEC_V1 5

/* Bytes of a SAMPLE entry in the ops section after its tag. */
#define MTZ_SAMPLE_OPS 20

/* SAMPLE flags. */
#define MTZ_SAMPLE_HEAD_XOR 1u		/* head against a reference's (else zeros) */
#define MTZ_SAMPLE_STACK_OP(f) ((f) >> 1 & 3u)	/* how stack words are sent */
#define MTZ_SAMPLE_HEAD_LAST 8u		/* head against the thread's last sample */
#define MTZ_SAMPLE_HEAD_OP(f) ((f) >> 4 & 3u)	/* how head words are sent */
#define MTZ_SAMPLE_FLAGS 0x3fu

/* How a changed word is sent: new ^ old, new, or new - old (mod 2^64). */
enum { MTZ_OP_XOR, MTZ_OP_COPY, MTZ_OP_ADD };

struct mtz_sections {
	struct mt_buf s[MTZ_NSEC];
};

/* A reading position in each section of a decompressed frame. */
struct mtz_cursors {
	const uint8_t *p[MTZ_NSEC];
	size_t pos[MTZ_NSEC], len[MTZ_NSEC];
};

struct mtz_sample_view {
	const uint8_t *rec;	/* the whole record */
	size_t rec_size;	/* at most 65535 (perf_event_header.size) */
	uint32_t tid;		/* the thread whose references are used */
	size_t regs_offset;	/* nr_regs u64 values at rec + regs_offset */
	unsigned nr_regs;	/* at most MTZ_MAX_REGS; 0 when none */
	int sp_index;		/* index of the stack pointer in regs, -1: none */
	size_t stack_offset;	/* the dump: stack_size bytes at rec + stack_offset, */
	size_t stack_size;	/* of which the first dyn_size are valid */
	size_t dyn_size;
};

/* How many of a thread's last samples a delta may name (ref index 0..15). */
#define MTZ_REFS 16

/* One of a thread's last coded samples, a possible reference (exposed for
 * tests).  Encoder and decoder both read its head and stack from the frame's
 * output, where the record sits at offset at (head, then the stack). */
struct mtz_delta_ref {
	uint64_t sp;
	uint64_t hash;		/* mt_fnv of its dyn_size stack bytes, as on
				 * the wire (its low 32 bits with 32-bit hashes) */
	size_t at;		/* the record's offset in the frame's output */
	size_t dyn_size, head_size;
};

struct mtz_delta_stats {
	uint64_t coded;		/* SAMPLE entries emitted or decoded */
	uint64_t keyframes;	/* of which without a stack reference */
	uint64_t fallbacks;	/* plain keyframes sent after a failed verification */
	uint64_t stack_bytes;	/* valid stack bytes coded */
	uint64_t pad_bytes;	/* stale dump bytes coded */
	uint64_t pad_matched;	/* of which coded against earlier output */
};

/* ---- encoder ---------------------------------------------------------- */

struct mtz_delta_enc;

/* @return : 0 or MTZ_ENOMEM (with *out NULL). */
int mtz_delta_enc_new(struct mtz_delta_enc **out);

/* Accepts NULL. */
void mtz_delta_enc_free(struct mtz_delta_enc *e);

/* Forgets every reference and the output index (start of a frame): the next
 * sample of each thread is a keyframe. */
void mtz_delta_enc_reset(struct mtz_delta_enc *e);

/* Appends the SAMPLE entry coding s to the sections, after checking that it
 * decodes back to s's record.  hist holds the frame's output before this
 * record (hist_len bytes: every record since the last reset, in order): the
 * references and the pad's sources are found there.
 * @return : 0, MTZ_EFORMAT (s is inconsistent: nothing appended),
 *           MTZ_ENOMEM, or MTZ_EHASH (not even a keyframe verified: a bug). */
int mtz_delta_enc_sample(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
			 struct mtz_sections *sec, const uint8_t *hist, size_t hist_len);

/* The same, with the hash of s's dump (mt_fnv of its dyn_size bytes)
 * already computed by mtz_delta_stack_hashes. */
int mtz_delta_enc_sample_hashed(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
				uint64_t stack_hash, struct mtz_sections *sec,
				const uint8_t *hist, size_t hist_len);

/* The dump hashes of n views (v[k]->rec set), four side by side
 * (mt_fnv4): one hash is a chain of multiplies, and that chain was a large
 * part of the encoder's time.  A view that mtz_delta_enc_sample would
 * refuse gets 0. */
#define MTZ_HASH_BATCH 4
void mtz_delta_stack_hashes(const struct mtz_sample_view *const v[], unsigned n,
			    uint64_t hash[]);

/* Stack hashes on the wire: all 64 bits of mt_fnv (the default), or its
 * low 32 (MTZ_FLAG_HASH32, mt-encode --hash-bits 32).  bits: 32 or 64. */
void mtz_delta_enc_set_hash_bits(struct mtz_delta_enc *e, unsigned bits);

/* How many of a thread's last samples the encoder considers as references,
 * 1..MTZ_REFS (default MTZ_REFS; 1: always the last sample, as version 1
 * did).  For tests and measurements. */
void mtz_delta_enc_set_refs(struct mtz_delta_enc *e, unsigned n);

const struct mtz_delta_stats *mtz_delta_enc_stats(const struct mtz_delta_enc *e);

/* The encoder's k-th last sample of tid (k = 0: the last), NULL when it
 * holds none.  For tests, which alter it to check that an encoder whose
 * references disagree with the decoder's falls back to a keyframe. */
struct mtz_delta_ref *mtz_delta_enc_ref(struct mtz_delta_enc *e, uint32_t tid, unsigned k);

/* ---- decoder ---------------------------------------------------------- */

struct mtz_delta_dec;

int mtz_delta_dec_new(struct mtz_delta_dec **out);
void mtz_delta_dec_free(struct mtz_delta_dec *d);
void mtz_delta_dec_reset(struct mtz_delta_dec *d);

/* The .mtz version of the entries to decode (default MTZ_VERSION): version
 * 1 entries carry their pad codes in the code section. */
void mtz_delta_dec_set_version(struct mtz_delta_dec *d, unsigned version);

/* Decodes the SAMPLE entry whose tag was just read from c's ops section and
 * appends the record to out, the frame's output so far, which must hold
 * every record this decoder produced since its last reset (the references
 * are read from there).  On success the
 * cursors move past the entry and the thread's reference moves to this
 * sample; on failure the cursors, out and the references are as they were.
 * @return : 0, MTZ_ETRUNC (a section ends inside the entry), MTZ_EFORMAT (a
 *           field out of bounds), MTZ_EREF (ref_hash names no reference held
 *           for the thread), MTZ_EHASH (the rebuilt stack does not hash to
 *           the entry's hash), MTZ_ENOMEM. */
int mtz_delta_dec_sample(struct mtz_delta_dec *d, struct mtz_cursors *c, struct mt_buf *out);

/* The fields of a SAMPLE entry (ops bytes after its tag) that say what it
 * takes from the head section, read as the decoder reads them but without
 * its checks (version 3's head order, mtz_headcols.c, needs only these). */
struct mtz_sample_shape {
	size_t rec_size, so, dyn, pad;
	unsigned flags;
};
void mtz_delta_sample_shape(const uint8_t *ops, struct mtz_sample_shape *s);

/* As mtz_delta_enc_set_hash_bits, for the file the entries come from. */
void mtz_delta_dec_set_hash_bits(struct mtz_delta_dec *d, unsigned bits);

/* Deferred checks (off by default): mtz_delta_dec_sample then checks the
 * rebuilt stacks' hashes four at a time (faster than one by one: see
 * mt_fnv4), so an entry may succeed whose stack is wrong.
 * Until mtz_delta_dec_verify has returned 0, the records decoded since the
 * last check must not be used; an MTZ_EHASH then, from either function,
 * means the frame is damaged from the oldest unchecked record on. */
void mtz_delta_dec_set_deferred(struct mtz_delta_dec *d, int on);

/* Checks the stacks decoded since the last check; out: the frame's output.
 * @return : 0 or MTZ_EHASH. */
int mtz_delta_dec_verify(struct mtz_delta_dec *d, const uint8_t *out);

const struct mtz_delta_stats *mtz_delta_dec_stats(const struct mtz_delta_dec *d);

/* Does a rebuilt stack's hash differ from the one its entry carries?  In
 * fuzzing builds (tests/fuzz: FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, as
 * libFuzzer users name it) never: the fuzzer then reaches the decoding past
 * the check, where a file written on purpose, with right hashes, goes. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MTZ_STACK_HASH_DIFFERS(got, want) ((void)(got), (void)(want), 0)
#else
#define MTZ_STACK_HASH_DIFFERS(got, want) ((got) != (want))
#endif

#endif
