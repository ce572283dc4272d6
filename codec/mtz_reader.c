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
#include <unistd.h>
#include <zstd.h>

#include "codec/mtz_buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_frame.h"
#include "codec/mtz_hash.h"

#define MAX_JOBS 9

/* A frame read ahead, decoded by a worker, handed out in order; or the end
 * (with a last damage message), or a fatal error. */
struct fjob {
	enum { JOB_FRAME, JOB_END, JOB_FATAL } kind;
	char pre[512];			/* damage met reading up to it ("" none) */
	struct mtz_frame_header h;
	uint64_t off;			/* file offset of its header */
	struct mtz_buf payload;
	/* decoding, in a worker */
	struct mtz_buf raw, out;
	ZSTD_DCtx *dctx;
	struct mtz_delta_dec *dec;
	int nsec;			/* sections per frame: 5 in version 1 */
	const char *cause;		/* NULL: decoded */
	char why[160];
	int fatal;			/* MTZ_ENOMEM, MTZ_EIO */
	uint64_t records, samples;
	pthread_t thread;
	int running;
};

struct mtz_reader {
	mt_perf_read_fn read;
	void *read_ctx;
	int fd, own_fd;
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
	struct fjob *cur;
	size_t out_pos;
	int read_end;			/* the end job was made */
	uint32_t next_frame;		/* number the next frame should carry */
	uint64_t next_orig;		/* original offset it should start at */
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
	if (used + 2 >= sizeof(j->pre))
		return;
	if (used)
		j->pre[used++] = '\n';
	va_list ap;
	int k = snprintf(j->pre + used, sizeof(j->pre) - used, "'%s': ", r->name);
	if (k < 0 || (size_t)k >= sizeof(j->pre) - used)
		return;
	va_start(ap, fmt);
	vsnprintf(j->pre + used + k, sizeof(j->pre) - used - (size_t)k, fmt, ap);
	va_end(ap);
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
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		r->jobs[i].nsec = version < 2 ? MTZ_NSEC_V1 : MTZ_NSEC;
		mtz_delta_dec_set_version(r->jobs[i].dec, version);
	}
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

int mtz_reader_open(struct mtz_reader **out, const char *path)
{
	*out = NULL;
	if (strcmp(path, "-") == 0)
		return mtz_reader_fdopen(out, 0, "-");
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return MTZ_EIO;
	int rc = mtz_reader_fdopen(out, fd, path);
	if (rc) {
		int e = errno;
		close(fd);
		errno = e;
		return rc;
	}
	(*out)->own_fd = 1;
	return 0;
}

void mtz_reader_free(struct mtz_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0) {
		if (r->own_fd)
			close(r->fd);
		free(r->read_ctx);
	}
	free(r->buf);
	for (unsigned i = 0; i < MAX_JOBS; i++) {
		struct fjob *j = &r->jobs[i];
		if (j->running)
			pthread_join(j->thread, NULL);
		mtz_buf_release(&j->payload);
		mtz_buf_release(&j->raw);
		mtz_buf_release(&j->out);
		ZSTD_freeDCtx(j->dctx);
		mtz_delta_dec_free(j->dec);
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

/* Decodes a frame's entries into r->out.  @return : 0 or a code, with *where
 * the offset of the failing entry in the ops section. */
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

	r->out.len = 0;
	mtz_delta_dec_reset(r->dec);
	if (mtz_buf_reserve(&r->out, h->out_size ? h->out_size : 1))
		return MTZ_ENOMEM;
	size_t *op = &c.pos[MTZ_SEC_OPS];
	while (*op < c.len[MTZ_SEC_OPS]) {
		*where = *op;
		uint8_t tag = c.p[MTZ_SEC_OPS][(*op)++];
		if (tag == MTZ_TAG_PASS || tag == MTZ_TAG_BLOB) {
			if (c.len[MTZ_SEC_OPS] - *op < 4)
				return MTZ_ETRUNC;
			uint32_t len = mtz_ld32(c.p[MTZ_SEC_OPS] + *op);
			*op += 4;
			if (c.len[MTZ_SEC_PASS] - c.pos[MTZ_SEC_PASS] < len)
				return MTZ_ETRUNC;
			if (len > h->out_size - r->out.len)
				return MTZ_EFORMAT;
			mtz_buf_put(&r->out, c.p[MTZ_SEC_PASS] + c.pos[MTZ_SEC_PASS], len);
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
		lens[i] = mtz_ld32(payload + 8 * i);
		uint32_t z = mtz_ld32(payload + 8 * i + 4);
		if (!lens[i] != !z)
			return "section table inconsistent";
		raw += lens[i];
		comp += z;
	}
	if (raw != h->raw_size || comp != h->comp_size)
		return "section sizes differ from the frame header";
	size_t in = table, outp = 0;
	for (int i = 0; i < r->nsec; i++) {
		uint32_t z = mtz_ld32(payload + 8 * i + 4);
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

/* Checks, decompresses and decodes a frame (in a worker thread). */
static void *job_run(void *arg)
{
	struct fjob *j = arg;
	const struct mtz_frame_header *h = &j->h;
	const uint8_t *payload = j->payload.data;
	uint32_t lens[MTZ_NSEC];
	size_t where = 0;
	j->cause = NULL;
	j->fatal = 0;
	j->out.len = 0;
	if (mtz_hash(payload, h->comp_size) != h->payload_hash) {
		j->cause = "checksum mismatch";
		return NULL;
	}
	if (mtz_buf_reserve(&j->raw, h->raw_size ? h->raw_size : 1)) {
		j->fatal = MTZ_ENOMEM;
		return NULL;
	}
	j->cause = unpack(j, h, payload, lens, j->why, sizeof(j->why));
	if (j->cause)
		return NULL;
	int rc = decode_entries(j, h, lens, &where);
	if (rc == MTZ_ENOMEM) {
		j->fatal = rc;
	} else if (rc) {
		snprintf(j->why, sizeof(j->why), "entry at ops +%zu: %s", where, mtz_strerror(rc));
		j->cause = j->why;
	}
	return NULL;
}

/* Reads the next frame (or the end) into job j, reporting damage met on the
 * way in j->pre.  @return : 0, or a fatal error code. */
static int read_job(struct mtz_reader *r, struct fjob *j)
{
	j->pre[0] = 0;
	j->kind = JOB_END;
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
			pre_damage(r, j, "frame %u at offset %llu: damaged header; skipped %llu "
				   "bytes to frame %u at offset %llu (%u frame%s lost, original "
				   "bytes %llu..%llu)", r->next_frame, (unsigned long long)off,
				   (unsigned long long)skipped, h.frame_no,
				   (unsigned long long)at(r), lost, lost == 1 ? "" : "s",
				   (unsigned long long)r->next_orig,
				   (unsigned long long)h.out_offset);
			r->next_frame = h.frame_no;
			r->next_orig = h.out_offset;
			continue;
		}
		if (h.end) {
			skip(r, MTZ_FRAME_HEADER_SIZE);
			if (h.frame_no != r->next_frame || h.out_offset != r->next_orig)
				pre_damage(r, j, "end marker at offset %llu: %u frames and %llu "
					   "bytes written, %u frames and %llu bytes seen",
					   (unsigned long long)off, h.frame_no,
					   (unsigned long long)h.out_offset, r->next_frame,
					   (unsigned long long)r->next_orig);
			return 0;
		}
		r->next_frame = h.frame_no + 1;
		r->next_orig = h.out_offset + h.out_size;
		size_t total = MTZ_FRAME_HEADER_SIZE + (size_t)h.comp_size;
		if ((n = fill(r, total)) < 0)
			return (int)n;
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
		if (mtz_buf_reserve(&j->payload, h.comp_size))
			return MTZ_ENOMEM;
		mtz_buf_put(&j->payload, r->buf + r->pos + MTZ_FRAME_HEADER_SIZE, h.comp_size);
		skip(r, total);
		j->kind = JOB_FRAME;
		j->h = h;
		j->off = off;
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
		if (!r->threads || pthread_create(&j->thread, NULL, job_run, j))
			job_run(j);	/* no threads (or none to be had): here */
		else
			j->running = 1;
	}
}

/* Moves to the next frame that decodes.
 * @return : 1 (r->cur holds it), 0 at the end, or a fatal error code. */
static int next_frame(struct mtz_reader *r)
{
	unsigned slots = (unsigned)r->threads + 1;
	for (;;) {
		r->cur = NULL;
		top_up(r);
		if (!r->queued)
			return 0;
		struct fjob *j = &r->jobs[r->head];
		r->head = (r->head + 1) % slots;
		r->queued--;
		if (j->running) {
			pthread_join(j->thread, NULL);
			j->running = 0;
		}
		for (char *m = j->pre; *m;) {
			char *nl = strchr(m, '\n');
			size_t len = nl ? (size_t)(nl - m) : strlen(m);
			snprintf(r->err, sizeof(r->err), "%.*s", (int)len, m);
			r->damage++;
			if (r->warn)
				r->warn(r->warn_ctx, r->err);
			m += len + (nl != NULL);
		}
		if (j->kind == JOB_FATAL || j->fatal) {
			if (j->fatal == MTZ_ENOMEM)
				snprintf(r->err, sizeof(r->err), "out of memory");
			return j->fatal;
		}
		if (j->kind == JOB_END)
			return 0;
		if (j->cause) {
			r->st.frames_lost++;
			r->st.bytes_lost += MTZ_FRAME_HEADER_SIZE + (uint64_t)j->h.comp_size;
			damaged(r, "frame %u at offset %llu: %s; frame skipped (original bytes "
				"%llu..%llu lost)", j->h.frame_no, (unsigned long long)j->off, j->cause,
				(unsigned long long)j->h.out_offset,
				(unsigned long long)(j->h.out_offset + j->h.out_size));
			continue;
		}
		r->st.frames++;
		r->st.bytes_out += j->out.len;
		r->st.records += j->records;
		r->st.samples += j->samples;
		r->cur = j;
		r->out_pos = 0;
		return 1;
	}
}

ssize_t mtz_reader_chunk(struct mtz_reader *r, const void **data)
{
	while (!r->cur || r->out_pos == r->cur->out.len) {
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
	size_t n = r->cur->out.len - r->out_pos;
	*data = r->cur->out.data + r->out_pos;
	r->out_pos += n;
	return (ssize_t)n;
}

ssize_t mtz_reader_read(void *ctx, void *buf, size_t len)
{
	struct mtz_reader *r = ctx;
	if (!r->cur || r->out_pos == r->cur->out.len) {
		const void *p;
		ssize_t n = mtz_reader_chunk(r, &p);
		if (n <= 0)
			return n;
		r->out_pos -= (size_t)n;	/* hand it out below, len at a time */
	}
	size_t n = r->cur->out.len - r->out_pos;
	if (n > len)
		n = len;
	memcpy(buf, r->cur->out.data + r->out_pos, n);
	r->out_pos += n;
	return (ssize_t)n;
}
