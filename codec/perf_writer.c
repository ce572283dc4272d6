/* Writing perf pipe-mode streams through a buffer. */
#include "codec/perf_internal.h"
#include "common/prealloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WBUF_CAP (256 * 1024)

struct mt_perf_writer {
	int fd;
	char *name;
	uint8_t *buf;
	size_t len;
	uint64_t bytes;
	int err;		/* sticky */
	char msg[256];
	struct mt_prealloc prealloc;	/* a regular file's blocks */
};

int mt_perf_writer_new(struct mt_perf_writer **out, int fd, const char *name)
{
	struct mt_perf_writer *w = calloc(1, sizeof(*w));

	*out = NULL;
	if (!w || !(w->buf = malloc(WBUF_CAP)) || !(w->name = strdup(name ? name : ""))) {
		if (w)
			free(w->buf);
		free(w);
		return MT_PERF_ENOMEM;
	}
	w->fd = fd;
	mt_prealloc_init(&w->prealloc, fd);
	*out = w;
	return 0;
}

int mt_perf_writer_flush(struct mt_perf_writer *w)
{
	size_t done = 0;

	if (w->err)
		return w->err;
	mt_prealloc_ahead(&w->prealloc, w->len);
	while (done < w->len) {
		ssize_t n = write(w->fd, w->buf + done, w->len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			snprintf(w->msg, sizeof(w->msg), "write failed at offset %llu: %s",
				 (unsigned long long)(w->bytes - w->len + done),
				 n < 0 ? strerror(errno) : "no progress");
			w->err = MT_PERF_EIO;
			return w->err;
		}
		done += (size_t)n;
	}
	w->len = 0;
	return 0;
}

int mt_perf_writer_free(struct mt_perf_writer *w)
{
	int err;

	if (!w)
		return 0;
	err = mt_perf_writer_flush(w);
	mt_prealloc_end(&w->prealloc);
	free(w->buf);
	free(w->name);
	free(w);
	return err;
}

const char *mt_perf_writer_error(const struct mt_perf_writer *w)
{
	return w->msg;
}

int mt_perf_writer_write(struct mt_perf_writer *w, const void *data, size_t size)
{
	const uint8_t *p = data;

	if (w->err)
		return w->err;
	while (size) {
		size_t n;

		if (w->len == WBUF_CAP && mt_perf_writer_flush(w))
			return w->err;
		n = WBUF_CAP - w->len < size ? WBUF_CAP - w->len : size;
		memcpy(w->buf + w->len, p, n);
		w->len += n;
		w->bytes += n;
		p += n;
		size -= n;
	}
	return 0;
}

int mt_perf_writer_pipe_header(struct mt_perf_writer *w)
{
	uint64_t h[2] = { MT_PERF_MAGIC, MT_PERF_PIPE_HEADER_SIZE };

	return mt_perf_writer_write(w, h, sizeof(h));
}

int mt_perf_writer_attr(struct mt_perf_writer *w, const struct perf_event_attr *attr,
			const uint64_t *ids, size_t nr_ids)
{
	uint32_t asz = attr->size ? attr->size : PERF_ATTR_SIZE_VER0;
	struct perf_event_header h;
	size_t size;
	int err;

	if (asz % 8 || asz > sizeof(*attr) || nr_ids > UINT16_MAX / 8)
		return MT_PERF_EFORMAT;
	size = sizeof(h) + asz + 8 * nr_ids;
	if (size > UINT16_MAX)
		return MT_PERF_EFORMAT;
	h.type = MT_PERF_RECORD_HEADER_ATTR;
	h.misc = 0;
	h.size = (uint16_t)size;
	err = mt_perf_writer_write(w, &h, sizeof(h));
	if (!err)
		err = mt_perf_writer_write(w, attr, asz);
	if (!err && nr_ids)
		err = mt_perf_writer_write(w, ids, 8 * nr_ids);
	return err;
}

int mt_perf_writer_event_name(struct mt_perf_writer *w, uint64_t id, const char *name)
{
	static const uint8_t zeros[8];
	size_t len = strlen(name), padded = (len + 1 + 7) & ~(size_t)7;
	struct perf_event_header h;
	uint64_t body[2] = { MT_PERF_EVENT_UPDATE_NAME, id };
	int err;

	if (sizeof(h) + sizeof(body) + padded > UINT16_MAX)
		return MT_PERF_EFORMAT;
	h.type = MT_PERF_RECORD_EVENT_UPDATE;
	h.misc = 0;
	h.size = (uint16_t)(sizeof(h) + sizeof(body) + padded);
	err = mt_perf_writer_write(w, &h, sizeof(h));
	if (!err)
		err = mt_perf_writer_write(w, body, sizeof(body));
	if (!err)
		err = mt_perf_writer_write(w, name, len);
	if (!err)
		err = mt_perf_writer_write(w, zeros, padded - len);
	return err;
}

int mt_perf_writer_record(struct mt_perf_writer *w, const struct perf_event_header *rec)
{
	if (rec->size < sizeof(*rec))
		return MT_PERF_EFORMAT;
	return mt_perf_writer_write(w, rec, rec->size);
}

uint64_t mt_perf_writer_bytes(const struct mt_perf_writer *w)
{
	return w->bytes;
}
