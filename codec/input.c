/* codec/input.h: opening and sniffing an input, then reading it through the
 * reader its first bytes call for. */
#include "codec/input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec/perf_internal.h"
#include "common/buf.h"

#define TAIL_MAX ((uint64_t)64 << 20)

struct mt_input {
	int fd;
	int regular, rereadable;
	enum mt_file_kind kind;
	const char *name;
	uint8_t head[MT_FILE_KIND_BYTES];	/* the sniffed bytes, replayed first */
	size_t nhead, pos;
	uint64_t done;			/* bytes read from fd (atomic) */
	struct mtz_reader *mtz;
	struct mt_perf_reader *reader;
	/* An .mtz's first decoded bytes: a perf.data header says where the
	 * feature sections are. */
	uint8_t decoded[MT_PERF_FILE_HEADER_SIZE];
	size_t ndecoded;
	char err[512];
};

int mt_input_open(struct mt_input **out, const char *path)
{
	int is_stdin = strcmp(path, "-") == 0;
	struct mt_input *in = calloc(1, sizeof(*in));
	*out = NULL;
	if (!in)
		return MT_PERF_ENOMEM;
	in->name = is_stdin ? "<stdin>" : path;
	in->fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	*out = in;
	if (in->fd < 0) {
		int e = errno;
		snprintf(in->err, sizeof(in->err), "cannot open '%s': %s", path, strerror(e));
		errno = e;
		return MT_PERF_EIO;
	}
	while (in->nhead < sizeof(in->head)) {
		ssize_t r = read(in->fd, in->head + in->nhead, sizeof(in->head) - in->nhead);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			snprintf(in->err, sizeof(in->err), "cannot read '%s': %s", in->name,
				 strerror(e));
			errno = e;
			return MT_PERF_EIO;
		}
		if (r == 0)
			break;
		in->nhead += (size_t)r;
	}
	struct stat st;
	in->regular = fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode);
	in->kind = mt_file_kind(in->head, in->nhead);
	return 0;
}

void mt_input_free(struct mt_input *in)
{
	if (!in)
		return;
	mt_perf_reader_free(in->reader);
	mtz_reader_free(in->mtz);
	if (in->fd > 0)
		close(in->fd);
	free(in);
}

enum mt_file_kind mt_input_kind(const struct mt_input *in) { return in->kind; }
const char *mt_input_name(const struct mt_input *in) { return in->name; }
int mt_input_fd(const struct mt_input *in) { return in->fd; }
int mt_input_is_regular(const struct mt_input *in) { return in->regular; }
int mt_input_rereadable(const struct mt_input *in) { return in->rereadable; }
struct mtz_reader *mt_input_mtz(const struct mt_input *in) { return in->mtz; }
const char *mt_input_error(const struct mt_input *in) { return in->err; }

uint64_t mt_input_bytes_read(const struct mt_input *in)
{
	return __atomic_load_n(&in->done, __ATOMIC_RELAXED);
}

/* The sniffed bytes again, then the file. */
static ssize_t replay_read(void *ctx, void *buf, size_t len)
{
	struct mt_input *in = ctx;
	if (in->pos < in->nhead) {
		size_t k = in->nhead - in->pos < len ? in->nhead - in->pos : len;
		memcpy(buf, in->head + in->pos, k);
		in->pos += k;
		return (ssize_t)k;
	}
	for (;;) {
		ssize_t r = read(in->fd, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		/* The .mtz reader may read from its worker threads. */
		if (r > 0)
			__atomic_fetch_add(&in->done, (uint64_t)r, __ATOMIC_RELAXED);
		return r;
	}
}

/* The decoder's buffers, lent to the perf reader (no copy of the stream),
 * the first bytes kept. */
static ssize_t mtz_chunk(void *ctx, const void **data)
{
	struct mt_input *in = ctx;
	ssize_t k = mtz_reader_chunk(in->mtz, data);
	if (k > 0 && in->ndecoded < sizeof(in->decoded)) {
		size_t room = sizeof(in->decoded) - in->ndecoded;
		size_t c = room < (size_t)k ? room : (size_t)k;
		memcpy(in->decoded + in->ndecoded, *data, c);
		in->ndecoded += c;
	}
	return k;
}

int mt_input_perf_reader(struct mt_input *in, const struct mt_input_mtz_opts *mtz,
			 struct mt_perf_reader **out)
{
	int rc;
	*out = NULL;
	if (in->reader) {
		*out = in->reader;
		return 0;
	}
	if (in->kind == MT_FILE_MTZ) {
		rc = mtz_reader_new(&in->mtz, replay_read, in, in->name);
		if (rc != 0) {
			snprintf(in->err, sizeof(in->err), "'%s': %s", in->name, mtz_strerror(rc));
			return rc == MTZ_ENOMEM ? MT_PERF_ENOMEM : MT_PERF_EFORMAT;
		}
		if (mtz) {
			mtz_reader_set_threads(in->mtz, mtz->threads);
			mtz_reader_set_warn(in->mtz, mtz->warn, mtz->warn_ctx);
		}
		rc = mt_perf_reader_new_chunked(&in->reader, mtz_chunk, in, in->name);
	} else if (in->fd != 0 && lseek(in->fd, 0, SEEK_SET) == 0) {
		/* A regular file: the reader maps it (no copy through read). */
		rc = mt_perf_reader_fdopen(&in->reader, in->fd, in->name);
		in->rereadable = in->regular;
	} else {
		rc = mt_perf_reader_new(&in->reader, replay_read, in, in->name);
	}
	if (rc == 0)	/* perf record -z: the records inside COMPRESSED ones */
		rc = mt_perf_reader_unpack(in->reader);
	if (rc != 0) {
		const char *msg = in->reader ? mt_perf_reader_error(in->reader)
					     : mt_perf_reader_error(NULL);	/* the failed open's */
		if (in->mtz && mtz_reader_damage(in->mtz) && !in->ndecoded &&
		    rc != MT_PERF_ENOMEM && rc != MT_PERF_EIO)
			snprintf(in->err, sizeof(in->err), "'%s': no frame could be decoded, as "
				 "reported above", in->name);
		else if (in->mtz && mtz_reader_damage(in->mtz) && rc != MT_PERF_ENOMEM &&
			 rc != MT_PERF_EIO)
			/* the frames that follow are intact, but their records
			 * cannot be parsed without the attrs */
			snprintf(in->err, sizeof(in->err), "'%s': the start of the perf stream (frame 0: "
				 "its header and attrs) is lost, as reported above: the frames after "
				 "it cannot be parsed without it", in->name);
		else
			snprintf(in->err, sizeof(in->err), "'%s': %s", in->name,
				 *msg ? msg : mt_perf_strerror(rc));
		mt_perf_reader_free(in->reader);
		in->reader = NULL;
		return rc;
	}
	*out = in->reader;
	return 0;
}

static int fd_pread(void *ctx, void *buf, uint64_t n, uint64_t off)
{
	const int *fd = ctx;
	return pread(*fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

/* Bytes of a file from tail_off on, held in memory. */
struct tail {
	struct mt_buf b;
	uint64_t off;
};

static int tail_pread(void *ctx, void *buf, uint64_t n, uint64_t off)
{
	const struct tail *t = ctx;
	if (off < t->off || off - t->off > t->b.len || n > t->b.len - (off - t->off))
		return -1;
	memcpy(buf, t->b.data + (off - t->off), n);
	return 0;
}

/* The decoded bytes of an .mtz file from original offset want to the end,
 * through a second reader positioned by mtz_reader_seek (at most TAIL_MAX
 * bytes).  @return : 0, MT_PERF_EFORMAT or MT_PERF_ENOMEM. */
static int mtz_tail(struct mt_input *in, uint64_t want, struct tail *t)
{
	const char *path = in->fd == 0 ? "/proc/self/fd/0" : in->name;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = MT_PERF_EFORMAT;
	struct mtz_reader *m = NULL;
	uint64_t start;
	t->off = want;
	if (fd < 0 || mtz_reader_fdopen(&m, fd, in->name) != 0)
		goto out;
	mtz_reader_set_threads(m, 0);
	if (mtz_reader_seek(m, want, &start) != 0)
		goto out;
	for (uint64_t pos = start;;) {
		const void *data;
		ssize_t k = mtz_reader_chunk(m, &data);
		if (k < 0)
			goto out;
		if (k == 0)
			break;
		const uint8_t *q = data;
		uint64_t n = (uint64_t)k;
		if (pos < want) {	/* before the feature sections */
			uint64_t skip = want - pos < n ? want - pos : n;
			q += skip;
			n -= skip;
			pos += skip;
		}
		if (n > TAIL_MAX - t->b.len)
			goto out;
		if (mt_buf_reserve(&t->b, (size_t)n) != 0) {
			rc = MT_PERF_ENOMEM;
			goto out;
		}
		mt_buf_put(&t->b, q, (size_t)n);
		pos += n;
	}
	if (t->b.len != 0 && !mtz_reader_damage(m))
		rc = 0;
out:
	mtz_reader_free(m);
	if (fd >= 0)
		close(fd);
	return rc;
}

int mt_input_features(struct mt_input *in, struct mt_perf_features **out)
{
	*out = NULL;
	if (!in->regular)
		return 0;
	if (in->kind != MT_FILE_MTZ) {
		uint8_t hdr[MT_PERF_FILE_HEADER_SIZE];
		if (fd_pread(&in->fd, hdr, sizeof(hdr), 0) != 0)
			return 0;
		int rc = mt_perf_features_read(out, hdr, fd_pread, &in->fd);
		return rc == MT_PERF_EMAGIC ? 0 : rc;
	}
	uint64_t want;
	if (in->ndecoded < sizeof(in->decoded) ||
	    mt_perf_features_offset(in->decoded, &want) != 0)
		return 0;	/* a pipe stream: names come with it */
	struct tail t = { 0 };
	int rc = mtz_tail(in, want, &t);
	if (rc == 0)
		rc = mt_perf_features_read(out, in->decoded, tail_pread, &t);
	mt_buf_release(&t.b);
	return rc == MT_PERF_EMAGIC ? 0 : rc;
}
