/* Reading perf pipe-mode streams and perf.data files as a sequence of items
 * (blobs and records) whose bytes concatenate to the input.  Constant memory:
 * one buffer holds the current record or blob chunk. */
#include "codec/perf_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define BUF_CAP (2 * 65536 + 4096)	/* a record (< 64 KiB) plus a blob chunk */
#define PREDATA_MAX (16u << 20)		/* non-seekable file: bytes before data kept */
#define FEATURE_MAX (16u << 20)		/* largest EVENT_DESC section read */
#define MAX_EVSELS 65536
#define MAX_IDS (1u << 24)

enum state {
	ST_START,	/* the header blob is next */
	ST_PREDATA,	/* file mode, non-seekable: blob from the kept copy */
	ST_BLOB,	/* blob_left bytes from the input, then blob_then */
	ST_RECORDS,
	ST_UNPACKED,	/* records from the last COMPRESSED record, then ST_RECORDS */
	ST_TAIL,	/* file mode: everything after the data section */
	ST_DONE,
};

struct mt_perf_reader {
	mt_perf_read_fn read;
	mt_perf_chunk_fn chunk;	/* instead of read: bytes lent, not copied */
	void *ctx;
	int fd;			/* -1 when reading through a function */
	int own_fd;
	int seekable;
	off_t base;		/* fd offset of the input's byte 0 */
	char *name;
	enum mt_perf_format format;

	uint8_t *buf;		/* own (BUF_CAP bytes), or into map or a chunk */
	size_t lo, hi;		/* unread bytes are buf[lo..hi) */
	uint8_t *own;		/* malloc'ed: the buffer, or a record's aligned copy */
	void *map;		/* a regular file mapped whole, else NULL */
	size_t map_len;
	uint64_t pos;		/* input offset of buf[lo] */
	int eof;
	const uint8_t *chunk_rest;	/* a lent chunk's bytes not yet in buf */
	size_t chunk_left;

	uint64_t header_size;	/* pipe header or file header */
	uint64_t data_offset, data_end;	/* file mode */
	uint8_t *predata;	/* non-seekable file: bytes [0, data_offset) */
	uint64_t predata_len;

	enum state state, blob_then;
	uint64_t blob_left;
	const char *blob_what;	/* names the blob in messages */
	int fatal;		/* sticky framing error */

	struct mt_perf_unpack *unpack;	/* NULL: COMPRESSED records as they are */
	uint64_t unpacked_from;		/* offset of the COMPRESSED record */
	uint32_t unpacked_type;		/* and its type (COMPRESSED or COMPRESSED2) */

	struct mt_perf_evsel_priv **evsels;
	size_t nr_evsels, cap_evsels;
	struct mt_perf_id_map ids;

	char err[512];
	char warning[256];	/* mt_perf_reader_warning */
};

static __thread char open_err[512];

/* ---- messages ---------------------------------------------------------- */

__attribute__((format(printf, 3, 4)))
static int fail(struct mt_perf_reader *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	return code;
}

/* A framing error: the reader cannot go on. */
__attribute__((format(printf, 3, 4)))
static int fatal(struct mt_perf_reader *r, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err, sizeof(r->err), fmt, ap);
	va_end(ap);
	r->fatal = code;
	return code;
}

static uint64_t get64(const void *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static uint32_t get32(const void *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* ---- input -------------------------------------------------------------- */

static ssize_t fd_read(void *ctx, void *buf, size_t len)
{
	return read(*(int *)ctx, buf, len);
}

/* A regular file is read from a mapping of it, not copied through read(2):
 * reading was much of mt-unwind's main thread.  Like perf's own reader
 * this trusts the file not to be truncated while it is read (that would be
 * SIGBUS); a file that grows is read up to its size at open.  Without a
 * mapping (mmap fails, an empty file) the reader reads as for a pipe. */
static void map_file(struct mt_perf_reader *r, uint64_t size)
{
	if (size <= (uint64_t)r->base || size > SIZE_MAX)
		return;
	void *m = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, r->fd, 0);
	if (m == MAP_FAILED)
		return;
	madvise(m, (size_t)size, MADV_SEQUENTIAL);
	r->map = m;
	r->map_len = (size_t)size;
	r->buf = (uint8_t *)m + r->base;
	r->lo = 0;
	r->hi = (size_t)(size - (uint64_t)r->base);
	r->eof = 1;
}

static int read_failed(struct mt_perf_reader *r)
{
	return fatal(r, MT_PERF_EIO, "read failed at offset %llu: %s",
		     (unsigned long long)(r->pos + (r->hi - r->lo)), strerror(errno));
}

/* Borrow the next chunk into chunk_rest.  @return : 1, 0 at the end of
 * input (eof set), or MT_PERF_EIO. */
static int next_chunk(struct mt_perf_reader *r)
{
	for (;;) {
		const void *p;
		ssize_t n = r->chunk(r->ctx, &p);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return read_failed(r);
		if (n == 0) {
			r->eof = 1;
			return 0;
		}
		r->chunk_rest = p;
		r->chunk_left = (size_t)n;
		return 1;
	}
}

/* fill() from lent chunks: buf is the chunk itself while whole records lie
 * in it; only a record cut by a chunk's end is put together in own. */
static int fill_chunks(struct mt_perf_reader *r, size_t need)
{
	int got;
	while (r->hi - r->lo < need && !r->eof) {
		if (r->lo == r->hi) {	/* lend on: no copy */
			if (!r->chunk_left && (got = next_chunk(r)) <= 0)
				return got;
			r->buf = (uint8_t *)r->chunk_rest;
			r->lo = 0;
			r->hi = r->chunk_left;
			r->chunk_left = 0;
			continue;
		}
		if (r->buf != r->own || BUF_CAP - r->lo < need) {
			memmove(r->own, r->buf + r->lo, r->hi - r->lo);
			r->hi -= r->lo;
			r->lo = 0;
			r->buf = r->own;
		}
		/* only now: the next call may take the last chunk back */
		if (!r->chunk_left && (got = next_chunk(r)) <= 0)
			return got;
		size_t k = need - (r->hi - r->lo);
		if (k > r->chunk_left)
			k = r->chunk_left;
		memcpy(r->own + r->hi, r->chunk_rest, k);
		r->hi += k;
		r->chunk_rest += k;
		r->chunk_left -= k;
	}
	return 0;
}

/* Make at least need bytes (need <= BUF_CAP) available at buf[lo], fewer only
 * at the end of input.  @return : 0 or MT_PERF_EIO. */
static int fill(struct mt_perf_reader *r, size_t need)
{
	if (r->chunk)
		return fill_chunks(r, need);
	while (r->hi - r->lo < need && !r->eof) {
		ssize_t n;

		if (BUF_CAP - r->lo < need) {
			memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
			r->hi -= r->lo;
			r->lo = 0;
		}
		n = r->read(r->ctx, r->buf + r->hi, BUF_CAP - r->hi);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return read_failed(r);
		}
		if (n == 0)
			r->eof = 1;
		r->hi += (size_t)n;
	}
	return 0;
}

static size_t avail(const struct mt_perf_reader *r)
{
	return r->hi - r->lo;
}

static void consume(struct mt_perf_reader *r, size_t n)
{
	r->lo += n;
	r->pos += n;
}

/* Random access to a seekable input.  @return : 0, or a negative code. */
static int pread_at(struct mt_perf_reader *r, void *dst, size_t len, uint64_t off,
		    const char *what)
{
	size_t done = 0;

	if (r->predata) {
		if (off > r->predata_len || len > r->predata_len - off)
			return fatal(r, MT_PERF_EFORMAT,
				     "%s at offset %llu (%zu bytes) lies outside the %llu bytes "
				     "before the data section, which is all a non-seekable "
				     "input offers", what, (unsigned long long)off, len,
				     (unsigned long long)r->predata_len);
		memcpy(dst, r->predata + off, len);
		return 0;
	}
	/* an offset no file reaches (pread would refuse it, EINVAL) is the
	 * data's fault, as one past this file's end is */
	if (off > (uint64_t)INT64_MAX - r->base || len > (uint64_t)INT64_MAX - r->base - off)
		return fatal(r, MT_PERF_EFORMAT,
			     "%s at offset %llu (%zu bytes) lies past the end of the file",
			     what, (unsigned long long)off, len);
	while (done < len) {
		ssize_t n = pread(r->fd, (char *)dst + done, len - done,
				  (off_t)(r->base + off + done));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fatal(r, MT_PERF_EIO, "cannot read %s at offset %llu: %s", what,
				     (unsigned long long)off, strerror(errno));
		}
		if (n == 0)
			return fatal(r, MT_PERF_ETRUNC,
				     "%s at offset %llu (%zu bytes) lies past the end of the file",
				     what, (unsigned long long)off, len);
		done += (size_t)n;
	}
	return 0;
}

/* ---- attrs -------------------------------------------------------------- */

static size_t id_hash(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 17) & (cap - 1);
}

static int idmap_put(struct mt_perf_id_map *m, uint64_t id, struct mt_perf_evsel_priv *e)
{
	size_t i;

	if (id == 0) {
		m->zero = e;
		return 0;
	}
	if ((m->count + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64, j;
		uint64_t *keys = calloc(cap, sizeof(*keys));
		struct mt_perf_evsel_priv **vals = calloc(cap, sizeof(*vals));

		if (!keys || !vals) {
			free(keys);
			free(vals);
			return MT_PERF_ENOMEM;
		}
		for (j = 0; j < m->cap; j++) {
			if (!m->keys[j])
				continue;
			i = id_hash(m->keys[j], cap);
			while (keys[i])
				i = (i + 1) & (cap - 1);
			keys[i] = m->keys[j];
			vals[i] = m->vals[j];
		}
		free(m->keys);
		free(m->vals);
		m->keys = keys;
		m->vals = vals;
		m->cap = cap;
	}
	i = id_hash(id, m->cap);
	while (m->keys[i] && m->keys[i] != id)
		i = (i + 1) & (m->cap - 1);
	if (!m->keys[i])
		m->count++;
	m->keys[i] = id;
	m->vals[i] = e;
	return 0;
}

const struct mt_perf_evsel *mt_perf__evsel_by_id(const struct mt_perf_reader *r, uint64_t id)
{
	const struct mt_perf_id_map *m = &r->ids;
	size_t i;

	if (id == 0)
		return m->zero ? &m->zero->pub : NULL;
	if (!m->cap)
		return NULL;
	for (i = id_hash(id, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == id)
			return &m->vals[i]->pub;
	return NULL;
}

size_t mt_perf__nr_evsels(const struct mt_perf_reader *r)
{
	return r->nr_evsels;
}

size_t mt_perf_reader_nr_evsels(const struct mt_perf_reader *r)
{
	return r->nr_evsels;
}

const struct mt_perf_evsel *mt_perf_reader_evsel(const struct mt_perf_reader *r, size_t i)
{
	return i < r->nr_evsels ? &r->evsels[i]->pub : NULL;
}

/* Check an attr's own size field against the room it has.
 * @return : the attr's size, or 0 when it is nonsense (why filled). */
static uint32_t attr_size_check(const void *attr, size_t room, char *why, size_t whylen)
{
	uint32_t size = get32((const char *)attr + 4);

	if (size == 0)
		size = PERF_ATTR_SIZE_VER0;
	if (size < PERF_ATTR_SIZE_VER0 || size % 8 || size > room) {
		mt_perf__why(why, whylen, "attr size %u is not a multiple of 8 between %u and %zu",
			     get32((const char *)attr + 4), PERF_ATTR_SIZE_VER0, room);
		return 0;
	}
	return size;
}

/* Add an attr (size bytes at attr, already checked). */
static int evsel_add(struct mt_perf_reader *r, const void *attr, uint32_t size,
		     struct mt_perf_evsel_priv **out)
{
	struct mt_perf_evsel_priv *e;

	if (r->nr_evsels >= MAX_EVSELS)
		return fail(r, MT_PERF_EFORMAT, "more than %d attrs", MAX_EVSELS);
	if (r->nr_evsels == r->cap_evsels) {
		size_t cap = r->cap_evsels ? r->cap_evsels * 2 : 8;
		void *p = realloc(r->evsels, cap * sizeof(*r->evsels));

		if (!p)
			return fail(r, MT_PERF_ENOMEM, "out of memory for attrs");
		r->evsels = p;
		r->cap_evsels = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return fail(r, MT_PERF_ENOMEM, "out of memory for attrs");
	memcpy(&e->pub.attr, attr,
	       size < sizeof(e->pub.attr) ? size : sizeof(e->pub.attr));
	e->pub.attr.size = sizeof(e->pub.attr);
	e->pub.name = "";
	e->pub.index = (int)r->nr_evsels;
	r->evsels[r->nr_evsels++] = e;
	*out = e;
	return 0;
}

static int evsel_add_id(struct mt_perf_reader *r, struct mt_perf_evsel_priv *e, uint64_t id)
{
	if (e->pub.nr_ids == e->cap_ids) {
		size_t cap = e->cap_ids ? e->cap_ids * 2 : 8;
		void *p = realloc(e->ids, cap * sizeof(*e->ids));

		if (!p)
			return fail(r, MT_PERF_ENOMEM, "out of memory for sample ids");
		e->ids = p;
		e->cap_ids = cap;
	}
	e->ids[e->pub.nr_ids++] = id;
	e->pub.ids = e->ids;
	if (idmap_put(&r->ids, id, e))
		return fail(r, MT_PERF_ENOMEM, "out of memory for sample ids");
	return 0;
}

static int evsel_set_name(struct mt_perf_reader *r, struct mt_perf_evsel_priv *e,
			  const char *name, size_t len)
{
	char *copy = strndup(name, len);

	if (!copy)
		return fail(r, MT_PERF_ENOMEM, "out of memory for event names");
	free(e->name);
	e->name = copy;
	e->pub.name = copy;
	return 0;
}

/* The evsel owning id, or failing that the index-th (how EVENT_DESC without
 * ids refers to attrs). */
static struct mt_perf_evsel_priv *evsel_find(struct mt_perf_reader *r, int have_id,
					     uint64_t id, size_t index)
{
	if (have_id) {
		const struct mt_perf_evsel *e = mt_perf__evsel_by_id(r, id);

		if (e)
			return r->evsels[e->index];
	}
	return index < r->nr_evsels ? r->evsels[index] : NULL;
}

/* HEADER_ATTR: attr then sample ids. */
static int on_header_attr(struct mt_perf_reader *r, const struct perf_event_header *h,
			  uint64_t off)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t room = h->size - sizeof(*h);
	struct mt_perf_evsel_priv *e;
	char why[160];
	uint32_t size;
	size_t i, n;
	int err;

	if (room < 8)
		return fail(r, MT_PERF_EFORMAT, "record at offset %llu (HEADER_ATTR): size %u "
			    "too small for an attr", (unsigned long long)off, h->size);
	size = attr_size_check(p, room, why, sizeof(why));
	if (!size)
		return fail(r, MT_PERF_EFORMAT, "record at offset %llu (HEADER_ATTR): %s",
			    (unsigned long long)off, why);
	if ((room - size) % 8)
		return fail(r, MT_PERF_EFORMAT, "record at offset %llu (HEADER_ATTR): %zu bytes "
			    "of ids are not a whole number of ids", (unsigned long long)off,
			    room - size);
	err = evsel_add(r, p, size, &e);
	if (err)
		return err;
	n = (room - size) / 8;
	for (i = 0; i < n; i++) {
		err = evsel_add_id(r, e, get64(p + size + 8 * i));
		if (err)
			return err;
	}
	return 0;
}

/* EVENT_UPDATE: only NAME matters here. */
static int on_event_update(struct mt_perf_reader *r, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t room = h->size - sizeof(*h);
	struct mt_perf_evsel_priv *e;

	if (room < 16 || get64(p) != MT_PERF_EVENT_UPDATE_NAME)
		return 0;
	e = evsel_find(r, 1, get64(p + 8), SIZE_MAX);
	if (!e)
		return 0;
	return evsel_set_name(r, e, (const char *)p + 16, room - 16);
}

/* An EVENT_DESC entry names its event (found by its first id, or by its
 * index when it has none).  Names only: a malformed section leaves names as
 * they are. */
static int on_event_desc_entry(void *ctx, uint32_t index, const char *name, size_t len,
			       const uint8_t *ids, uint32_t nr_ids)
{
	struct mt_perf_reader *r = ctx;
	struct mt_perf_evsel_priv *e = evsel_find(r, nr_ids > 0, nr_ids ? get64(ids) : 0, index);
	return e ? evsel_set_name(r, e, name, len) : 0;
}

static int on_event_desc(struct mt_perf_reader *r, const uint8_t *p, size_t len)
{
	return mt_perf_event_desc_each(p, len, on_event_desc_entry, r);
}

static int on_header_feature(struct mt_perf_reader *r, const struct perf_event_header *h)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t room = h->size - sizeof(*h);

	if (room < 8 || get64(p) != MT_PERF_FEAT_EVENT_DESC)
		return 0;
	return on_event_desc(r, p + 8, room - 8);
}

/* ---- file mode ---------------------------------------------------------- */

/* perf.data: header (magic, size, attr_size, attrs, data, event_types,
 * feature bits), the attr section whose entries hold an attr and the
 * section of its ids, the data section, then feature sections. */
static int file_read_attrs(struct mt_perf_reader *r, const uint8_t *hdr)
{
	uint64_t attr_size = get64(hdr + 16);
	uint64_t attrs_off = get64(hdr + 24), attrs_size = get64(hdr + 32);
	uint8_t *fa = NULL;
	uint64_t i, nr;
	int err = 0;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096 || attr_size % 8)
		return fatal(r, MT_PERF_EFORMAT, "file header at offset 0: attr_size %llu is not "
			     "a multiple of 8 between %d and 4096", (unsigned long long)attr_size,
			     PERF_ATTR_SIZE_VER0 + 16);
	if (attrs_size % attr_size)
		return fatal(r, MT_PERF_EFORMAT, "file header at offset 0: attr section size "
			     "%llu is not a multiple of attr_size %llu",
			     (unsigned long long)attrs_size, (unsigned long long)attr_size);
	nr = attrs_size / attr_size;
	if (nr > MAX_EVSELS)
		return fatal(r, MT_PERF_EFORMAT, "file header at offset 0: %llu attrs",
			     (unsigned long long)nr);
	fa = malloc(attr_size);
	if (!fa)
		return fatal(r, MT_PERF_ENOMEM, "out of memory for attrs");
	for (i = 0; i < nr; i++) {
		uint64_t off = attrs_off + i * attr_size, ids_off, ids_size, j;
		struct mt_perf_evsel_priv *e;
		char why[160];
		uint32_t size;

		err = pread_at(r, fa, attr_size, off, "attr");
		if (err)
			goto out;
		size = attr_size_check(fa, attr_size - 16, why, sizeof(why));
		if (!size || size != attr_size - 16) {
			err = fatal(r, MT_PERF_EFORMAT, "attr %llu at offset %llu: %s",
				    (unsigned long long)i, (unsigned long long)off,
				    size ? "attr size differs from the header's attr_size - 16"
					 : why);
			goto out;
		}
		ids_off = get64(fa + size);
		ids_size = get64(fa + size + 8);
		if (ids_size % 8 || ids_size / 8 > MAX_IDS) {
			err = fatal(r, MT_PERF_EFORMAT, "attr %llu at offset %llu: ids size %llu",
				    (unsigned long long)i, (unsigned long long)off,
				    (unsigned long long)ids_size);
			goto out;
		}
		err = evsel_add(r, fa, size, &e);
		if (err) {
			r->fatal = err;
			goto out;
		}
		for (j = 0; j < ids_size / 8; j++) {
			uint64_t id;

			err = pread_at(r, &id, 8, ids_off + 8 * j, "sample id");
			if (!err)
				err = evsel_add_id(r, e, id);
			if (err) {
				r->fatal = err;
				goto out;
			}
		}
	}
out:
	free(fa);
	return err;
}

/* Feature bits of a perf.data header that this build does not know (bit 0
 * is reserved, bits past MT_PERF_FEAT_LAST undefined): said in r->warning,
 * as ranges ("0, 32..255"), for the caller to print.  The feature index
 * that follows the data has a section for every bit set, known or not, so
 * they also move where EVENT_DESC is looked for. */
static void file_check_features(struct mt_perf_reader *r, const uint8_t *hdr)
{
	const uint8_t *bits = hdr + 72;
	char list[160] = "";
	size_t used = 0;
	int n = 0;

	if (r->header_size < MT_PERF_FILE_HEADER_SIZE)
		return;
#define UNKNOWN_SET(b) (((b) == 0 || (b) > MT_PERF_FEAT_LAST) && (bits[(b) / 8] >> ((b) % 8) & 1))
	for (int b = 0; b < 256; b++) {
		if (!UNKNOWN_SET(b))
			continue;
		int e = b;
		while (e + 1 < 256 && UNKNOWN_SET(e + 1))
			e++;
		if (used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%d", n ? ", " : "", b);
		if (e > b && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "..%d", e);
		n += e - b + 1;
		b = e;
	}
#undef UNKNOWN_SET
	if (n)
		snprintf(r->warning, sizeof(r->warning), "file header at offset 72: %d feature "
			 "bit%s unknown to this build set (%s): ignored, and the feature sections "
			 "(event names) may be misread", n, n == 1 ? "" : "s", list);
}

/* Names from the EVENT_DESC feature section, when the input is seekable. */
static int file_read_names(struct mt_perf_reader *r, const uint8_t *hdr)
{
	const uint8_t *bits = hdr + 72;
	uint64_t sec[2];
	uint8_t *desc;
	int i, idx = 0, err;

	if (r->header_size < MT_PERF_FILE_HEADER_SIZE || !r->seekable ||
	    r->data_end == UINT64_MAX ||
	    !(bits[MT_PERF_FEAT_EVENT_DESC / 8] & (1u << (MT_PERF_FEAT_EVENT_DESC % 8))))
		return 0;
	for (i = 0; i < MT_PERF_FEAT_EVENT_DESC; i++)
		idx += (bits[i / 8] >> (i % 8)) & 1;
	/* A missing or odd section only costs the names. */
	if (pread_at(r, sec, sizeof(sec), r->data_end + 16 * (uint64_t)idx, "feature index") ||
	    sec[1] > FEATURE_MAX) {
		r->fatal = 0;
		r->err[0] = 0;
		return 0;
	}
	desc = malloc(sec[1] ? sec[1] : 1);
	if (!desc)
		return fatal(r, MT_PERF_ENOMEM, "out of memory for event names");
	if (pread_at(r, desc, sec[1], sec[0], "EVENT_DESC section")) {
		r->fatal = 0;
		r->err[0] = 0;
		free(desc);
		return 0;
	}
	err = on_event_desc(r, desc, sec[1]);
	free(desc);
	if (err)
		r->fatal = err;
	return err;
}

static int file_open(struct mt_perf_reader *r)
{
	uint8_t hdr[MT_PERF_FILE_HEADER_SIZE] = { 0 };
	uint64_t data_size;
	int err;

	err = fill(r, MT_PERF_FILE_HEADER_SIZE);
	if (err)
		return err;
	if (avail(r) < r->header_size)
		return fatal(r, MT_PERF_ETRUNC, "file header at offset 0: truncated, the input "
			     "ends after %zu of %llu bytes", avail(r),
			     (unsigned long long)r->header_size);
	memcpy(hdr, r->buf + r->lo, r->header_size);
	r->data_offset = get64(hdr + 40);
	data_size = get64(hdr + 48);
	if (r->data_offset < r->header_size || data_size > UINT64_MAX - r->data_offset)
		return fatal(r, MT_PERF_EFORMAT, "file header at offset 0: data section at "
			     "offset %llu, size %llu", (unsigned long long)r->data_offset,
			     (unsigned long long)data_size);
	r->data_end = r->data_offset + data_size;
	/* perf leaves 0 when it was killed before rewriting the header: like
	 * perf, read records to the end of the input. */
	if (data_size == 0)
		r->data_end = UINT64_MAX;
	if (!r->seekable) {
		uint64_t got = 0;

		/* The attr section and ids come before the data: keep that part. */
		if (r->data_offset > PREDATA_MAX)
			return fatal(r, MT_PERF_EFORMAT, "file header at offset 0: the data section "
				     "starts at offset %llu, too far for a non-seekable input",
				     (unsigned long long)r->data_offset);
		r->predata = malloc(r->data_offset);
		if (!r->predata)
			return fatal(r, MT_PERF_ENOMEM, "out of memory");
		while (got < r->data_offset) {
			size_t n;

			err = fill(r, 65536);
			if (err)
				return err;
			n = avail(r);
			if (n == 0)
				return fatal(r, MT_PERF_ETRUNC, "file header at offset 0: the input "
					     "ends at offset %llu, before the data section at %llu",
					     (unsigned long long)r->pos,
					     (unsigned long long)r->data_offset);
			if (n > r->data_offset - got)
				n = r->data_offset - got;
			memcpy(r->predata + got, r->buf + r->lo, n);
			consume(r, n);
			got += n;
		}
		r->predata_len = r->data_offset;
	}
	file_check_features(r, hdr);
	err = file_read_attrs(r, hdr);
	if (!err)
		err = file_read_names(r, hdr);
	return err;
}

/* ---- opening ------------------------------------------------------------- */

static int reader_start(struct mt_perf_reader *r)
{
	uint64_t magic, size;
	int err;

	err = fill(r, MT_PERF_PIPE_HEADER_SIZE);
	if (err)
		return err;
	if (avail(r) < MT_PERF_PIPE_HEADER_SIZE) {
		uint64_t want[2] = { MT_PERF_MAGIC, MT_PERF_PIPE_HEADER_SIZE };
		size_t n = avail(r) < 8 ? avail(r) : 8;

		/* A prefix of a header is a truncated one; anything else is not ours. */
		if (memcmp(r->buf + r->lo, want, n))
			return fatal(r, MT_PERF_EMAGIC, "header at offset 0: no PERFILE2 magic");
		return fatal(r, MT_PERF_ETRUNC, "header at offset 0: truncated, the input ends "
			     "after %zu of %d bytes", avail(r), MT_PERF_PIPE_HEADER_SIZE);
	}
	magic = get64(r->buf + r->lo);
	size = get64(r->buf + r->lo + 8);
	if (magic == __builtin_bswap64(MT_PERF_MAGIC))
		return fatal(r, MT_PERF_EMAGIC, "header at offset 0: byte-swapped (other "
			     "endianness) perf data is not supported");
	if (magic != MT_PERF_MAGIC)
		return fatal(r, MT_PERF_EMAGIC, "header at offset 0: no PERFILE2 magic");
	if (size == MT_PERF_PIPE_HEADER_SIZE) {
		r->format = MT_PERF_PIPE;
		r->header_size = size;
		return 0;
	}
	/* 72: perf.data before feature bits existed. */
	if (size != MT_PERF_FILE_HEADER_SIZE && size != 72)
		return fatal(r, MT_PERF_EMAGIC, "header at offset 0: header size %llu is neither "
			     "16 (pipe) nor %d (file)", (unsigned long long)size,
			     MT_PERF_FILE_HEADER_SIZE);
	r->format = MT_PERF_FILE;
	r->header_size = size;
	return file_open(r);
}

static int reader_init(struct mt_perf_reader **out, mt_perf_read_fn read,
		       mt_perf_chunk_fn chunk, void *ctx, int fd, int own_fd, const char *name)
{
	struct mt_perf_reader *r;
	int err;

	*out = NULL;
	r = calloc(1, sizeof(*r));
	if (!r || !(r->own = r->buf = malloc(BUF_CAP)) || !(r->name = strdup(name ? name : ""))) {
		if (r)
			free(r->own);
		free(r);
		if (own_fd)
			close(fd);
		snprintf(open_err, sizeof(open_err), "out of memory");
		return MT_PERF_ENOMEM;
	}
	r->fd = fd;
	r->own_fd = own_fd;
	if (fd >= 0) {
		struct stat st;

		r->read = fd_read;
		r->ctx = &r->fd;
		r->base = lseek(fd, 0, SEEK_CUR);
		r->seekable = r->base >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
		if (r->seekable)
			map_file(r, (uint64_t)st.st_size);
	} else {
		r->read = read;
		r->chunk = chunk;
		r->ctx = ctx;
	}
	r->state = ST_START;
	err = reader_start(r);
	if (err) {
		snprintf(open_err, sizeof(open_err), "%s", r->err);
		mt_perf_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

int mt_perf_reader_open(struct mt_perf_reader **out, const char *path)
{
	int fd;

	if (!strcmp(path, "-"))
		return reader_init(out, NULL, NULL, NULL, 0, 0, "-");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		*out = NULL;
		snprintf(open_err, sizeof(open_err), "cannot open '%s': %s", path, strerror(e));
		errno = e;
		return MT_PERF_EIO;
	}
	return reader_init(out, NULL, NULL, NULL, fd, 1, path);
}

int mt_perf_reader_fdopen(struct mt_perf_reader **out, int fd, const char *name)
{
	return reader_init(out, NULL, NULL, NULL, fd, 0, name);
}

int mt_perf_reader_new(struct mt_perf_reader **out, mt_perf_read_fn read, void *ctx,
		       const char *name)
{
	return reader_init(out, read, NULL, ctx, -1, 0, name);
}

int mt_perf_reader_new_chunked(struct mt_perf_reader **out, mt_perf_chunk_fn chunk, void *ctx,
			       const char *name)
{
	return reader_init(out, NULL, chunk, ctx, -1, 0, name);
}

void mt_perf_reader_free(struct mt_perf_reader *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nr_evsels; i++) {
		free(r->evsels[i]->ids);
		free(r->evsels[i]->name);
		free(r->evsels[i]);
	}
	free(r->evsels);
	free(r->ids.keys);
	free(r->ids.vals);
	if (r->own_fd)
		close(r->fd);
	free(r->predata);
	mt_perf__unpack_free(r->unpack);
	if (r->map)
		munmap(r->map, r->map_len);
	free(r->own);
	free(r->name);
	free(r);
}

const void *mt_perf_reader_mapping(const struct mt_perf_reader *r, size_t *len)
{
	*len = r->map_len;
	return r->map;
}

enum mt_perf_format mt_perf_reader_format(const struct mt_perf_reader *r)
{
	return r->format;
}

const char *mt_perf_reader_error(const struct mt_perf_reader *r)
{
	return r ? r->err : open_err;
}

const char *mt_perf_reader_warning(const struct mt_perf_reader *r)
{
	return r->warning;
}

int mt_perf_reader_fatal(const struct mt_perf_reader *r)
{
	return r->fatal;
}

/* ---- items --------------------------------------------------------------- */

/* item: size bytes at data, passed through as they are, at offset off. */
static void blob_item(struct mt_perf_item *item, const void *data, size_t size, uint64_t off)
{
	*item = (struct mt_perf_item){ .kind = MT_PERF_ITEM_BLOB, .data = data, .size = size,
				       .offset = off };
}

/* Up to MT_PERF_BLOB_CHUNK bytes of a blob of left bytes (UINT64_MAX: up to
 * the end of input).  @return : 1, 0 at the end of input, or an error. */
static int next_blob(struct mt_perf_reader *r, struct mt_perf_item *item, uint64_t *left,
		     const char *what)
{
	size_t want = *left < MT_PERF_BLOB_CHUNK ? (size_t)*left : MT_PERF_BLOB_CHUNK;
	size_t n;
	int err;

	err = fill(r, want);
	if (err)
		return err;
	n = avail(r) < want ? avail(r) : want;
	if (n == 0) {
		if (*left == UINT64_MAX)
			return 0;
		return fatal(r, MT_PERF_ETRUNC, "%s at offset %llu: truncated, the input ends "
			     "%llu bytes early", what, (unsigned long long)r->pos,
			     (unsigned long long)*left);
	}
	blob_item(item, r->buf + r->lo, n, r->pos);
	consume(r, n);
	if (*left != UINT64_MAX)
		*left -= n;
	return 1;
}

/* Bytes that follow some records outside their size: tracing data after
 * HEADER_TRACING_DATA (u32 size), AUX data after AUXTRACE (u64 size). */
static uint64_t payload_after(const struct perf_event_header *h)
{
	if (h->type == MT_PERF_RECORD_HEADER_TRACING_DATA && h->size >= 12)
		return get32(h + 1);
	if (h->type == MT_PERF_RECORD_AUXTRACE && h->size >= 16)
		return get64(h + 1);
	return 0;
}

/* item: the record h, at offset off (its COMPRESSED record's when
 * unpacked). */
static void record_item(struct mt_perf_item *item, const struct perf_event_header *h,
			uint64_t off, const struct mt_perf_evsel *evsel, int unpacked)
{
	item->kind = MT_PERF_ITEM_RECORD;
	item->data = h;
	item->size = h->size;
	item->offset = off;
	item->header = h;
	item->evsel = evsel;
	item->unpacked = unpacked;
}

/* Hand the payload of the COMPRESSED or COMPRESSED2 record h, at offset
 * off, to the unpacker; its records are read next (ST_UNPACKED).
 * @return : 0, or an error (fatal when out of memory). */
static int unpack_payload(struct mt_perf_reader *r, const struct perf_event_header *h,
			  uint64_t off)
{
	/* COMPRESSED2 (perf 6.16 on): a u64 data_size, then the data, then
	 * padding to 8 bytes. */
	const uint8_t *data = (const uint8_t *)(h + 1);
	uint64_t len = h->size - sizeof(*h);
	char why[256] = "";
	int err = 0;
	if (h->type == MT_PERF_RECORD_COMPRESSED2) {
		if (len < 8 || get64(data) > len - 8) {
			mt_perf__why(why, sizeof(why), "data size %llu overruns the record",
				     len < 8 ? 0ULL : (unsigned long long)get64(data));
			/* a payload missing from the stream: what follows
			 * would decompress into wrong records */
			mt_perf__unpack_break(r->unpack, why, sizeof(why));
			err = MT_PERF_EFORMAT;
		} else {
			len = get64(data);
			data += 8;
		}
	}
	if (!err)
		err = mt_perf__unpack_feed(r->unpack, data, len, why, sizeof(why));
	if (err == MT_PERF_ENOMEM)
		return fatal(r, err, "record at offset %llu (%s): %s", (unsigned long long)off,
			     mt_perf_record_name(h->type), why);
	if (err)
		return fail(r, err, "record at offset %llu (%s): %s", (unsigned long long)off,
			    mt_perf_record_name(h->type), why);
	r->unpacked_from = off;
	r->unpacked_type = h->type;
	r->state = ST_UNPACKED;
	return 0;
}

static int next_record(struct mt_perf_reader *r, struct mt_perf_item *item)
{
	const struct perf_event_header *h;
	const struct mt_perf_evsel *evsel = NULL;
	uint64_t off = r->pos, limit = r->format == MT_PERF_FILE ? r->data_end : UINT64_MAX;
	struct perf_event_header hb;
	char why[256];
	int err;

	if (r->format == MT_PERF_FILE && off >= limit) {
		r->state = ST_TAIL;
		return 0;
	}
	err = fill(r, sizeof(hb));
	if (err)
		return err;
	if (avail(r) == 0 && limit == UINT64_MAX) {
		r->state = ST_DONE;
		return 0;
	}
	if (avail(r) < sizeof(hb))
		return fatal(r, MT_PERF_ETRUNC, "record at offset %llu: truncated, the input ends "
			     "inside the record header", (unsigned long long)off);
	memcpy(&hb, r->buf + r->lo, sizeof(hb));
	if (hb.size < sizeof(hb))
		return fatal(r, MT_PERF_EFORMAT, "record at offset %llu (%s): size %u is smaller "
			     "than a record header", (unsigned long long)off,
			     mt_perf_record_name(hb.type), hb.size);
	if (limit - off < hb.size)
		return fatal(r, MT_PERF_EFORMAT, "record at offset %llu (%s): size %u runs past "
			     "the end of the data section at %llu", (unsigned long long)off,
			     mt_perf_record_name(hb.type), hb.size, (unsigned long long)limit);
	err = fill(r, hb.size);
	if (err)
		return err;
	if (avail(r) < hb.size)
		return fatal(r, MT_PERF_ETRUNC, "record at offset %llu (%s): truncated, the input "
			     "ends after %zu of %u bytes", (unsigned long long)off,
			     mt_perf_record_name(hb.type), avail(r), hb.size);
	h = (const struct perf_event_header *)(r->buf + r->lo);
	/* Records hold u64s: keep them 8-aligned in the buffer for callers. */
	if ((uintptr_t)h % 8 && r->buf != r->own) {	/* the mapping, a lent chunk */
		memcpy(r->own, h, hb.size);	/* hb.size < BUF_CAP */
		h = (const struct perf_event_header *)r->own;
	} else if ((uintptr_t)h % 8) {
		memmove(r->buf, r->buf + r->lo, avail(r));
		r->hi -= r->lo;
		r->lo = 0;
		h = (const struct perf_event_header *)r->buf;
	}
	/* Checked before the record is consumed: after a fatal error the
	 * input is still at the record (mt_perf_reader_salvage). */
	uint64_t payload = payload_after(h);
	if (payload && limit - off - hb.size < payload)
		return fatal(r, MT_PERF_EFORMAT, "record at offset %llu (%s): %llu bytes of "
			     "payload run past the end of the data section",
			     (unsigned long long)off, mt_perf_record_name(hb.type),
			     (unsigned long long)payload);
	consume(r, hb.size);

	r->blob_left = payload;
	if (r->blob_left) {
		r->state = ST_BLOB;
		r->blob_then = ST_RECORDS;
		r->blob_what = "record payload";
	}

	if (r->unpack && (h->type == MT_PERF_RECORD_COMPRESSED ||
			  h->type == MT_PERF_RECORD_COMPRESSED2)) {
		if (!(err = unpack_payload(r, h, off)) || r->fatal)
			return err;	/* 0: its records come next */
	} else switch (h->type) {
	case MT_PERF_RECORD_HEADER_ATTR:
		err = on_header_attr(r, h, off);
		break;
	case MT_PERF_RECORD_EVENT_UPDATE:
		err = on_event_update(r, h);
		break;
	case MT_PERF_RECORD_HEADER_FEATURE:
		err = on_header_feature(r, h);
		break;
	default:
		why[0] = 0;
		err = mt_perf__check_record(r, h, &evsel, why, sizeof(why));
		if (err)
			err = fail(r, err, "record at offset %llu (%s): %s", (unsigned long long)off,
				   mt_perf_record_name(h->type), why);
	}
	/* Filled in on a record-level error too, for callers that pass it on. */
	record_item(item, h, off, evsel, 0);
	return err ? err : 1;
}

/* The next record of the last COMPRESSED record's, checked as next_record
 * checks one; 0 (back to ST_RECORDS) when its records are used up. */
static int next_unpacked(struct mt_perf_reader *r, struct mt_perf_item *item)
{
	const struct mt_perf_evsel *evsel = NULL;
	unsigned long long off = (unsigned long long)r->unpacked_from;
	const char *what = mt_perf_record_name(r->unpacked_type);
	char why[256];
	int bad, err = 0;
	const struct perf_event_header *h = mt_perf__unpack_next(r->unpack, &bad);

	if (!h) {
		r->state = ST_RECORDS;
		return bad ? fail(r, MT_PERF_EFORMAT, "record at offset %llu (%s): the records it "
				  "holds have a size smaller than a record header: the rest is "
				  "lost", off, what) : 0;
	}
	switch (h->type) {
	case MT_PERF_RECORD_HEADER_ATTR:
	case MT_PERF_RECORD_EVENT_UPDATE:
	case MT_PERF_RECORD_HEADER_FEATURE:
	case MT_PERF_RECORD_COMPRESSED:
	case MT_PERF_RECORD_COMPRESSED2:
		err = fail(r, MT_PERF_EFORMAT, "record at offset %llu (%s): holds a %s record, "
			   "which only the stream itself may hold", off, what,
			   mt_perf_record_name(h->type));
		break;
	default:
		why[0] = 0;
		err = mt_perf__check_record(r, h, &evsel, why, sizeof(why));
		if (err)
			err = fail(r, err, "record at offset %llu (%s): a %s record in it: %s", off,
				   what, mt_perf_record_name(h->type), why);
	}
	record_item(item, h, r->unpacked_from, evsel, 1);
	return err ? err : 1;
}

int mt_perf_reader_salvage(struct mt_perf_reader *r)
{
	/* ST_RECORDS: at the record at fault, nothing of it consumed; ST_BLOB:
	 * a payload or header cut by the end of the input, all of it handed
	 * out. */
	if ((r->fatal != MT_PERF_ETRUNC && r->fatal != MT_PERF_EFORMAT) ||
	    (r->state != ST_RECORDS && r->state != ST_BLOB) || r->unpack)
		return r->fatal;
	r->fatal = 0;
	r->state = ST_TAIL;	/* blobs to the end of the input */
	return 0;
}

int mt_perf_reader_unpack(struct mt_perf_reader *r)
{
	return r->unpack ? 0 : mt_perf__unpack_new(&r->unpack);
}

int mt_perf_reader_next(struct mt_perf_reader *r, struct mt_perf_item *item)
{
	int ret;

	if (r->fatal)
		return r->fatal;
	r->err[0] = 0;
	for (;;) {
		switch (r->state) {
		case ST_START:
			if (r->predata) {
				r->state = ST_PREDATA;
				r->blob_left = 0;	/* offset into predata */
				continue;
			}
			r->blob_left = r->format == MT_PERF_FILE ? r->data_offset : r->header_size;
			r->state = ST_BLOB;
			r->blob_then = ST_RECORDS;
			r->blob_what = "header";
			continue;
		case ST_PREDATA:
			if (r->blob_left >= r->predata_len) {
				free(r->predata);
				r->predata = NULL;
				r->state = ST_RECORDS;
				continue;
			}
			blob_item(item, r->predata + r->blob_left,
				  r->predata_len - r->blob_left < MT_PERF_BLOB_CHUNK
				  ? r->predata_len - r->blob_left : MT_PERF_BLOB_CHUNK, r->blob_left);
			r->blob_left += item->size;
			return 1;
		case ST_BLOB:
			if (!r->blob_left) {
				r->state = r->blob_then;
				continue;
			}
			return next_blob(r, item, &r->blob_left, r->blob_what);
		case ST_RECORDS:
			ret = next_record(r, item);
			if (ret == 0 && r->unpack && (r->state == ST_TAIL || r->state == ST_DONE)) {
				size_t rest = mt_perf__unpack_drop_rest(r->unpack);
				if (rest)
					return fail(r, MT_PERF_EFORMAT, "record at offset %llu "
						    "(%s): the input ends inside a record it holds "
						    "(%zu bytes of it)",
						    (unsigned long long)r->unpacked_from,
						    mt_perf_record_name(r->unpacked_type), rest);
			}
			if (ret == 0 && r->state != ST_DONE)
				continue;
			return ret;
		case ST_UNPACKED:
			ret = next_unpacked(r, item);
			if (ret == 0)
				continue;
			return ret;
		case ST_TAIL: {
			uint64_t left = UINT64_MAX;

			ret = next_blob(r, item, &left, "trailer");
			if (ret == 0)
				r->state = ST_DONE;
			return ret;
		}
		case ST_DONE:
			return 0;
		}
	}
}
