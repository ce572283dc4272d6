/* The sample ring's protocol (capture/sample_ring.c): order, wrapping, full
 * rings, incomplete and abandoned records, damage, many producers. */
#include "capture/sample_ring.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DATA (64 * 1024)
#define REC sizeof(struct mt_sample_ring_record)

static void *map;

static struct mt_sample_ring make(size_t data, uint64_t token)
{
	map = aligned_alloc(4096, MT_SAMPLE_RING_HEADER + data);
	cr_assert(map);
	memset(map, 0xa5, MT_SAMPLE_RING_HEADER + data);	/* stale bytes everywhere */
	struct mt_sample_ring_header *h = map;
	memset(h, 0, sizeof(*h));
	h->magic = MT_SAMPLE_RING_MAGIC;
	h->token = token;
	h->data_size = data;
	h->stack_size = 64;
	struct mt_sample_ring r;
	cr_assert_eq(mt_sample_ring_attach(&r, map, MT_SAMPLE_RING_HEADER + data, token), 0);
	return r;
}

static void fini(void)
{
	free(map);
	map = NULL;
}

/* Reserve a record of kind for n stack bytes (pid 1, tid 2). */
static struct mt_sample_ring_record *reserve(struct mt_sample_ring *r, uint32_t kind, size_t len,
					     uint64_t *pos)
{
	return mt_sample_ring_reserve(r, len, kind, 1, 2, pos);
}

/* A record of kind with n stack bytes of value v, committed. */
static void put(struct mt_sample_ring *r, uint32_t kind, size_t n, unsigned char v)
{
	uint64_t pos;
	struct mt_sample_ring_record *rec = reserve(r, kind, REC + n, &pos);
	cr_assert(rec, "no room for %zu bytes", REC + n);
	rec->time = v;
	rec->dyn_size = n;
	memset(rec->stack, v, n);
	mt_sample_ring_commit(r, rec, pos);
}

/* The next record: its kind, stack length and value checked, released. */
static void get(struct mt_sample_ring *r, uint32_t kind, size_t n, unsigned char v)
{
	struct mt_sample_ring_record rec;
	const unsigned char *stack;
	cr_assert_eq(mt_sample_ring_next(r, mt_sample_ring_head(r), &rec, &stack), 1);
	cr_assert_eq(rec.kind, kind);
	cr_assert_eq(rec.dyn_size, n);
	cr_assert_eq(rec.time, v);
	cr_assert_eq(rec.pid, 1);
	cr_assert_eq(rec.tid, 2);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(stack[i], v, "byte %zu", i);
	mt_sample_ring_release(r, &rec);
}

/* What mt_sample_ring_next says now. */
static int next(struct mt_sample_ring *r, uint64_t limit)
{
	struct mt_sample_ring_record rec;
	const unsigned char *stack;
	return mt_sample_ring_next(r, limit, &rec, &stack);
}

Test(sample_ring, records_come_out_in_order_with_their_bytes, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	put(&r, MT_SAMPLE_RING_ALLOC, 100, 1);
	put(&r, MT_SAMPLE_RING_FREE, 0, 2);
	put(&r, MT_SAMPLE_RING_TOTALS, 8, 3);
	get(&r, MT_SAMPLE_RING_ALLOC, 100, 1);
	get(&r, MT_SAMPLE_RING_FREE, 0, 2);
	get(&r, MT_SAMPLE_RING_TOTALS, 8, 3);
	cr_assert_eq(next(&r, mt_sample_ring_head(&r)), 0);
	cr_assert_eq(r.tail, mt_sample_ring_head(&r));
	cr_assert_eq(r.h->tail, r.tail);
}

Test(sample_ring, attach_refuses_another_token_size_or_magic, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 42), s;
	cr_assert_eq(mt_sample_ring_attach(&s, map, MT_SAMPLE_RING_HEADER + DATA, 43), -1);
	cr_assert_eq(mt_sample_ring_attach(&s, map, MT_SAMPLE_RING_HEADER + DATA / 2, 42), -1);
	r.h->magic ^= 1;
	cr_assert_eq(mt_sample_ring_attach(&s, map, MT_SAMPLE_RING_HEADER + DATA, 42), -1);
}

Test(sample_ring, an_incomplete_record_holds_back_the_ones_after_it, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	uint64_t pos;
	struct mt_sample_ring_record *a = reserve(&r, MT_SAMPLE_RING_FREE, REC, &pos);
	put(&r, MT_SAMPLE_RING_FREE, 0, 9);
	cr_assert_eq(next(&r, mt_sample_ring_head(&r)), -1);
	a->time = 8;
	a->dyn_size = 0;
	mt_sample_ring_commit(&r, a, pos);
	get(&r, MT_SAMPLE_RING_FREE, 0, 8);
	get(&r, MT_SAMPLE_RING_FREE, 0, 9);
}

Test(sample_ring, records_reserved_after_the_limit_wait_for_the_next_drain, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	put(&r, MT_SAMPLE_RING_FREE, 0, 1);
	uint64_t limit = mt_sample_ring_head(&r);
	put(&r, MT_SAMPLE_RING_FREE, 0, 2);
	struct mt_sample_ring_record rec;
	const unsigned char *stack;
	cr_assert_eq(mt_sample_ring_next(&r, limit, &rec, &stack), 1);
	mt_sample_ring_release(&r, &rec);
	cr_assert_eq(next(&r, limit), 0);
	get(&r, MT_SAMPLE_RING_FREE, 0, 2);
}

Test(sample_ring, a_record_that_would_wrap_starts_over_after_a_pad, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	size_t big = DATA / 5 - REC;	/* four fit, the fifth would cross the end */
	for (int lap = 0; lap < 7; lap++) {
		for (unsigned char v = 1; v <= 3; v++)
			put(&r, MT_SAMPLE_RING_ALLOC, big, (unsigned char)(v + 10 * lap));
		for (unsigned char v = 1; v <= 3; v++)
			get(&r, MT_SAMPLE_RING_ALLOC, big, (unsigned char)(v + 10 * lap));
	}
	/* Every record was whole, so none crossed the end: pads filled the gaps. */
	cr_assert_gt(mt_sample_ring_head(&r), 4 * (uint64_t)DATA);
	cr_assert_eq(mt_sample_ring_head(&r) % 16, 0);
}

Test(sample_ring, a_stale_commit_from_an_earlier_lap_is_not_taken, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	size_t n = DATA / 4 - REC;	/* exactly four per lap: same offsets each lap */
	for (int i = 0; i < 4; i++) {
		put(&r, MT_SAMPLE_RING_ALLOC, n, (unsigned char)i);
		get(&r, MT_SAMPLE_RING_ALLOC, n, (unsigned char)i);
	}
	/* Lap 2, offset 0 still holds lap 1's complete record: reserve there
	 * without committing. */
	uint64_t pos;
	struct mt_sample_ring_record *a = reserve(&r, MT_SAMPLE_RING_ALLOC, REC + n, &pos);
	cr_assert_eq((unsigned char *)a, r.data);
	cr_assert_eq(pos, 4 * (uint64_t)(DATA / 4));
	cr_assert_eq(next(&r, mt_sample_ring_head(&r)), -1);
}

Test(sample_ring, samples_leave_room_for_totals_and_a_full_ring_refuses, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	int samples = 0, totals = 0;
	uint64_t pos;
	while (reserve(&r, MT_SAMPLE_RING_ALLOC, 1024, &pos))
		samples++;
	while (reserve(&r, MT_SAMPLE_RING_TOTALS, 1024, &pos))
		totals++;
	cr_expect_eq(samples, 60, "samples took %d KiB of 64", samples);
	cr_expect_eq(totals, 4, "totals got %d KiB", totals);
	struct mt_sample_ring_record *none = reserve(&r, MT_SAMPLE_RING_TOTALS, 16, &pos);
	cr_expect_null(none, "head %llu tail %llu", (unsigned long long)r.h->head,
		       (unsigned long long)r.h->tail);
	mt_sample_ring_lose(&r, MT_SAMPLE_RING_ALLOC);
	mt_sample_ring_lose(&r, MT_SAMPLE_RING_ALLOC);
	cr_expect_eq(r.h->lost[MT_SAMPLE_RING_ALLOC], 2);
	/* Larger than a quarter of the ring: never. */
	cr_assert_eq(r.tail, 0);
	r.h->tail = r.h->head;
	none = reserve(&r, MT_SAMPLE_RING_TOTALS, DATA / 4 + 16, &pos);
	cr_expect_null(none);
}

Test(sample_ring, an_abandoned_record_can_be_skipped_only_once_sized, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	uint64_t pos, limit;
	struct mt_sample_ring_record *a = reserve(&r, MT_SAMPLE_RING_ALLOC, REC + 64, &pos);
	put(&r, MT_SAMPLE_RING_FREE, 0, 5);
	limit = mt_sample_ring_head(&r);
	uint64_t commit = a->commit;
	uint32_t kind, pid, tid;
	a->commit = 0;	/* its writer stopped before it wrote anything */
	cr_assert_eq(mt_sample_ring_stuck(&r, limit, &kind, &pid, &tid), -1);
	cr_assert_eq(mt_sample_ring_skip(&r, limit), -1);
	a->commit = commit;	/* size, kind, pid and tid written, then it stopped */
	cr_assert_eq(mt_sample_ring_stuck(&r, limit, &kind, &pid, &tid), 0);
	cr_assert_eq(kind, MT_SAMPLE_RING_ALLOC);
	cr_assert_eq(pid, 1);
	cr_assert_eq(tid, 2);
	cr_assert_eq(mt_sample_ring_skip(&r, limit), 0);
	get(&r, MT_SAMPLE_RING_FREE, 0, 5);
}

/* A writer that died between reserving and its first store left nothing
 * at tail, not even a size: the reader finds the next record by its
 * commit (or reserved) word for its own position, past stale bytes that
 * hold other positions' words. */
Test(sample_ring, a_record_with_nothing_written_is_read_past, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	uint64_t pos;
	struct mt_sample_ring_record *a = reserve(&r, MT_SAMPLE_RING_ALLOC, REC + 256, &pos);
	memset(a, 0, REC + 256);	/* nothing written: not even its size */
	/* Inside the dead record, a word that would be a commit at another
	 * position (as an earlier lap leaves): not taken. */
	uint64_t fake = (pos + 64) ^ MT_SAMPLE_RING_COMMIT;
	memcpy((char *)a + 32, &fake, 8);
	cr_assert_eq(mt_sample_ring_resync(&r, mt_sample_ring_head(&r)), 0,
		     "nothing after it yet: no record to read on from");
	put(&r, MT_SAMPLE_RING_TOTALS, 0, 7);
	put(&r, MT_SAMPLE_RING_FREE, 16, 8);
	uint64_t limit = mt_sample_ring_head(&r);
	cr_assert_eq(next(&r, limit), -1);
	cr_assert_eq(mt_sample_ring_resync(&r, limit), REC + 256);
	get(&r, MT_SAMPLE_RING_TOTALS, 0, 7);
	get(&r, MT_SAMPLE_RING_FREE, 16, 8);
	cr_assert_eq(next(&r, limit), 0);

	/* A reserved record (its size known) is found the same way. */
	a = reserve(&r, MT_SAMPLE_RING_ALLOC, REC, &pos);
	memset(a, 0, REC);
	struct mt_sample_ring_record *b = reserve(&r, MT_SAMPLE_RING_FREE, REC, &pos);
	cr_assert(b);
	cr_assert_eq(mt_sample_ring_resync(&r, mt_sample_ring_head(&r)), REC);
	uint32_t kind, pid, tid;
	cr_assert_eq(mt_sample_ring_stuck(&r, mt_sample_ring_head(&r), &kind, &pid, &tid), 0);
	cr_assert_eq(kind, MT_SAMPLE_RING_FREE);
}

Test(sample_ring, an_impossible_record_is_reported_as_damage, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	uint64_t pos;
	struct mt_sample_ring_record *a = reserve(&r, MT_SAMPLE_RING_FREE, REC, &pos);
	a->dyn_size = 0;
	mt_sample_ring_commit(&r, a, pos);
	uint64_t limit = mt_sample_ring_head(&r);
	a->size = 8;
	cr_expect_eq(next(&r, limit), -2);
	a->size = DATA;
	cr_expect_eq(next(&r, limit), -2);
	a->size = (uint32_t)((REC + 15) & ~(size_t)15);
	a->dyn_size = 1 << 20;
	cr_expect_eq(next(&r, limit), -2);
	a->dyn_size = 0;
	a->kind = 77;
	cr_expect_eq(next(&r, limit), -2);
	a->kind = MT_SAMPLE_RING_FREE;
	cr_expect_eq(next(&r, limit), 1);
}

Test(sample_ring, what_the_program_writes_in_the_header_bounds_nothing, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	put(&r, MT_SAMPLE_RING_FREE, 0, 1);
	get(&r, MT_SAMPLE_RING_FREE, 0, 1);
	/* A rewound tail: the consumer reads on from its own. */
	r.h->tail = 0;
	cr_assert_eq(next(&r, mt_sample_ring_head(&r)), 0);
	r.h->tail = r.tail;
	put(&r, MT_SAMPLE_RING_FREE, 0, 2);
	r.h->tail = 0;
	get(&r, MT_SAMPLE_RING_FREE, 0, 2);
	/* A data size said to be larger, or a head off the 16-byte grid:
	 * records still land inside the data area, or not at all. */
	r.h->data_size = (uint64_t)1 << 40;
	put(&r, MT_SAMPLE_RING_FREE, 0, 3);
	get(&r, MT_SAMPLE_RING_FREE, 0, 3);
	uint64_t pos;
	r.h->head += 8;
	cr_assert_null(reserve(&r, MT_SAMPLE_RING_FREE, REC, &pos));
}

static volatile sig_atomic_t wakes;

static void on_wake(int sig)
{
	(void)sig;
	wakes++;
}

Test(sample_ring, a_half_full_ring_wakes_the_reader_once_per_drain, .fini = fini)
{
	struct mt_sample_ring r = make(DATA, 1);
	struct sigaction sa = { .sa_handler = on_wake };
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(MT_SAMPLE_RING_WAKE, &sa, NULL), 0);
	r.h->reader_pid = (uint64_t)getpid();
	for (int i = 0; i < 7; i++)	/* 7 KiB and a bit of 64 */
		put(&r, MT_SAMPLE_RING_ALLOC, 1024 - REC, 1);
	mt_sample_ring_wake(&r);
	cr_assert_eq(wakes, 0, "woken below half full");
	while (mt_sample_ring_head(&r) - r.tail < DATA / 2)
		put(&r, MT_SAMPLE_RING_ALLOC, 1024 - REC, 1);
	mt_sample_ring_wake(&r);
	mt_sample_ring_wake(&r);
	cr_assert_eq(wakes, 1, "%d wake-ups, not one", (int)wakes);
	r.h->wake = 0;	/* what the reader does after a drain */
	mt_sample_ring_wake(&r);
	cr_assert_eq(wakes, 2);
	signal(MT_SAMPLE_RING_WAKE, SIG_DFL);
}

/* Four producers, one consumer: each producer's records arrive complete,
 * in its order, and arrivals plus losses make up what it wrote. */
#define PRODUCERS 4
#define PER_PRODUCER 200000

static struct mt_sample_ring shared;

static void *produce(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	for (uint64_t i = 0; i < PER_PRODUCER; i++) {
		size_t n = 8 * (i % 40);
		uint64_t pos;
		struct mt_sample_ring_record *rec =
			mt_sample_ring_reserve(&shared, REC + n, MT_SAMPLE_RING_ALLOC, 1, id, &pos);
		if (!rec) {
			mt_sample_ring_lose(&shared, MT_SAMPLE_RING_ALLOC);
			continue;
		}
		rec->time = i;
		rec->dyn_size = n;
		for (size_t k = 0; k < n; k += 8)
			memcpy(rec->stack + k, &i, 8);
		mt_sample_ring_commit(&shared, rec, pos);
	}
	return NULL;
}

Test(sample_ring, many_producers_one_consumer, .fini = fini)
{
	shared = make(DATA, 1);
	pthread_t t[PRODUCERS];
	for (uintptr_t i = 0; i < PRODUCERS; i++)
		cr_assert_eq(pthread_create(&t[i], NULL, produce, (void *)i), 0);
	uint64_t got[PRODUCERS] = { 0 }, seq[PRODUCERS] = { 0 };
	int joined[PRODUCERS] = { 0 }, done = 0;
	for (;;) {
		struct mt_sample_ring_record rec;
		const unsigned char *stack;
		int rc = mt_sample_ring_next(&shared, mt_sample_ring_head(&shared), &rec, &stack);
		cr_assert_neq(rc, -2, "damaged");
		if (rc == 1) {
			cr_assert_lt(rec.tid, PRODUCERS);
			cr_assert_geq(rec.time, seq[rec.tid], "producer %u out of order", rec.tid);
			cr_assert_eq(rec.dyn_size, 8 * (rec.time % 40));
			for (size_t k = 0; k < rec.dyn_size; k += 8)
				cr_assert_eq(memcmp(stack + k, &rec.time, 8), 0);
			seq[rec.tid] = rec.time + 1;
			got[rec.tid]++;
			mt_sample_ring_release(&shared, &rec);
		} else if (done) {
			break;
		} else if (rc == 0) {
			int alive = 0;
			for (int i = 0; i < PRODUCERS; i++)
				if (!joined[i] && !(joined[i] = pthread_tryjoin_np(t[i], NULL) == 0))
					alive++;
			done = alive == 0;	/* one more pass reads what they left */
		}
	}
	uint64_t total = 0;
	for (int i = 0; i < PRODUCERS; i++)
		total += got[i];
	cr_assert_eq(total + shared.h->lost[MT_SAMPLE_RING_ALLOC], PRODUCERS * PER_PRODUCER);
	cr_assert_gt(total, 0);
}
