/* The hand-written test stream (see perf_test_build.h). */
#include "tests/codec/perf_test_build.h"
#include "tests/codec/perf_test_util.h"

#include <criterion/criterion.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct rec {
	uint8_t b[1024];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
	cr_assert_leq(r->n + n, sizeof(r->b));
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put64(struct rec *r, uint64_t v)
{
	put(r, &v, 8);
}

static void put32x2(struct rec *r, uint32_t a, uint32_t b)
{
	put(r, &a, 4);
	put(r, &b, 4);
}

static void put_str(struct rec *r, const char *s)
{
	static const uint8_t z[8];
	size_t n = strlen(s);

	put(r, s, n);
	put(r, z, 8 - n % 8);
}

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { type, misc, 0 };

	r->n = 0;
	put(r, &h, sizeof(h));
}

/* Attr A's sample_id_all trailer: TID, TIME, IDENTIFIER. */
static void trailer(struct rec *r, uint64_t time, uint64_t id)
{
	put32x2(r, PT_PID, PT_TID);
	put64(r, time);
	put64(r, id);
}

static void emit(struct mt_perf_writer *w, struct rec *r, size_t *off)
{
	struct perf_event_header *h = (struct perf_event_header *)r->b;

	h->size = (uint16_t)r->n;
	if (off)
		*off = mt_perf_writer_bytes(w);
	cr_assert_eq(mt_perf_writer_record(w, h), 0);
}

void pt_stream_build_ex(struct pt_stream *st, int with_unknown)
{
	struct perf_event_attr a = { 0 }, b = { 0 };
	uint64_t ids_a[2] = { PT_ID_A1, PT_ID_A2 }, ids_b[1] = { PT_ID_B };
	struct mt_perf_writer *w;
	struct rec r;
	unsigned i;
	int fd;
	off_t len;

	memset(st, 0, sizeof(*st));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = sizeof(a);
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_REGS_USER |
			PERF_SAMPLE_STACK_USER;
	a.sample_id_all = 1;
	a.sample_regs_user = PT_REGS_MASK;
	a.sample_stack_user = PT_STACK;
	a.mmap = a.mmap2 = a.comm = a.comm_exec = a.task = 1;
	b = a;
	b.config = PERF_COUNT_SW_TASK_CLOCK;
	b.sample_period = 1000;
	b.sample_type |= PERF_SAMPLE_CPU;
	b.mmap = b.mmap2 = b.comm = b.comm_exec = b.task = 0;

	fd = memfd_create("pt-stream", 0);
	cr_assert_geq(fd, 0);
	cr_assert_eq(mt_perf_writer_new(&w, fd, "memfd"), 0);
	cr_assert_eq(mt_perf_writer_pipe_header(w), 0);
	st->off_attr_a = mt_perf_writer_bytes(w);
	cr_assert_eq(mt_perf_writer_attr(w, &a, ids_a, 2), 0);
	cr_assert_eq(mt_perf_writer_attr(w, &b, ids_b, 1), 0);
	cr_assert_eq(mt_perf_writer_event_name(w, PT_ID_A1, "mt:alloc"), 0);
	cr_assert_eq(mt_perf_writer_event_name(w, PT_ID_B, "cpu-clock"), 0);

	begin(&r, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	put32x2(&r, PT_PID, PT_TID);
	put_str(&r, "prog");
	trailer(&r, PT_TIME - 2, PT_ID_A1);
	emit(w, &r, NULL);

	begin(&r, PERF_RECORD_FORK, 0);
	put32x2(&r, PT_PID, 1);
	put32x2(&r, PT_TID, PT_PID);
	put64(&r, PT_TIME + 5);
	trailer(&r, PT_TIME + 5, PT_ID_A1);
	emit(w, &r, NULL);

	begin(&r, PERF_RECORD_MMAP, 0);
	put32x2(&r, PT_PID, PT_TID);
	put64(&r, 0x10000);
	put64(&r, 0x1000);
	put64(&r, 0);
	put_str(&r, "/old/mmap");
	trailer(&r, PT_TIME - 1, PT_ID_A1);
	emit(w, &r, NULL);

	begin(&r, PERF_RECORD_MMAP2, 0);
	put32x2(&r, PT_PID, PT_TID);
	put64(&r, 0x400000);
	put64(&r, 0x2000);
	put64(&r, 0x1000);
	put32x2(&r, 8, 1);
	put64(&r, 123456);
	put64(&r, 7);
	put32x2(&r, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	put_str(&r, "/usr/bin/prog");
	trailer(&r, PT_TIME - 1, PT_ID_A1);
	emit(w, &r, &st->off_mmap2);

	begin(&r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_MMAP_BUILD_ID);
	put32x2(&r, PT_PID, PT_TID);
	put64(&r, 0x400000);
	put64(&r, 0x2000);
	put64(&r, 0x1000);
	{
		uint8_t bid[24] = { 20, 0, 0, 0 };

		for (i = 0; i < 20; i++)
			bid[4 + i] = (uint8_t)i;
		put(&r, bid, sizeof(bid));
	}
	put32x2(&r, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	put_str(&r, "/usr/lib/libbuilt.so");
	trailer(&r, PT_TIME - 1, PT_ID_A1);
	emit(w, &r, NULL);

	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&r, PT_ID_A2);
	put64(&r, PT_IP);
	put32x2(&r, PT_PID, PT_TID);
	put64(&r, PT_TIME);
	put64(&r, 1);
	put64(&r, PERF_SAMPLE_REGS_ABI_64);
	for (i = 0; i < 3; i++)
		put64(&r, PT_REG(i));
	put64(&r, PT_STACK);
	for (i = 0; i < PT_STACK; i++) {
		uint8_t v = (uint8_t)(i * 7);

		put(&r, &v, 1);
	}
	put64(&r, PT_STACK - 16);
	emit(w, &r, &st->off_sample_a);

	begin(&r, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	put64(&r, PT_ID_B);
	put64(&r, PT_IP + 4);
	put32x2(&r, PT_PID, PT_TID);
	put64(&r, PT_TIME);
	put32x2(&r, 1, 0);
	put64(&r, 1000);
	put64(&r, 0);		/* no user registers ... */
	put64(&r, 0);		/* ... so no stack either */
	emit(w, &r, &st->off_sample_b);

	begin(&r, PERF_RECORD_LOST, 0);
	put64(&r, PT_ID_A1);
	put64(&r, 42);
	trailer(&r, PT_TIME + 1, PT_ID_A1);
	emit(w, &r, NULL);

	begin(&r, PERF_RECORD_LOST_SAMPLES, 0);
	put64(&r, 9);
	trailer(&r, PT_TIME + 2, PT_ID_A1);
	emit(w, &r, NULL);

	if (with_unknown) {
		begin(&r, PT_UNKNOWN_TYPE, 0);
		put64(&r, 0x1122334455667788ULL);
		put64(&r, 0);
		emit(w, &r, NULL);
	}

	begin(&r, PERF_RECORD_EXIT, 0);
	put32x2(&r, PT_PID, 1);
	put32x2(&r, PT_TID, PT_PID);
	put64(&r, PT_TIME + 5);
	trailer(&r, PT_TIME + 5, PT_ID_A1);
	emit(w, &r, NULL);

	begin(&r, 68 /* FINISHED_ROUND */, 0);
	emit(w, &r, NULL);

	cr_assert_eq(mt_perf_writer_free(w), 0);
	len = lseek(fd, 0, SEEK_END);
	cr_assert_gt(len, 0);
	st->data = malloc((size_t)len);
	st->len = (size_t)len;
	cr_assert_eq(pread(fd, st->data, st->len, 0), len);
	close(fd);
}

void pt_stream_free(struct pt_stream *st)
{
	free(st->data);
	st->data = NULL;
}
