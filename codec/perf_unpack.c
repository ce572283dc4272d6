/* The records inside COMPRESSED records (perf record -z).
 *
 * perf compresses the bytes it reads from its ring buffers with one zstd
 * stream for the whole recording, flushed at the end of each COMPRESSED
 * record but never ended: each record's payload continues the stream, and
 * a record it holds may start in one COMPRESSED record and end in the next.
 * So one decompression context lives as long as the reader, and the bytes
 * of an incomplete record wait for the next payload. */
#include "codec/perf_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

/* What one payload may decompress to: perf writes at most its ring
 * buffer's size (--mmap-pages) per COMPRESSED record. */
#define UNPACK_MAX ((size_t)256 << 20)

struct mt_perf_unpack {
	ZSTD_DStream *zd;
	uint8_t *buf;		/* 8-aligned (malloc) */
	size_t lo, hi, cap;	/* unread bytes are buf[lo..hi) */
	int broken;		/* the stream failed: nothing more comes out */
	/* A record that starts off 8-byte alignment (a record size no kernel
	 * writes) is copied here, not the whole buffer moved for it. */
	_Alignas(8) uint8_t one[65536];
};

int mt_perf__unpack_new(struct mt_perf_unpack **out)
{
	struct mt_perf_unpack *u = calloc(1, sizeof(*u));
	*out = NULL;
	if (!u || !(u->zd = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(u->zd))) {
		mt_perf__unpack_free(u);
		return MT_PERF_ENOMEM;
	}
	*out = u;
	return 0;
}

void mt_perf__unpack_free(struct mt_perf_unpack *u)
{
	if (!u)
		return;
	ZSTD_freeDStream(u->zd);
	free(u->buf);
	free(u);
}

static int room(struct mt_perf_unpack *u, size_t need)
{
	if (u->cap - u->hi >= need)
		return 0;
	if (u->lo) {	/* the incomplete record to the front */
		memmove(u->buf, u->buf + u->lo, u->hi - u->lo);
		u->hi -= u->lo;
		u->lo = 0;
		if (u->cap - u->hi >= need)
			return 0;
	}
	size_t cap = u->cap ? u->cap : 65536;
	while (cap - u->hi < need)
		cap *= 2;
	if (cap > UNPACK_MAX + ((size_t)1 << 20))
		return MT_PERF_EFORMAT;	/* see UNPACK_MAX */
	uint8_t *b = realloc(u->buf, cap);
	if (!b)
		return MT_PERF_ENOMEM;
	u->buf = b;
	u->cap = cap;
	return 0;
}

int mt_perf__unpack_feed(struct mt_perf_unpack *u, const void *data, size_t len, char *why,
			 size_t whylen)
{
	if (u->broken) {
		mt_perf__why(why, whylen, "not unpacked: an earlier COMPRESSED record could not be");
		return MT_PERF_EFORMAT;
	}
	ZSTD_inBuffer in = { data, len, 0 };
	size_t start = u->hi - u->lo;
	int rc;
	for (;;) {
		if ((rc = room(u, 65536)) != 0) {
			if (rc == MT_PERF_ENOMEM)
				mt_perf__why(why, whylen, "out of memory");
			else
				mt_perf__why(why, whylen, "unpacks to more than %zu MiB",
					     UNPACK_MAX >> 20);
			break;
		}
		ZSTD_outBuffer out = { u->buf, u->cap, u->hi };
		size_t zr = ZSTD_decompressStream(u->zd, &out, &in);
		u->hi = out.pos;
		if (ZSTD_isError(zr)) {
			mt_perf__why(why, whylen, "zstd: %s", ZSTD_getErrorName(zr));
			rc = MT_PERF_EFORMAT;
			break;
		}
		if (u->hi - u->lo - start > UNPACK_MAX) {
			mt_perf__why(why, whylen, "unpacks to more than %zu MiB", UNPACK_MAX >> 20);
			rc = MT_PERF_EFORMAT;
			break;
		}
		/* all read, and zstd had room left: nothing is held back */
		if (in.pos == in.size && out.pos < out.size)
			return 0;
	}
	mt_perf__unpack_break(u, why, whylen);
	return rc;
}

void mt_perf__unpack_break(struct mt_perf_unpack *u, char *why, size_t whylen)
{
	size_t n = strlen(why);
	if (!u->broken && n < whylen)
		snprintf(why + n, whylen - n, " (this and every later COMPRESSED record is lost)");
	u->broken = 1;
	u->lo = u->hi = 0;
}

const struct perf_event_header *mt_perf__unpack_next(struct mt_perf_unpack *u, int *bad)
{
	struct perf_event_header h;
	size_t left = u->hi - u->lo;
	*bad = 0;
	if (left < sizeof(h))
		return NULL;
	memcpy(&h, u->buf + u->lo, sizeof(h));
	if (h.size < sizeof(h)) {	/* the rest cannot be cut into records */
		*bad = 1;
		u->broken = 1;
		u->lo = u->hi = 0;
		return NULL;
	}
	if (left < h.size)
		return NULL;
	const uint8_t *r = u->buf + u->lo;
	if ((u->lo & 7) != 0) {	/* records hold u64s: 8-aligned for callers */
		memcpy(u->one, r, h.size);
		r = u->one;
	}
	u->lo += h.size;
	return (const struct perf_event_header *)r;
}

size_t mt_perf__unpack_drop_rest(struct mt_perf_unpack *u)
{
	size_t n = u->hi - u->lo;
	u->lo = u->hi = 0;
	return n;
}
