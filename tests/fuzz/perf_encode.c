/* Fuzz target: the perf stream reader, and mt-encode's promise that
 * decoding gives the input back byte for byte, whatever the input.
 *
 * Input: byte 0 holds options, the rest is the perf stream (pipe mode or a
 * perf.data file: the reader tells them apart by the header).
 *   bit 0: read through a read function (as from a pipe); else from a memfd
 *          (a regular file, read through its mapping)
 *   bit 1: --raw (no delta coding); bit 2: one encoding worker (else none)
 *   bit 3: unpack COMPRESSED records (as mt-unwind does); then the items
 *          are no longer the input, and only reading is checked
 *   bit 4: 32-bit stack hashes (--hash-bits 32)
 * Checks, as mt-encode reads (a fatal error: the rest kept unread, once):
 *   - a record that the reader returns without an error parses again with
 *     the parser of its type (perf_stream.h says callers need not check);
 *   - the items concatenate to the input, or to a prefix of it when the
 *     reader had to stop;
 *   - the .mtz written from them decodes, without damage, to exactly those
 *     bytes. */
#include "tests/fuzz/fuzz.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec/mtz.h"
#include "common/buf.h"

/* A record returned without an error must parse again. */
static void reparse(const struct mt_perf_reader *r, const struct mt_perf_item *it)
{
	const struct perf_event_header *h = it->header;
	union {
		struct mt_perf_sample s;
		struct mt_perf_mmap m;
		struct mt_perf_comm c;
		struct mt_perf_task t;
		struct mt_perf_lost l;
	} u;
	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		MT_FUZZ_CHECK(mt_perf_sample_parse(r, h, &u.s) == 0);
		MT_FUZZ_CHECK(!u.s.stack || u.s.stack_offset + u.s.stack_size <= h->size);
		MT_FUZZ_CHECK(u.s.regs_offset + 8 * (size_t)u.s.nr_regs <= h->size);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		MT_FUZZ_CHECK(mt_perf_mmap_parse(r, h, &u.m) == 0);
		MT_FUZZ_CHECK(memchr(u.m.filename, 0, (size_t)((const char *)h + h->size - u.m.filename)));
		break;
	case PERF_RECORD_COMM:
		MT_FUZZ_CHECK(mt_perf_comm_parse(r, h, &u.c) == 0);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		MT_FUZZ_CHECK(mt_perf_task_parse(r, h, &u.t) == 0);
		break;
	case PERF_RECORD_LOST:
	case PERF_RECORD_LOST_SAMPLES:
		MT_FUZZ_CHECK(mt_perf_lost_parse(r, h, &u.l) == 0);
		break;
	}
}

/* Decodes the .mtz in fd into out; 0 when intact. */
static int decode(int fd, struct mt_buf *out)
{
	struct mtz_reader *z;
	if (lseek(fd, 0, SEEK_SET) != 0 || mtz_reader_fdopen(&z, fd, "fuzz.mtz") != 0)
		return -1;
	mtz_reader_set_threads(z, 0);
	int rc = 0;
	for (;;) {
		const void *p;
		ssize_t k = mtz_reader_chunk(z, &p);
		if (k < 0)
			rc = -1;
		if (k <= 0)
			break;
		MT_FUZZ_CHECK(mt_buf_reserve(out, (size_t)k) == 0);
		mt_buf_put(out, p, (size_t)k);
	}
	if (mtz_reader_damage(z))
		rc = -1;
	mtz_reader_free(z);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned opt = data[0];
	struct mt_fuzz_source src = { .p = data + 1, .len = size - 1, .max = 4093 };
	int in_fd = -1, out_fd = -1;
	struct mt_perf_reader *r = NULL;
	struct mtz_writer *w = NULL;
	struct mt_buf items = { 0 }, back = { 0 };
	int rc;

	if (opt & 1) {
		rc = mt_perf_reader_new(&r, mt_fuzz_read, &src, "fuzz");
	} else {
		if ((in_fd = mt_fuzz_memfd("fuzz-in", src.p, src.len)) < 0)
			return 0;
		rc = mt_perf_reader_fdopen(&r, in_fd, "fuzz");
	}
	if (rc)
		goto out;
	int unpack = opt & 8;
	if (unpack && mt_perf_reader_unpack(r))
		goto out;
	struct mtz_options mo;
	mtz_options_init(&mo);
	mo.raw = !!(opt & 2);
	mo.threads = opt & 4 ? 1 : 0;
	mo.frame_size = 4096;	/* several frames from small inputs */
	mo.hash_bits = opt & 16 ? 32 : 64;
	if ((out_fd = mt_fuzz_memfd("fuzz-out", "", 0)) < 0 ||
	    mtz_writer_new(&w, out_fd, "fuzz.mtz", &mo))
		goto out;
	int salvaged = 0, stopped = 0;
	struct mt_perf_item it;
	for (;;) {
		rc = mt_perf_reader_next(r, &it);
		if (rc == 0)
			break;
		if (rc < 0 && mt_perf_reader_fatal(r)) {
			if (!salvaged++ && mt_perf_reader_salvage(r) == 0)
				continue;
			stopped = 1;
			break;
		}
		if (rc > 0 && it.kind == MT_PERF_ITEM_RECORD)
			reparse(r, &it);
		if (mtz_writer_item(w, r, &it))
			goto out;	/* out of memory only: the output is a memfd */
		MT_FUZZ_CHECK(mt_buf_reserve(&items, it.size) == 0);
		mt_buf_put(&items, it.data, it.size);
	}
	MT_FUZZ_CHECK(mtz_writer_finish(w) == 0);
	if (!unpack) {
		MT_FUZZ_CHECK(items.len <= src.len &&
			      (!items.len || memcmp(items.data, src.p, items.len) == 0));
		MT_FUZZ_CHECK(stopped || items.len == src.len);
	}
	MT_FUZZ_CHECK(decode(out_fd, &back) == 0);
	MT_FUZZ_CHECK(back.len == items.len &&
		      (!items.len || memcmp(back.data, items.data, items.len) == 0));
out:
	mtz_writer_free(w);
	mt_perf_reader_free(r);
	if (in_fd >= 0)
		close(in_fd);
	if (out_fd >= 0)
		close(out_fd);
	mt_buf_release(&items);
	mt_buf_release(&back);
	return 0;
}
