/* Unit tests of version 3's head section order (codec/mtz_headcols.h) on a
 * frame's sections built by hand, byte for byte as docs/formats/mtz.md lays
 * them out: a PASS entry, a keyframe, two heads coded against a reference
 * (HEAD_REF: their words go to columns) and one against zeros (its words
 * stay in entry order). */
#include <criterion/criterion.h>
#include <string.h>

#include "codec/mtz.h"
#include "common/buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_headcols.h"

struct frame {
	struct mt_buf ops, hash, rows, cols;	/* rows, cols: the expected orders */
	struct mt_buf words[3];		/* the HEAD_REF words, per column */
};

static void put(struct mt_buf *b, const void *p, size_t n)
{
	cr_assert_eq(mt_buf_reserve(b, n), 0);
	mt_buf_put(b, p, n);
}

static void fill(struct mt_buf *b, uint8_t v, size_t n)
{
	uint8_t x[64];
	memset(x, v, n);
	put(b, x, n);
}

/* A SAMPLE entry: so = 24 (three head words), dyn 16, the tail what
 * rec_size leaves; ref_hash 0 makes it a keyframe. */
static void sample(struct frame *f, uint8_t flags, uint64_t ref_hash, size_t rec_size, size_t pad)
{
	uint8_t e[1 + MTZ_SAMPLE_OPS] = { MTZ_TAG_SAMPLE };
	mt_st16(e + 1, (uint16_t)rec_size);
	e[1 + 6] = flags;
	mt_st16(e + 1 + 8, 24);
	mt_st16(e + 1 + 10, 16);
	mt_st16(e + 1 + 12, (uint16_t)pad);
	put(&f->ops, e, sizeof(e));
	uint8_t h[16];
	mt_st64(h, ref_hash);
	mt_st64(h + 8, 0x1234);
	put(&f->hash, h, 16);
}

/* A delta head: bitmap, mask, then the words (0x10 * entry + word); to
 * columns when cols. */
static void delta_head(struct frame *f, uint8_t entry, uint64_t mask, int cols)
{
	uint8_t present = 1, m[8];
	mt_st64(m, mask);
	put(&f->rows, &present, 1);
	put(&f->rows, m, 8);
	put(&f->cols, &present, 1);
	put(&f->cols, m, 8);
	for (unsigned k = 0; k < 3; k++) {
		if (!(mask >> k & 1))
			continue;
		fill(&f->rows, (uint8_t)(0x10 * entry + k), 8);
		fill(cols ? &f->words[k] : &f->cols, (uint8_t)(0x10 * entry + k), 8);
	}
}

static void tail(struct frame *f, uint8_t v, size_t n)
{
	fill(&f->rows, v, n);
	fill(&f->cols, v, n);
}

static void frame_build(struct frame *f)
{
	memset(f, 0, sizeof(*f));
	uint8_t pass[5] = { MTZ_TAG_PASS, 10, 0, 0, 0 };
	put(&f->ops, pass, sizeof(pass));
	sample(f, 0, 0, 64, 0);				/* keyframe: head as it is */
	fill(&f->rows, 0xa1, 24);
	fill(&f->cols, 0xa1, 24);
	tail(f, 0xa2, 24);
	sample(f, MTZ_SAMPLE_HEAD_XOR, 77, 64, 8);	/* words 0 and 2 */
	delta_head(f, 1, 5, 1);
	tail(f, 0xb1, 16);
	sample(f, MTZ_SAMPLE_HEAD_XOR, 78, 64, 0);	/* words 1 and 2 */
	delta_head(f, 2, 6, 1);
	tail(f, 0xc1, 24);
	sample(f, 0, 79, 64, 0);			/* against zeros: word 0 */
	delta_head(f, 3, 1, 0);
	tail(f, 0xd1, 24);
	for (int k = 0; k < 3; k++)
		put(&f->cols, f->words[k].data, f->words[k].len);
}

static void frame_free(struct frame *f)
{
	mt_buf_release(&f->ops);
	mt_buf_release(&f->hash);
	mt_buf_release(&f->rows);
	mt_buf_release(&f->cols);
	for (int k = 0; k < 3; k++)
		mt_buf_release(&f->words[k]);
}

static struct mtz_headcols_guide guide_of(const struct frame *f)
{
	return (struct mtz_headcols_guide){ .ops = f->ops.data, .ops_len = f->ops.len,
					    .hash = f->hash.data, .hash_len = f->hash.len,
					    .hash_size = 8 };
}

Test(mtz_headcols, words_of_reference_coded_heads_go_to_columns_and_back)
{
	struct frame f;
	frame_build(&f);
	const struct mtz_headcols_guide g = guide_of(&f);
	struct mt_buf out = { 0 }, back = { 0 };
	cr_assert_eq(f.rows.len, f.cols.len);
	cr_assert_eq(mtz_headcols_to_columns(&g, f.rows.data, f.rows.len, &out), 0);
	cr_assert_eq(out.len, f.cols.len);
	cr_assert(memcmp(out.data, f.cols.data, out.len) == 0, "column order differs");
	cr_assert_eq(mtz_headcols_to_rows(&g, out.data, out.len, &back), 0);
	cr_assert_eq(back.len, f.rows.len);
	cr_assert(memcmp(back.data, f.rows.data, back.len) == 0, "entry order differs");
	mt_buf_release(&out);
	mt_buf_release(&back);
	frame_free(&f);
}

/* With 32-bit hashes the keyframes are found by a 4-byte ref_hash. */
Test(mtz_headcols, short_hashes)
{
	struct frame f;
	frame_build(&f);
	struct mt_buf h32 = { 0 }, out = { 0 };
	for (size_t i = 0; i < f.hash.len; i += 16) {
		uint8_t h[8];
		mt_st32(h, (uint32_t)mt_ld64(f.hash.data + i));
		mt_st32(h + 4, (uint32_t)mt_ld64(f.hash.data + i + 8));
		put(&h32, h, 8);
	}
	struct mtz_headcols_guide g = guide_of(&f);
	g.hash = h32.data;
	g.hash_len = h32.len;
	g.hash_size = 4;
	cr_assert_eq(mtz_headcols_to_columns(&g, f.rows.data, f.rows.len, &out), 0);
	cr_assert(memcmp(out.data, f.cols.data, out.len) == 0);
	mt_buf_release(&out);
	mt_buf_release(&h32);
	frame_free(&f);
}

/* Sections that do not describe the head section's bytes exactly are
 * refused, never read past. */
Test(mtz_headcols, inconsistent_sections_are_refused)
{
	struct frame f;
	frame_build(&f);
	struct mtz_headcols_guide g = guide_of(&f);
	struct mt_buf out = { 0 };
	/* a byte short, a byte more (the buffer has room for it) */
	cr_assert_neq(mtz_headcols_to_rows(&g, f.cols.data, f.cols.len - 1, &out), 0);
	cr_assert_neq(mtz_headcols_to_columns(&g, f.rows.data, f.rows.len - 1, &out), 0);
	fill(&f.cols, 0, 1);
	cr_assert_eq(mtz_headcols_to_rows(&g, f.cols.data, f.cols.len, &out), MTZ_EFORMAT);
	f.cols.len--;
	/* the hash section ends inside an entry */
	g.hash_len -= 1;
	cr_assert_eq(mtz_headcols_to_rows(&g, f.cols.data, f.cols.len, &out), MTZ_ETRUNC);
	g.hash_len += 1;
	/* an unknown tag; a PASS length cut off */
	f.ops.data[0] = 9;
	cr_assert_eq(mtz_headcols_to_rows(&g, f.cols.data, f.cols.len, &out), MTZ_EFORMAT);
	f.ops.data[0] = MTZ_TAG_PASS;
	g.ops_len = 3;
	cr_assert_eq(mtz_headcols_to_rows(&g, f.cols.data, f.cols.len, &out), MTZ_ETRUNC);
	g.ops_len = f.ops.len;
	/* stack and pad larger than the record */
	mt_st16(f.ops.data + 5 + 1 + 12, 60);
	cr_assert_eq(mtz_headcols_to_rows(&g, f.cols.data, f.cols.len, &out), MTZ_EFORMAT);
	mt_buf_release(&out);
	frame_free(&f);
}
