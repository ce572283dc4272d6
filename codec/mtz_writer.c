/* Writing .mtz: perf items in, frames of entries compressed with zstd out.
 *
 * Frames are independent, so they are encoded in parallel: the caller's
 * thread gathers a frame's input (bytes and parsed sample layouts) into a
 * job; worker threads delta-code and compress jobs; results are written in
 * frame order. */
#include "codec/mtz.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "codec/mtz_arch.h"
#include "common/buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_frame.h"
#include "common/fnv.h"
#include "codec/mtz_headcols.h"

#define MAX_SLOTS 9

/* A frame's largest section is compressed on a helper thread, beside the
 * others, when it is at least this large and a CPU would otherwise idle
 * (fewer frames being encoded than CPUs): a CPU profile is a frame or two
 * whose code section alone is a large part of the time (the python stream
 * of bench/codec.sh).  Not without worker threads (-T 0). */
#define BESIDE_MIN (256u << 10)

/* One item of a frame's input. */
struct item {
	size_t off, size;		/* in job->in */
	int tag;			/* MTZ_TAG_PASS, _BLOB or _SAMPLE */
	struct mtz_sample_view v;	/* SAMPLE: v.rec set when encoding */
	uint64_t hash;			/* SAMPLE: its dump's, once hashed */
};

/* A frame: its input, then its encoded form.  The coder state lives with
 * the slot and serves every frame the slot encodes. */
struct job {
	struct mt_buf in;		/* the input, copied ... */
	const uint8_t *view;		/* ... or, when not NULL, in the reader's
					 * mapping of the file: in.len bytes there */
	struct item *items;
	size_t nitems, cap;
	size_t estimate;		/* bound on the sections' size */
	uint32_t frame_no;
	uint64_t offset;		/* input offset of the frame */
	const struct mtz_options *opt;
	struct mtz_delta_enc *enc;
	ZSTD_CCtx *cctx;
	struct mtz_sections sec;
	/* the section compressed beside the others (compress_frame) */
	struct {
		ZSTD_CCtx *cctx;	/* made on first use */
		const struct mt_buf *in;
		int sec;
		struct mt_buf out;
		size_t z;
	} beside;
	int *busy;			/* the writer's count of jobs encoding */
	int cpus;			/* CPUs it may run on */
	int beside_used;		/* this frame's was compressed beside */
	struct mt_buf cols, back;	/* the head section in column order,
					 * and back again (checked) */
	struct mt_buf result;		/* frame header and payload */
	int rc;
	char err[256];
	pthread_t thread;
	int running;
};

struct mtz_writer {
	int fd;
	char *name;
	struct mtz_options opt;
	struct job slots[MAX_SLOTS];
	unsigned nslots, cur;		/* cur: the slot being filled */
	int busy;			/* jobs encoding (atomic) */
	uint64_t offset;		/* input bytes before the open frame */
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

static void job_release(struct job *j)
{
	mt_buf_release(&j->in);
	free(j->items);
	mtz_delta_enc_free(j->enc);
	ZSTD_freeCCtx(j->cctx);
	ZSTD_freeCCtx(j->beside.cctx);
	mt_buf_release(&j->beside.out);
	for (int i = 0; i < MTZ_NSEC; i++)
		mt_buf_release(&j->sec.s[i]);
	mt_buf_release(&j->cols);
	mt_buf_release(&j->back);
	mt_buf_release(&j->result);
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
	    w->opt.level < 1 || w->opt.level > ZSTD_maxCLevel() ||
	    w->opt.threads < 0 || w->opt.threads > MAX_SLOTS - 1 ||
	    (w->opt.hash_bits != 32 && w->opt.hash_bits != 64)) {
		free(w);
		return MTZ_EFORMAT;
	}
	w->fd = fd;
	w->name = strdup(name ? name : "-");
	/* threads workers, and one slot more to fill meanwhile */
	w->nslots = w->opt.threads ? (unsigned)w->opt.threads + 1 : 1;
	/* the CPUs this process may run on (taskset, a container's cpuset) */
	cpu_set_t set;
	long cpus = sched_getaffinity(0, sizeof(set), &set) ? sysconf(_SC_NPROCESSORS_ONLN) :
							      CPU_COUNT(&set);
	int bad = !w->name;
	for (unsigned i = 0; i < w->nslots && !bad; i++) {
		struct job *j = &w->slots[i];
		j->opt = &w->opt;
		j->busy = &w->busy;
		j->cpus = cpus > 0 ? (int)cpus : 1;
		j->cctx = ZSTD_createCCtx();
		bad = !j->cctx || mtz_delta_enc_new(&j->enc);
		if (!bad)
			mtz_delta_enc_set_hash_bits(j->enc, (unsigned)w->opt.hash_bits);
	}
	if (bad) {
		mtz_writer_free(w);
		return MTZ_ENOMEM;
	}
	*out = w;
	return 0;
}

void mtz_writer_free(struct mtz_writer *w)
{
	if (!w)
		return;
	for (unsigned i = 0; i < w->nslots; i++) {
		if (w->slots[i].running)
			pthread_join(w->slots[i].thread, NULL);
		job_release(&w->slots[i]);
	}
	free(w->name);
	free(w);
}

const char *mtz_writer_error(const struct mtz_writer *w)
{
	return w->err;
}

void mtz_writer_stats(const struct mtz_writer *w, struct mtz_stats *st)
{
	*st = w->st;
	for (unsigned i = 0; i < w->nslots; i++) {
		const struct mtz_delta_stats *d = mtz_delta_enc_stats(w->slots[i].enc);
		st->coded += d->coded;
		st->keyframes += d->keyframes;
		st->fallbacks += d->fallbacks;
		st->stack_bytes += d->stack_bytes;
		st->pad_bytes += d->pad_bytes;
		st->pad_matched += d->pad_matched;
	}
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
	mtz_file_header_pack(h, (w->opt.raw ? MTZ_FLAG_RAW : 0) |
				(w->opt.hash_bits == 32 ? MTZ_FLAG_HASH32 : 0));
	w->started = 1;
	return write_all(w, h, sizeof(h));
}

static int job_fail(struct job *j, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(j->err, sizeof(j->err), fmt, ap);
	va_end(ap);
	j->rc = code;
	return code;
}

static int put_pass(struct job *j, int tag, const void *data, size_t size)
{
	struct mt_buf *ops = &j->sec.s[MTZ_SEC_OPS], *pass = &j->sec.s[MTZ_SEC_PASS];
	if (mt_buf_reserve(ops, 5) || mt_buf_reserve(pass, size))
		return MTZ_ENOMEM;
	ops->data[ops->len++] = (uint8_t)tag;
	mt_st32(ops->data + ops->len, (uint32_t)size);
	ops->len += 4;
	mt_buf_put(pass, data, size);
	return 0;
}

/* Compresses section i (in) into dst, cap bytes.
 * @return : the compressed size, or a zstd error code. */
static size_t compress_section(ZSTD_CCtx *cctx, const struct mtz_options *opt, int i,
			       void *dst, size_t cap, const struct mt_buf *in)
{
	/* Hashes are random bytes: not worth a slow level.  But an entry's
	 * ref_hash repeats an earlier entry's hash, a match of 4 bytes with
	 * 32-bit hashes, below level 1's shortest: hence a minimum match of 4
	 * (a smaller hash section with --hash-bits 32, bench/codec.sh). */
	int hashes = i == MTZ_SEC_HASH;
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, hashes ? 1 : opt->level);
	ZSTD_CCtx_setParameter(cctx, ZSTD_c_minMatch, hashes ? 4 : 0);
	return ZSTD_compress2(cctx, dst, cap, in->data, in->len);
}

static void *beside_run(void *arg)
{
	struct job *j = arg;
	j->beside.z = compress_section(j->beside.cctx, j->opt, j->beside.sec, j->beside.out.data,
				       j->beside.out.cap, j->beside.in);
	return NULL;
}

/* Starts compressing the largest of the sections secs on a helper thread
 * when that is worth it (BESIDE_MIN).  Its output is the same as in the
 * job's thread: same parameters, a context of its own.
 * @return : the section's index, or -1 (none: all are compressed here). */
static int beside_start(struct job *j, const struct mt_buf *const *secs, pthread_t *t)
{
	int busy = __atomic_load_n(j->busy, __ATOMIC_RELAXED);	/* this job too */
	if (!j->opt->threads || busy >= j->cpus)
		return -1;
	int big = 0;
	for (int i = 1; i < MTZ_NSEC; i++)
		if (secs[i]->len > secs[big]->len)
			big = i;
	if (secs[big]->len < BESIDE_MIN)
		return -1;
	if (!j->beside.cctx && !(j->beside.cctx = ZSTD_createCCtx()))
		return -1;
	j->beside.out.len = 0;
	if (mt_buf_reserve(&j->beside.out, ZSTD_compressBound(secs[big]->len)))
		return -1;
	j->beside.in = secs[big];
	j->beside.sec = big;
	return pthread_create(t, NULL, beside_run, j) ? -1 : big;
}

/* The payload: a table (per section: u32 raw size, u32 compressed size),
 * then each non-empty section as its own zstd frame. */
static int compress_frame(struct job *j)
{
	size_t raw = 0, bound = MTZ_FRAME_HEADER_SIZE + 8 * MTZ_NSEC;
	for (int i = 0; i < MTZ_NSEC; i++) {
		raw += j->sec.s[i].len;
		bound += ZSTD_compressBound(j->sec.s[i].len);
	}
	j->result.len = 0;
	if (mt_buf_reserve(&j->result, bound))
		return job_fail(j, MTZ_ENOMEM, "out of memory");
	/* The head section in column order (version 3), checked to come back
	 * as the decoder will bring it back. */
	const struct mt_buf *head = &j->sec.s[MTZ_SEC_HEAD];
	const struct mtz_headcols_guide guide = {
		.ops = j->sec.s[MTZ_SEC_OPS].data, .ops_len = j->sec.s[MTZ_SEC_OPS].len,
		.hash = j->sec.s[MTZ_SEC_HASH].data, .hash_len = j->sec.s[MTZ_SEC_HASH].len,
		.hash_size = (size_t)j->opt->hash_bits / 8,
	};
	int rc = mtz_headcols_to_columns(&guide, head->data, head->len, &j->cols);
	if (!rc)
		rc = mtz_headcols_to_rows(&guide, j->cols.data, j->cols.len, &j->back);
	if (rc == MTZ_ENOMEM)
		return job_fail(j, rc, "out of memory");
	if (rc || (head->len && memcmp(j->back.data, head->data, head->len)))
		return job_fail(j, MTZ_EFORMAT, "frame %u: the head section does not come back "
				"from column order (encoder bug)", j->frame_no);
	const struct mt_buf *secs[MTZ_NSEC];
	for (int i = 0; i < MTZ_NSEC; i++)
		secs[i] = i == MTZ_SEC_HEAD ? &j->cols : &j->sec.s[i];
	pthread_t helper;
	int beside = beside_start(j, secs, &helper);
	j->beside_used = beside >= 0;
	uint8_t *payload = j->result.data + MTZ_FRAME_HEADER_SIZE;
	size_t n = 8 * MTZ_NSEC;
	for (int i = 0; i < MTZ_NSEC; i++) {
		size_t z = 0;
		if (i == beside) {
			pthread_join(helper, NULL);
			if (!ZSTD_isError(z = j->beside.z))
				memcpy(payload + n, j->beside.out.data, z);
		} else if (secs[i]->len) {
			z = compress_section(j->cctx, j->opt, i, payload + n,
					     bound - MTZ_FRAME_HEADER_SIZE - n, secs[i]);
		}
		if (ZSTD_isError(z)) {
			if (beside > i)
				pthread_join(helper, NULL);
			return job_fail(j, MTZ_EZSTD, "frame %u: zstd: %s", j->frame_no,
					ZSTD_getErrorName(z));
		}
		mt_st32(payload + 8 * i, (uint32_t)secs[i]->len);
		mt_st32(payload + 8 * i + 4, (uint32_t)z);
		n += z;
	}
	struct mtz_frame_header fh = {
		.frame_no = j->frame_no,
		.comp_size = (uint32_t)n,
		.raw_size = (uint32_t)raw,
		.out_size = (uint32_t)j->in.len,	/* also in view mode */
		.out_offset = j->offset,
		.payload_hash = mt_fnv(payload, n),
	};
	mtz_frame_header_pack(j->result.data, &fh);
	j->result.len = MTZ_FRAME_HEADER_SIZE + n;
	return 0;
}

/* Hashes the dumps of the next MTZ_HASH_BATCH samples from item k on, in
 * one go; returns the item after the last one hashed. */
static size_t hash_ahead(struct job *j, const uint8_t *in, size_t k)
{
	const struct mtz_sample_view *v[MTZ_HASH_BATCH];
	struct item *at[MTZ_HASH_BATCH];
	unsigned n = 0;
	for (; k < j->nitems && n < MTZ_HASH_BATCH; k++) {
		struct item *it = &j->items[k];
		if (it->tag != MTZ_TAG_SAMPLE)
			continue;
		it->v.rec = in + it->off;
		at[n] = it;
		v[n++] = &it->v;
	}
	uint64_t hash[MTZ_HASH_BATCH];
	mtz_delta_stack_hashes(v, n, hash);
	for (unsigned i = 0; i < n; i++)
		at[i]->hash = hash[i];
	return k;
}

/* Encodes a job: entries into sections, then compressed into result. */
static void job_encode(struct job *j)
{
	j->rc = 0;
	mtz_delta_enc_reset(j->enc);
	for (int i = 0; i < MTZ_NSEC; i++)
		j->sec.s[i].len = 0;
	const uint8_t *in = j->view ? j->view : j->in.data;
	size_t hashed = 0;		/* items before this one are hashed */
	for (size_t k = 0; k < j->nitems; k++) {
		struct item *it = &j->items[k];
		const uint8_t *data = in + it->off;
		int rc = MTZ_EFORMAT;
		if (it->tag == MTZ_TAG_SAMPLE) {
			if (k >= hashed)
				hashed = hash_ahead(j, in, k);
			/* the frame's input before the sample is its output too */
			rc = mtz_delta_enc_sample_hashed(j->enc, &it->v, it->hash, &j->sec,
							 in, it->off);
			if (rc == MTZ_EHASH) {
				job_fail(j, rc, "sample at offset %llu: keyframe does not decode "
					 "back (encoder bug)", (unsigned long long)(j->offset + it->off));
				return;
			}
		}
		if (rc == MTZ_ENOMEM ||
		    (rc && put_pass(j, it->tag == MTZ_TAG_BLOB ? MTZ_TAG_BLOB : MTZ_TAG_PASS,
				    data, it->size))) {
			job_fail(j, MTZ_ENOMEM, "out of memory");
			return;
		}
	}
	compress_frame(j);
}

static void *job_run(void *arg)
{
	struct job *j = arg;
	__atomic_add_fetch(j->busy, 1, __ATOMIC_RELAXED);
	job_encode(j);
	__atomic_sub_fetch(j->busy, 1, __ATOMIC_RELAXED);
	return NULL;
}

/* Waits for slot i's job and writes its frame. */
static int collect(struct mtz_writer *w, struct job *j)
{
	if (!j->running)
		return 0;
	if (w->opt.threads)
		pthread_join(j->thread, NULL);
	j->running = 0;
	if (j->rc) {
		snprintf(w->err, sizeof(w->err), "%s", j->err);
		return j->rc;
	}
	w->st.frames++;
	w->st.frames_beside += (uint64_t)j->beside_used;
	int rc = write_all(w, j->result.data, j->result.len);
	/* Frame 0, the stream's header and attrs (mt_writer_item), is
	 * written twice: without it no later frame can be parsed. */
	if (!rc && j->frame_no == 0)
		rc = write_all(w, j->result.data, j->result.len);
	return rc;
}

/* Hands the filled slot to a worker (or encodes it here without threads)
 * and moves on to the next slot, collecting its previous job first. */
static int submit(struct mtz_writer *w)
{
	struct job *j = &w->slots[w->cur];
	if (!j->nitems)
		return 0;
	j->frame_no = w->frame_no++;
	j->offset = w->offset;
	w->offset += j->in.len;
	j->running = 1;
	if (!w->opt.threads) {
		job_run(j);
	} else if (pthread_create(&j->thread, NULL, job_run, j)) {
		j->running = 0;
		return fail(w, MTZ_ENOMEM, "cannot start a thread: %s", strerror(errno));
	}
	w->cur = (w->cur + 1) % w->nslots;
	struct job *next = &w->slots[w->cur];
	int rc = collect(w, next);
	next->in.len = 0;
	next->view = NULL;
	next->nitems = 0;
	next->estimate = 0;
	return rc;
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
	struct job *j = &w->slots[w->cur];
	/* Frame 0 holds the stream's header part only: everything before its
	 * first kernel record (a pipe's header and HEADER_* records, a
	 * perf.data file's header and attr section), which every later
	 * record needs to be parsed; it is written twice (collect). */
	if (w->frame_no == 0 && j->nitems && item->kind == MT_PERF_ITEM_RECORD &&
	    item->header->type < MT_PERF_RECORD_HEADER_ATTR) {
		if ((rc = submit(w)))
			return rc;
		j = &w->slots[w->cur];
	}
	/* The bytes after a perf.data file's records (its feature sections:
	 * event names, build-ids) start a frame of their own, so that a reader
	 * wanting them first (mt-unwind) decodes that small frame, not the last
	 * 32 MiB of samples too.  (Blobs before any record, the headers, do
	 * not: nothing precedes them.) */
	if (item->kind == MT_PERF_ITEM_BLOB && j->nitems &&
	    j->items[j->nitems - 1].tag != MTZ_TAG_BLOB) {
		if ((rc = submit(w)))
			return rc;
		j = &w->slots[w->cur];
	}
	if (j->nitems == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 1024;
		struct item *p = realloc(j->items, cap * sizeof(*p));
		if (!p)
			return fail(w, MTZ_ENOMEM, "out of memory");
		j->items = p;
		j->cap = cap;
	}
	/* An item that lies in the reader's mapping right after the job's
	 * input so far is not copied: the job reads the mapping. */
	size_t maplen;
	const uint8_t *map = mt_perf_reader_mapping(r, &maplen);
	int mapped = map && item->data == map + item->offset;
	if (mapped && !j->nitems)
		j->view = item->data;
	if (j->view && !(mapped && item->data == j->view + j->in.len)) {
		/* not contiguous: copy what the job has and go on copying */
		size_t len = j->in.len;
		j->in.len = 0;
		if (mt_buf_reserve(&j->in, len + item->size))
			return fail(w, MTZ_ENOMEM, "out of memory");
		mt_buf_put(&j->in, j->view, len);
		j->view = NULL;
	}
	if (!j->view && mt_buf_reserve(&j->in, item->size))
		return fail(w, MTZ_ENOMEM, "out of memory");
	struct item *it = &j->items[j->nitems++];
	it->off = j->in.len;
	it->size = item->size;
	it->tag = MTZ_TAG_BLOB;
	if (j->view)
		j->in.len += item->size;
	else
		mt_buf_put(&j->in, item->data, item->size);
	w->st.bytes_in += item->size;
	if (item->kind == MT_PERF_ITEM_RECORD) {
		w->st.records++;
		it->tag = MTZ_TAG_PASS;
		if (item->header->type == PERF_RECORD_SAMPLE) {
			w->st.samples++;
			if (!w->opt.raw && sample_view(r, item, &it->v))
				it->tag = MTZ_TAG_SAMPLE;
		}
	}
	/* a frame's sections stay under frame_size plus one item's worth */
	j->estimate += item->size + item->size / 32 + 64;
	if (j->in.len >= w->opt.frame_size || j->estimate >= w->opt.frame_size)
		return submit(w);
	return 0;
}

int mtz_writer_finish(struct mtz_writer *w)
{
	int rc;
	if (w->finished)
		return 0;
	if (!w->started && (rc = start(w)))
		return rc;
	if ((rc = submit(w)))
		return rc;
	for (unsigned i = 0; i < w->nslots; i++)	/* the rest, oldest first */
		if ((rc = collect(w, &w->slots[(w->cur + i) % w->nslots])))
			return rc;
	struct mtz_frame_header fh = {
		.end = 1,
		.frame_no = w->frame_no,
		.out_offset = w->offset,
	};
	uint8_t h[MTZ_FRAME_HEADER_SIZE];
	mtz_frame_header_pack(h, &fh);
	if ((rc = write_all(w, h, sizeof(h))))
		return rc;
	w->finished = 1;
	return 0;
}
