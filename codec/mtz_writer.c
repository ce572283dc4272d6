/* Writing .mtz: perf items in, frames of entries compressed with zstd out. */
#include "codec/mtz.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "codec/mtz_arch.h"
#include "codec/mtz_buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_frame.h"
#include "codec/mtz_hash.h"

struct mtz_writer {
	int fd;
	char *name;
	struct mtz_options opt;
	struct mtz_delta_enc *enc;
	ZSTD_CCtx *cctx;
	struct mtz_sections sec;	/* entries of the open frame */
	struct mtz_buf out;		/* the input bytes it holds (pad matches) */
	struct mtz_buf comp;		/* its payload, compressed */
	uint64_t frame_in;		/* input bytes in the open frame */
	uint64_t frame_offset;		/* input offset where it starts */
	uint32_t frame_no;
	int started, finished;
	struct mtz_stats st;
	char err[512];
};

static int fail(struct mtz_writer *w, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->err, sizeof(w->err), fmt, ap);
	va_end(ap);
	return code;
}

int mtz_writer_new(struct mtz_writer **out, int fd, const char *name,
		   const struct mtz_options *opt)
{
	struct mtz_writer *w = calloc(1, sizeof(*w));
	*out = NULL;
	if (!w)
		return MTZ_ENOMEM;
	if (opt)
		w->opt = *opt;
	else
		mtz_options_init(&w->opt);
	if (w->opt.frame_size < MTZ_FRAME_SIZE_MIN || w->opt.frame_size > MTZ_FRAME_SIZE_MAX ||
	    w->opt.level < 1 || w->opt.level > ZSTD_maxCLevel()) {
		free(w);
		return MTZ_EFORMAT;
	}
	w->fd = fd;
	w->name = strdup(name ? name : "-");
	w->cctx = ZSTD_createCCtx();
	if (!w->name || !w->cctx || mtz_delta_enc_new(&w->enc)) {
		mtz_writer_free(w);
		return MTZ_ENOMEM;
	}
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, w->opt.level);
	ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
	*out = w;
	return 0;
}

void mtz_writer_free(struct mtz_writer *w)
{
	if (!w)
		return;
	mtz_delta_enc_free(w->enc);
	ZSTD_freeCCtx(w->cctx);
	for (int i = 0; i < MTZ_NSEC; i++)
		mtz_buf_release(&w->sec.s[i]);
	mtz_buf_release(&w->out);
	mtz_buf_release(&w->comp);
	free(w->name);
	free(w);
}

const char *mtz_writer_error(const struct mtz_writer *w)
{
	return w->err;
}

void mtz_writer_stats(const struct mtz_writer *w, struct mtz_stats *st)
{
	const struct mtz_delta_stats *d = mtz_delta_enc_stats(w->enc);
	*st = w->st;
	st->coded = d->coded;
	st->keyframes = d->keyframes;
	st->fallbacks = d->fallbacks;
	st->stack_bytes = d->stack_bytes;
	st->pad_bytes = d->pad_bytes;
	st->pad_matched = d->pad_matched;
}

static int write_all(struct mtz_writer *w, const void *p, size_t n)
{
	const uint8_t *b = p;
	while (n) {
		ssize_t k = write(w->fd, b, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return fail(w, MTZ_EIO, "cannot write '%s': %s", w->name, strerror(errno));
		b += k;
		n -= (size_t)k;
		w->st.bytes_out += (uint64_t)k;
	}
	return 0;
}

static int start(struct mtz_writer *w)
{
	uint8_t h[MTZ_FILE_HEADER_SIZE];
	mtz_file_header_pack(h, w->opt.raw ? MTZ_FLAG_RAW : 0);
	w->started = 1;
	return write_all(w, h, sizeof(h));
}

static size_t sections_size(const struct mtz_writer *w)
{
	size_t n = 0;
	for (int i = 0; i < MTZ_NSEC; i++)
		n += w->sec.s[i].len;
	return n;
}

/* The payload: a table (per section: u32 raw size, u32 compressed size),
 * then each non-empty section as its own zstd frame.  The hashes are
 * random bytes, not worth a slow level; ops, heads and codes are small and
 * repetitive, where a high level pays; passed records get level 3 at most
 * unless --raw made them everything. */
static int flush_frame(struct mtz_writer *w)
{
	if (!w->sec.s[MTZ_SEC_OPS].len)
		return 0;
	size_t bound = 8 * MTZ_NSEC;
	for (int i = 0; i < MTZ_NSEC; i++)
		bound += ZSTD_compressBound(w->sec.s[i].len);
	w->comp.len = 0;
	if (mtz_buf_reserve(&w->comp, bound))
		return fail(w, MTZ_ENOMEM, "out of memory");
	size_t n = 8 * MTZ_NSEC;
	for (int i = 0; i < MTZ_NSEC; i++) {
		const struct mtz_buf *sec = &w->sec.s[i];
		size_t z = 0;
		if (sec->len) {
			int level = w->opt.level;
			if (i == MTZ_SEC_HASH)
				level = 1;
			else if (i == MTZ_SEC_PASS && !w->opt.raw && level > 3)
				level = 3;	/* the bulk of a CPU profile's other records */
			ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
			z = ZSTD_compress2(w->cctx, w->comp.data + n, bound - n, sec->data, sec->len);
			if (ZSTD_isError(z))
				return fail(w, MTZ_EZSTD, "frame %u: zstd: %s", w->frame_no,
					    ZSTD_getErrorName(z));
		}
		mtz_st32(w->comp.data + 8 * i, (uint32_t)sec->len);
		mtz_st32(w->comp.data + 8 * i + 4, (uint32_t)z);
		n += z;
	}
	struct mtz_frame_header fh = {
		.frame_no = w->frame_no,
		.comp_size = (uint32_t)n,
		.raw_size = (uint32_t)sections_size(w),
		.out_size = (uint32_t)w->frame_in,
		.out_offset = w->frame_offset,
		.payload_hash = mtz_hash(w->comp.data, n),
	};
	uint8_t h[MTZ_FRAME_HEADER_SIZE];
	mtz_frame_header_pack(h, &fh);
	int rc = write_all(w, h, sizeof(h));
	if (!rc)
		rc = write_all(w, w->comp.data, n);
	if (rc)
		return rc;
	w->frame_no++;
	w->st.frames++;
	w->frame_offset += w->frame_in;
	w->frame_in = 0;
	for (int i = 0; i < MTZ_NSEC; i++)
		w->sec.s[i].len = 0;
	w->out.len = 0;
	mtz_delta_enc_reset(w->enc);
	return 0;
}

static int put_pass(struct mtz_writer *w, int tag, const void *data, size_t size)
{
	struct mtz_buf *ops = &w->sec.s[MTZ_SEC_OPS], *pass = &w->sec.s[MTZ_SEC_PASS];
	if (mtz_buf_reserve(ops, 5) || mtz_buf_reserve(pass, size) ||
	    mtz_buf_reserve(&w->out, size))
		return fail(w, MTZ_ENOMEM, "out of memory");
	ops->data[ops->len++] = (uint8_t)tag;
	mtz_st32(ops->data + ops->len, (uint32_t)size);
	ops->len += 4;
	mtz_buf_put(pass, data, size);
	mtz_buf_put(&w->out, data, size);
	return 0;
}

/* The sample as a coder view.  @return : 1 when it has a stack to code. */
static int sample_view(const struct mt_perf_reader *r, const struct mt_perf_item *item,
		       struct mtz_sample_view *v)
{
	struct mt_perf_sample s;
	if (mt_perf_sample_parse(r, item->header, &s))
		return 0;
	if (!(s.sample_type & PERF_SAMPLE_STACK_USER) || !s.stack_size)
		return 0;
	memset(v, 0, sizeof(*v));
	v->rec = item->data;
	v->rec_size = item->size;
	v->tid = s.tid;
	v->sp_index = -1;
	if (s.regs_abi && s.nr_regs) {
		v->regs_offset = s.regs_offset;
		v->nr_regs = s.nr_regs;
		if (s.regs_mask >> MTZ_ARCH_SP_REG & 1)
			v->sp_index = __builtin_popcountll(s.regs_mask &
							   ((1ull << MTZ_ARCH_SP_REG) - 1));
	}
	v->stack_offset = s.stack_offset;
	v->stack_size = s.stack_size;
	v->dyn_size = s.stack_dyn_size;
	return 1;
}

int mtz_writer_item(struct mtz_writer *w, const struct mt_perf_reader *r,
		    const struct mt_perf_item *item)
{
	int rc;
	if (!w->started && (rc = start(w)))
		return rc;
	if (item->size > UINT32_MAX - 64)
		return fail(w, MTZ_EFORMAT, "item at offset %llu: too large",
			    (unsigned long long)item->offset);
	w->st.bytes_in += item->size;
	int coded = 0;
	if (item->kind == MT_PERF_ITEM_RECORD) {
		w->st.records++;
		if (item->header->type == PERF_RECORD_SAMPLE) {
			w->st.samples++;
			struct mtz_sample_view v;
			if (!w->opt.raw && sample_view(r, item, &v)) {
				rc = mtz_delta_enc_sample(w->enc, &v, &w->sec, &w->out);
				if (rc == MTZ_ENOMEM)
					return fail(w, rc, "out of memory");
				if (rc == MTZ_EHASH)
					return fail(w, rc, "sample at offset %llu: keyframe does not "
						    "decode back (encoder bug)",
						    (unsigned long long)item->offset);
				coded = rc == 0;
			}
		}
	}
	if (!coded && (rc = put_pass(w, item->kind == MT_PERF_ITEM_RECORD ? MTZ_TAG_PASS
						     : MTZ_TAG_BLOB, item->data, item->size)))
		return rc;
	w->frame_in += item->size;
	if (w->frame_in >= w->opt.frame_size || sections_size(w) >= w->opt.frame_size)
		return flush_frame(w);
	return 0;
}

int mtz_writer_finish(struct mtz_writer *w)
{
	int rc;
	if (w->finished)
		return 0;
	if (!w->started && (rc = start(w)))
		return rc;
	if ((rc = flush_frame(w)))
		return rc;
	struct mtz_frame_header fh = {
		.end = 1,
		.frame_no = w->frame_no,
		.out_offset = w->frame_offset,
	};
	uint8_t h[MTZ_FRAME_HEADER_SIZE];
	mtz_frame_header_pack(h, &fh);
	if ((rc = write_all(w, h, sizeof(h))))
		return rc;
	w->finished = 1;
	return 0;
}
