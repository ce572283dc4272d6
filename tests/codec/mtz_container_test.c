/* Unit tests of the .mtz container: a synthetic perf pipe stream written with
 * the perf writer is encoded with mtz_writer and read back with mtz_reader,
 * intact, with a byte flipped in one frame, truncated, and in raw mode. */
#include <criterion/criterion.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "codec/mtz.h"
#include "codec/perf_stream.h"
#include "common/filekind.h"
#include "common/buf.h"
#include "codec/mtz_delta.h"
#include "codec/mtz_frame.h"
#include "common/fnv.h"

#include <zstd.h>

#define NR_REGS 3		/* bits 6, 7 (sp), 8 */
#define STACK 2048

struct mem { uint8_t *p; size_t n; };

static struct mem fd_slurp(int fd)
{
	struct mem m = { 0 };
	off_t n = lseek(fd, 0, SEEK_END);
	cr_assert_geq(n, 0);
	m.n = (size_t)n;
	m.p = malloc(m.n ? m.n : 1);
	cr_assert_eq(pread(fd, m.p, m.n, 0), (ssize_t)m.n);
	return m;
}

static int memfd_with(const struct mem *m)
{
	int fd = memfd_create("mtz-test", 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, m->p, m->n), (ssize_t)m->n);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* A pipe stream: header, one attr, COMM-like filler records and nsamples
 * samples of two threads whose stacks change by a few words each time. */
static struct mem make_stream(int nsamples)
{
	int fd = memfd_create("perf", 0);
	struct mt_perf_writer *w;
	cr_assert_eq(mt_perf_writer_new(&w, fd, "perf"), 0);
	cr_assert_eq(mt_perf_writer_pipe_header(w), 0);
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER,
		.sample_regs_user = 0x1c0,
		.sample_stack_user = STACK,
	};
	uint64_t id = 42;
	cr_assert_eq(mt_perf_writer_attr(w, &attr, &id, 1), 0);

	static uint8_t stack[2][65536];
	srand(7);
	for (int t = 0; t < 2; t++)
		for (size_t i = 0; i < sizeof(stack[t]); i++)
			stack[t][i] = (uint8_t)(rand() % 5 ? 0 : rand());
	uint64_t base = 0x7ffc00000000ull;
	static uint8_t rec[8 + 40 + 8 * (1 + NR_REGS) + 8 + STACK + 8];
	for (int k = 0; k < nsamples; k++) {
		int t = k % 2;
		uint64_t sp = base + 30000 - 16 * (uint64_t)(k % 7) - (uint64_t)t;
		for (int j = 0; j < 3; j++)
			stack[t][sp - base + 8 * (size_t)(rand() % 64)] ^= (uint8_t)rand();
		size_t dyn = k % 11 == 5 ? 1000 : STACK;
		uint8_t *p = rec + 8;
		uint64_t v;
		memcpy(p, &id, 8); p += 8;
		v = 0x401000 + (uint64_t)(k % 13); memcpy(p, &v, 8); p += 8;
		uint32_t pt[2] = { 1000, 1000 + (uint32_t)t }; memcpy(p, pt, 8); p += 8;
		v = 1000000 + 997 * (uint64_t)k; memcpy(p, &v, 8); p += 8;
		v = 2; memcpy(p, &v, 8); p += 8;		/* PERF_SAMPLE_REGS_ABI_64 */
		uint64_t regs[NR_REGS] = { 0x1234 + (uint64_t)k, sp, 0x99 };
		memcpy(p, regs, sizeof(regs)); p += sizeof(regs);
		v = STACK; memcpy(p, &v, 8); p += 8;
		memcpy(p, stack[t] + (sp - base), dyn);
		memset(p + dyn, 0xab, STACK - dyn);	/* stale ring bytes */
		p += STACK;
		v = dyn; memcpy(p, &v, 8); p += 8;
		struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER,
					       (uint16_t)(p - rec) };
		memcpy(rec, &h, 8);
		cr_assert_eq(mt_perf_writer_record(w, (struct perf_event_header *)rec), 0);
	}
	cr_assert_eq(mt_perf_writer_free(w), 0);
	struct mem m = fd_slurp(fd);
	close(fd);
	return m;
}

static int threads = 2;	/* mtz_options default */

static struct mem encode(const struct mem *in, int raw, size_t frame_size, struct mtz_stats *st)
{
	int ifd = memfd_with(in);
	int ofd = memfd_create("mtz", 0);
	struct mt_perf_reader *r;
	struct mtz_writer *w;
	struct mtz_options o;
	mtz_options_init(&o);
	o.raw = raw;
	o.frame_size = frame_size;
	o.threads = threads;
	cr_assert_eq(mt_perf_reader_fdopen(&r, ifd, "in"), 0);
	cr_assert_eq(mtz_writer_new(&w, ofd, "out", &o), 0);
	struct mt_perf_item item;
	int rc;
	while ((rc = mt_perf_reader_next(r, &item)) == 1)
		cr_assert_eq(mtz_writer_item(w, r, &item), 0, "%s", mtz_writer_error(w));
	cr_assert_eq(rc, 0, "%s", mt_perf_reader_error(r));
	cr_assert_eq(mtz_writer_finish(w), 0);
	mtz_writer_stats(w, st);
	mtz_writer_free(w);
	mt_perf_reader_free(r);
	struct mem m = fd_slurp(ofd);
	close(ifd);
	close(ofd);
	cr_assert_eq(st->bytes_out, m.n);
	return m;
}

struct decoded {
	struct mem out;
	struct mtz_stats st;
	uint64_t damage;
	int warnings;
	char last[512];
};

static void on_warn(void *ctx, const char *msg)
{
	struct decoded *d = ctx;
	d->warnings++;
	snprintf(d->last, sizeof(d->last), "%s", msg);
}

static int dec_threads = 2;	/* the reader's default */

/* Decode from the start, or (seek != UINT64_MAX) from the frame that holds
 * original offset seek, whose start goes to *start. */
static struct decoded decode_at(const struct mem *mtz, uint64_t seek, uint64_t *start)
{
	struct decoded d = { 0 };
	int fd = memfd_with(mtz);
	struct mtz_reader *r;
	cr_assert_eq(mtz_reader_fdopen(&r, fd, "t.mtz"), 0);
	mtz_reader_set_warn(r, on_warn, &d);
	mtz_reader_set_threads(r, dec_threads);
	if (seek != UINT64_MAX) {
		cr_assert_eq(mtz_reader_seek(r, seek, start), 0);
		cr_assert_eq(mtz_reader_seek(r, seek, start), 0, "again before reading");
	}
	struct mt_buf b = { 0 };
	for (;;) {
		cr_assert_eq(mt_buf_reserve(&b, 4096), 0);
		ssize_t n = mtz_reader_read(r, b.data + b.len, 4096);
		cr_assert_geq(n, 0);
		if (!n)
			break;
		b.len += (size_t)n;
	}
	d.out.p = b.data;
	d.out.n = b.len;
	d.damage = mtz_reader_damage(r);
	mtz_reader_stats(r, &d.st);
	if (seek != UINT64_MAX)
		cr_assert_eq(mtz_reader_seek(r, 0, start), MTZ_EFORMAT, "seek after reading");
	mtz_reader_free(r);
	close(fd);
	return d;
}

static struct decoded decode(const struct mem *mtz)
{
	return decode_at(mtz, UINT64_MAX, NULL);
}

/* Frame headers of an .mtz, found by walking the sizes; frame 0's copy
 * (version 4), checked to be the same bytes, is left out. */
static size_t frames_of(const struct mem *m, size_t *offs, struct mtz_frame_header *hs, size_t max)
{
	size_t pos = MTZ_FILE_HEADER_SIZE, k = 0;
	while (pos + MTZ_FRAME_HEADER_SIZE <= m->n && k < max) {
		struct mtz_frame_header h;
		cr_assert(mtz_frame_header_parse(m->p + pos, &h), "header at %zu", pos);
		if (h.end)
			break;
		if (k == 1 && h.frame_no == 0) {
			size_t len = MTZ_FRAME_HEADER_SIZE + h.comp_size;
			cr_assert_eq(pos, offs[0] + len, "frame 0's copy right after it");
			cr_assert(memcmp(m->p + pos, m->p + offs[0], len) == 0, "the same bytes");
			pos += len;
			continue;
		}
		cr_assert_eq(h.frame_no, k, "frame %zu at %zu", k, pos);
		offs[k] = pos;
		hs[k++] = h;
		pos += MTZ_FRAME_HEADER_SIZE + h.comp_size;
	}
	return k;
}

Test(mtz_container, round_trip_many_frames)
{
	struct mem in = make_stream(400);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 65536, &st);
	cr_assert_eq(st.samples, 400);
	cr_assert_eq(st.coded, 400);
	cr_assert_eq(st.fallbacks, 0);
	cr_assert_geq(st.frames, 8);
	/* each frame starts both threads afresh; a sample whose valid stack
	 * grows from 1000 to 2048 bytes changes too much for a delta */
	cr_assert_geq(st.keyframes, 2 * st.frames);
	cr_assert_lt(st.keyframes, 2 * st.frames + 400 / 11 + 1);
	cr_assert_lt(z.n * 10, in.n, "%zu bytes from %zu", z.n, in.n);
	cr_assert(mtz_is_mtz(z.p, z.n));
	cr_assert_not(mtz_is_mtz(in.p, in.n));
	struct decoded d = decode(&z);
	cr_assert_eq(d.damage, 0, "%s", d.last);
	cr_assert_eq(d.out.n, in.n);
	cr_assert(memcmp(d.out.p, in.p, in.n) == 0);
	cr_assert_eq(d.st.frames, st.frames);
	cr_assert_eq(d.st.samples, 400);
	free(in.p); free(z.p); free(d.out.p);
}

/* Worker threads change when frames are encoded, not what is written. */
Test(mtz_container, same_output_whatever_the_threads)
{
	struct mem in = make_stream(300);
	struct mtz_stats st0, st;
	threads = 0;
	struct mem z0 = encode(&in, 0, 16384, &st0);
	for (int t = 1; t <= 4; t++) {
		threads = t;
		struct mem z = encode(&in, 0, 16384, &st);
		cr_assert_eq(z.n, z0.n, "%d threads", t);
		cr_assert(memcmp(z.p, z0.p, z.n) == 0, "%d threads", t);
		cr_assert_eq(st.keyframes, st0.keyframes);
		cr_assert_eq(st.coded, st0.coded);
		free(z.p);
	}
	cr_assert_gt(st0.frames, 10);
	free(in.p); free(z0.p);
}

/* A frame encoded while a CPU is free has its largest section compressed
 * on a helper thread: the same bytes as without worker threads. */
Test(mtz_container, largest_section_beside_gives_the_same_bytes)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < 2)
		cr_skip_test("one CPU to run on: no helper thread is started");
	struct mem in = make_stream(8000);
	struct mtz_stats st0, st;
	threads = 0;
	struct mem z0 = encode(&in, 0, MTZ_FRAME_SIZE_DEFAULT, &st0);
	threads = 1;	/* one frame, one worker: a CPU is free */
	struct mem z = encode(&in, 0, MTZ_FRAME_SIZE_DEFAULT, &st);
	threads = 2;
	cr_assert_eq(st0.frames, 2);	/* the stream's header part, the rest */
	cr_assert_eq(st0.frames_beside, 0);
	cr_assert_eq(st.frames_beside, 1);
	cr_assert_eq(z.n, z0.n);
	cr_assert(memcmp(z.p, z0.p, z.n) == 0);
	struct decoded d = decode(&z);
	cr_assert_eq(d.damage, 0, "%s", d.last);
	cr_assert_eq(d.out.n, in.n);
	cr_assert(memcmp(d.out.p, in.p, in.n) == 0);
	free(in.p); free(z0.p); free(z.p); free(d.out.p);
}

Test(mtz_container, raw_mode_round_trip)
{
	struct mem in = make_stream(50);
	struct mtz_stats st;
	struct mem z = encode(&in, 1, 65536, &st);
	cr_assert_eq(st.coded, 0);
	cr_assert_eq(mt_ld16(z.p + 10), MTZ_FLAG_RAW);
	struct decoded d = decode(&z);
	cr_assert_eq(d.damage, 0);
	cr_assert_eq(d.out.n, in.n);
	cr_assert(memcmp(d.out.p, in.p, in.n) == 0);
	free(in.p); free(z.p); free(d.out.p);
}

/* Damage at byte `at` of frame k loses frame k's original bytes only. */
static void damage_frame(size_t k, int in_header)
{
	struct mem in = make_stream(300);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 32768, &st);
	size_t offs[256];
	struct mtz_frame_header hs[256];
	size_t nf = frames_of(&z, offs, hs, 256);
	cr_assert_gt(nf, k + 1);
	size_t at = offs[k] + (in_header ? 13 : MTZ_FRAME_HEADER_SIZE + hs[k].comp_size / 2);
	z.p[at] ^= 0x10;
	struct decoded d = decode(&z);
	cr_assert_eq(d.damage, 1);
	cr_assert_eq(d.warnings, 1);
	cr_assert_eq(d.st.frames_lost, 1);
	cr_assert_eq(d.st.frames, nf - 1);
	char want[64];
	snprintf(want, sizeof(want), "frame %zu at offset %zu", k, offs[k]);
	cr_assert(strstr(d.last, want), "message '%s' lacks '%s'", d.last, want);
	/* the output is the input without frame k's bytes */
	size_t a = hs[k].out_offset, b = a + hs[k].out_size;
	cr_assert_eq(d.out.n, in.n - (b - a));
	cr_assert(memcmp(d.out.p, in.p, a) == 0);
	cr_assert(memcmp(d.out.p + a, in.p + b, in.n - b) == 0);
	free(in.p); free(z.p); free(d.out.p);
}

Test(mtz_container, flipped_payload_byte_loses_one_frame) { damage_frame(3, 0); }
Test(mtz_container, flipped_header_byte_loses_one_frame) { damage_frame(2, 1); }
Test(mtz_container, flipped_byte_in_second_frame) { damage_frame(1, 0); }

/* Frame 0, the stream's header and attr, is there twice: damage to one copy
 * loses nothing (reported); to both, frame 0. */
static void damage_frame0(int copies, int in_header)
{
	struct mem in = make_stream(300);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 32768, &st);
	size_t offs[256];
	struct mtz_frame_header hs[256];
	size_t nf = frames_of(&z, offs, hs, 256);
	cr_assert_gt(nf, 2);
	size_t len0 = MTZ_FRAME_HEADER_SIZE + hs[0].comp_size, h = hs[1].out_offset;
	cr_assert_eq(hs[0].out_size, h);
	cr_assert_lt(h, 200, "frame 0 holds the header and the attr only: %zu bytes", h);
	for (int c = 0; c < copies; c++)
		z.p[offs[0] + (size_t)c * len0 +
		    (in_header ? 13 : MTZ_FRAME_HEADER_SIZE + hs[0].comp_size / 2)] ^= 0x10;
	struct decoded d = decode(&z);
	cr_assert_eq(d.damage, (uint64_t)copies);
	cr_assert_eq(d.st.frames_lost, copies == 2);
	cr_assert_eq(d.st.frames, nf - (copies == 2));
	char want[160];
	if (copies == 1) {
		cr_assert_eq(d.out.n, in.n);
		cr_assert(memcmp(d.out.p, in.p, in.n) == 0);
		if (in_header)
			snprintf(want, sizeof(want), "frame 0 at offset 16: damaged header; skipped "
				 "%zu bytes to its copy at offset %zu (no frame lost)", len0,
				 16 + len0);
		else
			snprintf(want, sizeof(want), "frame 0 at offset 16: checksum mismatch; frame "
				 "skipped, its copy is read instead");
	} else {
		cr_assert_eq(d.out.n, in.n - h);
		cr_assert(memcmp(d.out.p, in.p + h, in.n - h) == 0);
		snprintf(want, sizeof(want), "frame 0 (its copy) at offset %zu: checksum mismatch; "
			 "frame skipped (original bytes 0..%zu lost)", 16 + len0, h);
	}
	cr_assert(strstr(d.last, want), "message '%s' lacks '%s'", d.last, want);
	free(in.p); free(z.p); free(d.out.p);
}

Test(mtz_container, frame0_damaged_its_copy_is_read) { damage_frame0(1, 0); }
Test(mtz_container, frame0_header_damaged_its_copy_is_read) { damage_frame0(1, 1); }
Test(mtz_container, frame0_and_its_copy_damaged_lose_frame0) { damage_frame0(2, 0); }
Test(mtz_container, frame0_any_reader_threads)
{
	for (int t = 0; t <= 8; t += 4) {
		dec_threads = t;
		damage_frame0(1, 0);
		damage_frame0(2, 0);
	}
	dec_threads = 2;
}
/* The same without reader threads, and with many. */
Test(mtz_container, flipped_bytes_any_reader_threads)
{
	for (int t = 0; t <= 8; t += 4) {
		dec_threads = t;
		damage_frame(1, 0);
		damage_frame(4, 1);
	}
}

Test(mtz_container, truncation_is_reported)
{
	struct mem in = make_stream(200);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 32768, &st);
	size_t offs[256];
	struct mtz_frame_header hs[256];
	size_t nf = frames_of(&z, offs, hs, 256);
	cr_assert_gt(nf, 2);
	/* inside the last frame: the frames before it come out whole */
	struct mem cut = { z.p, offs[nf - 1] + 100 };
	struct decoded d = decode(&cut);
	cr_assert_eq(d.damage, 1);
	cr_assert(strstr(d.last, "truncated"), "%s", d.last);
	cr_assert_eq(d.out.n, hs[nf - 1].out_offset);
	cr_assert(memcmp(d.out.p, in.p, d.out.n) == 0);
	free(d.out.p);
	/* only the end marker missing: all data, still reported */
	cut.n = z.n - MTZ_FRAME_HEADER_SIZE;
	d = decode(&cut);
	cr_assert_eq(d.damage, 1);
	cr_assert_eq(d.out.n, in.n);
	free(d.out.p);
	/* every prefix: no crash, never more output than the input had */
	for (size_t n = MTZ_FILE_HEADER_SIZE; n < z.n; n += 97) {
		cut.n = n;
		d = decode(&cut);
		cr_assert_geq(d.damage, 1);
		cr_assert_leq(d.out.n, in.n);
		cr_assert(memcmp(d.out.p, in.p, d.out.n) == 0);
		free(d.out.p);
	}
	free(in.p); free(z.p);
}

Test(mtz_container, not_mtz_and_unknown_version)
{
	struct mem in = make_stream(3);
	int fd = memfd_with(&in);
	struct mtz_reader *r;
	cr_assert_eq(mtz_reader_fdopen(&r, fd, "x"), MTZ_EMAGIC);
	cr_assert_null(r);
	close(fd);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 65536, &st);
	z.p[8] = 9;	/* version 9 */
	fd = memfd_with(&z);
	cr_assert_eq(mtz_reader_fdopen(&r, fd, "x"), MTZ_EVERSION);
	close(fd);
	struct mem shortz = { z.p, 11 };
	fd = memfd_with(&shortz);
	cr_assert_eq(mtz_reader_fdopen(&r, fd, "x"), MTZ_ETRUNC);
	close(fd);
	free(in.p); free(z.p);
}

/* Many single-byte flips anywhere: never a crash, and whatever comes out
 * is the input with whole frames missing. */
Test(mtz_container, random_flips_lose_whole_frames_only)
{
	struct mem in = make_stream(120);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 16384, &st);
	srand(99);
	for (int i = 0; i < 300; i++) {
		size_t at = MTZ_FILE_HEADER_SIZE + (size_t)rand() % (z.n - MTZ_FILE_HEADER_SIZE);
		uint8_t bit = (uint8_t)(1u << (rand() % 8));
		z.p[at] ^= bit;
		struct decoded d = decode(&z);
		z.p[at] ^= bit;
		cr_assert_geq(d.damage, 1, "flip at %zu went unnoticed", at);
		cr_assert_leq(d.out.n, in.n);
		free(d.out.p);
	}
	free(in.p); free(z.p);
}

/* Frames whose checksums are right but whose sections are garbage (as a
 * hostile file would have them): refused as damaged, never a crash. */
Test(mtz_container, hostile_sections_are_refused)
{
	srand(1234);
	for (int round = 0; round < 300; round++) {
		uint8_t raw[MTZ_NSEC][600];
		size_t len[MTZ_NSEC];
		for (int i = 0; i < MTZ_NSEC; i++) {
			len[i] = (size_t)(rand() % 600);
			for (size_t k = 0; k < len[i]; k++)
				raw[i][k] = (uint8_t)rand();
		}
		/* mostly SAMPLE entries with small, plausible fields */
		for (size_t k = 0; k + 21 <= len[MTZ_SEC_OPS]; k += 21) {
			uint8_t *o = raw[MTZ_SEC_OPS] + k;
			o[0] = (uint8_t)(rand() % 4);
			mt_st16(o + 1, (uint16_t)(rand() % 700));	/* rec_size */
			mt_st16(o + 3, (uint16_t)(rand() % 64));	/* regs_offset */
			o[5] = (uint8_t)(rand() % 4);			/* nr_regs */
			o[6] = (uint8_t)(rand() % 2 ? 0xff : 0);	/* sp_index */
			o[7] = (uint8_t)(rand() % 64);			/* flags */
			o[8] = (uint8_t)(rand() % 4 ? 0 : rand() % 20);	/* ref */
			mt_st16(o + 9, (uint16_t)(rand() % 100));	/* stack_offset */
			mt_st16(o + 11, (uint16_t)(rand() % 300));	/* dyn_size */
			mt_st16(o + 13, (uint16_t)(rand() % 300));	/* pad_size */
			mt_st16(o + 15, 0);
			mt_st32(o + 17, (uint32_t)(rand() % 3));	/* tid */
		}
		uint8_t file[8192];
		size_t n = MTZ_FILE_HEADER_SIZE + MTZ_FRAME_HEADER_SIZE;
		mtz_file_header_pack(file, 0);
		uint8_t *payload = file + n;
		size_t pn = 8 * MTZ_NSEC, total = 0;
		for (int i = 0; i < MTZ_NSEC; i++) {
			size_t z = 0;
			if (len[i]) {
				z = ZSTD_compress(payload + pn, sizeof(file) - n - pn - 64, raw[i], len[i], 1);
				cr_assert(!ZSTD_isError(z));
			}
			mt_st32(payload + 8 * i, (uint32_t)len[i]);
			mt_st32(payload + 8 * i + 4, (uint32_t)z);
			pn += z;
			total += len[i];
		}
		if (!total)
			continue;
		struct mtz_frame_header fh = {
			.comp_size = (uint32_t)pn, .raw_size = (uint32_t)total,
			.out_size = (uint32_t)(rand() % 4000), .payload_hash = mt_fnv(payload, pn),
		};
		mtz_frame_header_pack(file + MTZ_FILE_HEADER_SIZE, &fh);
		n += pn;
		struct mtz_frame_header end = { .end = 1, .frame_no = 1, .out_offset = fh.out_size };
		mtz_frame_header_pack(file + n, &end);
		n += MTZ_FRAME_HEADER_SIZE;
		struct mem m = { file, n };
		struct decoded d = decode(&m);
		/* garbage never decodes into exactly out_size bytes by chance here */
		cr_assert_geq(d.damage, 1, "round %d: garbage accepted", round);
		cr_assert_eq(d.out.n, 0);
		free(d.out.p);
	}
}

/* mtz_reader_seek: from any original offset, reading resumes at the start of
 * the frame holding it and gives the original bytes from there to the end,
 * without damage; reading first, a pipe, or an offset past the end refuse. */
Test(mtz_container, seek_resumes_at_the_frame_holding_an_offset)
{
	struct mem in = make_stream(400);
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 65536, &st);
	size_t offs[64];
	struct mtz_frame_header hs[64];
	size_t nf = frames_of(&z, offs, hs, 64);
	cr_assert_geq(nf, 4);
	uint64_t wants[] = { 0, 1, hs[2].out_offset, hs[2].out_offset - 1, in.n - 1 };
	for (size_t i = 0; i < sizeof(wants) / sizeof(wants[0]); i++) {
		uint64_t start = UINT64_MAX;
		struct decoded d = decode_at(&z, wants[i], &start);
		size_t k = 0;
		while (k < nf && !(hs[k].out_offset <= wants[i] && wants[i] < hs[k].out_offset + hs[k].out_size))
			k++;
		cr_assert_lt(k, nf);
		cr_assert_eq(start, hs[k].out_offset, "offset %llu", (unsigned long long)wants[i]);
		cr_assert_eq(d.damage, 0, "%s", d.last);
		cr_assert_eq(d.out.n, in.n - start);
		cr_assert(memcmp(d.out.p, in.p + start, d.out.n) == 0);
		free(d.out.p);
	}
	int fd = memfd_with(&z);
	struct mtz_reader *r;
	uint64_t start;
	cr_assert_eq(mtz_reader_fdopen(&r, fd, "t.mtz"), 0);
	cr_assert_eq(mtz_reader_seek(r, in.n, &start), MTZ_EFORMAT, "past the end");
	mtz_reader_free(r);
	close(fd);
	int p[2];
	cr_assert_eq(pipe(p), 0);
	cr_assert_eq(write(p[1], z.p, 4096), 4096);
	cr_assert_eq(mtz_reader_fdopen(&r, p[0], "pipe"), 0);
	cr_assert_eq(mtz_reader_seek(r, 0, &start), MTZ_EFORMAT, "a pipe");
	mtz_reader_free(r);
	close(p[0]);
	close(p[1]);
	free(in.p);
	free(z.p);
}

/* A frame whose checksum holds but whose entry k is bad (a file written
 * wrong, or on purpose): the reader hands a frame's records out while it
 * rebuilds the rest, so the records before the last handout before entry k
 * come out, the rest of the frame is reported lost, and reading goes on.
 * The damage: the first SAMPLE entry from `where` of the way through gets a
 * nonzero reserved field; or, with bad_tag, the entry there an unknown tag,
 * which already the head section's walk (version 3, mtz_headcols.h) meets:
 * then the whole frame is lost. */
static struct mem with_bad_entry(const struct mem *z, double where, int bad_tag,
				 size_t *entry_at)
{
	size_t offs[3];
	struct mtz_frame_header hs[3];
	cr_assert_eq(frames_of(z, offs, hs, 3), 2, "frame 0 and one frame wanted");
	const uint8_t *pl = z->p + offs[1] + MTZ_FRAME_HEADER_SIZE;
	uint8_t *sec[MTZ_NSEC];
	size_t len[MTZ_NSEC], in = 8 * MTZ_NSEC;
	for (int i = 0; i < MTZ_NSEC; i++) {
		len[i] = mt_ld32(pl + 8 * i);
		size_t zl = mt_ld32(pl + 8 * i + 4);
		sec[i] = malloc(len[i] + 1);
		if (len[i])
			cr_assert_eq(ZSTD_decompress(sec[i], len[i], pl + in, zl), len[i]);
		in += zl;
	}
	/* walk the ops section to the entry `where` of the way through */
	size_t n = 0, pos = 0, target = 0;
	while (pos < len[MTZ_SEC_OPS]) {
		n++;
		pos += 1 + (sec[MTZ_SEC_OPS][pos] == MTZ_TAG_SAMPLE ? MTZ_SAMPLE_OPS : 4);
	}
	cr_assert_eq(pos, len[MTZ_SEC_OPS]);
	for (size_t k = 0, stop = (size_t)((double)n * where); k < stop; k++)
		target += 1 + (sec[MTZ_SEC_OPS][target] == MTZ_TAG_SAMPLE ? MTZ_SAMPLE_OPS : 4);
	if (bad_tag) {
		sec[MTZ_SEC_OPS][target] = 0x7f;	/* no such tag */
	} else {
		while (sec[MTZ_SEC_OPS][target] != MTZ_TAG_SAMPLE)
			target += 5;
		sec[MTZ_SEC_OPS][target + 1 + 14] = 1;	/* reserved, must be 0 */
	}
	*entry_at = target;
	struct mem m = { malloc(z->n + 4096), 0 };
	memcpy(m.p, z->p, offs[1]);	/* the file header, frame 0 twice */
	uint8_t *np = m.p + offs[1] + MTZ_FRAME_HEADER_SIZE;
	size_t out = 8 * MTZ_NSEC;
	for (int i = 0; i < MTZ_NSEC; i++) {
		size_t zl = 0;
		if (len[i]) {
			zl = ZSTD_compress(np + out, z->n + 4096 - out - 200, sec[i], len[i], 1);
			cr_assert(!ZSTD_isError(zl));
		}
		mt_st32(np + 8 * i, (uint32_t)len[i]);
		mt_st32(np + 8 * i + 4, (uint32_t)zl);
		out += zl;
		free(sec[i]);
	}
	struct mtz_frame_header h = hs[1];
	h.comp_size = (uint32_t)out;
	h.payload_hash = mt_fnv(np, out);
	mtz_frame_header_pack(m.p + offs[1], &h);
	m.n = offs[1] + MTZ_FRAME_HEADER_SIZE + out;
	/* the original end marker */
	memcpy(m.p + m.n, z->p + z->n - MTZ_FRAME_HEADER_SIZE, MTZ_FRAME_HEADER_SIZE);
	m.n += MTZ_FRAME_HEADER_SIZE;
	return m;
}

Test(mtz_container, bad_entry_under_a_valid_checksum_loses_the_rest_of_its_frame)
{
	struct mem in = make_stream(800);	/* ~1.8 MB: several handouts */
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 8u << 20, &st);
	cr_assert_eq(st.frames, 2);	/* the header part, the records */
	size_t offs[3];
	struct mtz_frame_header hs[3];
	cr_assert_eq(frames_of(&z, offs, hs, 3), 2);
	size_t head = hs[1].out_offset;
	for (int t = 0; t <= 2; t++) {
		dec_threads = t;
		size_t at;
		struct mem bad = with_bad_entry(&z, 0.75, 0, &at);
		struct decoded d = decode(&bad);
		cr_assert_eq(d.damage, 1, "%d threads", t);
		cr_assert_eq(d.warnings, 1);
		cr_assert_eq(d.st.frames_lost, 1);
		cr_assert_eq(d.st.frames, 1);
		/* some records came out, whole, and not past the bad one (3/4 in) */
		cr_assert_gt(d.out.n, head);
		cr_assert_lt(d.out.n, in.n * 3 / 4 + 4096);
		cr_assert(memcmp(d.out.p, in.p, d.out.n) == 0);
		cr_assert_eq(d.st.bytes_out, d.out.n);
		char want[160];
		snprintf(want, sizeof(want), "frame 1 at offset %zu: entry at ops +%zu: ",
			 offs[1], at);
		cr_assert(strstr(d.last, want), "message '%s' lacks '%s'", d.last, want);
		snprintf(want, sizeof(want), "rest of the frame skipped (original bytes %zu..%zu lost)",
			 d.out.n, in.n);
		cr_assert(strstr(d.last, want), "message '%s' lacks '%s'", d.last, want);
		free(d.out.p);
		/* the same entry near the start: nothing was handed out yet */
		free(bad.p);
		bad = with_bad_entry(&z, 0.01, 0, &at);
		d = decode(&bad);
		cr_assert_eq(d.damage, 1);
		cr_assert_eq(d.out.n, head);
		snprintf(want, sizeof(want), "frame skipped (original bytes %zu..%zu lost)", head,
			 in.n);
		cr_assert(strstr(d.last, want), "message '%s' lacks '%s'", d.last, want);
		free(d.out.p);
		free(bad.p);
		/* an unknown tag 3/4 in: the whole frame */
		bad = with_bad_entry(&z, 0.75, 1, &at);
		d = decode(&bad);
		cr_assert_eq(d.damage, 1);
		cr_assert_eq(d.out.n, head);
		cr_assert(strstr(d.last, "head section: its column order does not match the "
				 "entries"), "message '%s'", d.last);
		cr_assert(strstr(d.last, want), "message '%s' lacks '%s'", d.last, want);
		free(d.out.p);
		free(bad.p);
	}
	dec_threads = 2;
	free(in.p); free(z.p);
}

/* A reader freed after a little reading, with workers decoding ahead and
 * waiting for the consumer to catch up: no hang, whatever the threads. */
Test(mtz_container, freed_while_workers_wait_ahead, .timeout = 60)
{
	struct mem in = make_stream(9000);	/* ~20 MB: workers run 8 MiB ahead */
	struct mtz_stats st;
	struct mem z = encode(&in, 0, 12u << 20, &st);
	cr_assert_geq(st.frames, 2);
	for (int t = 0; t <= 2; t++) {
		int fd = memfd_with(&z);
		struct mtz_reader *r;
		cr_assert_eq(mtz_reader_fdopen(&r, fd, "t.mtz"), 0);
		mtz_reader_set_threads(r, t);
		static uint8_t buf[4096];
		for (size_t got = 0; got < sizeof(buf);) {	/* frame 0 is short */
			ssize_t k = mtz_reader_read(r, buf + got, sizeof(buf) - got);
			cr_assert_gt(k, 0);
			got += (size_t)k;
		}
		cr_assert(memcmp(buf, in.p, sizeof(buf)) == 0);
		usleep(200000);		/* let the workers reach their limit */
		mtz_reader_free(r);
		close(fd);
	}
	free(in.p); free(z.p);
}

/* mt_fnv4 is four mt_fnv calls: every length 0..80 in each position,
 * so that each chain stops at its own length and finishes its tail bytes;
 * and the hash itself, by its definition, on a known input. */
Test(mtz_container, hash4_equals_four_hashes)
{
	unsigned char buf[4][96];
	srand(11);
	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 96; i++)
			buf[k][i] = (unsigned char)rand();
	for (size_t n = 0; n <= 80; n++) {
		const unsigned char *p[4] = { buf[0], buf[1] + 1, buf[2] + 3, buf[3] + 7 };
		size_t len[4] = { n, (n * 7) % 81, 80 - n, n / 3 };
		uint64_t h[4];
		mt_fnv4(p, len, h);
		for (int k = 0; k < 4; k++)
			cr_assert_eq(h[k], mt_fnv(p[k], len[k]), "chain %d, %zu bytes", k, len[k]);
	}
	/* one word then one byte, by hand: ((B ^ w) * P ^ b) * P */
	unsigned char nine[9] = { 1, 2, 3, 4, 5, 6, 7, 8, 9 };
	uint64_t w = 0x0807060504030201ull;
	uint64_t want = (((MT_FNV_BASIS ^ w) * MT_FNV_PRIME) ^ 9) * MT_FNV_PRIME;
	cr_assert_eq(mt_fnv(nine, 9), want);
	cr_assert_eq(mt_fnv(nine, 0), MT_FNV_BASIS);
}

/* common/filekind.c keeps its own copies of the magics (common/ depends on
 * nothing): they must be the codec's. */
Test(filekind, tells_the_codecs_files_apart)
{
	uint8_t b[32] = { 0 };
	memcpy(b, MTZ_MAGIC, MTZ_MAGIC_SIZE);
	cr_assert_eq(mt_file_kind(b, sizeof(b)), MT_FILE_MTZ);
	cr_assert(mtz_is_mtz(b, sizeof(b)));
	memcpy(b, "PERFILE2", 8);
	mt_st64(b + 8, MT_PERF_PIPE_HEADER_SIZE);
	cr_assert_eq(mt_file_kind(b, sizeof(b)), MT_FILE_PERF_PIPE);
	mt_st64(b + 8, MT_PERF_FILE_HEADER_SIZE);
	cr_assert_eq(mt_file_kind(b, sizeof(b)), MT_FILE_PERF_DATA);
	cr_assert_eq(mt_file_kind("# mt-unwind 1\n", 14), MT_FILE_UNWIND_TEXT);
	cr_assert_eq(mt_file_kind(b, 0), MT_FILE_EMPTY);
}

/* Collapsed stacks: a whole first line "STACK COUNT". */
Test(filekind, tells_collapsed_stacks_by_their_first_line)
{
	cr_assert_eq(mt_file_kind("main;f 10\n", 10), MT_FILE_FOLDED);
	cr_assert_eq(mt_file_kind("operator new;f (a.c:3) 7\nx", 26), MT_FILE_FOLDED);
	cr_assert_eq(mt_file_kind("main;f 10", 9), MT_FILE_OTHER);	/* line not whole */
	cr_assert_eq(mt_file_kind("main;f\t10\n", 10), MT_FILE_OTHER);
	cr_assert_eq(mt_file_kind("main;f 1x\n", 10), MT_FILE_OTHER);
	cr_assert_eq(mt_file_kind(" 10\n", 4), MT_FILE_OTHER);
	cr_assert_eq(mt_file_kind("hello world\n", 12), MT_FILE_OTHER);
}
