/* mt-capture's side of the sample ring (capture/capture_ring.c): records
 * written as samples, an incomplete record skipped only when its writer is
 * gone, and a header the program wrote over stops the reading. */
#include "capture/capture_ring.h"
#include "capture/sample_ring.h"
#include "codec/perf_stream.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct mt_capture_ring *cr;
static struct mt_perf_writer *w;
static struct mt_sample_ring prod;	/* a producer's view of the same ring */
static int out_fd = -1;

static void setup(void)
{
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN], *env;
	cr_assert_eq(mt_capture_ring_new(&cr, 65536, 64, 0, &env, &err), 0, "%s",
		     mt_capture_err_message(&err, msg, sizeof(msg)));
	/* env: NAME=TOKEN:PATH, the way the sampler finds it */
	char *v = strchr(env, '=') + 1, *path = strchr(v, ':') + 1;
	uint64_t token = strtoull(v, NULL, 16);
	int fd = open(path, O_RDWR);
	cr_assert_geq(fd, 0);
	void *map = mmap(NULL, MT_SAMPLE_RING_HEADER + 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	cr_assert_neq(map, MAP_FAILED);
	cr_assert_eq(mt_sample_ring_attach(&prod, map, MT_SAMPLE_RING_HEADER + 65536, token), 0);
	free(env);
	struct perf_event_attr a = { .size = sizeof(a), .sample_id_all = 1,
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME };
	for (int k = 1; k < MT_SAMPLE_RING_KINDS; k++)
		mt_capture_ring_event(cr, k, &a, 100 + (uint64_t)k);
	out_fd = open("/dev/null", O_WRONLY);
	cr_assert_eq(mt_perf_writer_new(&w, out_fd, "/dev/null"), 0);
}

static void teardown(void)
{
	mt_perf_writer_free(w);
	close(out_fd);
	munmap(prod.h, MT_SAMPLE_RING_HEADER + 65536);
	mt_capture_ring_free(cr);
}

/* A FREE record from tid of pid, committed or not. */
static void record(uint32_t pid, uint32_t tid, int commit)
{
	uint64_t pos;
	struct mt_sample_ring_record *rec = mt_sample_ring_reserve(
		&prod, sizeof(*rec), MT_SAMPLE_RING_FREE, pid, tid, &pos);
	cr_assert(rec);
	rec->dyn_size = 0;
	if (commit)
		mt_sample_ring_commit(&prod, rec, pos);
}

static void *tell_tid(void *arg)
{
	*(pid_t *)arg = gettid();
	return NULL;
}

/* The tid of a thread that has come and gone. */
static uint32_t dead_tid(void)
{
	pthread_t t;
	pid_t tid = 0;
	cr_assert_eq(pthread_create(&t, NULL, tell_tid, &tid), 0);
	cr_assert_eq(pthread_join(t, NULL), 0);
	return (uint32_t)tid;
}

Test(capture_ring, records_become_samples_and_a_dead_writer_is_skipped, .init = setup,
     .fini = teardown, .timeout = 20)
{
	struct mt_capture_ring_drain d;
	record((uint32_t)getpid(), (uint32_t)gettid(), 1);
	record((uint32_t)getpid(), dead_tid(), 0);	/* its writer is gone */
	record((uint32_t)getpid(), (uint32_t)gettid(), 1);
	cr_assert_eq(mt_capture_ring_drain(cr, w, &d), 0);
	cr_expect_eq(d.samples, 1);
	cr_expect(d.pending);
	sleep(1);
	usleep(100000);
	cr_assert_eq(mt_capture_ring_drain(cr, w, &d), 0);
	cr_expect_eq(d.samples, 1, "the record after the abandoned one");
	cr_expect_eq(d.abandoned, 1);
	cr_expect_eq(d.lost, 1, "the abandoned record is a LOST one");
	cr_expect(!d.pending && !d.damaged && !d.unread);
}

Test(capture_ring, a_stopped_writer_is_waited_for, .init = setup, .fini = teardown, .timeout = 20)
{
	struct mt_capture_ring_drain d;
	record((uint32_t)getpid(), (uint32_t)gettid(), 0);	/* alive: this thread */
	record((uint32_t)getpid(), (uint32_t)gettid(), 1);
	sleep(1);
	usleep(100000);
	cr_assert_eq(mt_capture_ring_drain(cr, w, &d), 0);
	cr_expect_eq(d.samples, 0);
	cr_expect_eq(d.abandoned, 0);
	cr_expect(d.pending && !d.damaged);
}

Test(capture_ring, a_header_written_over_stops_the_reading, .init = setup, .fini = teardown)
{
	struct mt_capture_ring_drain d;
	record((uint32_t)getpid(), (uint32_t)gettid(), 1);
	prod.h->tail += 16;	/* the consumer's field, rewritten by the program */
	cr_assert_eq(mt_capture_ring_drain(cr, w, &d), 0);
	cr_expect(d.damaged);
	cr_expect_eq(d.samples, 0);
	cr_expect(prod.h->closed, "the writers are told to stop");
}
