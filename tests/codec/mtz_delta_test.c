/* Unit tests of the .mtz sample coder on synthetic samples shaped like perf's
 * (header, pid/tid, time, regs, stack size, stack bytes, dyn_size), taken
 * from a simulated thread stack that changes between samples. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "codec/mtz.h"
#include "codec/mtz_delta.h"
#include "common/fnv.h"

#define NR_REGS 17
#define SP_INDEX 7
#define MEM_BASE 0x7ffd00000000ull
#define MEM_SIZE 65536

/* A simulated address space holding one thread's stack. */
struct stack_mem {
	uint8_t b[MEM_SIZE];
};

static void mem_fill(struct stack_mem *m, unsigned seed)
{
	srand(seed);
	for (size_t i = 0; i < MEM_SIZE; i += 8) {
		/* return-address-like and small values, as real stacks hold */
		uint64_t v = (i % 64 == 8) ? 0x555555554000ull + (rand() % 4096)
					   : (uint64_t)(rand() % 3 ? 0 : rand());
		memcpy(m->b + i, &v, 8);
	}
}

struct sample {
	uint8_t rec[70000];
	struct mtz_sample_view v;
	uint64_t regs[NR_REGS];
};

/* Builds a sample of thread tid with sp at addr, a stack dump of size bytes
 * of which dyn are valid (taken from m), the rest filled with pad. */
static void sample_make(struct sample *s, const struct stack_mem *m, uint32_t tid,
			uint64_t sp, size_t size, size_t dyn, uint8_t pad, uint64_t time)
{
	uint8_t *p = s->rec;
	size_t off = 8;
	memcpy(p + off, &tid, 4);		/* pid */
	memcpy(p + off + 4, &tid, 4);		/* tid */
	off += 8;
	memcpy(p + off, &time, 8);
	off += 8;
	uint64_t abi = 2;
	memcpy(p + off, &abi, 8);
	off += 8;
	s->v.regs_offset = off;
	for (unsigned i = 0; i < NR_REGS; i++) {
		/* the first four registers follow the time, the rest stay */
		s->regs[i] = i == SP_INDEX ? sp : 0x1000 * i + (i < 4 ? time & 0xff : 0);
		memcpy(p + off, &s->regs[i], 8);
		off += 8;
	}
	uint64_t sz = size;
	memcpy(p + off, &sz, 8);
	off += 8;
	s->v.stack_offset = off;
	s->v.stack_size = size;
	memset(p + off, pad, size);
	if (dyn) {
		cr_assert(sp >= MEM_BASE && sp - MEM_BASE + dyn <= MEM_SIZE);
		memcpy(p + off, m->b + (sp - MEM_BASE), dyn);
	}
	off += size;
	uint64_t d = dyn;
	if (size) {
		memcpy(p + off, &d, 8);
		off += 8;
	}
	struct perf_event_header h = { .type = 9, .misc = 2, .size = (uint16_t)off };
	memcpy(p, &h, 8);
	s->v.rec = s->rec;
	s->v.rec_size = off;
	s->v.tid = tid;
	s->v.nr_regs = NR_REGS;
	s->v.sp_index = SP_INDEX;
	s->v.dyn_size = dyn;
}

/* Encoder, decoder, the sections written and the records fed so far. */
struct rig {
	struct mtz_delta_enc *enc;
	struct mtz_delta_dec *dec;
	struct mtz_sections sec;
	struct mt_buf out;		/* the encoder's frame output */
	struct mt_buf expect;		/* the records, concatenated */
	size_t last_entry;		/* bytes the last entry added to the sections */
	size_t last_start[MTZ_NSEC];
};

static void rig_init(struct rig *r)
{
	memset(r, 0, sizeof(*r));
	cr_assert_eq(mtz_delta_enc_new(&r->enc), 0);
	cr_assert_eq(mtz_delta_dec_new(&r->dec), 0);
}

static void rig_fini(struct rig *r)
{
	mtz_delta_enc_free(r->enc);
	mtz_delta_dec_free(r->dec);
	for (int i = 0; i < MTZ_NSEC; i++)
		mt_buf_release(&r->sec.s[i]);
	mt_buf_release(&r->out);
	mt_buf_release(&r->expect);
}

static size_t sec_total(const struct rig *r)
{
	size_t n = 0;
	for (int i = 0; i < MTZ_NSEC; i++)
		n += r->sec.s[i].len;
	return n;
}

static void rig_encode(struct rig *r, const struct sample *s)
{
	size_t before = sec_total(r);
	for (int i = 0; i < MTZ_NSEC; i++)
		r->last_start[i] = r->sec.s[i].len;
	cr_assert_eq(mtz_delta_enc_sample(r->enc, &s->v, &r->sec, r->out.data, r->out.len), 0);
	cr_assert_eq(r->sec.s[MTZ_SEC_OPS].data[r->last_start[MTZ_SEC_OPS]], MTZ_TAG_SAMPLE);
	r->last_entry = sec_total(r) - before;
	/* the frame's output grows by the record */
	cr_assert_eq(mt_buf_reserve(&r->out, s->v.rec_size), 0);
	mt_buf_put(&r->out, s->v.rec, s->v.rec_size);
	cr_assert_eq(mt_buf_reserve(&r->expect, s->v.rec_size), 0);
	mt_buf_put(&r->expect, s->v.rec, s->v.rec_size);
}

/* The last entry's hashes: ref_hash and hash. */
static uint64_t last_ref_hash(const struct rig *r)
{
	return mt_ld64(r->sec.s[MTZ_SEC_HASH].data + r->last_start[MTZ_SEC_HASH]);
}

static uint64_t last_hash(const struct rig *r)
{
	return mt_ld64(r->sec.s[MTZ_SEC_HASH].data + r->last_start[MTZ_SEC_HASH] + 8);
}

static void cursors_of(const struct rig *r, struct mtz_cursors *c)
{
	for (int i = 0; i < MTZ_NSEC; i++) {
		c->p[i] = r->sec.s[i].data;
		c->pos[i] = 0;
		c->len[i] = r->sec.s[i].len;
	}
}

/* Decodes every entry with the rig's decoder and compares. */
static void rig_check(struct rig *r)
{
	struct mt_buf out = { 0 };
	struct mtz_cursors c;
	cursors_of(r, &c);
	while (c.pos[MTZ_SEC_OPS] < c.len[MTZ_SEC_OPS]) {
		size_t at = c.pos[MTZ_SEC_OPS];
		cr_assert_eq(c.p[MTZ_SEC_OPS][c.pos[MTZ_SEC_OPS]++], MTZ_TAG_SAMPLE);
		int rc = mtz_delta_dec_sample(r->dec, &c, &out);
		cr_assert_eq(rc, 0, "entry at ops %zu: %s", at, mtz_strerror(rc));
	}
	for (int i = 0; i < MTZ_NSEC; i++)
		cr_assert_eq(c.pos[i], c.len[i], "section %d not consumed", i);
	cr_assert_eq(out.len, r->expect.len);
	cr_assert(memcmp(out.data, r->expect.data, out.len) == 0, "decoded bytes differ");
	cr_assert_eq(r->out.len, r->expect.len);
	cr_assert(memcmp(r->out.data, r->expect.data, out.len) == 0, "encoder output differs");
	mt_buf_release(&out);
}

static struct stack_mem mem, mem2;
static struct sample s;

Test(mtz_delta, keyframe_round_trip)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 1);
	sample_make(&s, &mem, 100, MEM_BASE + 40000, 8192, 8192, 0, 1);
	rig_encode(&r, &s);
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	cr_assert_eq(st->coded, 1);
	cr_assert_eq(st->keyframes, 1);
	cr_assert_eq(st->fallbacks, 0);
	cr_assert_eq(st->stack_bytes, 8192);
	/* a keyframe XORs against zeros: ref_hash 0 and the hash of the bytes */
	cr_assert_eq(last_ref_hash(&r), 0);
	cr_assert_eq(last_hash(&r), mt_fnv(mem.b + 40000, 8192));
	/* a keyframe holds the record as it is, plus tag, ops, hashes and the
	 * pad's segment count (0: dyn_size is the whole dump) */
	cr_assert_eq(r.last_entry, s.v.rec_size + 1 + MTZ_SAMPLE_OPS + 16 + 2);
	rig_check(&r);
	cr_assert_eq(mtz_delta_dec_stats(r.dec)->keyframes, 1);
	rig_fini(&r);
}

/* sp moving by delta between two samples whose stacks differ in a few words */
static void sp_move(long delta)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 2);
	uint64_t sp = MEM_BASE + 30000;
	sample_make(&s, &mem, 7, sp, 8192, 8192, 0, 1);
	rig_encode(&r, &s);
	size_t key = r.last_entry;
	for (int k = 0; k < 5; k++) {
		sp += delta;
		/* the callee wrote a few words below/at the new sp */
		for (int w = 0; w < 4; w++)
			mem.b[sp - MEM_BASE + 16 * w] ^= (uint8_t)(0x5a + k);
		sample_make(&s, &mem, 7, sp, 8192, 8192, 0, 2 + k);
		rig_encode(&r, &s);
		/* deltas carry the changed words and the newly covered bytes
		 * only: far smaller than the keyframe */
		size_t newly = (size_t)labs(delta) + 64;
		cr_assert_lt(r.last_entry, s.v.rec_size - 8192 + 200 + 2 * newly,
			     "delta %ld: entry %zu bytes (keyframe %zu)", delta, r.last_entry, key);
	}
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	cr_assert_eq(st->keyframes, 1);
	cr_assert_eq(st->fallbacks, 0);
	rig_check(&r);
	rig_fini(&r);
}

Test(mtz_delta, sp_moves_down) { sp_move(-96); }
Test(mtz_delta, sp_moves_up) { sp_move(160); }
Test(mtz_delta, sp_moves_unaligned_down) { sp_move(-13); }
Test(mtz_delta, sp_moves_unaligned_up) { sp_move(5); }

Test(mtz_delta, sp_moves_beyond_the_reference)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 3);
	sample_make(&s, &mem, 7, MEM_BASE + 100, 4096, 4096, 0, 1);
	rig_encode(&r, &s);
	/* no overlap at all: a delta would be the whole stack, so a keyframe */
	sample_make(&s, &mem, 7, MEM_BASE + 20000, 4096, 4096, 0, 2);
	rig_encode(&r, &s);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 2);
	/* overlaps at the lower end, then at the upper end: deltas whose
	 * newly covered bytes are XORed with zeros */
	sample_make(&s, &mem, 7, MEM_BASE + 19800, 4096, 4096, 0, 3);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 7, MEM_BASE + 20100, 4096, 4096, 0, 4);
	rig_encode(&r, &s);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 2);
	rig_check(&r);
	rig_fini(&r);
}

Test(mtz_delta, dyn_size_smaller_than_size_and_zero)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 4);
	/* the bytes after dyn_size are whatever the ring buffer held: kept */
	sample_make(&s, &mem, 9, MEM_BASE + 50000, 8192, 3001, 0xcc, 1);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 9, MEM_BASE + 49992, 8192, 3333, 0xdd, 2);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 9, MEM_BASE + 49992, 8192, 0, 0xee, 3);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 9, MEM_BASE + 49000, 8192, 7, 0x11, 4);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 9, MEM_BASE + 49000, 1024, 1024, 0, 5);
	rig_encode(&r, &s);
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	cr_assert_eq(st->coded, 5);
	cr_assert_eq(st->stack_bytes, 3001 + 3333 + 0 + 7 + 1024);
	cr_assert_eq(st->fallbacks, 0);
	rig_check(&r);
	rig_fini(&r);
}

Test(mtz_delta, sample_without_sp_aligns_at_offset_zero)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 5);
	sample_make(&s, &mem, 3, MEM_BASE + 1000, 2048, 2048, 0, 1);
	s.v.sp_index = -1;
	rig_encode(&r, &s);
	mem.b[1000 + 64] ^= 1;
	sample_make(&s, &mem, 3, MEM_BASE + 1000, 2048, 2048, 0, 2);
	s.v.sp_index = -1;
	rig_encode(&r, &s);
	cr_assert_lt(r.last_entry, 400);
	rig_check(&r);
	rig_fini(&r);
}

Test(mtz_delta, interleaved_threads)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 6);
	mem_fill(&mem2, 7);
	for (int k = 0; k < 10; k++) {
		struct stack_mem *m = k % 2 ? &mem2 : &mem;
		m->b[60000 + 8 * k] ^= 0x77;
		sample_make(&s, m, k % 2 ? 201 : 200, MEM_BASE + 60000 - 8 * (k % 3),
			    4096, 4096, 0, k);
		rig_encode(&r, &s);
		if (k >= 2)	/* each thread codes against its own stack */
			cr_assert_lt(r.last_entry, 600, "sample %d: %zu bytes", k, r.last_entry);
	}
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	cr_assert_eq(st->keyframes, 2);
	cr_assert_eq(st->fallbacks, 0);
	rig_check(&r);
	rig_fini(&r);
}

Test(mtz_delta, reset_starts_with_keyframes)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 8);
	sample_make(&s, &mem, 1, MEM_BASE + 8192, 4096, 4096, 0, 1);
	rig_encode(&r, &s);
	rig_encode(&r, &s);
	mtz_delta_enc_reset(r.enc);
	rig_encode(&r, &s);
	cr_assert_eq(last_ref_hash(&r), 0);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 2);
	rig_fini(&r);
}

Test(mtz_delta, stale_reference_falls_back_to_keyframe)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 9);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 1);
	rig_encode(&r, &s);
	/* the encoder's reference no longer matches what a decoder holds: it
	 * believes the reference covers half the stack it does */
	struct mtz_delta_ref *ref = mtz_delta_enc_ref(r.enc, 5, 0);
	cr_assert_not_null(ref);
	cr_assert_eq(ref->dyn_size, 4096);
	ref->dyn_size = 2048;
	mem.b[8192 + 8] ^= 1;
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 2);
	rig_encode(&r, &s);
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	cr_assert_eq(st->fallbacks, 1);
	cr_assert_eq(st->keyframes, 2);
	cr_assert_eq(last_ref_hash(&r), 0);
	/* and the next one is a delta against the keyframe again */
	rig_encode(&r, &s);
	cr_assert_eq(st->keyframes, 2);
	rig_check(&r);
	rig_fini(&r);
}

Test(mtz_delta, reference_hash_mismatch_falls_back_to_keyframe)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 10);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 1);
	rig_encode(&r, &s);
	mtz_delta_enc_ref(r.enc, 5, 0)->hash ^= 1;
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 2);
	rig_encode(&r, &s);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->fallbacks, 1);
	rig_check(&r);
	rig_fini(&r);
}

/* Decodes the first entry of r with r's decoder, leaving c at the second. */
static void decode_first(struct rig *r, struct mtz_cursors *c, struct mt_buf *out)
{
	cursors_of(r, c);
	c->pos[MTZ_SEC_OPS]++;
	cr_assert_eq(mtz_delta_dec_sample(r->dec, c, out), 0);
	c->pos[MTZ_SEC_OPS]++;	/* the second entry's tag */
}

/* Decoder side: a delta whose hashes do not match is refused, not guessed. */
Test(mtz_delta, decoder_refuses_bad_hashes)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 11);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 1);
	rig_encode(&r, &s);
	mem.b[8192 + 16] ^= 3;
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 2);
	rig_encode(&r, &s);
	struct mt_buf out = { 0 };
	struct mtz_cursors c;
	decode_first(&r, &c, &out);
	struct mtz_cursors c0 = c;
	uint8_t *h = r.sec.s[MTZ_SEC_HASH].data + r.last_start[MTZ_SEC_HASH];
	uint8_t *code = r.sec.s[MTZ_SEC_CODE].data;
	size_t clen = r.sec.s[MTZ_SEC_CODE].len;
	h[8] ^= 1;		/* hash of the rebuilt bytes */
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), MTZ_EHASH);
	h[8] ^= 1;
	h[0] ^= 1;		/* hash of the reference */
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), MTZ_EREF);
	h[0] ^= 1;
	/* a coded word: the stack code ends before the pad's u16 count */
	code[clen - 3] ^= 0x40;
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), MTZ_EHASH);
	code[clen - 3] ^= 0x40;
	/* failures left cursors, output and reference alone */
	cr_assert(memcmp(&c, &c0, sizeof(c)) == 0);
	size_t len = out.len;
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), 0);
	cr_assert_eq(out.len - len, s.v.rec_size);
	cr_assert(memcmp(out.data + len, s.v.rec, s.v.rec_size) == 0);
	for (int i = 0; i < MTZ_NSEC; i++)
		cr_assert_eq(c.pos[i], c.len[i]);
	mt_buf_release(&out);
	rig_fini(&r);
}

/* With 32-bit hashes (MTZ_FLAG_HASH32) an entry carries the low 32 bits of
 * the reference's hash and of its own, 8 bytes instead of 16; the decoder
 * set the same way rebuilds the records and still refuses a wrong hash or
 * reference. */
Test(mtz_delta, hashes_of_32_bits)
{
	struct rig r;
	rig_init(&r);
	mtz_delta_enc_set_hash_bits(r.enc, 32);
	mtz_delta_dec_set_hash_bits(r.dec, 32);
	mem_fill(&mem, 12);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 1);
	rig_encode(&r, &s);
	uint64_t key_hash = mt_fnv(mem.b + 8192, 4096);
	cr_assert_eq(r.sec.s[MTZ_SEC_HASH].len, 8);
	cr_assert_eq(mt_ld32(r.sec.s[MTZ_SEC_HASH].data), 0);
	cr_assert_eq(mt_ld32(r.sec.s[MTZ_SEC_HASH].data + 4), (uint32_t)key_hash);
	mem.b[8192 + 16] ^= 3;
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 2);
	rig_encode(&r, &s);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 1);
	cr_assert_eq(r.sec.s[MTZ_SEC_HASH].len, 16);
	const uint8_t *hs = r.sec.s[MTZ_SEC_HASH].data + 8;
	cr_assert_eq(mt_ld32(hs), (uint32_t)key_hash);
	cr_assert_eq(mt_ld32(hs + 4), (uint32_t)mt_fnv(mem.b + 8192, 4096));
	rig_check(&r);

	/* again: the first entry, then the second damaged */
	mtz_delta_dec_reset(r.dec);
	struct mt_buf out = { 0 };
	struct mtz_cursors c;
	decode_first(&r, &c, &out);
	uint8_t *h = r.sec.s[MTZ_SEC_HASH].data + 8;
	h[7] ^= 0x80;		/* the top bit of the stack's 32-bit hash */
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), MTZ_EHASH);
	h[7] ^= 0x80;
	h[0] ^= 1;
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), MTZ_EREF);
	h[0] ^= 1;
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), 0);
	cr_assert_eq(out.len, r.expect.len);
	cr_assert(memcmp(out.data, r.expect.data, out.len) == 0);
	mt_buf_release(&out);
	rig_fini(&r);
}

/* Registers and other head words go as differences from the previous
 * sample's (new - old, mod 2^64): a time step is the same small number
 * every sample. */
Test(mtz_delta, registers_are_coded_against_the_previous_sample)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 12);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 1024, 1024, 0, 0x10);
	rig_encode(&r, &s);
	uint64_t old[NR_REGS];
	memcpy(old, s.regs, sizeof(old));
	/* time 0x13: sample_make varies four registers with it */
	sample_make(&s, &mem, 5, MEM_BASE + 8192 - 32, 1024, 1024, 0, 0x13);
	rig_encode(&r, &s);
	/* the head code: one group (the head is under 512 bytes), its word
	 * mask, then for the words that changed, head - previous head */
	const uint8_t *code = r.sec.s[MTZ_SEC_HEAD].data + r.last_start[MTZ_SEC_HEAD];
	cr_assert_lt(s.v.stack_offset, MTZ_GROUP_SIZE);
	cr_assert_eq(code[0], 1);
	uint64_t mask = mt_ld64(code + 1), x[64] = { 0 };
	const uint8_t *w = code + 9;
	for (unsigned i = 0; i < 64; i++)
		if (mask >> i & 1) {
			x[i] = mt_ld64(w);
			w += 8;
		}
	for (unsigned i = 0; i < NR_REGS; i++)
		cr_assert_eq(x[s.v.regs_offset / 8 + i], s.regs[i] - old[i], "reg %u", i);
	cr_assert_eq(x[2], 3);	/* the time: 0x13 - 0x10 */
	/* unchanged fields before them (header, pid/tid) are left out */
	cr_assert_eq(mask & 3, 0);
	rig_check(&r);
	rig_fini(&r);
}

/* A head far from the previous one (a CPU profile's registers) is coded
 * plain, not XORed: the flag says which. */
Test(mtz_delta, distant_registers_are_coded_plain)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 16);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 1024, 1024, 0, 1);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 1024, 1024, 0, 2);
	rig_encode(&r, &s);
	const uint8_t *ops = r.sec.s[MTZ_SEC_OPS].data + r.last_start[MTZ_SEC_OPS] + 1;
	cr_assert(ops[6] & MTZ_SAMPLE_HEAD_XOR);
	cr_assert_eq(MTZ_SAMPLE_HEAD_OP(ops[6]), MTZ_OP_ADD);
	srand(5);
	for (unsigned i = 0; i < NR_REGS; i++)
		if (i != SP_INDEX) {
			uint64_t v = (uint64_t)rand() << 32 | (unsigned)rand();
			memcpy(s.rec + s.v.regs_offset + 8 * i, &v, 8);
		}
	rig_encode(&r, &s);
	ops = r.sec.s[MTZ_SEC_OPS].data + r.last_start[MTZ_SEC_OPS] + 1;
	cr_assert_eq(ops[6] & (MTZ_SAMPLE_HEAD_XOR | MTZ_SAMPLE_HEAD_LAST), 0);
	cr_assert_eq(MTZ_SAMPLE_HEAD_OP(ops[6]), 0);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 1);	/* the stack still a delta */
	rig_check(&r);
	rig_fini(&r);
}

/* Stale ring bytes after dyn_size are found in earlier output and coded
 * against it; bytes found nowhere are coded against zeros. */
Test(mtz_delta, pad_bytes_match_earlier_output)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 15);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 8192, 8192, 0, 1);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 6, MEM_BASE + 30000, 8192, 2000, 0, 2);
	/* the pad holds bytes of the first record, from offset 200 on */
	cr_assert_gt(r.out.len, 200 + 8192 - 2000);
	memcpy((uint8_t *)s.v.rec + s.v.stack_offset + 2000, r.out.data + 200, 8192 - 2000);
	rig_encode(&r, &s);
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	cr_assert_eq(st->pad_bytes, 6192);
	cr_assert_eq(st->pad_matched, 6192);
	/* a keyframe (new thread) whose pad is one segment (count, length,
	 * distance) and an empty XOR code (its presence bitmap: 13 groups) */
	cr_assert_eq(r.last_entry, s.v.rec_size - 6192 + 1 + MTZ_SAMPLE_OPS + 16 + 2 + 6 + 2,
		     "entry %zu bytes", r.last_entry);
	/* random pad: no match, still exact */
	sample_make(&s, &mem, 7, MEM_BASE + 30000, 8192, 1000, 0, 3);
	srand(3);
	for (size_t i = 1000; i < 8192; i++)
		((uint8_t *)s.v.rec)[s.v.stack_offset + i] = (uint8_t)rand();
	rig_encode(&r, &s);
	cr_assert_eq(st->pad_bytes, 6192 + 7192);
	cr_assert_eq(st->pad_matched, 6192);
	cr_assert_eq(st->fallbacks, 0);
	rig_check(&r);
	rig_fini(&r);
}

/* Every truncation of any section inside a valid entry is refused without
 * reading past it. */
Test(mtz_delta, truncated_entries_are_refused)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 13);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 2048, 2000, 0, 1);
	rig_encode(&r, &s);
	struct mt_buf out = { 0 };
	for (int i = 0; i < MTZ_NSEC; i++) {
		for (size_t k = 0; k < r.sec.s[i].len; k++) {
			struct mtz_cursors c;
			cursors_of(&r, &c);
			c.pos[MTZ_SEC_OPS] = 1;
			/* a copy of exactly k bytes, so ASan sees any overread */
			uint8_t *copy = malloc(k ? k : 1);
			memcpy(copy, r.sec.s[i].data, k);
			c.p[i] = copy;
			c.len[i] = k;
			if (i == MTZ_SEC_OPS && k < 1) {
				free(copy);
				continue;
			}
			int rc = mtz_delta_dec_sample(r.dec, &c, &out);
			cr_assert(rc == MTZ_ETRUNC || rc == MTZ_EFORMAT,
				  "section %d cut to %zu: %d", i, k, rc);
			free(copy);
		}
	}
	cr_assert_eq(out.len, 0);
	rig_fini(&r);
	mt_buf_release(&out);
}

Test(mtz_delta, inconsistent_views_are_refused)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 14);
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 2048, 2048, 0, 1);
	struct mtz_sample_view v = s.v;
	v.dyn_size = v.stack_size + 1;
	cr_assert_eq(mtz_delta_enc_sample(r.enc, &v, &r.sec, r.out.data, r.out.len), MTZ_EFORMAT);
	v = s.v;
	v.stack_size = v.rec_size;
	cr_assert_eq(mtz_delta_enc_sample(r.enc, &v, &r.sec, r.out.data, r.out.len), MTZ_EFORMAT);
	v = s.v;
	v.sp_index = NR_REGS;
	cr_assert_eq(mtz_delta_enc_sample(r.enc, &v, &r.sec, r.out.data, r.out.len), MTZ_EFORMAT);
	v = s.v;
	v.regs_offset = v.stack_offset - 8;
	cr_assert_eq(mtz_delta_enc_sample(r.enc, &v, &r.sec, r.out.data, r.out.len), MTZ_EFORMAT);
	cr_assert_eq(sec_total(&r), 0);
	cr_assert_eq(r.out.len, 0);
	rig_fini(&r);
}

static struct sample batch[MTZ_HASH_BATCH];

/* Four dumps hashed side by side give each one's own hash, whatever their
 * lengths (unequal, unaligned, empty); a view the encoder would refuse gets
 * 0 and does not stop the others being hashed; and the encoder writes the
 * hash it is given. */
Test(mtz_delta, stack_hashes_in_a_batch)
{
	static const size_t dyn[MTZ_HASH_BATCH] = { 4096, 13, 0, 2000 };
	const struct mtz_sample_view *v[MTZ_HASH_BATCH];
	uint64_t h[MTZ_HASH_BATCH];
	mem_fill(&mem, 31);
	for (int k = 0; k < MTZ_HASH_BATCH; k++) {
		sample_make(&batch[k], &mem, 5, MEM_BASE + 8192 + 8 * (uint64_t)k, 4096, dyn[k],
			    0xa5, 1);
		v[k] = &batch[k].v;
	}
	for (unsigned n = 1; n <= MTZ_HASH_BATCH; n++) {
		memset(h, 0xff, sizeof(h));
		mtz_delta_stack_hashes(v, n, h);
		for (unsigned k = 0; k < n; k++)
			cr_assert_eq(h[k], mt_fnv(v[k]->rec + v[k]->stack_offset, dyn[k]),
				     "batch of %u, dump %u", n, k);
	}
	batch[1].v.dyn_size = batch[1].v.stack_size + 1;	/* refused */
	mtz_delta_stack_hashes(v, MTZ_HASH_BATCH, h);
	cr_assert_eq(h[1], 0);
	cr_assert_eq(h[3], mt_fnv(v[3]->rec + v[3]->stack_offset, dyn[3]));

	struct rig r;
	rig_init(&r);
	cr_assert_eq(mtz_delta_enc_sample_hashed(r.enc, v[3], h[3], &r.sec, r.out.data,
						 r.out.len), 0);
	r.last_start[MTZ_SEC_HASH] = 0;
	cr_assert_eq(last_hash(&r), h[3]);
	rig_fini(&r);
}

/* A thread taking two call paths in turn (a CPU profile's thread): path A
 * (in mem) and path B (in mem2, sp 256 bytes lower) differ in every frame.
 * Step i feeds sample i of A, B, A, B, ...; a local of the path's frame
 * moves on each time. */
static void alternate_step(struct rig *r, int i)
{
	struct stack_mem *m = i % 2 ? &mem2 : &mem;
	uint64_t sp = MEM_BASE + (i % 2 ? 8192 - 256 : 8192);
	uint64_t counter;
	if (i == 0) {
		mem_fill(&mem, 21);
		mem_fill(&mem2, 22);
	}
	memcpy(&counter, m->b + 8192 + 64, 8);
	counter++;
	memcpy(m->b + 8192 + 64, &counter, 8);
	sample_make(&s, m, 5, sp, 4096, 4096, 0, 100 + (uint64_t)i);
	rig_encode(r, &s);
}

/* n steps with the encoder considering nrefs references; returns the bytes
 * the entries after the first two took. */
static size_t alternate(struct rig *r, unsigned nrefs, int n)
{
	size_t bytes = 0;
	mtz_delta_enc_set_refs(r->enc, nrefs);
	for (int i = 0; i < n; i++) {
		alternate_step(r, i);
		if (i >= 2)
			bytes += r->last_entry;
	}
	return bytes;
}

/* The ops fields of the last entry (after its tag). */
static uint8_t *last_ops(const struct rig *r)
{
	return r->sec.s[MTZ_SEC_OPS].data + r->last_start[MTZ_SEC_OPS] + 1;
}

Test(mtz_delta, alternating_paths_code_against_the_matching_sample)
{
	struct rig r, prev;
	rig_init(&r);
	rig_init(&prev);
	size_t chosen = 0;
	uint64_t hashes[12];
	/* each sample after the first two names the sample two back (index
	 * 1), whose hash it carries */
	for (int i = 0; i < 12; i++) {
		alternate_step(&r, i);
		hashes[i] = last_hash(&r);
		if (i >= 2) {
			cr_assert_eq(last_ops(&r)[7], 1, "sample %d: reference %u", i, last_ops(&r)[7]);
			cr_assert_eq(last_ref_hash(&r), hashes[i - 2]);
			chosen += r.last_entry;
		}
	}
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 2);
	rig_check(&r);
	/* the same samples against the previous sample (the other path):
	 * keyframes, several times larger */
	size_t last = alternate(&prev, 1, 12);
	cr_assert_gt(mtz_delta_enc_stats(prev.enc)->keyframes, 2);
	rig_check(&prev);
	cr_assert_lt(chosen * 4, last, "chosen %zu bytes, previous-sample %zu", chosen, last);
	rig_fini(&prev);
	rig_fini(&r);
}

/* A reference index naming a sample the decoder does not hold, out of
 * range, or given to a keyframe is damage, reported, not followed. */
Test(mtz_delta, hostile_reference_index_is_damage)
{
	struct rig r;
	rig_init(&r);
	alternate(&r, MTZ_REFS, 4);	/* key A, key B, A (ref 1), B (ref 1) */
	struct mt_buf out = { 0 };
	struct mtz_cursors c;
	cursors_of(&r, &c);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(c.p[MTZ_SEC_OPS][c.pos[MTZ_SEC_OPS]++], MTZ_TAG_SAMPLE);
		cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), 0);
	}
	c.pos[MTZ_SEC_OPS]++;	/* the last entry's tag */
	struct mtz_cursors c0 = c;
	size_t len = out.len;
	uint8_t *ops = last_ops(&r);
	cr_assert_eq(ops[7], 1);
	static const struct { uint8_t index; int rc; } cases[] = {
		{ 0, MTZ_EREF },	/* held, but not the sample hashed */
		{ 2, MTZ_EREF },
		{ 3, MTZ_EREF },	/* three samples held: 3..15 name none */
		{ 15, MTZ_EREF },
		{ 16, MTZ_EFORMAT },	/* beyond what any decoder keeps */
		{ 0x80, MTZ_EFORMAT },
		{ 0xff, MTZ_EFORMAT },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ops[7] = cases[i].index;
		cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), cases[i].rc,
			     "index %u", cases[i].index);
		cr_assert(memcmp(&c, &c0, sizeof(c)) == 0);
		cr_assert_eq(out.len, len);
	}
	/* an unknown way of sending words */
	ops[7] = 1;
	uint8_t flags = ops[6];
	ops[6] = (uint8_t)(flags | 3u << 1);
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), MTZ_EFORMAT);
	ops[6] = flags;
	cr_assert_eq(mtz_delta_dec_sample(r.dec, &c, &out), 0);
	cr_assert(memcmp(out.data + len, s.v.rec, s.v.rec_size) == 0);
	/* a keyframe that names a reference */
	struct mtz_delta_dec *fresh;
	cr_assert_eq(mtz_delta_dec_new(&fresh), 0);
	struct mt_buf out2 = { 0 };
	cursors_of(&r, &c);
	c.pos[MTZ_SEC_OPS] = 1;
	r.sec.s[MTZ_SEC_OPS].data[1 + 7] = 1;
	cr_assert_eq(mtz_delta_dec_sample(fresh, &c, &out2), MTZ_EFORMAT);
	r.sec.s[MTZ_SEC_OPS].data[1 + 7] = 0;
	cr_assert_eq(mtz_delta_dec_sample(fresh, &c, &out2), 0);
	mtz_delta_dec_free(fresh);
	mt_buf_release(&out2);
	mt_buf_release(&out);
	rig_fini(&r);
}

/* Changed words go as differences (new - old) while a thread's stacks
 * change little, and as they are once they change much. */
Test(mtz_delta, changed_words_go_as_differences_or_as_they_are)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 31);
	mem_fill(&mem2, 32);
	/* thread 5: one counter moves by 1 */
	for (int i = 0; i < 6; i++) {
		uint64_t counter;
		memcpy(&counter, mem.b + 8192 + 256, 8);
		counter++;
		memcpy(mem.b + 8192 + 256, &counter, 8);
		sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, 1 + (uint64_t)i);
		rig_encode(&r, &s);
	}
	cr_assert_eq(MTZ_SAMPLE_STACK_OP(last_ops(&r)[6]), MTZ_OP_ADD);
	/* its code: presence bits (one byte), the group's mask, one word */
	const uint8_t *code = r.sec.s[MTZ_SEC_CODE].data + r.last_start[MTZ_SEC_CODE];
	cr_assert_eq(r.sec.s[MTZ_SEC_CODE].len - r.last_start[MTZ_SEC_CODE], 1 + 8 + 8);
	cr_assert_eq(code[0], 1);
	cr_assert_eq(mt_ld64(code + 1), 1ull << (256 / 8));
	cr_assert_eq(mt_ld64(code + 9), 1);
	/* thread 6: 40 of 512 words take new values every sample (deltas of
	 * about 380 bytes: the average passes 256 after nine) */
	srand(33);
	for (int i = 0; i < 16; i++) {
		for (int k = 0; k < 40; k++) {
			uint64_t v = (uint64_t)rand() << 32 | (unsigned)rand();
			memcpy(mem2.b + 8192 + 8 * (size_t)(rand() % 512), &v, 8);
		}
		sample_make(&s, &mem2, 6, MEM_BASE + 8192, 4096, 4096, 0, 1 + (uint64_t)i);
		rig_encode(&r, &s);
	}
	cr_assert_eq(MTZ_SAMPLE_STACK_OP(last_ops(&r)[6]), MTZ_OP_COPY);
	cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 2);
	rig_check(&r);
	rig_fini(&r);
}

/* Stale bytes whose source moves by a word partway (the records one ring
 * wrap earlier were not all the size of today's): two segments, the second
 * at the first's distance less 8, and nothing left to send. */
Test(mtz_delta, pad_source_moving_by_a_word_is_followed)
{
	struct rig r;
	rig_init(&r);
	/* distinct nonzero words: every one the output index holds is found */
	for (size_t i = 0; i < MEM_SIZE; i += 8) {
		uint64_t v = (i + 8) * 0x9e3779b97f4a7c15ull;
		memcpy(mem.b + i, &v, 8);
	}
	sample_make(&s, &mem, 5, MEM_BASE + 8192, 8192, 8192, 0, 1);
	rig_encode(&r, &s);
	sample_make(&s, &mem, 6, MEM_BASE + 30000, 8192, 2000, 0, 2);
	uint8_t *pad = (uint8_t *)s.v.rec + s.v.stack_offset + 2000;
	memcpy(pad, r.out.data + 200, 3000);
	memcpy(pad + 3000, r.out.data + 200 + 3000 + 8, 8192 - 2000 - 3000);
	rig_encode(&r, &s);
	const struct mtz_delta_stats *st = mtz_delta_enc_stats(r.enc);
	const uint8_t *code = r.sec.s[MTZ_SEC_PAD].data + r.last_start[MTZ_SEC_PAD];
	cr_assert_eq(st->pad_matched, 6192, "matched %llu, %u segments: %u:%u %u:%u", (unsigned long long)st->pad_matched, mt_ld16(code), mt_ld16(code + 2), mt_ld32(code + 4), mt_ld16(code + 8), mt_ld32(code + 10));
	size_t len = r.sec.s[MTZ_SEC_PAD].len - r.last_start[MTZ_SEC_PAD];
	uint32_t d0 = (uint32_t)(r.out.len - s.v.rec_size + s.v.stack_offset + 2000 - 200);
	cr_assert_eq(mt_ld16(code), 2);
	cr_assert_eq(mt_ld16(code + 2), 3000);
	cr_assert_eq(mt_ld32(code + 4), d0);
	cr_assert_eq(mt_ld16(code + 8), 3192);
	cr_assert_eq(mt_ld32(code + 10) ^ d0, d0 - 8);
	/* then the XOR code: a presence bitmap of 13 groups, all absent */
	cr_assert_eq(len, 14 + 2);
	cr_assert_eq(mt_ld16(code + 14), 0);
	rig_check(&r);
	rig_fini(&r);
}

/* A version 1 XOR code of cur against ref (NULL: zeros), n bytes, as that
 * version's writer sent it: presence bits, then per group a word mask and
 * the nonzero words of cur ^ ref. */
static void v1_xor(struct mt_buf *out, const uint8_t *cur, const uint8_t *ref, size_t n)
{
	size_t ngroups = (n + 511) / 512, pbytes = (ngroups + 7) / 8;
	cr_assert_eq(mt_buf_reserve(out, pbytes + ngroups * 8 + n + 8), 0);
	uint8_t *present = out->data + out->len;
	memset(present, 0, pbytes);
	out->len += pbytes;
	for (size_t g = 0; g < ngroups; g++) {
		uint64_t mask = 0, words[64];
		unsigned nw = 0;
		for (size_t i = g * 512; i < n && i < g * 512 + 512; i += 8) {
			uint64_t c = 0, r = 0;
			memcpy(&c, cur + i, n - i < 8 ? n - i : 8);
			if (ref)
				memcpy(&r, ref + i, n - i < 8 ? n - i : 8);
			if (c ^ r) {
				mask |= 1ull << ((i - g * 512) / 8);
				words[nw++] = c ^ r;
			}
		}
		if (!mask)
			continue;
		present[g / 8] |= (uint8_t)(1u << (g % 8));
		mt_buf_put(out, &mask, 8);
		mt_buf_put(out, words, 8 * nw);
	}
}

/* Version 1 entries (every delta against the thread's last sample, words by
 * XOR, pad codes in the code section) decode with a decoder set to version
 * 1; a version 2 decoder looks for the pad codes in their own section. */
Test(mtz_delta, version_1_entries_decode)
{
	struct mtz_sections sec = { 0 };
	struct mt_buf expect = { 0 };
	static struct sample s1, s2;
	mem_fill(&mem, 51);
	sample_make(&s1, &mem, 5, MEM_BASE + 8192, 2048, 2048, 0, 1);
	mem.b[8192 + 40] ^= 0x5a;
	sample_make(&s2, &mem, 5, MEM_BASE + 8192 - 24, 2048, 2048, 0, 2);
	const struct sample *v[2] = { &s1, &s2 };
	for (int k = 0; k < 2; k++) {
		const struct mtz_sample_view *sv = &v[k]->v;
		size_t so = sv->stack_offset, dyn = sv->dyn_size;
		uint64_t hash = mt_fnv(sv->rec + so, dyn);
		uint64_t ref_hash = k ? mt_fnv(s1.v.rec + so, s1.v.dyn_size) : 0;
		uint8_t ops[1 + MTZ_SAMPLE_OPS] = { MTZ_TAG_SAMPLE };
		mt_st16(ops + 1, (uint16_t)sv->rec_size);
		mt_st16(ops + 3, (uint16_t)sv->regs_offset);
		ops[5] = (uint8_t)sv->nr_regs;
		ops[6] = (uint8_t)sv->sp_index;
		ops[7] = k ? MTZ_SAMPLE_HEAD_XOR : 0;
		mt_st16(ops + 9, (uint16_t)so);
		mt_st16(ops + 11, (uint16_t)dyn);
		mt_st32(ops + 17, sv->tid);
		cr_assert_eq(mt_buf_reserve(&sec.s[MTZ_SEC_OPS], sizeof(ops)), 0);
		mt_buf_put(&sec.s[MTZ_SEC_OPS], ops, sizeof(ops));
		cr_assert_eq(mt_buf_reserve(&sec.s[MTZ_SEC_HASH], 16), 0);
		mt_buf_put(&sec.s[MTZ_SEC_HASH], &ref_hash, 8);
		mt_buf_put(&sec.s[MTZ_SEC_HASH], &hash, 8);
		struct mt_buf *head = &sec.s[MTZ_SEC_HEAD], *code = &sec.s[MTZ_SEC_CODE];
		size_t tail = sv->rec_size - so - dyn;
		if (!k) {
			cr_assert_eq(mt_buf_reserve(head, so + tail), 0);
			mt_buf_put(head, sv->rec, so);
			cr_assert_eq(mt_buf_reserve(code, dyn), 0);
			mt_buf_put(code, sv->rec + so, dyn);
		} else {
			v1_xor(head, sv->rec, s1.v.rec, so);
			cr_assert_eq(mt_buf_reserve(head, tail), 0);
			/* the reference at sp - 24: its stack 24 bytes on */
			uint8_t aligned[2048] = { 0 };
			memcpy(aligned + 24, s1.v.rec + so, 2048 - 24);
			v1_xor(code, sv->rec + so, aligned, dyn);
		}
		mt_buf_put(head, sv->rec + so + dyn, tail);
		uint16_t nseg = 0;	/* no pad */
		cr_assert_eq(mt_buf_reserve(code, 2), 0);
		mt_buf_put(code, &nseg, 2);
		cr_assert_eq(mt_buf_reserve(&expect, sv->rec_size), 0);
		mt_buf_put(&expect, sv->rec, sv->rec_size);
	}
	for (unsigned version = 1; version <= 2; version++) {
		struct mtz_delta_dec *d;
		cr_assert_eq(mtz_delta_dec_new(&d), 0);
		mtz_delta_dec_set_version(d, version);
		struct mt_buf out = { 0 };
		struct mtz_cursors c;
		for (int i = 0; i < MTZ_NSEC; i++) {
			c.p[i] = sec.s[i].data;
			c.pos[i] = 0;
			c.len[i] = sec.s[i].len;
		}
		int rc = 0;
		for (int k = 0; k < 2 && !rc; k++) {
			cr_assert_eq(c.p[MTZ_SEC_OPS][c.pos[MTZ_SEC_OPS]++], MTZ_TAG_SAMPLE);
			rc = mtz_delta_dec_sample(d, &c, &out);
		}
		if (version == 1) {
			cr_assert_eq(rc, 0, "%s", mtz_strerror(rc));
			for (int i = 0; i < MTZ_NSEC; i++)
				cr_assert_eq(c.pos[i], c.len[i], "section %d", i);
			cr_assert_eq(out.len, expect.len);
			cr_assert(memcmp(out.data, expect.data, out.len) == 0);
		} else {
			cr_assert_eq(rc, MTZ_ETRUNC);
		}
		mt_buf_release(&out);
		mtz_delta_dec_free(d);
	}
	for (int i = 0; i < MTZ_NSEC; i++)
		mt_buf_release(&sec.s[i]);
	mt_buf_release(&expect);
}

/* Only empty stacks (dyn_size 0): the code section stays empty, and
 * decoding copies nothing from it (ASan and UBSan builds check). */
Test(mtz_delta, empty_stacks_leave_the_code_section_empty)
{
	struct rig r;
	rig_init(&r);
	mem_fill(&mem, 61);
	for (int i = 0; i < 3; i++) {
		sample_make(&s, &mem, 5, MEM_BASE + 8192, 1024, 0, 0, 1 + (uint64_t)i);
		rig_encode(&r, &s);
	}
	cr_assert_eq(r.sec.s[MTZ_SEC_CODE].len, 0);
	/* as a reader has it: a section of no bytes at NULL */
	mt_buf_release(&r.sec.s[MTZ_SEC_CODE]);
	rig_check(&r);
	rig_fini(&r);
}

/* Decodes every entry of r in deferred mode (then the final check).
 * @return : the first failure (0: none); *at: the entry it came at (the
 *           number of entries, for the final check). */
static int decode_deferred(struct rig *r, struct mt_buf *out, int *at)
{
	struct mtz_cursors c;
	cursors_of(r, &c);
	mtz_delta_dec_reset(r->dec);
	mtz_delta_dec_set_deferred(r->dec, 1);
	int rc = 0;
	for (*at = 0; !rc && c.pos[MTZ_SEC_OPS] < c.len[MTZ_SEC_OPS]; ++*at) {
		c.pos[MTZ_SEC_OPS]++;
		rc = mtz_delta_dec_sample(r->dec, &c, out);
	}
	if (!rc)
		rc = mtz_delta_dec_verify(r->dec, out->data);
	return rc;
}

/* Deferred checks (the reader's): a stack rebuilt wrong passes its own
 * entry but not the check of its group of four, or the final check; an
 * intact frame decodes exactly. */
Test(mtz_delta, deferred_checks_catch_damage)
{
	for (int bad = -1; bad < 7; bad++) {
		struct rig r;
		rig_init(&r);
		mem_fill(&mem, 12);
		size_t code_at[7];
		for (int k = 0; k < 7; k++) {
			mem.b[8192 + 16 + 8 * k] ^= 5;
			sample_make(&s, &mem, 5, MEM_BASE + 8192, 4096, 4096, 0, (unsigned)k + 1);
			rig_encode(&r, &s);
			code_at[k] = r.last_start[MTZ_SEC_CODE];
		}
		cr_assert_eq(mtz_delta_enc_stats(r.enc)->keyframes, 1);
		if (bad == 0)	/* the keyframe: its stack as it is */
			r.sec.s[MTZ_SEC_CODE].data[code_at[0] + 100] ^= 0x10;
		else if (bad > 0)	/* the hash the entry's stack must have */
			r.sec.s[MTZ_SEC_HASH].data[16 * (size_t)bad + 8] ^= 1;
		struct mt_buf out = { 0 };
		int at, rc = decode_deferred(&r, &out, &at);
		if (bad < 0) {
			cr_assert_eq(rc, 0);
			cr_assert_eq(out.len, r.expect.len);
			cr_assert(memcmp(out.data, r.expect.data, out.len) == 0);
		} else {
			/* found at the group's check, the final one, or (a wrong hash
			 * named by the next entry as its reference's) at that entry */
			cr_assert(rc == MTZ_EHASH || rc == MTZ_EREF, "damage in entry %d: rc %d", bad, rc);
			cr_assert(at > bad, "damage in entry %d reported at entry %d", bad, at);
			cr_assert(at <= (bad / 4 + 1) * 4 || at == 7, "damage in entry %d found late, at %d",
				  bad, at);
		}
		if (bad == 0)
			cr_assert_eq(at, 1 + 3, "the keyframe's damage: at its group's check");
		mt_buf_release(&out);
		rig_fini(&r);
	}
}
