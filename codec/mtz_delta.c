/* The .mtz sample coder (see mtz_delta.h and docs/formats/mtz.md). */
#include "codec/mtz_delta.h"

#include <stdlib.h>
#include <string.h>

#include "codec/mtz.h"
#include "common/fnv.h"

/* ---- per-thread references: open addressing on tid -------------------- */

/* A thread's last samples, a ring: ref k (0: the last) is
 * r[(newest - k) % MTZ_REFS], held when k < n. */
struct thread {
	uint32_t tid;
	uint32_t gen;		/* live when equal to the table's generation */
	unsigned n, newest;
	unsigned churn;		/* encoder: its stack code bytes per delta, averaged */
	struct mtz_delta_ref r[MTZ_REFS];
};

struct ref_table {
	struct thread *slots;
	size_t cap;		/* power of two, 0 before the first insert */
	size_t live;		/* slots of the current generation */
	uint32_t gen;		/* starts at 1: zeroed slots are never live */
};

static size_t slot_of(uint32_t tid, size_t cap)
{
	return (size_t)((tid * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct thread *table_find(struct ref_table *t, uint32_t tid)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot_of(tid, t->cap);; i = (i + 1) & (t->cap - 1)) {
		struct thread *r = &t->slots[i];
		if (r->gen != t->gen)
			return NULL;
		if (r->tid == tid)
			return r;
	}
}

/* The k-th last sample of th, NULL when not held. */
static struct mtz_delta_ref *thread_ref(struct thread *th, unsigned k)
{
	if (!th || k >= th->n)
		return NULL;
	return &th->r[(th->newest + MTZ_REFS - k) % MTZ_REFS];
}

/* Makes room for a new last sample and returns it (its fields to fill). */
static struct mtz_delta_ref *thread_push(struct thread *th)
{
	th->newest = (th->newest + 1) % MTZ_REFS;
	if (th->n < MTZ_REFS)
		th->n++;
	return &th->r[th->newest];
}

/* Grows at half load. */
static int table_grow(struct ref_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct thread *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return MTZ_ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		struct thread *r = &t->slots[i];
		if (r->gen == t->gen) {
			size_t j = slot_of(r->tid, cap);
			while (slots[j].gen == t->gen)
				j = (j + 1) & (cap - 1);
			slots[j] = *r;
		}
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The live slot for tid, claimed (emptied) when absent.
 * @return : NULL on ENOMEM. */
static struct thread *table_claim(struct ref_table *t, uint32_t tid)
{
	struct thread *r = table_find(t, tid);
	if (r)
		return r;
	if ((t->live + 1) * 2 > t->cap && table_grow(t))
		return NULL;
	size_t i = slot_of(tid, t->cap);
	while (t->slots[i].gen == t->gen)
		i = (i + 1) & (t->cap - 1);
	r = &t->slots[i];
	r->tid = tid;
	r->gen = t->gen;
	r->n = r->newest = r->churn = 0;
	t->live++;
	return r;
}

static void table_reset(struct ref_table *t)
{
	t->gen++;
	t->live = 0;
	if (t->gen == 0) {	/* wrapped: clear so no old slot looks live */
		for (size_t i = 0; i < t->cap; i++)
			t->slots[i].gen = 0;
		t->gen = 1;
	}
}

static void table_release(struct ref_table *t)
{
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* memcpy that takes an empty section's NULL when there is nothing to copy
 * (the code section is empty when every stack is: dyn_size 0). */
static inline void copy_n(void *dst, const void *src, size_t n)
{
	if (n)
		memcpy(dst, src, n);
}

static int grow(uint8_t **p, size_t *cap, size_t n)
{
	if (n <= *cap)
		return 0;
	uint8_t *q = realloc(*p, n);
	if (!q)
		return MTZ_ENOMEM;
	*p = q;
	*cap = n;
	return 0;
}

/* A scratch buffer, never NULL once fitted (memcpy wants real pointers). */
struct scratch {
	uint8_t *p;
	size_t cap;
};

static int scratch_fit(struct scratch *s, size_t n)
{
	return grow(&s->p, &s->cap, n < 8 ? 8 : n);
}

/* The reference's stack aligned to a stack at sp of n bytes: a[i] holds the
 * byte at absolute address sp + i, zero where the reference has none. */
static void ref_align(const struct mtz_delta_ref *r, const uint8_t *bytes, uint64_t sp,
		      size_t n, uint8_t *a)
{
	if (!r || !r->dyn_size || !n) {
		memset(a, 0, n);
		return;
	}
	/* overlap of [sp, sp+n) and [r->sp, r->sp+dyn) as offsets from sp,
	 * without overflow for any pair of addresses */
	uint64_t lo, hi, src;
	if (r->sp >= sp) {
		uint64_t d = r->sp - sp;
		if (d >= n) {
			memset(a, 0, n);
			return;
		}
		lo = d;
		src = 0;
		hi = d + (r->dyn_size < n - d ? r->dyn_size : n - d);
	} else {
		uint64_t d = sp - r->sp;
		if (d >= r->dyn_size) {
			memset(a, 0, n);
			return;
		}
		lo = 0;
		src = d;
		hi = r->dyn_size - d < n ? r->dyn_size - d : n;
	}
	memset(a, 0, lo);
	copy_n(a + lo, bytes + src, hi - lo);
	memset(a + hi, 0, n - hi);
}

/* ---- XOR group codes ---------------------------------------------------- */

static uint64_t load_part(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	memcpy(&v, p, n);
	return v;
}

/* Appends the code of cur against ref (n bytes each; ref NULL: zeros) to
 * code: the words that differ, each sent as cur ^ ref, cur, or cur - ref
 * (op MTZ_OP_XOR, _COPY, _ADD; a last partial word always as cur ^ ref). */
static int xor_code(struct mt_buf *code, const uint8_t *cur, const uint8_t *ref, size_t n,
		    unsigned op)
{
	size_t ngroups = (n + MTZ_GROUP_SIZE - 1) / MTZ_GROUP_SIZE;
	size_t pbytes = (ngroups + 7) / 8;
	if (mt_buf_reserve(code, pbytes + ngroups * 8 + n + 8))
		return MTZ_ENOMEM;
	uint8_t *p = code->data + code->len;
	uint8_t *present = p;
	memset(present, 0, pbytes);
	p += pbytes;
	for (size_t g = 0; g < ngroups; g++) {
		size_t base = g * MTZ_GROUP_SIZE;
		size_t end = base + MTZ_GROUP_SIZE < n ? base + MTZ_GROUP_SIZE : n;
		/* most groups of a stack are unchanged: memcmp finds them fastest */
		if (ref && !memcmp(cur + base, ref + base, end - base))
			continue;
		uint8_t *maskp = p;
		uint8_t *w = p + 8;
		uint64_t mask = 0;
		size_t i = base;
		/* branch-free: always store, advance only past nonzero words */
		if (ref) {
			for (; i + 8 <= end; i += 8) {
				uint64_t c = mt_ld64(cur + i), r = mt_ld64(ref + i);
				uint64_t x = c ^ r;
				mt_st64(w, op == MTZ_OP_XOR ? x : op == MTZ_OP_COPY ? c : c - r);
				w += (x != 0) * 8;
				mask |= (uint64_t)(x != 0) << ((i - base) / 8);
			}
		} else {
			for (; i + 8 <= end; i += 8) {
				uint64_t x = mt_ld64(cur + i);
				mt_st64(w, x);
				w += (x != 0) * 8;
				mask |= (uint64_t)(x != 0) << ((i - base) / 8);
			}
		}
		if (i < end) {	/* a last partial word, zero-extended */
			uint64_t c = load_part(cur + i, end - i);
			uint64_t x = c ^ (ref ? load_part(ref + i, end - i) : 0);
			mt_st64(w, op == MTZ_OP_COPY ? c : x);
			w += (x != 0) * 8;
			mask |= (uint64_t)(x != 0) << ((i - base) / 8);
		}
		if (mask) {
			mt_st64(maskp, mask);
			present[g / 8] |= (uint8_t)(1u << (g % 8));
			p = w;
		}
	}
	code->len = (size_t)(p - code->data);
	return 0;
}

/* Applies the code at *pos of sec (len bytes) to a (n bytes): each word
 * sent is XORed into, copied over or added to a's word (op).
 * @return : 0, MTZ_ETRUNC or MTZ_EFORMAT (a mask naming words past n, or an
 *           empty group). */
static int xor_apply(const uint8_t *sec, size_t len, size_t *pos, uint8_t *a, size_t n,
		     unsigned op)
{
	size_t ngroups = (n + MTZ_GROUP_SIZE - 1) / MTZ_GROUP_SIZE;
	size_t pbytes = (ngroups + 7) / 8;
	size_t at = *pos;
	if (!n)		/* nothing sent (and sec may be an empty section's NULL) */
		return 0;
	if (len - at < pbytes)
		return MTZ_ETRUNC;
	const uint8_t *present = sec + at;
	at += pbytes;
	if (ngroups % 8 && present[pbytes - 1] >> (ngroups % 8))
		return MTZ_EFORMAT;
	for (size_t g = 0; g < ngroups; g++) {
		if (!(present[g / 8] >> (g % 8) & 1))
			continue;
		if (len - at < 8)
			return MTZ_ETRUNC;
		uint64_t mask = mt_ld64(sec + at);
		at += 8;
		size_t base = g * MTZ_GROUP_SIZE;
		size_t words = (n - base + 7) / 8;
		if (words > 64)
			words = 64;
		if (!mask || (words < 64 && mask >> words))
			return MTZ_EFORMAT;
		if ((len - at) / 8 < (size_t)__builtin_popcountll(mask))
			return MTZ_ETRUNC;
		for (; mask; mask &= mask - 1) {
			size_t w = base + 8 * (size_t)__builtin_ctzll(mask);
			uint64_t x = mt_ld64(sec + at);
			at += 8;
			if (w + 8 <= n) {
				uint64_t o = mt_ld64(a + w);
				mt_st64(a + w, op == MTZ_OP_XOR ? o ^ x : op == MTZ_OP_COPY ? x : o + x);
			} else {	/* partial word: the bytes past n must be zero */
				size_t k = n - w;
				if (x >> (8 * k))
					return MTZ_EFORMAT;
				uint64_t v = op == MTZ_OP_COPY ? x : load_part(a + w, k) ^ x;
				memcpy(a + w, &v, k);
			}
		}
	}
	*pos = at;
	return 0;
}

/* Fills the pad (n bytes at dst) with its source, given as segments: a
 * u16 count, then per segment a u16 length and a u32 distance back in the
 * output (XORed with the previous segment's; 0: zeros), the lengths adding
 * up to n.  The output is the frame's history (hist_len bytes) followed by
 * the record being rebuilt (rec, whose bytes before the pad, pad_off of
 * them, are written).
 * @return : 0, MTZ_ETRUNC, or MTZ_EFORMAT (bad lengths, a source outside
 *           the output). */
static int pad_source(const uint8_t *sec, size_t len, size_t *pos, const uint8_t *hist,
		      size_t hist_len, const uint8_t *rec, size_t pad_off, uint8_t *dst,
		      size_t n, uint64_t *matched)
{
	size_t at = *pos;
	if (len - at < 2)
		return MTZ_ETRUNC;
	unsigned nseg = mt_ld16(sec + at);
	at += 2;
	if ((len - at) / 6 < nseg)
		return MTZ_ETRUNC;
	uint32_t dist = 0;
	size_t off = 0;
	for (unsigned i = 0; i < nseg; i++, at += 6) {
		size_t slen = mt_ld16(sec + at);
		dist ^= mt_ld32(sec + at + 2);
		if (!slen || slen > n - off)
			return MTZ_EFORMAT;
		size_t where = hist_len + pad_off + off;	/* output position */
		if (!dist) {
			memset(dst + off, 0, slen);
		} else {
			/* the source lies wholly in what is already written */
			if (dist < slen || dist > where)
				return MTZ_EFORMAT;
			size_t from = where - dist, k = 0;
			if (from < hist_len) {
				k = hist_len - from < slen ? hist_len - from : slen;
				memcpy(dst + off, hist + from, k);
			}
			if (k < slen)
				memcpy(dst + off + k, rec + (from + k - hist_len), slen - k);
			*matched += slen;
		}
		off += slen;
	}
	if (off != n)
		return MTZ_EFORMAT;
	*pos = at;
	return 0;
}

/* ---- stack hashes on the wire ----------------------------------------- */

/* A stack's hash as the file carries it: mt_fnv, or its low 32 bits.  A
 * SAMPLE entry's hash section part is ref_hash then hash, 8 or 4 bytes each. */
struct wire_hash {
	uint64_t mask;
	size_t size;		/* bytes of one hash */
};

static const struct wire_hash wire_64 = { UINT64_MAX, 8 };

static struct wire_hash wire_hash_of(unsigned bits)
{
	return bits == 32 ? (struct wire_hash){ 0xffffffffu, 4 } : wire_64;
}

static uint64_t wire_load(const struct wire_hash *w, const uint8_t *p)
{
	return w->size == 4 ? mt_ld32(p) : mt_ld64(p);
}

static void wire_store(const struct wire_hash *w, uint8_t *p, uint64_t h)
{
	if (w->size == 4)
		mt_st32(p, (uint32_t)h);
	else
		mt_st64(p, h);
}

/* ---- decoder ---------------------------------------------------------- */

#define PENDING 4		/* stacks whose hashes are checked together */

struct mtz_delta_dec {
	struct ref_table refs;
	int pad_sec;			/* the section pad codes are read from */
	int deferred;			/* see mtz_delta_dec_set_deferred */
	struct { size_t at, n; uint64_t hash; } pend[PENDING];	/* at: in out */
	unsigned npend;
	struct wire_hash wire;
	struct mtz_delta_stats stats;
};

int mtz_delta_dec_new(struct mtz_delta_dec **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return MTZ_ENOMEM;
	(*out)->refs.gen = 1;
	(*out)->pad_sec = MTZ_SEC_PAD;
	(*out)->wire = wire_64;
	return 0;
}

void mtz_delta_dec_set_hash_bits(struct mtz_delta_dec *d, unsigned bits)
{
	d->wire = wire_hash_of(bits);
}

void mtz_delta_dec_set_version(struct mtz_delta_dec *d, unsigned version)
{
	d->pad_sec = version < 2 ? MTZ_SEC_CODE : MTZ_SEC_PAD;
}

void mtz_delta_dec_free(struct mtz_delta_dec *d)
{
	if (!d)
		return;
	table_release(&d->refs);
	free(d);
}

void mtz_delta_dec_reset(struct mtz_delta_dec *d)
{
	table_reset(&d->refs);
	d->npend = 0;
}

void mtz_delta_dec_set_deferred(struct mtz_delta_dec *d, int on)
{
	d->deferred = on;
	d->npend = 0;
}

int mtz_delta_dec_verify(struct mtz_delta_dec *d, const uint8_t *out)
{
	unsigned n = d->npend;
	d->npend = 0;
	if (n == PENDING) {
		const unsigned char *p[PENDING];
		size_t len[PENDING];
		uint64_t h[PENDING];
		for (unsigned i = 0; i < PENDING; i++) {
			p[i] = out + d->pend[i].at;
			len[i] = d->pend[i].n;
		}
		mt_fnv4(p, len, h);
		for (unsigned i = 0; i < PENDING; i++)
			if (MTZ_STACK_HASH_DIFFERS(h[i] & d->wire.mask, d->pend[i].hash))
				return MTZ_EHASH;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		if (MTZ_STACK_HASH_DIFFERS(mt_fnv(out + d->pend[i].at, d->pend[i].n) &
					   d->wire.mask, d->pend[i].hash))
			return MTZ_EHASH;
	return 0;
}

const struct mtz_delta_stats *mtz_delta_dec_stats(const struct mtz_delta_dec *d)
{
	return &d->stats;
}

/* The ops fields of a SAMPLE entry. */
struct entry {
	uint16_t rec_size, regs_offset, stack_offset, dyn_size, pad_size;
	uint8_t nr_regs, sp_index, flags, ref;	/* ref: index among the last samples */
	uint32_t tid;
};

static void entry_put(uint8_t *p, const struct entry *e)
{
	mt_st16(p + 0, e->rec_size);
	mt_st16(p + 2, e->regs_offset);
	p[4] = e->nr_regs;
	p[5] = e->sp_index;
	p[6] = e->flags;
	p[7] = e->ref;
	mt_st16(p + 8, e->stack_offset);
	mt_st16(p + 10, e->dyn_size);
	mt_st16(p + 12, e->pad_size);
	mt_st16(p + 14, 0);
	mt_st32(p + 16, e->tid);
}

static int entry_get(const uint8_t *p, struct entry *e)
{
	e->rec_size = mt_ld16(p + 0);
	e->regs_offset = mt_ld16(p + 2);
	e->nr_regs = p[4];
	e->sp_index = p[5];
	e->flags = p[6];
	e->ref = p[7];
	e->stack_offset = mt_ld16(p + 8);
	e->dyn_size = mt_ld16(p + 10);
	e->pad_size = mt_ld16(p + 12);
	e->tid = mt_ld32(p + 16);
	if (mt_ld16(p + 14) || (e->flags & ~MTZ_SAMPLE_FLAGS) ||
	    e->nr_regs > MTZ_MAX_REGS || e->ref >= MTZ_REFS)
		return MTZ_EFORMAT;
	if (e->sp_index != 0xff && e->sp_index >= e->nr_regs)
		return MTZ_EFORMAT;
	if ((size_t)e->stack_offset + e->dyn_size + e->pad_size > e->rec_size)
		return MTZ_EFORMAT;
	if ((size_t)e->regs_offset + 8u * e->nr_regs > e->stack_offset)
		return MTZ_EFORMAT;
	return 0;
}

void mtz_delta_sample_shape(const uint8_t *ops, struct mtz_sample_shape *s)
{
	struct entry e;
	(void)entry_get(ops, &e);	/* it reads every field before it checks */
	*s = (struct mtz_sample_shape){ .rec_size = e.rec_size, .so = e.stack_offset,
					.dyn = e.dyn_size, .pad = e.pad_size, .flags = e.flags };
}

/* With expect (the record the entry should give, for the encoder's check)
 * the rebuilt stack is compared with it instead of hashed: equal bytes have
 * equal hashes, and memcmp is several times faster than the hash. */
static int dec_sample(struct mtz_delta_dec *d, struct mtz_cursors *cur, const uint8_t *hist,
		      size_t hist_len, uint8_t *rec, size_t room,
		      const uint8_t *expect, uint64_t expect_hash)
{
	struct mtz_cursors c = *cur;	/* written back on success only */
	struct entry e;
	int rc;

	if (c.len[MTZ_SEC_OPS] - c.pos[MTZ_SEC_OPS] < MTZ_SAMPLE_OPS)
		return MTZ_ETRUNC;
	if ((rc = entry_get(c.p[MTZ_SEC_OPS] + c.pos[MTZ_SEC_OPS], &e)))
		return rc;
	c.pos[MTZ_SEC_OPS] += MTZ_SAMPLE_OPS;
	size_t hs = d->wire.size;
	if (c.len[MTZ_SEC_HASH] - c.pos[MTZ_SEC_HASH] < 2 * hs)
		return MTZ_ETRUNC;
	const uint8_t *hp = c.p[MTZ_SEC_HASH] + c.pos[MTZ_SEC_HASH];
	uint64_t ref_hash = wire_load(&d->wire, hp), hash = wire_load(&d->wire, hp + hs);
	c.pos[MTZ_SEC_HASH] += 2 * hs;

	size_t so = e.stack_offset, dyn = e.dyn_size, pad = e.pad_size;
	size_t tail = (size_t)e.rec_size - so - dyn - pad;

	struct thread *th = table_find(&d->refs, e.tid);
	struct mtz_delta_ref *ref = NULL;
	if (ref_hash) {
		ref = thread_ref(th, e.ref);
		if (!ref || ref->hash != ref_hash)
			return MTZ_EREF;
	} else if (e.ref) {
		return MTZ_EFORMAT;	/* a keyframe names no reference */
	}
	/* the head's reference: the stack's, or the thread's last sample */
	struct mtz_delta_ref *href = e.flags & MTZ_SAMPLE_HEAD_LAST ? thread_ref(th, 0) : ref;
	if ((e.flags & MTZ_SAMPLE_HEAD_XOR) && (!ref || !href || href->head_size != so))
		return MTZ_EFORMAT;
	unsigned head_op = MTZ_SAMPLE_HEAD_OP(e.flags), stack_op = MTZ_SAMPLE_STACK_OP(e.flags);
	if ((head_op || (e.flags & MTZ_SAMPLE_HEAD_LAST)) && !(e.flags & MTZ_SAMPLE_HEAD_XOR))
		return MTZ_EFORMAT;
	if (head_op > MTZ_OP_ADD || stack_op > MTZ_OP_ADD || (stack_op && !ref))
		return MTZ_EFORMAT;

	if (room < e.rec_size)
		return MTZ_ENOMEM;
	/* the reference is an earlier record of the frame, in the history */
	const uint8_t *rhead = ref ? hist + ref->at : NULL;
	const uint8_t *hhead = href ? hist + href->at : NULL;
	if (!ref) {	/* keyframe: the head as it is */
		if (c.len[MTZ_SEC_HEAD] - c.pos[MTZ_SEC_HEAD] < so)
			return MTZ_ETRUNC;
		copy_n(rec, c.p[MTZ_SEC_HEAD] + c.pos[MTZ_SEC_HEAD], so);
		c.pos[MTZ_SEC_HEAD] += so;
	} else {
		if (e.flags & MTZ_SAMPLE_HEAD_XOR)
			memcpy(rec, hhead, so);
		else
			memset(rec, 0, so);
		rc = xor_apply(c.p[MTZ_SEC_HEAD], c.len[MTZ_SEC_HEAD], &c.pos[MTZ_SEC_HEAD], rec, so,
			       head_op);
		if (rc)
			return rc;
	}
	if (c.len[MTZ_SEC_HEAD] - c.pos[MTZ_SEC_HEAD] < tail)
		return MTZ_ETRUNC;
	const uint8_t *tailp = c.p[MTZ_SEC_HEAD] + c.pos[MTZ_SEC_HEAD];
	c.pos[MTZ_SEC_HEAD] += tail;
	uint64_t sp = e.sp_index == 0xff ? 0 : mt_ld64(rec + e.regs_offset + 8 * e.sp_index);

	uint8_t *a = rec + so;
	const uint8_t *code = c.p[MTZ_SEC_CODE];
	size_t clen = c.len[MTZ_SEC_CODE];
	if (!ref) {	/* keyframe: the stack as it is */
		if (clen - c.pos[MTZ_SEC_CODE] < dyn)
			return MTZ_ETRUNC;
		copy_n(a, code + c.pos[MTZ_SEC_CODE], dyn);
		c.pos[MTZ_SEC_CODE] += dyn;
	} else {
		ref_align(ref, rhead + ref->head_size, sp, dyn, a);
		if ((rc = xor_apply(code, clen, &c.pos[MTZ_SEC_CODE], a, dyn, stack_op)))
			return rc;
	}
	uint64_t h = hash;
	if (expect) {
		if (hash != expect_hash || memcmp(a, expect + so, dyn))
			return MTZ_EHASH;
	} else if (!d->deferred) {
		h = mt_fnv(a, dyn) & d->wire.mask;
		if (MTZ_STACK_HASH_DIFFERS(h, hash))
			return MTZ_EHASH;
	}

	uint8_t *pp = rec + so + dyn;
	uint64_t matched = 0;
	int ps = d->pad_sec;
	if ((rc = pad_source(c.p[ps], c.len[ps], &c.pos[ps], hist, hist_len, rec, so + dyn,
			     pp, pad, &matched)))
		return rc;
	if ((rc = xor_apply(c.p[ps], c.len[ps], &c.pos[ps], pp, pad, MTZ_OP_XOR)))
		return rc;
	copy_n(pp + pad, tailp, tail);

	if (!th && !(th = table_claim(&d->refs, e.tid)))
		return MTZ_ENOMEM;
	struct mtz_delta_ref *slot = thread_push(th);
	slot->at = hist_len;
	slot->head_size = so;
	slot->dyn_size = dyn;
	slot->sp = sp;
	slot->hash = h;
	if (d->deferred && !expect) {	/* checked with the next three */
		d->pend[d->npend].at = hist_len + so;
		d->pend[d->npend].n = dyn;
		d->pend[d->npend].hash = hash;
		if (++d->npend == PENDING && (rc = mtz_delta_dec_verify(d, hist)))
			return rc;
	}

	*cur = c;
	d->stats.coded++;
	d->stats.keyframes += !ref;
	d->stats.stack_bytes += dyn;
	d->stats.pad_bytes += pad;
	d->stats.pad_matched += matched;
	return 0;
}

int mtz_delta_dec_sample(struct mtz_delta_dec *d, struct mtz_cursors *cur, struct mt_buf *out)
{
	if (cur->len[MTZ_SEC_OPS] - cur->pos[MTZ_SEC_OPS] < 2)
		return MTZ_ETRUNC;
	size_t size = mt_ld16(cur->p[MTZ_SEC_OPS] + cur->pos[MTZ_SEC_OPS]);
	if (mt_buf_reserve(out, size ? size : 1))
		return MTZ_ENOMEM;
	int rc = dec_sample(d, cur, out->data, out->len, out->data + out->len,
			    out->cap - out->len, NULL, 0);
	if (!rc)
		out->len += size;
	return rc;
}

/* ---- encoder ---------------------------------------------------------- */

#define INDEX_BITS 18
#ifndef MTZ_HEAD_CHANGED
#define MTZ_HEAD_CHANGED 40	/* head code over this % of the head: plain */
#endif
#ifndef MTZ_KEY_CHANGED
#define MTZ_KEY_CHANGED 25	/* delta code over this % of the stack: keyframe */
#endif
#define MTZ_REF_BETTER 25	/* an older reference's score, % of the last's */
#define MTZ_COPY_CHURN 256	/* stack code bytes per delta (a thread's moving
				 * average) above which words go as they are */
#define INDEX_STEP 64		/* output bytes per indexed word */
#define RECENT 4		/* pad distances remembered */
#define SHIFTS 4		/* words a distance is shifted by, each way */
#define PUSH_MIN 128		/* run after which a distance is remembered */

struct mtz_delta_enc {
	struct ref_table refs;
	struct scratch aligned;		/* the reference aligned to the new stack */
	struct scratch padsrc;		/* the pad's source */
	struct { uint32_t len, dist; } segs[65536 / 8 + 1];
	unsigned nsegs;
	struct mtz_delta_dec *mirror;	/* decodes what we emit */
	struct scratch check;		/* what it rebuilds */
	/* where words of the frame's output sit, to find stale pad bytes */
	uint32_t *index;		/* word hash -> output offset + 1 */
	size_t indexed;			/* output bytes indexed so far */
	uint32_t recent[RECENT];	/* pad distances that gave long runs lately */
	unsigned nrefs;			/* references considered */
	struct wire_hash wire;
	struct mtz_delta_stats stats;
};

int mtz_delta_enc_new(struct mtz_delta_enc **out)
{
	struct mtz_delta_enc *e = calloc(1, sizeof(*e));
	*out = NULL;
	if (!e)
		return MTZ_ENOMEM;
	e->index = calloc((size_t)1 << INDEX_BITS, sizeof(uint32_t));
	if (!e->index || mtz_delta_dec_new(&e->mirror)) {
		mtz_delta_enc_free(e);
		return MTZ_ENOMEM;
	}
	e->refs.gen = 1;
	e->nrefs = MTZ_REFS;
	e->wire = wire_64;
	*out = e;
	return 0;
}

void mtz_delta_enc_set_hash_bits(struct mtz_delta_enc *e, unsigned bits)
{
	e->wire = wire_hash_of(bits);
	mtz_delta_dec_set_hash_bits(e->mirror, bits);
}

void mtz_delta_enc_free(struct mtz_delta_enc *e)
{
	if (!e)
		return;
	table_release(&e->refs);
	free(e->aligned.p);
	free(e->padsrc.p);
	free(e->check.p);
	free(e->index);
	mtz_delta_dec_free(e->mirror);
	free(e);
}

void mtz_delta_enc_reset(struct mtz_delta_enc *e)
{
	table_reset(&e->refs);
	mtz_delta_dec_reset(e->mirror);
	memset(e->index, 0, ((size_t)1 << INDEX_BITS) * sizeof(uint32_t));
	e->indexed = 0;
	memset(e->recent, 0, sizeof(e->recent));
}

void mtz_delta_enc_set_refs(struct mtz_delta_enc *e, unsigned n)
{
	e->nrefs = n < 1 ? 1 : n > MTZ_REFS ? MTZ_REFS : n;
}

const struct mtz_delta_stats *mtz_delta_enc_stats(const struct mtz_delta_enc *e)
{
	return &e->stats;
}

struct mtz_delta_ref *mtz_delta_enc_ref(struct mtz_delta_enc *e, uint32_t tid, unsigned k)
{
	return thread_ref(table_find(&e->refs, tid), k);
}

static int view_check(const struct mtz_sample_view *s)
{
	if (s->rec_size > 65535 || s->nr_regs > MTZ_MAX_REGS)
		return MTZ_EFORMAT;
	if (s->sp_index >= (int)s->nr_regs || s->sp_index < -1)
		return MTZ_EFORMAT;
	if (s->stack_offset > s->rec_size || s->stack_size > s->rec_size - s->stack_offset ||
	    s->dyn_size > s->stack_size)
		return MTZ_EFORMAT;
	if (s->regs_offset > s->stack_offset ||
	    8 * (size_t)s->nr_regs > s->stack_offset - s->regs_offset)
		return MTZ_EFORMAT;
	return 0;
}

static size_t index_slot(uint64_t w)
{
	return (size_t)((w * 0x9e3779b97f4a7c15ull) >> (64 - INDEX_BITS));
}

/* What lies before a pad, as the decoder will see it: the frame's history,
 * then the record's head and stack. */
struct before {
	const uint8_t *hist;
	size_t hist_len;
	const uint8_t *rec;
	size_t rec_len;		/* head and stack: so + dyn */
};

/* The len bytes at output position from, when they lie in one piece. */
static const uint8_t *before_at(const struct before *b, uint64_t from, size_t len)
{
	if (from + len <= b->hist_len)
		return b->hist + from;
	if (from >= b->hist_len && from - b->hist_len + len <= b->rec_len)
		return b->rec + (from - b->hist_len);
	return NULL;
}

/* Copies len bytes at output position from (the caller checked they are
 * written before the pad). */
static void before_copy(const struct before *b, uint64_t from, size_t len, uint8_t *dst)
{
	size_t k = 0;
	if (from < b->hist_len) {
		k = b->hist_len - from < len ? (size_t)(b->hist_len - from) : len;
		memcpy(dst, b->hist + from, k);
	}
	if (k < len)
		memcpy(dst + k, b->rec + (from + k - b->hist_len), len - k);
}

/* Bytes from the pad's offset p on that equal their source dist back, in
 * whole words, within one piece (history, or the record before the pad). */
static size_t run_at(const struct before *b, const uint8_t *pad, size_t n, size_t p,
		     uint64_t dist)
{
	uint64_t where = b->hist_len + b->rec_len + p;
	if (!dist || dist > where)
		return 0;
	uint64_t from = where - dist;
	size_t most = n - p;
	if (from < b->hist_len) {
		if (most > b->hist_len - from)
			most = b->hist_len - from;
	} else {
		if (from - b->hist_len >= b->rec_len)
			return 0;
		if (most > b->rec_len - (from - b->hist_len))
			most = b->rec_len - (from - b->hist_len);
	}
	const uint8_t *src = before_at(b, from, most);
	size_t k = 0;
	if (!src)
		return 0;
	/* runs are long (whole stale records): compare 64 bytes at a time */
	while (k + 64 <= most && !memcmp(pad + p + k, src + k, 64))
		k += 64;
	while (k + 8 <= most && mt_ld64(pad + p + k) == mt_ld64(src + k))
		k += 8;
	return k;
}

static void recent_push(struct mtz_delta_enc *e, uint32_t dist)
{
	unsigned k = 0;
	while (k < RECENT - 1 && e->recent[k] != dist)
		k++;
	memmove(e->recent + 1, e->recent, k * sizeof(uint32_t));
	e->recent[0] = dist;
}

/* Plans the pad's source as segments (e->segs, e->nsegs): stretches of it
 * found earlier in the output (stale ring bytes are copies of older
 * records), the rest against zeros.  Greedy: extend the current source
 * while words match; where it stops, take the candidate (the last few
 * distances, the output index, the record's own head and stack) with the
 * longest run.  @return : bytes matched. */
static size_t pad_plan(struct mtz_delta_enc *e, const struct before *b, const uint8_t *pad,
		       size_t n)
{
	e->nsegs = 0;
	if (!n)
		return 0;
	for (size_t p = (e->indexed + INDEX_STEP - 1) / INDEX_STEP * INDEX_STEP;
	     p + 8 <= b->hist_len; p += INDEX_STEP) {
		uint64_t w = mt_ld64(b->hist + p);
		if (w)
			e->index[index_slot(w)] = (uint32_t)p + 1;
	}
	e->indexed = b->hist_len;

	size_t matched = 0, p = 0, quiet = 0;	/* quiet: skip searches until */
	uint32_t dist = 0;
	uint64_t pad_at = b->hist_len + b->rec_len;
	while (p < n) {
		size_t run = dist ? run_at(b, pad, n, p, dist) : 0;
		if (!run && p >= quiet && n - p >= 16) {
			uint32_t cand[RECENT + 2 * SHIFTS + INDEX_STEP + 1], best = 0;
			unsigned nc = 0, tried = 0;
			for (unsigned i = 0; i < RECENT; i++)
				if (e->recent[i])
					cand[nc++] = e->recent[i];
			/* the source a word or a few off: the records one ring
			 * wrap earlier were not all the size of today's */
			uint32_t anchor = dist ? dist : e->recent[0];
			for (uint32_t k = 8; anchor && k <= 8 * SHIFTS; k += 8) {
				cand[nc++] = anchor + k;
				if (anchor > k)
					cand[nc++] = anchor - k;
			}
			/* the recent distances first: a run to the pad's end
			 * (the usual case) spares the lookups */
			for (int more = 1;; more = 0) {
				for (; tried < nc && run + 8 <= n - p; tried++) {
					int seen = 0;	/* index hits repeat a distance */
					for (unsigned k = 0; k < tried && !seen; k++)
						seen = cand[k] == cand[tried];
					size_t r = seen ? 0 : run_at(b, pad, n, p, cand[tried]);
					if (r > run) {
						run = r;
						best = cand[tried];
					}
				}
				if (!more || run + 8 > n - p)
					break;
				for (size_t j = 0; j + 8 <= n - p && j < INDEX_STEP; j++) {
					uint64_t w = mt_ld64(pad + p + j);
					uint32_t hit = w ? e->index[index_slot(w)] : 0;
					if (hit && pad_at + p + j > hit - 1)
						cand[nc++] = (uint32_t)(pad_at + p + j - (hit - 1));
				}
				/* the record's own stack, once per pad: memmem is slow */
				uint64_t w = p ? 0 : mt_ld64(pad);
				const uint8_t *q = w ? memmem(b->rec, b->rec_len, pad, 8) : NULL;
				if (q)
					cand[nc++] = (uint32_t)(b->rec_len + p - (size_t)(q - b->rec));
			}
			if (run >= 16) {
				dist = best;
				if (run >= PUSH_MIN)
					recent_push(e, dist);
			} else {
				run = 0;
				quiet = p + INDEX_STEP;	/* nothing here: look again later */
			}
		}
		uint32_t d = run ? dist : 0;
		size_t len = run ? run : (n - p < 8 ? n - p : 8);
		if (!run)
			dist = 0;
		/* extend the last segment when the source continues */
		if (e->nsegs && e->segs[e->nsegs - 1].dist == d &&
		    e->segs[e->nsegs - 1].len + len <= 65535) {
			e->segs[e->nsegs - 1].len += (uint32_t)len;
		} else {
			e->segs[e->nsegs].dist = d;
			e->segs[e->nsegs].len = (uint32_t)len;
			e->nsegs++;
		}
		matched += run;
		p += len;
	}
	return matched;
}

/* Appends the entry for s: against ref, the thread's ref_k-th last sample
 * (NULL: keyframe), its stack words sent by stack_op, the pad against the
 * planned segments (plan 0: zeros).  The head goes against the thread's
 * last sample (last), whose time and counters are nearest. */
static int emit(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
		const struct mtz_delta_ref *ref, unsigned ref_k, const struct mtz_delta_ref *last,
		unsigned stack_op, uint64_t sp, uint64_t hash, int plan,
		const struct before *b, struct mtz_sections *sec, size_t *stack_code)
{
	size_t so = s->stack_offset, dyn = s->dyn_size, pad = s->stack_size - dyn;
	size_t tail = s->rec_size - so - s->stack_size;
	int hlast = ref && ref_k;
	const struct mtz_delta_ref *href = hlast ? last : ref;
	int head_xor = ref && href->head_size == so;
	struct mt_buf *ops = &sec->s[MTZ_SEC_OPS], *hs = &sec->s[MTZ_SEC_HASH];
	struct mt_buf *head = &sec->s[MTZ_SEC_HEAD], *code = &sec->s[MTZ_SEC_CODE];
	if (mt_buf_reserve(ops, 1 + MTZ_SAMPLE_OPS) || mt_buf_reserve(hs, 16) ||
	    scratch_fit(&e->aligned, dyn))
		return MTZ_ENOMEM;

	struct entry en = {
		.rec_size = (uint16_t)s->rec_size,
		.regs_offset = (uint16_t)s->regs_offset,
		.stack_offset = (uint16_t)so,
		.dyn_size = (uint16_t)dyn,
		.pad_size = (uint16_t)pad,
		.nr_regs = (uint8_t)s->nr_regs,
		.sp_index = s->sp_index < 0 ? 0xff : (uint8_t)s->sp_index,
		.flags = (uint8_t)((head_xor ? MTZ_SAMPLE_HEAD_XOR | MTZ_OP_ADD << 4 : 0) |
				   (ref ? stack_op << 1 : 0) |
				   (head_xor && hlast ? MTZ_SAMPLE_HEAD_LAST : 0)),
		.ref = ref ? (uint8_t)ref_k : 0,
		.tid = s->tid,
	};
	ops->data[ops->len++] = MTZ_TAG_SAMPLE;
	entry_put(ops->data + ops->len, &en);
	ops->len += MTZ_SAMPLE_OPS;
	wire_store(&e->wire, hs->data + hs->len, ref ? ref->hash : 0);
	wire_store(&e->wire, hs->data + hs->len + e->wire.size, hash);
	hs->len += 2 * e->wire.size;

	/* A keyframe keeps head and stack as they are: zstd matches them
	 * against earlier samples best in that form. */
	int rc = 0;
	if (ref) {
		size_t before = head->len;
		rc = xor_code(head, s->rec, head_xor ? b->hist + href->at : NULL, so,
			      head_xor ? MTZ_OP_ADD : MTZ_OP_XOR);
		if (!rc && head_xor && (head->len - before) * 100 > so * MTZ_HEAD_CHANGED) {
			/* registers far from the last sample's (a CPU
			 * profile): as they are, they match older samples */
			head->len = before;
			ops->data[ops->len - MTZ_SAMPLE_OPS + 6] &=
				(uint8_t)~(MTZ_SAMPLE_HEAD_XOR | 3u << 4 | MTZ_SAMPLE_HEAD_LAST);
			rc = xor_code(head, s->rec, NULL, so, MTZ_OP_XOR);
		}
	}
	if (rc || mt_buf_reserve(head, so + tail))
		return MTZ_ENOMEM;
	if (!ref)
		mt_buf_put(head, s->rec, so);
	mt_buf_put(head, s->rec + so + s->stack_size, tail);

	const uint8_t *stk = s->rec + so;
	size_t before = code->len;
	if (ref) {
		const uint8_t *a = e->aligned.p;
		const uint8_t *rstk = b->hist + ref->at + ref->head_size;
		if (ref->sp <= sp && sp - ref->sp <= ref->dyn_size &&
		    dyn <= ref->dyn_size - (sp - ref->sp))
			a = rstk + (sp - ref->sp);	/* covered: no copy */
		else
			ref_align(ref, rstk, sp, dyn, e->aligned.p);
		if ((rc = xor_code(code, stk, a, dyn, stack_op)))
			return rc;
	} else {
		if (mt_buf_reserve(code, dyn))
			return MTZ_ENOMEM;
		mt_buf_put(code, stk, dyn);
	}
	*stack_code = code->len - before;
	/* the pad's source, as segments, then its XOR against that, in a
	 * section of their own (their statistics are not the stack's) */
	struct mt_buf *padc = &sec->s[MTZ_SEC_PAD];
	plan = plan && e->nsegs;
	unsigned nsegs = plan ? e->nsegs : (pad ? 1 : 0);
	if (mt_buf_reserve(padc, 2 + 6 * (size_t)nsegs) || scratch_fit(&e->padsrc, pad))
		return MTZ_ENOMEM;
	mt_st16(padc->data + padc->len, (uint16_t)nsegs);
	padc->len += 2;
	uint32_t prev = 0;
	int any = 0;
	size_t off = 0;
	for (unsigned i = 0; i < nsegs; i++) {
		uint32_t dist = plan ? e->segs[i].dist : 0;
		size_t len = plan ? e->segs[i].len : pad;
		mt_st16(padc->data + padc->len, (uint16_t)len);
		mt_st32(padc->data + padc->len + 2, dist ^ prev);
		padc->len += 6;
		prev = dist;
		if (dist) {
			any = 1;
			before_copy(b, b->hist_len + b->rec_len + off - dist, len, e->padsrc.p + off);
		} else {
			memset(e->padsrc.p + off, 0, len);
		}
		off += len;
	}
	return xor_code(padc, stk + dyn, any ? e->padsrc.p : NULL, pad, MTZ_OP_XOR);
}

/* Runs the mirror decoder on the entry that starts at lens in sec, and
 * compares what it rebuilds with the record. */
static int verify(struct mtz_delta_enc *e, const struct mtz_sample_view *s, uint64_t hash,
		  const struct mtz_sections *sec, const size_t *lens, const struct mt_buf *hist)
{
	struct mtz_cursors c;
	static const uint8_t none[1];
	for (int i = 0; i < MTZ_NSEC; i++) {
		/* never NULL: the decoder adds positions to it (C: not to NULL) */
		c.p[i] = sec->s[i].data ? sec->s[i].data : none;
		c.pos[i] = lens[i];
		c.len[i] = sec->s[i].len;
	}
	c.pos[MTZ_SEC_OPS]++;	/* the tag */
	if (scratch_fit(&e->check, s->rec_size))
		return MTZ_ENOMEM;
	int rc = dec_sample(e->mirror, &c, hist->data, hist->len, e->check.p, e->check.cap,
			    s->rec, hash);
	if (rc == MTZ_ENOMEM)
		return rc;
	int consumed = 1;
	for (int i = 0; i < MTZ_NSEC; i++)
		consumed &= c.pos[i] == c.len[i];
	if (rc || !consumed || memcmp(e->check.p, s->rec, s->rec_size))
		return MTZ_EHASH;
	return 0;
}

static void rewind_to(struct mtz_sections *sec, const size_t *lens)
{
	for (int i = 0; i < MTZ_NSEC; i++)
		sec->s[i].len = lens[i];
}

#ifndef MTZ_SCORE_STEP
#define MTZ_SCORE_STEP 64	/* stack bytes between the words a score samples */
#endif

/* How unlike the reference r (its stack at rstk) a stack at sp is: of the
 * words every MTZ_SCORE_STEP bytes, those that differ from the reference's
 * word at the same address (zero where it has none).  Counting stops above
 * limit, when the reference has lost anyway: scoring read every cache line
 * of up to 16 references and was most of the encoder's own time. */
static size_t ref_score(const uint8_t *stk, size_t dyn, uint64_t sp,
			const struct mtz_delta_ref *r, const uint8_t *rstk, size_t limit)
{
	uint64_t d = sp - r->sp;	/* offset i here is offset i + d there */
	size_t miss = 0;
	for (size_t i = 0; i + 8 <= dyn && miss <= limit; i += MTZ_SCORE_STEP) {
		uint64_t o = i + d, v = 0;	/* wraps when below the reference */
		if (r->dyn_size >= 8 && o <= r->dyn_size - 8)
			v = mt_ld64(rstk + o);
		miss += mt_ld64(stk + i) != v;
	}
	return miss;
}

/* The reference for a stack at sp: the thread's last sample, unless an
 * older one of its last samples scores at most MTZ_REF_BETTER % of its
 * score (the lowest such, the most recent among equals); *k its index.  An
 * older reference pays only when it is much closer: deltas against the
 * last sample repeat from one sample to the next, and zstd finds them.
 * @return : NULL when the thread has none. */
static struct mtz_delta_ref *choose_ref(struct thread *th, unsigned nrefs, const uint8_t *stk,
					size_t dyn, uint64_t sp, const uint8_t *hist, unsigned *k)
{
	struct mtz_delta_ref *best = NULL;
	size_t best_score = SIZE_MAX, last_score = SIZE_MAX;
	if (th && nrefs == 1) {		/* no choice: no need to score */
		best = thread_ref(th, 0);
		*k = 0;
		return best && best->hash ? best : NULL;
	}
	for (unsigned i = 0; th && i < th->n && i < nrefs && best_score; i++) {
		struct mtz_delta_ref *r = thread_ref(th, i);
		if (!r->hash)	/* 0 means keyframe on the wire */
			continue;
		/* an older one must beat both the last and the best so far */
		size_t limit = i == 0 ? SIZE_MAX : best_score - 1;
		if (i > 0 && last_score * MTZ_REF_BETTER / 100 < limit)
			limit = last_score * MTZ_REF_BETTER / 100;
		size_t sc = ref_score(stk, dyn, sp, r, hist + r->at + r->head_size, limit);
		if (i == 0)
			last_score = sc;
		else if (sc * 100 > last_score * MTZ_REF_BETTER)
			continue;
		if (sc < best_score) {
			best_score = sc;
			best = r;
			*k = i;
		}
	}
	return best;
}

void mtz_delta_stack_hashes(const struct mtz_sample_view *const v[], unsigned n,
			    uint64_t hash[])
{
	const unsigned char *p[MTZ_HASH_BATCH];
	size_t len[MTZ_HASH_BATCH];
	int ok = n == MTZ_HASH_BATCH;
	for (unsigned k = 0; k < n && ok; k++) {
		ok = !view_check(v[k]);
		p[k] = v[k]->rec + v[k]->stack_offset;
		len[k] = v[k]->dyn_size;
	}
	if (ok) {
		mt_fnv4(p, len, hash);
		return;
	}
	for (unsigned k = 0; k < n; k++)
		hash[k] = view_check(v[k]) ? 0 :
			  mt_fnv(v[k]->rec + v[k]->stack_offset, v[k]->dyn_size);
}

int mtz_delta_enc_sample(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
			 struct mtz_sections *sec, const uint8_t *hist, size_t hist_len)
{
	uint64_t hash = 0;
	mtz_delta_stack_hashes(&s, 1, &hash);
	return mtz_delta_enc_sample_hashed(e, s, hash, sec, hist, hist_len);
}

int mtz_delta_enc_sample_hashed(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
				uint64_t hash, struct mtz_sections *sec,
				const uint8_t *hist, size_t hist_len)
{
	/* A stack whose wire hash is 0 (one in 2^32 with 32-bit hashes) is
	 * never a reference: ref_hash 0 means keyframe. */
	hash &= e->wire.mask;
	/* the history as a read-only buffer for the mirror */
	const struct mt_buf hb = { (uint8_t *)hist, hist_len, hist_len };
	const struct mt_buf *out = &hb;
	int rc = view_check(s);
	if (rc)
		return rc;
	size_t lens[MTZ_NSEC];
	for (int i = 0; i < MTZ_NSEC; i++)
		lens[i] = sec->s[i].len;

	uint64_t sp = s->sp_index < 0 ? 0 : mt_ld64(s->rec + s->regs_offset + 8 * (size_t)s->sp_index);
	const uint8_t *stk = s->rec + s->stack_offset;
	size_t pad = s->stack_size - s->dyn_size;

	struct thread *th = table_find(&e->refs, s->tid);
	unsigned ref_k = 0;
	struct mtz_delta_ref *ref = choose_ref(th, e->nrefs, stk, s->dyn_size, sp, hist, &ref_k);
	const struct before b = { hist, hist_len, s->rec, s->stack_offset + s->dyn_size };
	size_t matched = 0;
	e->nsegs = 0;
	if (hist_len <= UINT32_MAX / 2)	/* distances are u32 */
		matched = pad_plan(e, &b, stk + s->dyn_size, pad);
	size_t code_size;
	/* A thread whose stacks change much (a CPU profile) has its changed
	 * words sent as they are: return addresses and pointers that zstd
	 * finds in earlier samples.  Otherwise as differences: counters and
	 * nearby pointers give small, repeating numbers. */
	unsigned op = th && th->churn > MTZ_COPY_CHURN ? MTZ_OP_COPY : MTZ_OP_ADD;
	rc = emit(e, s, ref, ref_k, thread_ref(th, 0), op, sp, hash, 1, &b, sec, &code_size);
	if (ref)
		th->churn = (th->churn * 7 + (unsigned)(code_size > 4096 ? 4096 : code_size)) / 8;
	if (!rc && ref && code_size > s->dyn_size * MTZ_KEY_CHANGED / 100) {
		/* most words changed (a CPU profile's samples, far apart):
		 * the delta is noise, the plain stack matches earlier ones */
		rewind_to(sec, lens);
		ref = NULL;
		rc = emit(e, s, ref, 0, NULL, op, sp, hash, 1, &b, sec, &code_size);
	}
	if (!rc)
		rc = verify(e, s, hash, sec, lens, out);
	if (rc == MTZ_EHASH && (ref || matched)) {
		rewind_to(sec, lens);
		if (!(rc = emit(e, s, NULL, 0, NULL, MTZ_OP_XOR, sp, hash, 0, &b, sec,
				&code_size)))
			rc = verify(e, s, hash, sec, lens, out);
		e->stats.fallbacks++;
		ref = NULL;
		matched = 0;
	}
	if (rc) {
		rewind_to(sec, lens);
		return rc;
	}

	if (!th && !(th = table_claim(&e->refs, s->tid))) {
		rewind_to(sec, lens);
		return MTZ_ENOMEM;
	}
	struct mtz_delta_ref *slot = thread_push(th);
	slot->at = hist_len;
	slot->dyn_size = s->dyn_size;
	slot->head_size = s->stack_offset;
	slot->sp = sp;
	slot->hash = hash;
	e->stats.coded++;
	e->stats.keyframes += !ref;
	e->stats.stack_bytes += s->dyn_size;
	e->stats.pad_bytes += pad;
	e->stats.pad_matched += matched;
	return 0;
}
