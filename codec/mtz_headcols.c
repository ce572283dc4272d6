/* Version 3's head section: entry order <-> column order (mtz_headcols.h). */
#include "codec/mtz_headcols.h"

#include "codec/mtz.h"
#include "codec/mtz_delta.h"

/* Columns a head can have: so < 65536 bytes, 64 words per group. */
#define MAX_GROUPS ((65535 + MTZ_GROUP_SIZE - 1) / MTZ_GROUP_SIZE)
#define MAX_COLUMNS (MAX_GROUPS * 64)

/* One walk over the section.  Two cursors: src over the input, dst over the
 * output; the one on the entry-order side passes every byte, the one on the
 * column side only the entry-order part.  The first walk counts each
 * column's words (no bytes move); the second moves them, each column's
 * words from or to at[column]. */
struct perm {
	const uint8_t *src;
	uint8_t *dst;
	size_t len;
	size_t s, d;
	int to_columns;
	int moving;		/* second walk */
	uint32_t count[MAX_COLUMNS];
	size_t at[MAX_COLUMNS];
};

/* n bytes that stay in entry order; *at: them, in the input. */
static int take(struct perm *p, size_t n, const uint8_t **at)
{
	if (p->len - p->s < n || p->len - p->d < n)
		return MTZ_ETRUNC;
	*at = p->src + p->s;
	if (p->moving)
		memcpy(p->dst + p->d, p->src + p->s, n);
	p->s += n;
	p->d += n;
	return 0;
}

/* A changed head word of column c. */
static int word(struct perm *p, unsigned c)
{
	size_t *rows = p->to_columns ? &p->s : &p->d;
	if (p->len - *rows < 8)
		return MTZ_ETRUNC;
	if (p->moving) {
		if (p->to_columns)
			memcpy(p->dst + p->at[c], p->src + p->s, 8);
		else
			memcpy(p->dst + p->d, p->src + p->at[c], 8);
		p->at[c] += 8;
	} else {
		p->count[c]++;
	}
	*rows += 8;
	return 0;
}

/* A head's word code over n bytes (docs/formats/mtz.md, "Word code"):
 * bitmap and masks stay; the words go to their columns when cols. */
static int head_code(struct perm *p, size_t n, int cols)
{
	size_t groups = (n + MTZ_GROUP_SIZE - 1) / MTZ_GROUP_SIZE;
	const uint8_t *present, *m;
	int rc = take(p, (groups + 7) / 8, &present);
	for (size_t g = 0; g < groups && !rc; g++) {
		if (!(present[g / 8] >> (g % 8) & 1))
			continue;
		if ((rc = take(p, 8, &m)))
			break;
		uint64_t mask = mt_ld64(m);
		if (!cols) {		/* the words stay, in one piece */
			rc = take(p, 8 * (size_t)__builtin_popcountll(mask), &m);
			continue;
		}
		for (; mask && !rc; mask &= mask - 1)
			rc = word(p, (unsigned)(64 * g + (unsigned)__builtin_ctzll(mask)));
	}
	return rc;
}

static int walk(struct perm *p, const struct mtz_headcols_guide *gd)
{
	size_t op = 0, hp = 0;
	p->s = p->d = 0;
	while (op < gd->ops_len) {
		uint8_t tag = gd->ops[op++];
		if (tag == MTZ_TAG_PASS || tag == MTZ_TAG_BLOB) {
			if (gd->ops_len - op < 4)
				return MTZ_ETRUNC;
			op += 4;
			continue;
		}
		if (tag != MTZ_TAG_SAMPLE)
			return MTZ_EFORMAT;
		if (gd->ops_len - op < MTZ_SAMPLE_OPS || gd->hash_len - hp < 2 * gd->hash_size)
			return MTZ_ETRUNC;
		struct mtz_sample_shape e;
		mtz_delta_sample_shape(gd->ops + op, &e);
		op += MTZ_SAMPLE_OPS;
		if (e.so + e.dyn + e.pad > e.rec_size)
			return MTZ_EFORMAT;
		/* ref_hash 0: a keyframe, whose head is sent as it is */
		int key = 1;
		for (size_t i = 0; i < gd->hash_size; i++)
			key &= gd->hash[hp + i] == 0;
		hp += 2 * gd->hash_size;
		const uint8_t *x;
		int rc = key ? take(p, e.so, &x)
			     : head_code(p, e.so, e.flags & MTZ_SAMPLE_HEAD_XOR);
		if (!rc)	/* the tail */
			rc = take(p, e.rec_size - e.so - e.dyn - e.pad, &x);
		if (rc)
			return rc;
	}
	return 0;
}

static int permute(const struct mtz_headcols_guide *gd, const uint8_t *head, size_t len,
		   struct mt_buf *out, int to_columns)
{
	struct perm *p = calloc(1, sizeof(*p));
	int rc = MTZ_ENOMEM;
	if (!p)
		return rc;
	p->src = head;
	p->len = len;
	p->to_columns = to_columns;
	if ((rc = walk(p, gd)))
		goto out;
	/* every byte once: the entry-order cursor passed them all, the other
	 * only the entry-order part, and the columns take the rest */
	if ((to_columns ? p->s : p->d) != len) {
		rc = MTZ_EFORMAT;
		goto out;
	}
	size_t at = to_columns ? p->d : p->s;
	for (unsigned c = 0; c < MAX_COLUMNS; c++) {
		p->at[c] = at;
		at += 8 * (size_t)p->count[c];
	}
	out->len = 0;
	if (mt_buf_reserve(out, len ? len : 1)) {
		rc = MTZ_ENOMEM;
		goto out;
	}
	p->dst = out->data;
	p->moving = 1;
	if ((rc = walk(p, gd)))		/* the same walk: cannot fail now */
		goto out;
	out->len = len;
out:
	free(p);
	return rc;
}

int mtz_headcols_to_columns(const struct mtz_headcols_guide *g, const uint8_t *head, size_t len,
			    struct mt_buf *out)
{
	return permute(g, head, len, out, 1);
}

int mtz_headcols_to_rows(const struct mtz_headcols_guide *g, const uint8_t *head, size_t len,
			 struct mt_buf *out)
{
	return permute(g, head, len, out, 0);
}
