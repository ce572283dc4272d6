/* The .mtz sample coder (see mtz_delta.h and docs/formats/mtz.md). */
#include "codec/mtz_delta.h"

#include <stdlib.h>
#include <string.h>

#include "codec/mtz.h"
#include "codec/mtz_hash.h"

/* ---- per-thread references: open addressing on tid -------------------- */

struct ref_table {
	struct mtz_delta_ref *slots;
	size_t cap;		/* power of two, 0 before the first insert */
	size_t live;		/* slots of the current generation */
	uint32_t gen;		/* starts at 1: zeroed slots are never live */
};

static size_t slot_of(uint32_t tid, size_t cap)
{
	return (size_t)((tid * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct mtz_delta_ref *table_find(struct ref_table *t, uint32_t tid)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot_of(tid, t->cap);; i = (i + 1) & (t->cap - 1)) {
		struct mtz_delta_ref *r = &t->slots[i];
		if (r->gen != t->gen)
			return NULL;
		if (r->tid == tid)
			return r;
	}
}

/* Grows at half load; stale slots keep their buffers for reuse. */
static int table_grow(struct ref_table *t)
{
	size_t cap = t->cap ? t->cap * 2 : 64;
	struct mtz_delta_ref *slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return MTZ_ENOMEM;
	size_t spare = 0;
	for (size_t i = 0; i < t->cap; i++) {
		struct mtz_delta_ref *r = &t->slots[i];
		if (r->gen == t->gen) {
			size_t j = slot_of(r->tid, cap);
			while (slots[j].gen == t->gen)
				j = (j + 1) & (cap - 1);
			slots[j] = *r;
		} else if (r->bytes) {
			/* park unused buffers in the new table's empty slots */
			while (spare < cap && (slots[spare].gen == t->gen || slots[spare].bytes))
				spare++;
			if (spare < cap) {
				slots[spare].bytes = r->bytes;
				slots[spare].cap = r->cap;
			} else {
				free(r->bytes);
			}
		}
	}
	free(t->slots);
	t->slots = slots;
	t->cap = cap;
	return 0;
}

/* The live slot for tid, claimed when absent.  @return : NULL on ENOMEM. */
static struct mtz_delta_ref *table_claim(struct ref_table *t, uint32_t tid)
{
	struct mtz_delta_ref *r = table_find(t, tid);
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
	r->dyn_size = 0;
	r->nr_regs = 0;
	r->sp = 0;
	r->hash = 0;
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
	for (size_t i = 0; i < t->cap; i++)
		free(t->slots[i].bytes);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* A scratch stack buffer of n bytes rounded up to words. */
struct scratch {
	uint8_t *p;
	size_t cap;
};

static int scratch_fit(struct scratch *s, size_t n)
{
	n = (n + 7) & ~(size_t)7;
	if (n < 8)
		n = 8;	/* never a NULL buffer, even for empty stacks */
	if (n <= s->cap)
		return 0;
	uint8_t *p = realloc(s->p, n);
	if (!p)
		return MTZ_ENOMEM;
	s->p = p;
	s->cap = n;
	return 0;
}

/* The reference's bytes aligned to a stack at sp of n bytes: a[i] holds
 * the byte at absolute address sp + i, zero where the reference has none;
 * the last word is zero-padded. */
static void ref_align(const struct mtz_delta_ref *r, uint64_t sp, size_t n, uint8_t *a)
{
	size_t padded = (n + 7) & ~(size_t)7;
	memset(a, 0, padded);
	if (!r || !r->dyn_size || !n)
		return;
	/* Overlap of [sp, sp+n) and [r->sp, r->sp+r->dyn_size), in offsets from
	 * sp; computed without overflow for any pair of addresses. */
	uint64_t lo, hi, src;
	if (r->sp >= sp) {
		uint64_t d = r->sp - sp;
		if (d >= n)
			return;
		lo = d;
		src = 0;
		hi = d + (r->dyn_size < n - d ? r->dyn_size : n - d);
	} else {
		uint64_t d = sp - r->sp;
		if (d >= r->dyn_size)
			return;
		lo = 0;
		src = d;
		hi = r->dyn_size - d < n ? r->dyn_size - d : n;
	}
	memcpy(a + lo, r->bytes + src, hi - lo);
}

static int ref_store(struct mtz_delta_ref *r, uint64_t sp, const uint8_t *bytes, size_t n,
		     uint64_t hash, const uint64_t *regs, unsigned nr_regs)
{
	if (n > r->cap) {
		uint8_t *p = realloc(r->bytes, n);
		if (!p)
			return MTZ_ENOMEM;
		r->bytes = p;
		r->cap = n;
	}
	if (n)
		memcpy(r->bytes, bytes, n);
	r->dyn_size = n;
	r->sp = sp;
	r->hash = hash;
	r->nr_regs = nr_regs;
	memcpy(r->regs, regs, nr_regs * sizeof(uint64_t));
	return 0;
}

/* ---- decoder ---------------------------------------------------------- */

struct mtz_delta_dec {
	struct ref_table refs;
	struct scratch rebuilt;
	struct mtz_delta_stats stats;
};

int mtz_delta_dec_new(struct mtz_delta_dec **out)
{
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return MTZ_ENOMEM;
	(*out)->refs.gen = 1;
	return 0;
}

void mtz_delta_dec_free(struct mtz_delta_dec *d)
{
	if (!d)
		return;
	table_release(&d->refs);
	free(d->rebuilt.p);
	free(d);
}

void mtz_delta_dec_reset(struct mtz_delta_dec *d)
{
	table_reset(&d->refs);
}

const struct mtz_delta_stats *mtz_delta_dec_stats(const struct mtz_delta_dec *d)
{
	return &d->stats;
}

/* The fixed fields of a SAMPLE entry. */
struct entry {
	uint16_t rec_size, regs_offset, stack_offset, dyn_size;
	uint8_t nr_regs, sp_index;
	uint32_t tid;
	uint64_t hash, ref_hash;
};

static void entry_put(uint8_t *p, const struct entry *e)
{
	mtz_st16(p + 0, e->rec_size);
	mtz_st16(p + 2, e->regs_offset);
	p[4] = e->nr_regs;
	p[5] = e->sp_index;
	mtz_st16(p + 6, e->stack_offset);
	mtz_st16(p + 8, e->dyn_size);
	mtz_st16(p + 10, 0);
	mtz_st32(p + 12, e->tid);
	mtz_st64(p + 16, e->hash);
	mtz_st64(p + 24, e->ref_hash);
}

static int entry_get(const uint8_t *p, struct entry *e)
{
	e->rec_size = mtz_ld16(p + 0);
	e->regs_offset = mtz_ld16(p + 2);
	e->nr_regs = p[4];
	e->sp_index = p[5];
	e->stack_offset = mtz_ld16(p + 6);
	e->dyn_size = mtz_ld16(p + 8);
	e->tid = mtz_ld32(p + 12);
	e->hash = mtz_ld64(p + 16);
	e->ref_hash = mtz_ld64(p + 24);
	if (mtz_ld16(p + 10) != 0 || e->nr_regs > MTZ_MAX_REGS)
		return MTZ_EFORMAT;
	if (e->sp_index != 0xff && e->sp_index >= e->nr_regs)
		return MTZ_EFORMAT;
	if ((size_t)e->stack_offset + e->dyn_size > e->rec_size)
		return MTZ_EFORMAT;
	if ((size_t)e->regs_offset + 8u * e->nr_regs > e->stack_offset)
		return MTZ_EFORMAT;
	return 0;
}

int mtz_delta_dec_sample(struct mtz_delta_dec *d, const uint8_t *in, size_t n,
			 size_t *used, struct mtz_buf *out)
{
	struct entry e;
	int rc;

	if (n < MTZ_SAMPLE_FIXED)
		return MTZ_ETRUNC;
	if ((rc = entry_get(in, &e)))
		return rc;
	size_t pos = MTZ_SAMPLE_FIXED;
	size_t resid = (size_t)e.rec_size - e.dyn_size;
	if (n - pos < resid)
		return MTZ_ETRUNC;
	const uint8_t *res = in + pos;
	pos += resid;

	struct mtz_delta_ref *ref = NULL;
	if (e.ref_hash) {
		ref = table_find(&d->refs, e.tid);
		if (!ref || ref->hash != e.ref_hash)
			return MTZ_EREF;
	}

	uint64_t regs[MTZ_MAX_REGS];
	for (unsigned i = 0; i < e.nr_regs; i++) {
		regs[i] = mtz_ld64(res + e.regs_offset + 8 * i);
		if (ref && i < ref->nr_regs)
			regs[i] ^= ref->regs[i];
	}
	uint64_t sp = e.sp_index == 0xff ? 0 : regs[e.sp_index];

	size_t dyn = e.dyn_size;
	if ((rc = scratch_fit(&d->rebuilt, dyn)))
		return rc;
	uint8_t *a = d->rebuilt.p;
	ref_align(ref, sp, dyn, a);

	size_t ngroups = (dyn + MTZ_GROUP_SIZE - 1) / MTZ_GROUP_SIZE;
	size_t pbytes = (ngroups + 7) / 8;
	if (n - pos < pbytes)
		return MTZ_ETRUNC;
	const uint8_t *present = in + pos;
	pos += pbytes;
	if (ngroups % 8 && present[pbytes - 1] >> (ngroups % 8))
		return MTZ_EFORMAT;
	for (size_t g = 0; g < ngroups; g++) {
		if (!(present[g / 8] >> (g % 8) & 1))
			continue;
		if (n - pos < 8)
			return MTZ_ETRUNC;
		uint64_t mask = mtz_ld64(in + pos);
		pos += 8;
		size_t base = g * MTZ_GROUP_SIZE;
		size_t words = (dyn - base + 7) / 8;
		if (words > 64)
			words = 64;
		if (!mask || (words < 64 && mask >> words))
			return MTZ_EFORMAT;
		if ((n - pos) / 8 < (size_t)__builtin_popcountll(mask))
			return MTZ_ETRUNC;
		for (; mask; mask &= mask - 1) {
			size_t w = base + 8 * (size_t)__builtin_ctzll(mask);
			mtz_st64(a + w, mtz_ld64(a + w) ^ mtz_ld64(in + pos));
			pos += 8;
		}
	}
	uint64_t h = mtz_hash(a, dyn);
	if (h != e.hash)
		return MTZ_EHASH;

	if (mtz_buf_reserve(out, e.rec_size))
		return MTZ_ENOMEM;
	uint8_t *rec = out->data + out->len;
	memcpy(rec, res, e.stack_offset);
	for (unsigned i = 0; i < e.nr_regs; i++)
		mtz_st64(rec + e.regs_offset + 8 * i, regs[i]);
	memcpy(rec + e.stack_offset, a, dyn);
	memcpy(rec + e.stack_offset + dyn, res + e.stack_offset, resid - e.stack_offset);

	struct mtz_delta_ref *slot = ref ? ref : table_claim(&d->refs, e.tid);
	if (!slot)
		return MTZ_ENOMEM;
	/* swap buffers instead of copying the rebuilt stack */
	uint8_t *old = slot->bytes;
	size_t oldcap = slot->cap;
	slot->bytes = d->rebuilt.p;
	slot->cap = d->rebuilt.cap;
	d->rebuilt.p = old;
	d->rebuilt.cap = oldcap;
	slot->dyn_size = dyn;
	slot->sp = sp;
	slot->hash = h;
	slot->nr_regs = e.nr_regs;
	memcpy(slot->regs, regs, e.nr_regs * sizeof(uint64_t));

	out->len += e.rec_size;
	*used = pos;
	d->stats.coded++;
	d->stats.keyframes += !ref;
	d->stats.stack_bytes += dyn;
	return 0;
}

/* ---- encoder ---------------------------------------------------------- */

struct mtz_delta_enc {
	struct ref_table refs;
	struct scratch aligned;		/* the reference aligned to the new stack */
	struct mtz_delta_dec *mirror;	/* decodes what we emit */
	struct mtz_buf check;		/* the mirror's output */
	struct mtz_delta_stats stats;
};

int mtz_delta_enc_new(struct mtz_delta_enc **out)
{
	struct mtz_delta_enc *e = calloc(1, sizeof(*e));
	if (!e || mtz_delta_dec_new(&e->mirror)) {
		free(e);
		*out = NULL;
		return MTZ_ENOMEM;
	}
	e->refs.gen = 1;
	*out = e;
	return 0;
}

void mtz_delta_enc_free(struct mtz_delta_enc *e)
{
	if (!e)
		return;
	table_release(&e->refs);
	free(e->aligned.p);
	mtz_delta_dec_free(e->mirror);
	mtz_buf_release(&e->check);
	free(e);
}

void mtz_delta_enc_reset(struct mtz_delta_enc *e)
{
	table_reset(&e->refs);
	mtz_delta_dec_reset(e->mirror);
}

const struct mtz_delta_stats *mtz_delta_enc_stats(const struct mtz_delta_enc *e)
{
	return &e->stats;
}

struct mtz_delta_ref *mtz_delta_enc_ref(struct mtz_delta_enc *e, uint32_t tid)
{
	return table_find(&e->refs, tid);
}

static int view_check(const struct mtz_sample_view *s)
{
	if (s->rec_size > 65535 || s->nr_regs > MTZ_MAX_REGS)
		return MTZ_EFORMAT;
	if (s->sp_index >= (int)s->nr_regs || s->sp_index < -1)
		return MTZ_EFORMAT;
	if (s->stack_offset > s->rec_size || s->dyn_size > s->rec_size - s->stack_offset)
		return MTZ_EFORMAT;
	if (s->regs_offset > s->stack_offset ||
	    8 * (size_t)s->nr_regs > s->stack_offset - s->regs_offset)
		return MTZ_EFORMAT;
	return 0;
}

/* Appends the entry for s against ref (NULL: keyframe). */
static int emit(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
		const struct mtz_delta_ref *ref, uint64_t sp, uint64_t hash,
		struct mtz_buf *out)
{
	size_t dyn = s->dyn_size;
	size_t ngroups = (dyn + MTZ_GROUP_SIZE - 1) / MTZ_GROUP_SIZE;
	size_t pbytes = (ngroups + 7) / 8;
	/* worst case: every group present with every word */
	size_t most = 1 + MTZ_SAMPLE_FIXED + s->rec_size + pbytes + ngroups * 8 + dyn + 8;
	if (mtz_buf_reserve(out, most) || scratch_fit(&e->aligned, dyn))
		return MTZ_ENOMEM;

	uint8_t *p = out->data + out->len;
	*p++ = MTZ_TAG_SAMPLE;
	struct entry en = {
		.rec_size = (uint16_t)s->rec_size,
		.regs_offset = (uint16_t)s->regs_offset,
		.stack_offset = (uint16_t)s->stack_offset,
		.dyn_size = (uint16_t)dyn,
		.nr_regs = (uint8_t)s->nr_regs,
		.sp_index = s->sp_index < 0 ? 0xff : (uint8_t)s->sp_index,
		.tid = s->tid,
		.hash = hash,
		.ref_hash = ref ? ref->hash : 0,
	};
	entry_put(p, &en);
	p += MTZ_SAMPLE_FIXED;

	memcpy(p, s->rec, s->stack_offset);
	if (ref) {
		unsigned nr = s->nr_regs < ref->nr_regs ? s->nr_regs : ref->nr_regs;
		for (unsigned i = 0; i < nr; i++) {
			uint8_t *q = p + s->regs_offset + 8 * i;
			mtz_st64(q, mtz_ld64(q) ^ ref->regs[i]);
		}
	}
	p += s->stack_offset;
	size_t tail = s->rec_size - s->stack_offset - dyn;
	memcpy(p, s->rec + s->stack_offset + dyn, tail);
	p += tail;

	uint8_t *a = e->aligned.p;
	ref_align(ref, sp, dyn, a);
	const uint8_t *stk = s->rec + s->stack_offset;
	uint8_t *present = p;
	memset(present, 0, pbytes);
	p += pbytes;
	for (size_t g = 0; g < ngroups; g++) {
		size_t base = g * MTZ_GROUP_SIZE;
		size_t end = base + MTZ_GROUP_SIZE < dyn ? base + MTZ_GROUP_SIZE : dyn;
		uint8_t *maskp = p;
		uint8_t *w = p + 8;
		uint64_t mask = 0;
		size_t i = base;
		for (; i + 8 <= end; i += 8) {
			uint64_t x = mtz_ld64(stk + i) ^ mtz_ld64(a + i);
			/* branch-free: always store, advance only when nonzero */
			mtz_st64(w, x);
			w += (x != 0) * 8;
			mask |= (uint64_t)(x != 0) << ((i - base) / 8);
		}
		if (i < end) {	/* last partial word, zero-padded */
			uint64_t v = 0;
			memcpy(&v, stk + i, end - i);
			uint64_t x = v ^ mtz_ld64(a + i);
			mtz_st64(w, x);
			w += (x != 0) * 8;
			mask |= (uint64_t)(x != 0) << ((i - base) / 8);
		}
		if (mask) {
			mtz_st64(maskp, mask);
			present[g / 8] |= (uint8_t)(1u << (g % 8));
			p = w;
		}
	}
	out->len = (size_t)(p - out->data);
	return 0;
}

/* Runs the mirror decoder on the entry at out->data + start. */
static int verify(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
		  const struct mtz_buf *out, size_t start)
{
	size_t used;
	e->check.len = 0;
	int rc = mtz_delta_dec_sample(e->mirror, out->data + start + 1,
				      out->len - start - 1, &used, &e->check);
	if (rc == MTZ_ENOMEM)
		return rc;
	if (rc || used != out->len - start - 1 || e->check.len != s->rec_size ||
	    memcmp(e->check.data, s->rec, s->rec_size))
		return MTZ_EHASH;
	return 0;
}

int mtz_delta_enc_sample(struct mtz_delta_enc *e, const struct mtz_sample_view *s,
			 struct mtz_buf *out)
{
	int rc = view_check(s);
	if (rc)
		return rc;

	uint64_t regs[MTZ_MAX_REGS];
	for (unsigned i = 0; i < s->nr_regs; i++)
		regs[i] = mtz_ld64(s->rec + s->regs_offset + 8 * i);
	uint64_t sp = s->sp_index < 0 ? 0 : regs[s->sp_index];
	const uint8_t *stk = s->rec + s->stack_offset;
	uint64_t hash = mtz_hash(stk, s->dyn_size);

	struct mtz_delta_ref *ref = table_find(&e->refs, s->tid);
	if (ref && !ref->hash)	/* 0 means keyframe on the wire */
		ref = NULL;
	size_t start = out->len;
	if ((rc = emit(e, s, ref, sp, hash, out)))
		return rc;
	rc = verify(e, s, out, start);
	if (rc == MTZ_EHASH && ref) {
		out->len = start;
		if ((rc = emit(e, s, NULL, sp, hash, out)))
			return rc;
		rc = verify(e, s, out, start);
		e->stats.fallbacks++;
		ref = NULL;
	}
	if (rc) {
		out->len = start;
		return rc;
	}

	struct mtz_delta_ref *slot = table_claim(&e->refs, s->tid);
	if (!slot || ref_store(slot, sp, stk, s->dyn_size, hash, regs, s->nr_regs)) {
		out->len = start;
		return MTZ_ENOMEM;
	}
	e->stats.coded++;
	e->stats.keyframes += !ref;
	e->stats.stack_bytes += s->dyn_size;
	return 0;
}
