/* COMPRESSED records (perf record -z): a reader asked to unpack them gives
 * the records inside, in order and checked, across the one zstd stream
 * that runs through them all (a record may start in one and end in the
 * next, as perf writes them); damage and a stream cut short are errors
 * that name the COMPRESSED record and do not stop the reading. */
#include <criterion/criterion.h>
#include "tests/codec/perf_test_build.h"
#include "tests/codec/perf_test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#define TYPE_COMPRESSED 81
#define TYPE_COMPRESSED2 83	/* perf 6.16 on: u64 data_size, data, padding to 8 */

/* A record header (type, misc 0, size) at p. */
static void put_header(uint8_t *p, uint32_t type, uint16_t size)
{
	struct perf_event_header h = { .type = type, .misc = 0, .size = size };
	memcpy(p, &h, sizeof(h));
}

/* The hand-written stream with its kernel records (from the first one
 * below type 64) compressed as perf does: one zstd stream, flushed at each
 * cut, the first cut in the middle of a record, into records of type
 * (COMPRESSED or COMPRESSED2).  *nrec gets how many records were
 * compressed, *body_at where the first COMPRESSED record is; only the first
 * keep_cuts cuts are written. */
static uint8_t *compress_stream(const struct pt_stream *st, size_t *len, size_t *nrec,
				size_t *body_at, size_t keep_cuts, uint32_t type)
{
	size_t head = type == TYPE_COMPRESSED2 ? 16 : 8;
	size_t pos = 16, body = 0;
	*nrec = 0;
	while (pos + 8 <= st->len) {
		uint32_t type;
		uint16_t size;
		memcpy(&type, st->data + pos, 4);
		memcpy(&size, st->data + pos + 6, 2);
		if (type < 64 && !body)
			body = pos;
		*nrec += body != 0;
		pos += size;
	}
	cr_assert(body && *nrec >= 4);
	*body_at = body;
	size_t cuts[3] = { body + 13, body + (st->len - body) / 2 + 5, st->len };
	uint8_t *out = malloc(st->len * 2 + 4096);
	memcpy(out, st->data, body);
	size_t o = body, from = body;
	ZSTD_CStream *z = ZSTD_createCStream();
	cr_assert(!ZSTD_isError(ZSTD_initCStream(z, 3)));
	for (size_t k = 0; k < 3 && k < keep_cuts; k++) {
		ZSTD_inBuffer in = { st->data + from, cuts[k] - from, 0 };
		ZSTD_outBuffer zo = { out + o + head, st->len + 4096, 0 };
		while (in.pos < in.size)
			cr_assert(!ZSTD_isError(ZSTD_compressStream(z, &zo, &in)));
		cr_assert_eq(ZSTD_flushStream(z, &zo), 0);
		uint16_t size = (uint16_t)(head + zo.pos);
		if (type == TYPE_COMPRESSED2) {
			uint64_t data_size = zo.pos;
			memcpy(out + o + 8, &data_size, 8);
			while (size % 8)
				out[o + size++] = 0;
		}
		put_header(out + o, type, size);
		o += size;
		from = cuts[k];
	}
	ZSTD_freeCStream(z);
	/* and a record as it is after them: a FINISHED_ROUND */
	put_header(out + o, 68, 8);
	*len = o + 8;
	return out;
}

struct got {
	size_t records, unpacked, errors;
	int last_unpacked;	/* the last record's flag */
	uint8_t bytes[65536];	/* the unpacked records, concatenated */
	size_t nbytes;
	char last_error[512];
};

static void read_all(const uint8_t *data, size_t len, int unpack, struct got *g)
{
	struct mt_perf_reader *r;
	struct pt_mem m;
	struct mt_perf_item it;
	int rc;
	memset(g, 0, sizeof(*g));
	cr_assert_eq(pt_mem_reader(&r, &m, data, len, 7), 0);
	if (unpack)
		cr_assert_eq(mt_perf_reader_unpack(r), 0);
	while ((rc = mt_perf_reader_next(r, &it)) != 0) {
		if (rc < 0) {
			cr_assert(!mt_perf_reader_fatal(r), "%s", mt_perf_reader_error(r));
			g->errors++;
			snprintf(g->last_error, sizeof(g->last_error), "%s", mt_perf_reader_error(r));
			continue;
		}
		if (it.kind != MT_PERF_ITEM_RECORD)
			continue;
		g->records++;
		g->last_unpacked = it.unpacked;
		if (it.unpacked) {
			g->unpacked++;
			cr_assert_eq((uintptr_t)it.data % 8, 0, "unpacked records are 8-aligned");
			if (g->nbytes + it.size <= sizeof(g->bytes))
				memcpy(g->bytes + g->nbytes, it.data, it.size);
			g->nbytes += it.size;
		}
	}
	mt_perf_reader_free(r);
}

static void round_trip(uint32_t type)
{
	struct pt_stream st;
	pt_stream_build_ex(&st, 0);
	size_t len, nrec, body;
	uint8_t *z = compress_stream(&st, &len, &nrec, &body, 3, type);
	struct got *g = malloc(sizeof(*g));

	read_all(z, len, 1, g);
	cr_assert_eq(g->errors, 0, "%s", g->last_error);
	cr_assert_eq(g->unpacked, nrec);
	cr_assert_eq(g->nbytes, st.len - body);
	cr_assert(memcmp(g->bytes, st.data + body, g->nbytes) == 0, "the records, byte for byte");
	cr_assert_eq(g->last_unpacked, 0, "the record after them is not an unpacked one");

	/* Not asked: the COMPRESSED records come as they are. */
	read_all(z, len, 0, g);
	cr_assert_eq(g->errors, 0);
	cr_assert_eq(g->unpacked, 0);
	free(g);
	free(z);
	pt_stream_free(&st);
}

Test(perf_unpack, records_come_out_of_the_compressed_ones) { round_trip(TYPE_COMPRESSED); }
Test(perf_unpack, records_come_out_of_compressed2_ones) { round_trip(TYPE_COMPRESSED2); }

static void damage(uint32_t type, const char *name)
{
	struct pt_stream st;
	pt_stream_build_ex(&st, 0);
	size_t len, nrec, body, head = type == TYPE_COMPRESSED2 ? 16 : 8;
	struct got *g = malloc(sizeof(*g));

	/* A byte of the first payload flipped: that record and the later ones
	 * (the same zstd stream) are errors; the reading goes on to the end. */
	uint8_t *z = compress_stream(&st, &len, &nrec, &body, 3, type);
	z[body + head + 3] ^= 0x5a;
	read_all(z, len, 1, g);
	cr_assert_eq(g->errors, 3, "%zu errors: %s", g->errors, g->last_error);
	char want[160];
	snprintf(want, sizeof(want), "(%s): not unpacked", name);
	cr_assert(strstr(g->last_error, want), "%s", g->last_error);
	free(z);

	/* The stream ends after the first cut, inside a record. */
	z = compress_stream(&st, &len, &nrec, &body, 1, type);
	read_all(z, len, 1, g);
	cr_assert_eq(g->errors, 1);
	snprintf(want, sizeof(want), "record at offset %zu (%s): the input ends inside a "
		 "record it holds (13 bytes of it)", body, name);
	cr_assert_str_eq(g->last_error, want);
	free(z);
	free(g);
	pt_stream_free(&st);
}

Test(perf_unpack, damage_and_a_cut_stream_are_named) { damage(TYPE_COMPRESSED, "COMPRESSED"); }
Test(perf_unpack, damage_and_a_cut_compressed2_stream) { damage(TYPE_COMPRESSED2, "COMPRESSED2"); }

Test(perf_unpack, compressed2_data_size_past_the_record)
{
	/* One byte too many: an error naming it, and the stream stops there
	 * (the later payloads would decompress into wrong records). */
	struct pt_stream st;
	pt_stream_build_ex(&st, 0);
	size_t len, nrec, body;
	uint8_t *z = compress_stream(&st, &len, &nrec, &body, 3, TYPE_COMPRESSED2);
	uint16_t size;
	memcpy(&size, z + body + 6, 2);
	uint64_t data_size = size - 16 + 1;
	memcpy(z + body + 8, &data_size, 8);
	struct got *g = malloc(sizeof(*g));
	read_all(z, len, 1, g);
	cr_assert_eq(g->errors, 3, "%zu errors: %s", g->errors, g->last_error);
	cr_assert_eq(g->unpacked, 0);
	cr_assert(strstr(g->last_error, "(COMPRESSED2): not unpacked: an earlier COMPRESSED record "
			 "could not be"), "%s", g->last_error);
	free(z);
	/* the first error, alone */
	z = compress_stream(&st, &len, &nrec, &body, 1, TYPE_COMPRESSED2);
	memcpy(z + body + 8, &data_size, 8);
	read_all(z, len, 1, g);
	char want[200];
	snprintf(want, sizeof(want), "record at offset %zu (COMPRESSED2): data size %llu overruns "
		 "the record (this and every later COMPRESSED record is lost)", body,
		 (unsigned long long)data_size);
	cr_assert_str_eq(g->last_error, want);
	free(g);
	free(z);
	pt_stream_free(&st);
}

/* Records of 12 bytes (no kernel writes such sizes): every other one starts
 * off 8-byte alignment.  8 MiB of them come out in linear time, in 0.05 s
 * (the whole buffer was once moved for each: 9 s for 4 MiB). */
Test(perf_unpack, misaligned_records_in_linear_time, .timeout = 5)
{
	size_t n = (8u << 20) / 12, raw_len = n * 12;
	uint8_t *raw = malloc(raw_len);
	for (size_t i = 0; i < n; i++) {
		put_header(raw + 12 * i, PT_UNKNOWN_TYPE, 12);
		memset(raw + 12 * i + 8, 0, 4);
	}
	size_t cap = ZSTD_compressBound(raw_len);
	uint8_t *in = malloc(16 + 8 + cap);
	uint64_t magic = 0x32454c4946524550ULL, hsize = 16;	/* a pipe header */
	memcpy(in, &magic, 8);
	memcpy(in + 8, &hsize, 8);
	size_t c = ZSTD_compress(in + 24, cap, raw, raw_len, 3);
	cr_assert(!ZSTD_isError(c) && c + 8 < 65536);
	put_header(in + 16, TYPE_COMPRESSED, (uint16_t)(8 + c));
	struct got *g = malloc(sizeof(*g));
	read_all(in, 24 + c, 1, g);
	cr_assert_eq(g->errors, 0, "%s", g->last_error);
	cr_assert_eq(g->unpacked, n);
	free(g);
	free(in);
	free(raw);
}
