/* Truncated, corrupt and hostile inputs: each gives its error code and a
 * message naming the byte offset and record type; nothing crashes or hangs
 * (run under `make SANITIZE=1 check` too). */
#include <criterion/criterion.h>
#include "tests/codec/perf_test_util.h"
#include "tests/codec/perf_test_build.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ITEMS 100000

/* Drain data; the first error must be code with every needle in its message.
 * @return : the reader (for more checks); the caller frees it. */
static struct mt_perf_reader *expect(const void *data, size_t len, int code,
				     const char *n1, const char *n2, const char *n3)
{
	static struct pt_mem m;
	struct mt_perf_reader *r;
	const char *msg;
	size_t items;
	int ret;

	ret = pt_mem_reader(&r, &m, data, len, 0);
	if (ret == 0)
		ret = pt_drain(r, MAX_ITEMS, &items);
	cr_assert_eq(ret, code, "got %d (%s), want %d: %s", ret, mt_perf_strerror(ret), code,
		     mt_perf_reader_error(r));
	msg = mt_perf_reader_error(r);
	cr_assert(!n1 || strstr(msg, n1), "message '%s' lacks '%s'", msg, n1);
	cr_assert(!n2 || strstr(msg, n2), "message '%s' lacks '%s'", msg, n2);
	cr_assert(!n3 || strstr(msg, n3), "message '%s' lacks '%s'", msg, n3);
	return r;
}

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void set_size(uint8_t *rec, uint16_t size)
{
	memcpy(rec + 6, &size, 2);
}

static uint16_t rec_size(const uint8_t *rec)
{
	uint16_t s;

	memcpy(&s, rec + 6, 2);
	return s;
}

/* "offset N " or "offset N:" in a message. */
static int names_offset(const char *msg, size_t off)
{
	char a[48], b[48];

	snprintf(a, sizeof(a), "offset %zu ", off);
	snprintf(b, sizeof(b), "offset %zu:", off);
	return strstr(msg, a) || strstr(msg, b);
}

static char *at(size_t off)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "offset %zu (", off);
	return buf;
}

/* ---- headers ------------------------------------------------------------ */

Test(perf_hostile, truncated_pipe_header)
{
	struct pt_stream st;

	pt_stream_build(&st);
	for (size_t n = 0; n < 16; n++)
		expect(st.data, n, MT_PERF_ETRUNC, "header at offset 0", "truncated", NULL);
	pt_stream_free(&st);
}

Test(perf_hostile, not_a_perf_stream)
{
	static const char junk[] = "hello, this is not perf data at all";
	uint8_t swapped[16];
	uint64_t magic = __builtin_bswap64(0x32454c4946524550ULL);

	expect(junk, sizeof(junk), MT_PERF_EMAGIC, "offset 0", "PERFILE2", NULL);
	memcpy(swapped, &magic, 8);
	put64(swapped + 8, __builtin_bswap64(16));
	expect(swapped, 16, MT_PERF_EMAGIC, "offset 0", "byte-swapped", NULL);
}

Test(perf_hostile, header_size_nonsense)
{
	uint8_t h[200] = { 0 };

	put64(h, 0x32454c4946524550ULL);
	put64(h + 8, 17);
	expect(h, sizeof(h), MT_PERF_EMAGIC, "offset 0", "header size 17", NULL);
}

/* ---- records -------------------------------------------------------------- */

Test(perf_hostile, record_size_zero)
{
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct mt_perf_item it;

	pt_stream_build(&st);
	set_size(st.data + st.off_sample_a, 0);
	r = expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_sample_a), "(SAMPLE)",
		   "size 0");
	/* Framing is lost: the error sticks rather than looping. */
	cr_assert_eq(mt_perf_reader_next(r, &it), MT_PERF_EFORMAT);
	mt_perf_reader_free(r);
	set_size(st.data + st.off_sample_a, 7);
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_sample_a),
				   "(SAMPLE)", "size 7"));
	pt_stream_free(&st);
}

/* Cut anywhere: a clean end exactly at record boundaries, else ETRUNC
 * naming the record that was cut. */
Test(perf_hostile, record_past_end)
{
	struct pt_stream st;
	size_t n, boundaries = 0, next = 16, cur = 16;
	struct mt_perf_reader *r;
	struct pt_mem m;

	pt_stream_build(&st);
	for (n = 16; n <= st.len; n++) {
		int ret;

		cr_assert_eq(pt_mem_reader(&r, &m, st.data, n, 0), 0);
		ret = pt_drain(r, MAX_ITEMS, NULL);
		if (n == next) {
			cr_assert_eq(ret, 0, "cut at %zu: %s", n, mt_perf_reader_error(r));
			boundaries++;
			cur = n;
			if (n < st.len)
				next += rec_size(st.data + n);
		} else {
			cr_assert_eq(ret, MT_PERF_ETRUNC, "cut at %zu", n);
			cr_assert(names_offset(mt_perf_reader_error(r), cur), "cut at %zu: %s", n,
				  mt_perf_reader_error(r));
		}
		mt_perf_reader_free(r);
	}
	cr_assert_gt(boundaries, 10);
	n = st.off_sample_a + 40;
	mt_perf_reader_free(expect(st.data, n, MT_PERF_ETRUNC, at(st.off_sample_a), "(SAMPLE)",
				   "truncated"));
	pt_stream_free(&st);
}

Test(perf_hostile, attr_size_nonsense)
{
	static const uint32_t bad[] = { 9999, 12, 60, 4, 65528 };
	struct pt_stream st;
	size_t i;

	pt_stream_build(&st);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char want[32];

		memcpy(st.data + st.off_attr_a + 8 + 4, &bad[i], 4);
		snprintf(want, sizeof(want), "attr size %u", bad[i]);
		mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_attr_a),
					   "(HEADER_ATTR)", want));
	}
	pt_stream_free(&st);
}

/* A sample cut short inside its fields, with the framing intact: the error
 * names the field, and the reader goes on with the next record. */
Test(perf_hostile, sample_fields_overrun)
{
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct mt_perf_item it;
	uint8_t *s;
	size_t off;

	pt_stream_build(&st);
	/* Keep 8 + IDENTIFIER IP TID bytes: TIME is missing.  Move the rest up so
	 * that the stream still frames. */
	off = st.off_sample_a;
	s = st.data + off;
	{
		uint16_t old = rec_size(s);

		memmove(s + 32, s + old, st.len - off - old);
		st.len -= old - 32;
		set_size(s, 32);
	}
	r = expect(st.data, st.len, MT_PERF_EFORMAT, at(off), "(SAMPLE)",
		   "TIME at byte 32 needs 8 bytes but the record (size 32) has 0 left");
	cr_assert_eq(mt_perf_reader_next(r, &it), 1);
	cr_assert_eq(it.offset, off + 32);
	cr_assert_eq(pt_drain(r, MAX_ITEMS, NULL), 0);
	mt_perf_reader_free(r);
	pt_stream_free(&st);
}

Test(perf_hostile, regs_overrun)
{
	struct pt_stream st;
	uint8_t *s;

	pt_stream_build(&st);
	/* 8 header + 5 u64 before REGS_USER: abi at byte 48, regs from 56. */
	s = st.data + st.off_sample_b;
	cr_assert_eq(get64(s + 56), 0);		/* sample B has abi 0 */
	put64(s + 56, 2);		/* now 3 regs are due, only the stack size is left */
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_sample_b),
				   "(SAMPLE)", "REGS_USER"));
	pt_stream_free(&st);
}

Test(perf_hostile, stack_size_larger_than_record)
{
	struct pt_stream st;
	uint8_t *s;
	size_t pos = 8 + 5 * 8 + 8 + 3 * 8;	/* header, 5 fields, abi, 3 regs */

	pt_stream_build(&st);
	s = st.data + st.off_sample_a;
	cr_assert_eq(get64(s + pos), PT_STACK);
	put64(s + pos, 9000);
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_sample_a),
				   "(SAMPLE): stack size 9000", "overruns the record (size 160)"));
	put64(s + pos, UINT64_MAX - 7);
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_sample_a),
				   "(SAMPLE)", "overruns the record"));
	/* dyn_size beyond size */
	put64(s + pos, PT_STACK);
	put64(s + pos + 8 + PT_STACK, PT_STACK + 8);
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_sample_a),
				   "(SAMPLE)", "dyn_size 72 exceeds its size 64"));
	pt_stream_free(&st);
}

Test(perf_hostile, sample_without_attr)
{
	struct pt_stream st;
	uint8_t *buf;
	size_t n, off;

	pt_stream_build(&st);
	/* Pipe header, then straight to sample B. */
	n = 16 + rec_size(st.data + st.off_sample_b);
	buf = malloc(n);
	memcpy(buf, st.data, 16);
	memcpy(buf + 16, st.data + st.off_sample_b, n - 16);
	mt_perf_reader_free(expect(buf, n, MT_PERF_ENOATTR, at(16), "(SAMPLE)",
				   "no attr precedes"));
	free(buf);
	/* An id no attr owns. */
	off = st.off_sample_b;
	put64(st.data + off + 8, 777);
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_ENOATTR, at(off), "(SAMPLE)",
				   "sample id 777 matches no attr"));
	pt_stream_free(&st);
}

Test(perf_hostile, mmap_filename_unterminated)
{
	struct pt_stream st;
	uint8_t *s;
	uint16_t size;

	pt_stream_build(&st);
	s = st.data + st.off_mmap2;
	size = rec_size(s);
	/* Fill filename and its padding (before the 24-byte trailer) with 'x'. */
	memset(s + 64, 'x', (size_t)size - 64 - 24);
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_mmap2),
				   "(MMAP2)", "filename is not NUL-terminated"));
	/* Too short for its fixed fields plus the trailer. */
	pt_stream_free(&st);
	pt_stream_build(&st);
	set_size(st.data + st.off_mmap2, 48);
	{
		/* keep framing: the tail becomes an unknown record of its own */
		uint8_t *t = st.data + st.off_mmap2 + 48;
		uint16_t rest = (uint16_t)(size - 48);

		memset(t, 0, 8);
		t[0] = 99;
		set_size(t, rest);
	}
	mt_perf_reader_free(expect(st.data, st.len, MT_PERF_EFORMAT, at(st.off_mmap2),
				   "(MMAP2)", "too small"));
	pt_stream_free(&st);
}

Test(perf_hostile, tracing_data_payload_past_end)
{
	uint8_t buf[16 + 16 + 8] = { 0 };
	uint32_t psize = 4096;

	put64(buf, 0x32454c4946524550ULL);
	put64(buf + 8, 16);
	buf[16] = 66;			/* HEADER_TRACING_DATA */
	set_size(buf + 16, 16);
	memcpy(buf + 24, &psize, 4);
	mt_perf_reader_free(expect(buf, sizeof(buf), MT_PERF_ETRUNC, "record payload at offset",
				   "4088 bytes early", NULL));
}

/* ---- perf.data files ------------------------------------------------------ */

/* A file image of the hand-written stream: header, ids, attrs, data. */
struct file_img {
	uint8_t *data;
	size_t len, attrs_off, data_off;
};

static void file_build(struct file_img *f)
{
	struct pt_stream st;
	struct mt_perf_reader *r;
	struct mt_perf_item it;
	struct pt_mem m;
	size_t attr_size = sizeof(struct perf_event_attr) + 16, i, pos, ids_pos;

	pt_stream_build_ex(&st, 0);
	cr_assert_eq(pt_mem_reader(&r, &m, st.data, st.len, 0), 0);
	f->data = calloc(1, 104 + 64 + 2 * attr_size + st.len);
	pos = 104;
	ids_pos = pos;
	/* Read the attrs first: they are all at the start. */
	f->attrs_off = 104 + 8 * 3;
	f->data_off = f->attrs_off + 2 * attr_size;
	pos = f->data_off;
	while (mt_perf_reader_next(r, &it) == 1) {
		if (it.kind == MT_PERF_ITEM_BLOB || it.header->type == 64 || it.header->type == 78)
			continue;
		memcpy(f->data + pos, it.data, it.size);
		pos += it.size;
	}
	for (i = 0; i < 2; i++) {
		const struct mt_perf_evsel *e = mt_perf_reader_evsel(r, i);
		uint8_t *a = f->data + f->attrs_off + i * attr_size;

		memcpy(a, &e->attr, sizeof(e->attr));
		put64(a + sizeof(e->attr), ids_pos);
		put64(a + sizeof(e->attr) + 8, 8 * e->nr_ids);
		memcpy(f->data + ids_pos, e->ids, 8 * e->nr_ids);
		ids_pos += 8 * e->nr_ids;
	}
	cr_assert_eq(ids_pos, f->attrs_off);
	put64(f->data, 0x32454c4946524550ULL);
	put64(f->data + 8, 104);
	put64(f->data + 16, attr_size);
	put64(f->data + 24, f->attrs_off);
	put64(f->data + 32, 2 * attr_size);
	put64(f->data + 40, f->data_off);
	put64(f->data + 48, pos - f->data_off);
	f->len = pos;
	mt_perf_reader_free(r);
	pt_stream_free(&st);
}

Test(perf_hostile, file_image_reads)
{
	struct file_img f;
	struct mt_perf_reader *r;
	struct pt_mem m;
	size_t items;

	file_build(&f);
	cr_assert_eq(pt_mem_reader(&r, &m, f.data, f.len, 0), 0, "%s",
		     mt_perf_reader_error(NULL));
	cr_assert_eq(mt_perf_reader_format(r), MT_PERF_FILE);
	cr_assert_eq(pt_drain(r, MAX_ITEMS, &items), 0, "%s", mt_perf_reader_error(r));
	cr_assert_eq(mt_perf_reader_nr_evsels(r), 2);
	cr_assert_eq(mt_perf_reader_evsel(r, 0)->nr_ids, 2);
	cr_assert_eq(mt_perf_reader_evsel(r, 1)->ids[0], PT_ID_B);
	cr_assert_gt(items, 10);
	mt_perf_reader_free(r);
	free(f.data);
}

Test(perf_hostile, truncated_file_header)
{
	struct file_img f;

	file_build(&f);
	for (size_t n = 16; n < 104; n += 11)
		mt_perf_reader_free(expect(f.data, n, MT_PERF_ETRUNC, "file header at offset 0",
					   "truncated", NULL));
	/* Ends inside the ids and attrs, before the data section. */
	mt_perf_reader_free(expect(f.data, f.attrs_off + 10, MT_PERF_ETRUNC,
				   "file header at offset 0", "before the data section", NULL));
	free(f.data);
}

Test(perf_hostile, file_attr_size_nonsense)
{
	struct file_img f;
	uint32_t bad = 40;

	file_build(&f);
	put64(f.data + 16, 3);
	mt_perf_reader_free(expect(f.data, f.len, MT_PERF_EFORMAT, "file header at offset 0",
				   "attr_size 3", NULL));
	put64(f.data + 16, sizeof(struct perf_event_attr) + 16 + 8);
	mt_perf_reader_free(expect(f.data, f.len, MT_PERF_EFORMAT, "file header at offset 0",
				   "not a multiple of attr_size", NULL));
	free(f.data);
	file_build(&f);
	memcpy(f.data + f.attrs_off + 4, &bad, 4);
	{
		char want[32];

		snprintf(want, sizeof(want), "at offset %zu", f.attrs_off);
		mt_perf_reader_free(expect(f.data, f.len, MT_PERF_EFORMAT, "attr 0", want,
					   "attr size 40"));
	}
	/* ids section pointing far away in a non-seekable input */
	free(f.data);
	file_build(&f);
	put64(f.data + f.attrs_off + sizeof(struct perf_event_attr), 1ULL << 40);
	mt_perf_reader_free(expect(f.data, f.len, MT_PERF_EFORMAT, "sample id at offset",
				   "outside", NULL));
	free(f.data);
}

Test(perf_hostile, file_data_section_past_end)
{
	struct file_img f;

	file_build(&f);
	put64(f.data + 48, f.len - f.data_off + 4096);
	mt_perf_reader_free(expect(f.data, f.len, MT_PERF_ETRUNC, "record at offset", NULL,
				   NULL));
	put64(f.data + 48, UINT64_MAX - 8);
	mt_perf_reader_free(expect(f.data, f.len, MT_PERF_EFORMAT, "file header at offset 0",
				   "data section", NULL));
	/* A record that crosses the end of the data section. */
	put64(f.data + 48, f.len - f.data_off - 4);
	mt_perf_reader_free(expect(f.data, f.len, MT_PERF_EFORMAT, "runs past the end of the "
				   "data section", NULL, NULL));
	free(f.data);
}

/* ---- random damage ---------------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Damage a copy in a few random places and read it to the end: any result
 * is fine as long as it comes, with a message when it is an error. */
static void damage_and_read(const uint8_t *data, size_t len, int rounds, uint64_t seed)
{
	uint8_t *copy = malloc(len);
	struct mt_perf_reader *r;
	struct pt_mem m;
	int i, k;

	for (i = 0; i < rounds; i++) {
		int ret, flips = 1 + (int)(rnd(&seed) % 4);

		memcpy(copy, data, len);
		for (k = 0; k < flips; k++) {
			size_t pos = 16 + rnd(&seed) % (len - 16);

			copy[pos] = (uint8_t)rnd(&seed);
		}
		ret = pt_mem_reader(&r, &m, copy, len, 1 + rnd(&seed) % 70000);
		if (ret) {
			cr_assert_neq(mt_perf_reader_error(NULL)[0], 0);
			continue;
		}
		/* Skip past record-level errors the way a tolerant caller would. */
		for (k = 0; k < MAX_ITEMS; k++) {
			struct mt_perf_item it;
			struct mt_perf_sample s;

			ret = mt_perf_reader_next(r, &it);
			if (ret == 0)
				break;
			if (ret < 0) {
				cr_assert_neq(mt_perf_reader_error(r)[0], 0);
				if (mt_perf_reader_fatal(r)) {
					cr_assert_eq(mt_perf_reader_fatal(r), ret);
					break;
				}
				cr_assert(ret == MT_PERF_EFORMAT || ret == MT_PERF_ENOATTR);
				cr_assert_eq(it.kind, MT_PERF_ITEM_RECORD);
				continue;
			}
			if (it.kind == MT_PERF_ITEM_RECORD &&
			    it.header->type == PERF_RECORD_SAMPLE) {
				cr_assert_eq(mt_perf_sample_parse(r, it.header, &s), 0);
				if (s.stack)
					cr_assert_leq(s.stack_offset + s.stack_size, it.size);
			}
		}
		cr_assert_lt(k, MAX_ITEMS, "reader did not finish");
		mt_perf_reader_free(r);
	}
	free(copy);
}

Test(perf_hostile, random_damage_hand_written)
{
	struct pt_stream st;
	struct file_img f;

	pt_stream_build(&st);
	damage_and_read(st.data, st.len, 3000, 0x9e3779b97f4a7c15ULL);
	pt_stream_free(&st);
	file_build(&f);
	damage_and_read(f.data, f.len, 3000, 0x123456789ULL);
	free(f.data);
}

Test(perf_hostile, random_damage_perf_record)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	uint8_t *data;
	size_t len;

	pt_tmpdir(dir, sizeof(dir));
	pt_perf_record(dir, "-e cpu-clock -F 999 --call-graph dwarf,1024", 1, "p.data");
	snprintf(path, sizeof(path), "%s/p.data", dir);
	data = pt_slurp(path, &len);
	damage_and_read(data, len, 100, 42);
	free(data);
	pt_perf_record(dir, "-e cpu-clock -F 999 --call-graph dwarf,1024", 0, "f.data");
	snprintf(path, sizeof(path), "%s/f.data", dir);
	data = pt_slurp(path, &len);
	damage_and_read(data, len, 100, 43);
	free(data);
	pt_tmpdir_remove(dir);
}

/* A file whose header perf never rewrote (data size 0): like perf, read the
 * records to the end of the input. */
Test(perf_hostile, file_data_size_zero)
{
	struct file_img f;
	struct mt_perf_reader *r;
	struct pt_mem m;
	size_t items, samples = 0;

	file_build(&f);
	put64(f.data + 48, 0);
	cr_assert_eq(pt_mem_reader(&r, &m, f.data, f.len, 0), 0);
	for (items = 0;; items++) {
		struct mt_perf_item it;
		int ret = mt_perf_reader_next(r, &it);

		cr_assert_geq(ret, 0, "%s", mt_perf_reader_error(r));
		if (!ret)
			break;
		samples += it.kind == MT_PERF_ITEM_RECORD && it.header->type == PERF_RECORD_SAMPLE;
	}
	cr_assert_eq(samples, 2);
	mt_perf_reader_free(r);
	free(f.data);
}
