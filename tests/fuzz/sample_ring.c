/* Fuzz target: mt-capture's reading of the sample ring, whose memory the
 * profiled program can write anything into.
 * Input: bytes 0-3 the tail's position (u32, times 16: any lap), bytes 4-5
 * how far head is past it (u16, times 16), the rest the ring's data, laid
 * from the tail's place on (wrapping).  The consumer loop is capture_ring.c's
 * without its clock: a record not complete yet is skipped when it names its
 * writer, else read past (as after a second with its writer gone).
 * Checks: each record given lies inside the data area, with its stack
 * bytes; tail only moves forward, never past head; the loop ends. */
#include "tests/fuzz/fuzz.h"

#include <stdlib.h>
#include <string.h>

#include "capture/sample_ring.h"
#include "common/buf.h"

#define DATA_SIZE 65536u
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char *map;
	if (!map && !(map = aligned_alloc(4096, MT_SAMPLE_RING_HEADER + DATA_SIZE)))
		return 0;
	if (size < 6)
		return 0;
	uint64_t tail = 16 * (uint64_t)mt_ld32(data);
	uint64_t head = tail + 16 * (uint64_t)mt_ld16(data + 4);
	memset(map, 0, MT_SAMPLE_RING_HEADER + DATA_SIZE);
	struct mt_sample_ring_header *h = (void *)map;
	h->magic = MT_SAMPLE_RING_MAGIC;
	h->token = 42;
	h->data_size = DATA_SIZE;
	h->stack_size = 8192;
	h->head = head;
	h->tail = tail;
	unsigned char *area = map + MT_SAMPLE_RING_HEADER;
	size_t n = size - 6 < DATA_SIZE ? size - 6 : DATA_SIZE;
	for (size_t i = 0; i < n; i++)
		area[(tail + i) & (DATA_SIZE - 1)] = data[6 + i];

	struct mt_sample_ring r;
	MT_FUZZ_CHECK(mt_sample_ring_attach(&r, map, MT_SAMPLE_RING_HEADER + DATA_SIZE, 42) == 0);
	uint64_t limit = mt_sample_ring_head(&r);
	for (unsigned steps = 0; steps < 3 * DATA_SIZE / 16; steps++) {
		struct mt_sample_ring_record rec;
		const unsigned char *stack;
		uint64_t before = r.tail;
		int got = mt_sample_ring_next(&r, limit, &rec, &stack);
		if (got == 0 || got == -2)
			break;
		if (got == 1) {
			MT_FUZZ_CHECK(rec.size >= sizeof(rec) && rec.size <= DATA_SIZE && rec.size % 16 == 0);
			MT_FUZZ_CHECK(rec.dyn_size <= rec.size - sizeof(rec));
			MT_FUZZ_CHECK(rec.dyn_size == 0 ||
			      (stack >= area && stack + rec.dyn_size <= area + DATA_SIZE));
			mt_sample_ring_release(&r, &rec);
		} else {
			uint32_t kind, pid, tid;
			if (mt_sample_ring_stuck(&r, limit, &kind, &pid, &tid) == 0) {
				MT_FUZZ_CHECK(kind < MT_SAMPLE_RING_KINDS);
				if (mt_sample_ring_skip(&r, limit))
					break;
			} else if (!mt_sample_ring_resync(&r, limit)) {
				break;
			}
		}
		MT_FUZZ_CHECK(r.tail > before && r.tail <= limit);
	}
	return 0;
}
