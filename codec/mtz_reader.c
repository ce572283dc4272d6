/* Reading .mtz: frames checked, decompressed and decoded back to the perf
 * stream; a damaged frame is reported, counted and skipped. */
#include "codec/mtz.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "common/buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_frame.h"
#include "common/fnv.h"
#include "codec/mtz_headcols.h"

#define MAX_JOBS 9

/* A worker hands its frame's decoded records out in pieces of about this
 * size while it rebuilds the rest, so that writing them overlaps decoding
 * (a one-frame stream was decoded whole, then written) and reads bytes
 * recently written. */
#define HANDOUT_STEP (256u << 10)
/* ... ending at multiples of this in the original stream (job_takeable) */
#define HANDOUT_ALIGN (64u << 10)
/* A worker (the one on the next frame, mostly) waits while this much of its
 * frame is decoded and not yet taken: the consumer then copies bytes still
 * in the shared cache rather than a whole frame decoded long before (the
 * writer's copy is the longest part of writing to a file). */
#define AHEAD_MAX (8u << 20)

/* Fresh frame buffers are populated this far ahead of the decoder, in one
 * system call per step, which costs less than a page fault per page; a
 * buffer reused for a later frame is populated already. */
#define POPULATE_STEP (1u << 20)
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23		/* Linux 5.14 */
#endif

/* How much of a buffer has been populated (buf: its data then). */
struct populated {
	const uint8_t *buf;
	size_t len;
};

/* A frame read ahead, decoded by a worker, handed out in order; or the end
 * (with a last damage message), or a fatal error. */
struct fjob {
	enum { JOB_FRAME, JOB_END, JOB_FATAL } kind;
	char pre[2048];			/* damage met reading up to it ("" none) */
	unsigned pre_more;		/* reports that did not fit in pre */
	struct mtz_frame_header h;
	uint64_t off;			/* file offset of its header */
	int copy;			/* the copy of frame 0 (version 4) */
	struct mt_buf payload;
	/* decoding, in a worker */
	struct mt_buf raw, out;
	ZSTD_DCtx *dctx;
	struct mtz_delta_dec *dec;
	int nsec;			/* sections per frame: 5 in version 1 */
	int head_cols;			/* version 3: head words in column order */
	size_t hash_size;		/* bytes of a stack hash: 8, or 4 (HASH32) */
	struct mt_buf rows;		/* the head section back in entry order */
	const char *cause;		/* NULL: decoded */
	char why[160];
	int fatal;			/* MTZ_ENOMEM, MTZ_EIO */
	uint64_t records, samples;
	pthread_t thread;
	int running;
	/* handing out while decoding: the first `ready` bytes of out are final
	 * records; `finished` once the worker is done (cause, fatal set) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t ready;
	int finished, waiting;
	size_t handed;			/* bytes the consumer took (its own) */
	/* a worker thread waits (held) while it is AHEAD_MAX bytes ahead of
	 * what the consumer took (taken, under mu), or until it is abandoned */
	pthread_cond_t cv_ahead;
	size_t taken;
	int threaded, held, abandon;
	/* populating out: [pop_next, pop_end) of pop_at is left to do (under
	 * mu); the worker and a waiting consumer take steps of it */
	const uint8_t *pop_at;
	size_t pop_next, pop_end;
	size_t pop_seen;		/* the worker's last look at pop_next */
	struct populated raw_pop, out_pop;	/* the worker's, across frames */
};

struct mtz_reader {
	mt_perf_read_fn read;
	void *read_ctx;
	int fd;
	char *name;
	/* input window: bytes [pos, len) of buf sit at file offset base + pos */
	uint8_t *buf;
	size_t pos, len, cap;
	uint64_t base;
	int eof;
	/* frames in flight, oldest at head; cur is being handed out */
	struct fjob jobs[MAX_JOBS];
	unsigned njobs, head, queued;
	int threads;
	struct fjob *cur;		/* the frame being handed out */
	const uint8_t *pend_at;		/* bytes of it given to mtz_reader_chunk */
	size_t pend;			/* but not yet copied by mtz_reader_read */
	int read_end;			/* the end job was made */
	/* version 4: frame 0 comes twice.  copy_expected: frame 0 was just
	 * read, so a frame 0 now is its copy.  frame0: 0 not decoded yet, 1
	 * decoded, 2 damaged (its copy is wanted, frame0_handed of its
	 * bytes having been handed out), 3 done with it. */
	int frame0_copy, copy_expected, frame0;
	size_t frame0_handed;
	uint64_t frame0_size;
	uint32_t next_frame;		/* number the next frame should carry */
	uint64_t next_orig;		/* original offset it should start at */
	/* a frame found ahead of the one that should precede it (two frames
	 * swapped): read after that one */
	struct {
		int active;
		struct mtz_frame_header h;
		uint64_t off;
		struct mt_buf payload;
	} held;
	int done;
	uint64_t damage;
	mtz_warn_fn warn;
	void *warn_ctx;
	struct mtz_stats st;
	char err[512];
};

static ssize_t fd_read(void *ctx, void *buf, size_t n)
{
	return read(*(int *)ctx, buf, n);
}

static void damaged(struct mtz_reader *r, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(r->err, sizeof(r->err), "'%s': ", r->name);
	va_start(ap, fmt);
	vsnprintf(r->err + k, sizeof(r->err) - (size_t)k, fmt, ap);
	va_end(ap);
	r->damage++;
	if (r->warn)
		r->warn(r->warn_ctx, r->err);
}

/* Queues a damage message met while reading ahead (one per line): they are
 * reported when the consumer reaches that point. */
static void pre_damage(struct mtz_reader *r, struct fjob *j, const char *fmt, ...)
{
	size_t used = strlen(j->pre);
	char line[512];
	int k = snprintf(line, sizeof(line), "'%s': ", r->name);
	va_list ap;
	va_start(ap, fmt);
	if (k > 0 && (size_t)k < sizeof(line))
		vsnprintf(line + k, sizeof(line) - (size_t)k, fmt, ap);
	va_end(ap);
	size_t len = strlen(line);
	if (j->pre_more || used + len + 2 > sizeof(j->pre)) {
		j->pre_more++;	/* counted, and said in one line */
		return;
	}
	if (used)
		j->pre[used++] = '\n';
	memcpy(j->pre + used, line, len + 1);
}

static uint64_t at(const struct mtz_reader *r)
{
	return r->base + r->pos;
}

/* Makes at least need bytes available at pos unless the input ends first.
 * @return : bytes available, or MTZ_EIO / MTZ_ENOMEM. */
static ssize_t fill(struct mtz_reader *r, size_t need)
{
	while (r->len - r->pos < need && !r->eof) {
		if (r->pos) {	/* slide the window */
			memmove(r->buf, r->buf + r->pos, r->len - r->pos);
			r->base += r->pos;
			r->len -= r->pos;
			r->pos = 0;
		}
		if (r->cap - r->len < 65536 || r->cap < need) {
			size_t cap = r->cap ? r->cap : 1 << 20;
			while (cap < need || cap - r->len < 65536)
				cap *= 2;
			uint8_t *p = realloc(r->buf, cap);
			if (!p) {
				snprintf(r->err, sizeof(r->err), "out of memory");
				return MTZ_ENOMEM;
			}
			r->buf = p;
			r->cap = cap;
		}
		ssize_t k = r->read(r->read_ctx, r->buf + r->len, r->cap - r->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			snprintf(r->err, sizeof(r->err), "cannot read '%s': %s", r->name,
				 strerror(errno));
			return MTZ_EIO;
		}
		if (k == 0)
			r->eof = 1;
		r->len += (size_t)k;
		r->st.bytes_in += (uint64_t)k;
	}
	return (ssize_t)(r->len - r->pos);
}

static void skip(struct mtz_reader *r, size_t n)
{
	r->pos += n;
}

int mtz_reader_new(struct mtz_reader **out, mt_perf_read_fn read, void *ctx,
		   const char *name)
{
	struct mtz_reader *r = calloc(1, sizeof(*r));
	*out = NULL;
	if (!r)
		return MTZ_ENOMEM;
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		pthread_mutex_init(&r->jobs[i].mu, NULL);
		pthread_cond_init(&r->jobs[i].cv, NULL);
		pthread_cond_init(&r->jobs[i].cv_ahead, NULL);
	}
	r->read = read;
	r->read_ctx = ctx;
	r->fd = -1;
	r->name = strdup(name ? name : "-");
	r->threads = 2;
	int rc = MTZ_ENOMEM;
	if (!r->name)
		goto fail;
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		r->jobs[i].dctx = ZSTD_createDCtx();
		if (!r->jobs[i].dctx || mtz_delta_dec_new(&r->jobs[i].dec))
			goto fail;
	}
	ssize_t n = fill(r, MTZ_FILE_HEADER_SIZE);
	if (n < 0) {
		rc = (int)n;
		goto fail;
	}
	if (n < MTZ_MAGIC_SIZE || !mtz_is_mtz(r->buf, (size_t)n)) {
		rc = MTZ_EMAGIC;
		goto fail;
	}
	if (n < MTZ_FILE_HEADER_SIZE) {
		rc = MTZ_ETRUNC;
		goto fail;
	}
	unsigned flags, version;
	if ((rc = mtz_file_header_check(r->buf, &flags, &version)))
		goto fail;
	unsigned hash_bits = flags & MTZ_FLAG_HASH32 ? 32 : 64;
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		r->jobs[i].nsec = version < 2 ? MTZ_NSEC_V1 : MTZ_NSEC;
		mtz_delta_dec_set_version(r->jobs[i].dec, version);
		mtz_delta_dec_set_deferred(r->jobs[i].dec, 1);	/* checked before handed out */
		mtz_delta_dec_set_hash_bits(r->jobs[i].dec, hash_bits);
		r->jobs[i].head_cols = version >= 3;
		r->jobs[i].hash_size = hash_bits / 8;
	}
	r->frame0_copy = version >= MTZ_VERSION_FRAME0_COPY;
	skip(r, MTZ_FILE_HEADER_SIZE);
	*out = r;
	return 0;
fail:
	mtz_reader_free(r);
	return rc;
}

int mtz_reader_fdopen(struct mtz_reader **out, int fd, const char *name)
{
	int *fdp = malloc(sizeof(int));
	*out = NULL;
	if (!fdp)
		return MTZ_ENOMEM;
	*fdp = fd;
	int rc = mtz_reader_new(out, fd_read, fdp, name);
	if (rc) {
		free(fdp);
		return rc;
	}
	(*out)->fd = fd;
	return 0;
}

void mtz_reader_free(struct mtz_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		free(r->read_ctx);
	free(r->buf);
	mt_buf_release(&r->held.payload);
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		struct fjob *j = &r->jobs[i];
		if (j->running) {
			pthread_mutex_lock(&j->mu);	/* a worker waiting for us */
			j->abandon = 1;
			pthread_cond_signal(&j->cv_ahead);
			pthread_mutex_unlock(&j->mu);
			pthread_join(j->thread, NULL);
		}
		mt_buf_release(&j->payload);
		mt_buf_release(&j->raw);
		mt_buf_release(&j->rows);
		mt_buf_release(&j->out);
		ZSTD_freeDCtx(j->dctx);
		mtz_delta_dec_free(j->dec);
		pthread_mutex_destroy(&j->mu);
		pthread_cond_destroy(&j->cv);
		pthread_cond_destroy(&j->cv_ahead);
	}
	free(r->name);
	free(r);
}

int mtz_reader_seek(struct mtz_reader *r, uint64_t orig, uint64_t *start)
{
	if (r->fd < 0 || r->cur || r->njobs || r->read_end || r->done)
		return MTZ_EFORMAT;
	off_t now = lseek(r->fd, 0, SEEK_CUR);
	if (now < 0 || (uint64_t)now < r->base + r->len)
		return MTZ_EFORMAT;
	uint64_t origin = (uint64_t)now - (r->base + r->len);	/* fd offset of byte 0 */
	uint64_t off = MTZ_FILE_HEADER_SIZE;
	struct mtz_frame_header h;
	for (;;) {
		uint8_t hb[MTZ_FRAME_HEADER_SIZE];
		ssize_t k = pread(r->fd, hb, sizeof(hb), (off_t)(origin + off));
		if (k < 0)
			return MTZ_EIO;
		if (k != (ssize_t)sizeof(hb) || !mtz_frame_header_parse(hb, &h) || h.end)
			return MTZ_EFORMAT;
		if (orig - h.out_offset < h.out_size && orig >= h.out_offset)
			break;
		off += MTZ_FRAME_HEADER_SIZE + (uint64_t)h.comp_size;
	}
	if (lseek(r->fd, (off_t)(origin + off), SEEK_SET) < 0)
		return MTZ_EIO;
	r->pos = r->len = 0;
	r->base = off;
	r->eof = 0;
	r->next_frame = h.frame_no;
	r->next_orig = h.out_offset;
	*start = h.out_offset;
	return 0;
}

void mtz_reader_set_threads(struct mtz_reader *r, int threads)
{
	if (threads < 0)
		threads = 0;
	if (threads > MAX_JOBS - 1)
		threads = MAX_JOBS - 1;
	r->threads = threads;
}

void mtz_reader_set_warn(struct mtz_reader *r, mtz_warn_fn fn, void *ctx)
{
	r->warn = fn;
	r->warn_ctx = ctx;
}

uint64_t mtz_reader_damage(const struct mtz_reader *r)
{
	return r->damage;
}

const char *mtz_reader_error(const struct mtz_reader *r)
{
	return r->err;
}

void mtz_reader_stats(const struct mtz_reader *r, struct mtz_stats *st)
{
	*st = r->st;
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		const struct mtz_delta_stats *d = mtz_delta_dec_stats(r->jobs[i].dec);
		st->coded += d->coded;
		st->keyframes += d->keyframes;
		st->stack_bytes += d->stack_bytes;
		st->pad_bytes += d->pad_bytes;
		st->pad_matched += d->pad_matched;
	}
}

/* Makes the first n bytes of out final: the consumer may take them.  A
 * worker thread then waits while it is too far ahead of the consumer. */
static void job_publish(struct fjob *j, size_t n)
{
	pthread_mutex_lock(&j->mu);
	j->ready = n;
	if (j->waiting)
		pthread_cond_signal(&j->cv);
	while (j->threaded && !j->abandon && j->ready - j->taken > AHEAD_MAX) {
		j->held = 1;
		pthread_cond_wait(&j->cv_ahead, &j->mu);
		j->held = 0;
	}
	pthread_mutex_unlock(&j->mu);
}

/* Populates the pages of buf's bytes [from, to) for writing (the page
 * holding byte `to` is left to the next call).  An optimisation only: a
 * kernel without MADV_POPULATE_WRITE faults the pages in as they are
 * written. */
static void populate(const uint8_t *buf, size_t from, size_t to)
{
	static int unsupported;
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	/* the page holding `from` was left out by the step before, whose end
	 * was rounded down; the one holding buf's start is already present */
	uintptr_t a = ((uintptr_t)buf + from) & ~(page - 1);
	uintptr_t b = ((uintptr_t)buf + to) & ~(page - 1);
	if (b <= a || __atomic_load_n(&unsupported, __ATOMIC_RELAXED))
		return;
	if (madvise((void *)a, b - a, MADV_POPULATE_WRITE) && errno == EINVAL)
		__atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
}

/* Makes sure the first `to` bytes of b (at most its capacity) are
 * populated, p remembering how far that was done. */
static void populate_to(struct populated *p, const struct mt_buf *b, size_t to)
{
	if (p->buf != b->data) {	/* a new buffer */
		p->buf = b->data;
		p->len = 0;
	}
	if (to > b->cap)
		to = b->cap;
	if (to <= p->len)
		return;
	populate(b->data, p->len, to);
	p->len = to;
}

/* Populates the next step of the current frame's output buffer, if any is
 * left: the worker, ahead of itself, or a consumer waiting for it.  Called
 * with j->mu held, which it releases while populating.
 * @return : 1 if it did a step, 0 if none was left. */
static int populate_step(struct fjob *j)
{
	if (!j->pop_at || j->pop_next >= j->pop_end)
		return 0;
	const uint8_t *at = j->pop_at;
	size_t from = j->pop_next;
	size_t to = from + POPULATE_STEP < j->pop_end ? from + POPULATE_STEP : j->pop_end;
	j->pop_next = to;
	pthread_mutex_unlock(&j->mu);
	populate(at, from, to);
	pthread_mutex_lock(&j->mu);
	return 1;
}

/* Keeps out populated about POPULATE_STEP ahead of its length. */
static void populate_ahead(struct fjob *j)
{
	if (j->out.len + POPULATE_STEP / 2 < j->pop_seen)
		return;
	pthread_mutex_lock(&j->mu);
	if (j->out.len + POPULATE_STEP / 2 >= j->pop_next)
		populate_step(j);
	j->pop_seen = j->pop_next;
	pthread_mutex_unlock(&j->mu);
}

/* Opens out for populating up to n bytes: the part a former frame did not
 * populate already. */
static void populate_open(struct fjob *j, size_t n)
{
	if (j->out_pop.buf != j->out.data) {	/* a new buffer */
		j->out_pop.buf = j->out.data;
		j->out_pop.len = 0;
	}
	pthread_mutex_lock(&j->mu);
	j->pop_at = j->out.data;
	j->pop_next = j->out_pop.len;
	j->pop_end = n < j->out.cap ? n : j->out.cap;
	j->pop_seen = j->pop_next;
	pthread_mutex_unlock(&j->mu);
}

/* Ends populating out (before out.data may move). */
static void populate_close(struct fjob *j)
{
	pthread_mutex_lock(&j->mu);
	if (j->pop_at && j->pop_next > j->out_pop.len)
		j->out_pop.len = j->pop_next;
	j->pop_at = NULL;
	pthread_mutex_unlock(&j->mu);
}

/* Decodes a frame's entries into r->out, handing them out as they come.
 * @return : 0 or a code, with *where the offset of the failing entry in the
 *           ops section. */
static int decode_entries(struct fjob *r, const struct mtz_frame_header *h,
			  const uint32_t *lens, size_t *where)
{
	uint64_t records = 0, samples = 0;
	struct mtz_cursors c;
	size_t at = 0;
	int rc;

	*where = 0;
	for (int i = 0; i < MTZ_NSEC; i++) {	/* lens[i] 0 past nsec */
		c.len[i] = lens[i];
		c.pos[i] = 0;
		c.p[i] = r->raw.data + at;
		at += lens[i];
	}
	if (r->head_cols)
		c.p[MTZ_SEC_HEAD] = r->rows.data;

	r->out.len = 0;
	mtz_delta_dec_reset(r->dec);
	size_t published = 0;
	size_t *op = &c.pos[MTZ_SEC_OPS];
	while (*op < c.len[MTZ_SEC_OPS]) {
		*where = *op;
		populate_ahead(r);
		/* never the whole frame: that waits for the checks below */
		if (r->out.len - published >= HANDOUT_STEP && r->out.len < h->out_size) {
			if ((rc = mtz_delta_dec_verify(r->dec, r->out.data)))
				return rc;
			published = r->out.len;
			job_publish(r, published);
		}
		uint8_t tag = c.p[MTZ_SEC_OPS][(*op)++];
		if (tag == MTZ_TAG_PASS || tag == MTZ_TAG_BLOB) {
			if (c.len[MTZ_SEC_OPS] - *op < 4)
				return MTZ_ETRUNC;
			uint32_t len = mt_ld32(c.p[MTZ_SEC_OPS] + *op);
			*op += 4;
			if (c.len[MTZ_SEC_PASS] - c.pos[MTZ_SEC_PASS] < len)
				return MTZ_ETRUNC;
			if (len > h->out_size - r->out.len)
				return MTZ_EFORMAT;
			mt_buf_put(&r->out, c.p[MTZ_SEC_PASS] + c.pos[MTZ_SEC_PASS], len);
			c.pos[MTZ_SEC_PASS] += len;
			records += tag == MTZ_TAG_PASS;
		} else if (tag == MTZ_TAG_SAMPLE) {
			if ((rc = mtz_delta_dec_sample(r->dec, &c, &r->out)))
				return rc;
			if (r->out.len > h->out_size)
				return MTZ_EFORMAT;
			records++;
			samples++;
		} else {
			return MTZ_EFORMAT;
		}
	}
	*where = *op;
	if ((rc = mtz_delta_dec_verify(r->dec, r->out.data)))
		return rc;
	for (int i = 0; i < MTZ_NSEC; i++)
		if (c.pos[i] != c.len[i])
			return MTZ_EFORMAT;	/* bytes no entry used */
	if (r->out.len != h->out_size)
		return MTZ_ETRUNC;
	r->records = records;
	r->samples = samples;
	return 0;
}

/* Decompresses the payload's sections into r->raw, their sizes into lens.
 * @return : NULL, or the cause of failure (may be put in why). */
static const char *unpack(struct fjob *r, const struct mtz_frame_header *h,
			  const uint8_t *payload, uint32_t *lens, char *why, size_t whysize)
{
	size_t table = 8 * (size_t)r->nsec;
	if (h->comp_size < table)
		return "payload shorter than its section table";
	uint64_t raw = 0, comp = table;
	for (int i = r->nsec; i < MTZ_NSEC; i++)
		lens[i] = 0;
	for (int i = 0; i < r->nsec; i++) {
		lens[i] = mt_ld32(payload + 8 * i);
		uint32_t z = mt_ld32(payload + 8 * i + 4);
		if (!lens[i] != !z)
			return "section table inconsistent";
		raw += lens[i];
		comp += z;
	}
	if (raw != h->raw_size || comp != h->comp_size)
		return "section sizes differ from the frame header";
	size_t in = table, outp = 0;
	for (int i = 0; i < r->nsec; i++) {
		uint32_t z = mt_ld32(payload + 8 * i + 4);
		if (!z)
			continue;
		size_t k = ZSTD_decompressDCtx(r->dctx, r->raw.data + outp, lens[i],
					       payload + in, z);
		if (ZSTD_isError(k)) {
			snprintf(why, whysize, "section %d: zstd: %s", i, ZSTD_getErrorName(k));
			return why;
		}
		if (k != lens[i])
			return "a section's size differs from its table entry";
		in += z;
		outp += k;
	}
	return NULL;
}

/* Looks for the next valid frame header after a damaged one, from pos + 1.
 * @return : 1 found (at pos), 0 none before the end, or an error code. */
static int resync(struct mtz_reader *r)
{
	skip(r, 1);
	for (;;) {
		ssize_t n = fill(r, MTZ_FRAME_HEADER_SIZE);
		if (n < 0)
			return (int)n;
		if (n < MTZ_FRAME_HEADER_SIZE)
			break;
		const uint8_t *p = r->buf + r->pos;
		size_t limit = (size_t)n - MTZ_FRAME_HEADER_SIZE + 1;
		for (size_t i = 0; i < limit; i++) {
			if (p[i] != 'M' || p[i + 1] != 'T' || p[i + 2] != 'Z')
				continue;
			struct mtz_frame_header h;
			if (mtz_frame_header_parse(p + i, &h)) {
				skip(r, i);
				return 1;
			}
		}
		skip(r, limit);
		if (r->eof)
			break;
	}
	skip(r, r->len - r->pos);
	return 0;
}

/* Puts a version 3 frame's head section, unpacked in r->raw, back in entry
 * order (mtz_headcols.h) in r->rows, where decode_entries reads it.
 * @return : 0 or a code. */
static int head_rows(struct fjob *r, const uint32_t *lens)
{
	size_t at[MTZ_NSEC], off = 0;
	for (int i = 0; i < MTZ_NSEC; i++) {
		at[i] = off;
		off += lens[i];
	}
	const struct mtz_headcols_guide guide = {
		.ops = r->raw.data + at[MTZ_SEC_OPS], .ops_len = lens[MTZ_SEC_OPS],
		.hash = r->raw.data + at[MTZ_SEC_HASH], .hash_len = lens[MTZ_SEC_HASH],
		.hash_size = r->hash_size,
	};
	return mtz_headcols_to_rows(&guide, r->raw.data + at[MTZ_SEC_HEAD], lens[MTZ_SEC_HEAD],
				    &r->rows);
}

/* Checks, decompresses and decodes a frame. */
static void job_decode(struct fjob *j)
{
	const struct mtz_frame_header *h = &j->h;
	const uint8_t *payload = j->payload.data;
	uint32_t lens[MTZ_NSEC];
	size_t where = 0;
	j->cause = NULL;
	j->fatal = 0;
	j->out.len = 0;
	if (mt_fnv(payload, h->comp_size) != h->payload_hash) {
		j->cause = "checksum mismatch";
		return;
	}
	/* Room for out_size bytes and one more record (at most 64 KiB), the
	 * most decode_entries appends before it stops: out.data never moves
	 * while the consumer reads handed-out bytes. */
	if (mt_buf_reserve(&j->raw, h->raw_size ? h->raw_size : 1) ||
	    mt_buf_reserve(&j->out, (size_t)h->out_size + 65536)) {
		j->fatal = MTZ_ENOMEM;
		return;
	}
	/* a waiting consumer populates out while this thread does raw */
	populate_open(j, h->out_size);
	populate_to(&j->raw_pop, &j->raw, h->raw_size);
	j->cause = unpack(j, h, payload, lens, j->why, sizeof(j->why));
	if (j->cause)
		return;
	int rc = j->head_cols ? head_rows(j, lens) : 0;
	if (rc && rc != MTZ_ENOMEM) {
		snprintf(j->why, sizeof(j->why), "head section: its column order does not "
			 "match the entries (%s)", mtz_strerror(rc));
		j->cause = j->why;
		return;
	}
	if (!rc)
		rc = decode_entries(j, h, lens, &where);
	if (rc == MTZ_ENOMEM) {
		j->fatal = rc;
	} else if (rc) {
		snprintf(j->why, sizeof(j->why), "entry at ops +%zu: %s", where, mtz_strerror(rc));
		j->cause = j->why;
	}
}

/* A worker (or the consumer's thread without workers): decodes the frame,
 * then hands out the rest of it, or nothing more when it failed. */
static void *job_run(void *arg)
{
	struct fjob *j = arg;
	job_decode(j);
	populate_close(j);
	pthread_mutex_lock(&j->mu);
	if (!j->cause && !j->fatal)
		j->ready = j->out.len;
	j->finished = 1;
	if (j->waiting)
		pthread_cond_signal(&j->cv);
	pthread_mutex_unlock(&j->mu);
	return NULL;
}

/* After the end marker at off: any bytes that follow are reported (and
 * read to the end, to count them).  @return : 0 or a fatal code. */
static int trailing(struct mtz_reader *r, struct fjob *j, uint64_t off)
{
	uint64_t from = at(r), extra = 0;
	for (;;) {
		ssize_t n = fill(r, 1);
		if (n < 0)
			return (int)n;
		if (n == 0)
			break;
		extra += (uint64_t)n;
		skip(r, (size_t)n);
	}
	if (extra) {
		r->st.bytes_lost += extra;
		pre_damage(r, j, "end marker at offset %llu: followed by %llu bytes of trailing "
			   "data (offsets %llu..%llu), ignored", (unsigned long long)off,
			   (unsigned long long)extra, (unsigned long long)from,
			   (unsigned long long)(from + extra));
	}
	return 0;
}

/* Frame h at off (n bytes of it, header included, are at pos; the whole
 * frame when n covers it) does not follow the frames before it: its number
 * or original offset differ from those that continue them.
 * - It starts past the expected original offset: the frames in between are
 *   missing; reported, and h is decoded.  But when the very next frame is
 *   the expected one and ends where h starts (two frames swapped), h is
 *   held, to be read after it (nothing lost).
 * - It starts before (a repeat, or a frame out of order): reported and
 *   skipped, its bytes having been given out already or lost before.
 * - Its number alone differs: reported, and h is decoded.
 * @return : 1 decode h now, 0 h was skipped or held (read on), or a fatal
 *           code. */
static int out_of_sequence(struct mtz_reader *r, struct fjob *j,
			   const struct mtz_frame_header *h, uint64_t off, size_t n)
{
	size_t total = MTZ_FRAME_HEADER_SIZE + (size_t)h->comp_size;
	if (h->out_offset > r->next_orig) {
		struct mtz_frame_header h2;
		ssize_t k = n < total ? (ssize_t)n : fill(r, total + MTZ_FRAME_HEADER_SIZE);
		if (k < 0)
			return (int)k;
		if ((size_t)k >= total + MTZ_FRAME_HEADER_SIZE &&
		    mtz_frame_header_parse(r->buf + r->pos + total, &h2) && !h2.end &&
		    h2.frame_no == r->next_frame && h2.out_offset == r->next_orig &&
		    h2.out_offset + h2.out_size == h->out_offset &&
		    h2.frame_no + 1 == h->frame_no &&
		    /* h2 whole, so that h is not left held by a truncation */
		    (k = fill(r, total + MTZ_FRAME_HEADER_SIZE + (size_t)h2.comp_size)) >= 0 &&
		    (size_t)k >= total + MTZ_FRAME_HEADER_SIZE + (size_t)h2.comp_size) {
			r->held.payload.len = 0;
			if (mt_buf_reserve(&r->held.payload, h->comp_size))
				return MTZ_ENOMEM;
			mt_buf_put(&r->held.payload, r->buf + r->pos + MTZ_FRAME_HEADER_SIZE,
				   h->comp_size);
			r->held.h = *h;
			r->held.off = off;
			r->held.active = 1;
			skip(r, total);
			pre_damage(r, j, "frame %u at offset %llu: out of order, frame %u follows "
				   "it at offset %llu: read after that one", h->frame_no,
				   (unsigned long long)off, h2.frame_no,
				   (unsigned long long)(off + total));
			/* h2 next, then h: the sequence goes on from there */
			return 0;
		}
		if (k < 0)
			return (int)k;
		uint32_t lost = h->frame_no > r->next_frame ? h->frame_no - r->next_frame : 0;
		r->st.frames_lost += lost;
		pre_damage(r, j, "frame %u at offset %llu: frame %u expected, original offset "
			   "%llu: %u frame%s missing (original bytes %llu..%llu lost)",
			   h->frame_no, (unsigned long long)off, r->next_frame,
			   (unsigned long long)r->next_orig, lost, lost == 1 ? "" : "s",
			   (unsigned long long)r->next_orig, (unsigned long long)h->out_offset);
		return 1;
	}
	if (h->out_offset < r->next_orig) {
		if (n < total) {	/* the truncation is reported by the caller */
			return 1;
		}
		r->st.frames_skipped++;
		r->st.bytes_lost += total;
		skip(r, total);
		pre_damage(r, j, "frame %u at offset %llu: frame %u expected, original offset "
			   "%llu: repeated or out of order (original bytes %llu..%llu, read or "
			   "reported lost already); frame skipped",
			   h->frame_no, (unsigned long long)off, r->next_frame,
			   (unsigned long long)r->next_orig, (unsigned long long)h->out_offset,
			   (unsigned long long)(h->out_offset + h->out_size));
		return 0;
	}
	pre_damage(r, j, "frame %u at offset %llu: numbered %u, frame %u expected (its "
		   "original offset is right: decoded)", h->frame_no, (unsigned long long)off,
		   h->frame_no, r->next_frame);
	return 1;
}

/* Reads the next frame (or the end) into job j, reporting damage met on the
 * way in j->pre.  @return : 0, or a fatal error code. */
static int read_job(struct mtz_reader *r, struct fjob *j)
{
	j->pre[0] = 0;
	j->pre_more = 0;
	j->kind = JOB_END;
	j->copy = 0;
	if (r->held.active) {	/* the first of two swapped frames */
		struct mt_buf t = j->payload;
		j->payload = r->held.payload;
		r->held.payload = t;
		r->held.active = 0;
		j->h = r->held.h;
		j->off = r->held.off;
		j->kind = JOB_FRAME;
		r->next_frame = j->h.frame_no + 1;
		r->next_orig = j->h.out_offset + j->h.out_size;
		return 0;
	}
	for (;;) {
		uint64_t off = at(r);
		ssize_t n = fill(r, MTZ_FRAME_HEADER_SIZE);
		if (n < 0)
			return (int)n;
		if (n == 0) {
			pre_damage(r, j, "truncated at offset %llu: no end marker after frame %u",
				   (unsigned long long)off, r->next_frame);
			return 0;
		}
		struct mtz_frame_header h;
		if (n < MTZ_FRAME_HEADER_SIZE || !mtz_frame_header_parse(r->buf + r->pos, &h)) {
			int found = resync(r);
			if (found < 0)
				return found;
			uint64_t skipped = at(r) - off;
			r->st.bytes_lost += skipped;
			if (!found) {
				r->st.frames_lost++;
				pre_damage(r, j, "frame %u at offset %llu: %s; no frame follows "
					   "(%llu bytes skipped, original bytes from %llu lost)",
					   r->next_frame, (unsigned long long)off,
					   n < MTZ_FRAME_HEADER_SIZE ? "truncated header"
								     : "damaged header",
					   (unsigned long long)skipped,
					   (unsigned long long)r->next_orig);
				return 0;
			}
			mtz_frame_header_parse(r->buf + r->pos, &h);
			uint32_t lost = h.frame_no > r->next_frame ? h.frame_no - r->next_frame : 0;
			r->st.frames_lost += lost;
			if (r->frame0_copy && !h.end && h.frame_no == 0 && r->next_frame == 0 &&
			    h.out_offset == 0) {
				pre_damage(r, j, "frame 0 at offset %llu: damaged header; skipped "
					   "%llu bytes to its copy at offset %llu (no frame lost)",
					   (unsigned long long)off, (unsigned long long)skipped,
					   (unsigned long long)at(r));
				continue;
			}
			pre_damage(r, j, "frame %u at offset %llu: damaged header; skipped %llu "
				   "bytes to frame %u at offset %llu (%u frame%s lost, original "
				   "bytes %llu..%llu)", r->next_frame, (unsigned long long)off,
				   (unsigned long long)skipped, h.frame_no,
				   (unsigned long long)at(r), lost, lost == 1 ? "" : "s",
				   (unsigned long long)r->next_orig,
				   (unsigned long long)h.out_offset);
			if (h.out_offset >= r->next_orig) {	/* else a repeat: checked below */
				r->next_frame = h.frame_no;
				r->next_orig = h.out_offset;
			}
			continue;
		}
		int copy = r->copy_expected && !h.end && h.frame_no == 0 && h.out_offset == 0;
		r->copy_expected = 0;
		if (h.end) {
			skip(r, MTZ_FRAME_HEADER_SIZE);
			if (h.frame_no != r->next_frame || h.out_offset != r->next_orig) {
				if (h.frame_no > r->next_frame)
					r->st.frames_lost += h.frame_no - r->next_frame;
				pre_damage(r, j, "end marker at offset %llu: %u frames and %llu "
					   "bytes written, %u frames and %llu bytes seen",
					   (unsigned long long)off, h.frame_no,
					   (unsigned long long)h.out_offset, r->next_frame,
					   (unsigned long long)r->next_orig);
			}
			return trailing(r, j, off);
		}
		size_t total = MTZ_FRAME_HEADER_SIZE + (size_t)h.comp_size;
		if ((n = fill(r, total)) < 0)
			return (int)n;
		if (!copy && (h.out_offset != r->next_orig || h.frame_no != r->next_frame)) {
			int rc = out_of_sequence(r, j, &h, off, (size_t)n);
			if (rc < 0)
				return rc;
			if (rc == 0)
				continue;	/* skipped, or held */
		}
		if (!copy) {
			r->next_frame = h.frame_no + 1;
			r->next_orig = h.out_offset + h.out_size;
			r->copy_expected = r->frame0_copy && h.frame_no == 0;
		}
		if ((size_t)n < total) {
			r->st.frames_lost++;
			r->st.bytes_lost += (uint64_t)n;
			skip(r, (size_t)n);
			pre_damage(r, j, "frame %u at offset %llu: truncated (%u payload bytes, "
				   "%zu present); original bytes %llu..%llu lost", h.frame_no,
				   (unsigned long long)off, h.comp_size,
				   (size_t)n - MTZ_FRAME_HEADER_SIZE,
				   (unsigned long long)h.out_offset,
				   (unsigned long long)(h.out_offset + h.out_size));
			return 0;
		}
		j->payload.len = 0;
		if (mt_buf_reserve(&j->payload, h.comp_size))
			return MTZ_ENOMEM;
		mt_buf_put(&j->payload, r->buf + r->pos + MTZ_FRAME_HEADER_SIZE, h.comp_size);
		skip(r, total);
		j->kind = JOB_FRAME;
		j->h = h;
		j->off = off;
		j->copy = copy;
		return 0;
	}
}

/* Reads ahead until every free slot holds a frame being decoded. */
static void top_up(struct mtz_reader *r)
{
	unsigned slots = (unsigned)r->threads + 1;
	while (!r->read_end && r->queued < slots) {
		struct fjob *j = &r->jobs[(r->head + r->queued) % slots];
		int rc = read_job(r, j);
		r->queued++;
		if (rc) {
			j->kind = JOB_FATAL;
			j->fatal = rc;
		}
		if (j->kind != JOB_FRAME) {
			r->read_end = 1;
			break;
		}
		j->ready = 0;
		j->finished = 0;
		j->handed = 0;
		j->taken = 0;
		j->abandon = 0;
		j->threaded = r->threads > 0;
		if (!j->threaded || pthread_create(&j->thread, NULL, job_run, j)) {
			j->threaded = 0;
			job_run(j);	/* no threads (or none to be had): here */
		} else {
			j->running = 1;
		}
	}
}

/* Lets go of a frame read ahead that is not needed (a copy of frame 0
 * that decoded). */
static void job_discard(struct fjob *j)
{
	if (!j->running)
		return;
	pthread_mutex_lock(&j->mu);
	j->abandon = 1;
	pthread_cond_signal(&j->cv_ahead);
	pthread_mutex_unlock(&j->mu);
	pthread_join(j->thread, NULL);
	j->running = 0;
}

/* Moves to the next frame, which may still be decoding.
 * @return : 1 (r->cur holds it), 0 at the end, or a fatal error code. */
static int next_frame(struct mtz_reader *r)
{
	unsigned slots = (unsigned)r->threads + 1;
	r->cur = NULL;
	top_up(r);
	if (!r->queued)
		return 0;
	struct fjob *j = &r->jobs[r->head];
	r->head = (r->head + 1) % slots;
	r->queued--;
	for (char *m = j->pre; *m;) {
		char *nl = strchr(m, '\n');
		size_t len = nl ? (size_t)(nl - m) : strlen(m);
		snprintf(r->err, sizeof(r->err), "%.*s", (int)len, m);
		r->damage++;
		if (r->warn)
			r->warn(r->warn_ctx, r->err);
		m += len + (nl != NULL);
	}
	if (j->pre_more) {
		snprintf(r->err, sizeof(r->err), "'%s': %u more damage reports like the above",
			 r->name, j->pre_more);
		r->damage += j->pre_more;
		if (r->warn)
			r->warn(r->warn_ctx, r->err);
	}
	if (j->kind == JOB_FATAL) {
		if (j->fatal == MTZ_ENOMEM)
			snprintf(r->err, sizeof(r->err), "out of memory");
		return j->fatal;
	}
	if (r->frame0 == 2 && !(j->kind == JOB_FRAME && j->copy)) {
		r->frame0 = 3;		/* damaged, and no copy came */
		r->st.frames_lost++;
		damaged(r, "frame 0: its copy is missing (original bytes %llu..%llu lost)",
			(unsigned long long)r->frame0_handed,
			(unsigned long long)r->frame0_size);
	}
	if (j->kind == JOB_END)
		return 0;
	if (j->copy) {
		if (r->frame0 != 2) {	/* frame 0 was decoded: not needed */
			job_discard(j);
			if (j->cause)	/* nothing lost, but the file is damaged */
				r->st.bytes_lost += MTZ_FRAME_HEADER_SIZE + (uint64_t)j->h.comp_size;
			if (j->cause)
				damaged(r, "frame 0's copy at offset %llu: %s (not needed: frame 0 "
					"was read)", (unsigned long long)j->off, j->cause);
			return next_frame(r);
		}
		r->frame0 = 3;
		pthread_mutex_lock(&j->mu);	/* what frame 0 handed out, not again */
		j->handed = r->frame0_handed < j->h.out_size ? r->frame0_handed : j->h.out_size;
		if (j->taken < j->handed)
			j->taken = j->handed;
		pthread_mutex_unlock(&j->mu);
	}
	r->cur = j;
	return 1;
}

/* The current frame's worker is done and every byte it handed out was taken:
 * counts the frame, or reports it as damaged.  @return : 0 or a fatal code. */
static int end_frame(struct mtz_reader *r)
{
	struct fjob *j = r->cur;
	r->cur = NULL;
	if (j->running) {
		pthread_join(j->thread, NULL);
		j->running = 0;
	}
	r->st.bytes_out += j->handed;
	if (j->fatal) {
		if (j->fatal == MTZ_ENOMEM)
			snprintf(r->err, sizeof(r->err), "out of memory");
		return j->fatal;
	}
	if (j->cause) {
		r->st.bytes_lost += MTZ_FRAME_HEADER_SIZE + (uint64_t)j->h.comp_size;
		uint64_t from = j->h.out_offset + j->handed;
		uint64_t to = j->h.out_offset + j->h.out_size;
		if (r->frame0_copy && j->h.frame_no == 0 && !j->copy && r->frame0 == 0) {
			r->frame0 = 2;	/* its copy, next, is used */
			r->frame0_handed = j->handed;
			r->frame0_size = j->h.out_size;
			damaged(r, "frame 0 at offset %llu: %s; %s skipped, its copy is read "
				"instead", (unsigned long long)j->off, j->cause,
				j->handed ? "rest of the frame" : "frame");
			return 0;
		}
		r->st.frames_lost++;
		damaged(r, "frame %u%s at offset %llu: %s; %s skipped (original bytes %llu..%llu "
			"lost)", j->h.frame_no, j->copy ? " (its copy)" : "",
			(unsigned long long)j->off, j->cause,
			j->handed ? "rest of the frame" : "frame", (unsigned long long)from,
			(unsigned long long)to);
		return 0;
	}
	if (j->h.frame_no == 0 && !j->copy && r->frame0 == 0)
		r->frame0 = 1;
	r->st.frames++;
	r->st.records += j->records;
	r->st.samples += j->samples;
	return 0;
}

/* Where the consumer may take j's bytes up to now: all that is ready once
 * the worker is done; before, the ready bytes up to a multiple of
 * HANDOUT_ALIGN in the original stream, so that a writer's pieces end on
 * page boundaries of the output (a write(2) with a partial page at each end
 * costs more).  Called with j->mu held. */
static size_t job_takeable(const struct fjob *j)
{
	if (j->finished)
		return j->ready;
	uint64_t end = (j->h.out_offset + j->ready) & ~(uint64_t)(HANDOUT_ALIGN - 1);
	return end > j->h.out_offset + j->handed ? (size_t)(end - j->h.out_offset) : j->handed;
}

/* Waits until the consumer can take more of j or j's worker is done,
 * populating j's output buffer meanwhile if some is left to do.
 * @return : the end of what may be taken (j->handed when nothing). */
static size_t job_wait(struct fjob *j)
{
	pthread_mutex_lock(&j->mu);
	size_t end;
	while ((end = job_takeable(j)) == j->handed && !j->finished) {
		if (populate_step(j))	/* rather than idle */
			continue;
		j->waiting = 1;
		pthread_cond_wait(&j->cv, &j->mu);
		j->waiting = 0;
	}
	j->taken = end;
	if (j->held)
		pthread_cond_signal(&j->cv_ahead);
	pthread_mutex_unlock(&j->mu);
	return end;
}

ssize_t mtz_reader_chunk(struct mtz_reader *r, const void **data)
{
	for (;;) {
		if (r->pend) {		/* left over by mtz_reader_read */
			size_t n = r->pend;
			*data = r->pend_at;
			r->pend = 0;
			return (ssize_t)n;
		}
		struct fjob *j = r->cur;
		if (j) {
			size_t end = job_wait(j);
			if (end > j->handed) {
				*data = j->out.data + j->handed;
				size_t n = end - j->handed;
				j->handed = end;
				return (ssize_t)n;
			}
			int rc = end_frame(r);
			if (rc < 0) {
				r->done = 1;
				errno = rc == MTZ_ENOMEM ? ENOMEM : EIO;
				return -1;
			}
			continue;
		}
		if (r->done)
			return 0;
		int rc = next_frame(r);
		if (rc < 0) {
			r->done = 1;
			errno = rc == MTZ_ENOMEM ? ENOMEM : EIO;
			return -1;
		}
		if (rc == 0)
			r->done = 1;
	}
}

ssize_t mtz_reader_read(void *ctx, void *buf, size_t len)
{
	struct mtz_reader *r = ctx;
	const void *p;
	ssize_t n = mtz_reader_chunk(r, &p);
	if (n <= 0)
		return n;
	if ((size_t)n > len) {		/* the rest on the next call */
		r->pend = (size_t)n - len;
		r->pend_at = (const uint8_t *)p + len;
		n = (ssize_t)len;
	}
	memcpy(buf, p, (size_t)n);
	return n;
}
