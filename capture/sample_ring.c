/* The sample ring's protocol (sample_ring.h): lock-free, allocation-free. */
#include "capture/sample_ring.h"

#include <string.h>

#define ALIGN16(n) (((n) + 15) & ~(uint64_t)15)

int mt_sample_ring_attach(struct mt_sample_ring *r, void *map, size_t map_size, uint64_t token)
{
	struct mt_sample_ring_header *h = map;
	if (map_size <= MT_SAMPLE_RING_HEADER || h->magic != MT_SAMPLE_RING_MAGIC ||
	    h->token != token || h->data_size != map_size - MT_SAMPLE_RING_HEADER ||
	    (h->data_size & (h->data_size - 1)) || h->data_size < 65536)
		return -1;
	r->h = h;
	r->data = (unsigned char *)map + MT_SAMPLE_RING_HEADER;
	r->size = h->data_size;
	r->mask = r->size - 1;
	return 0;
}

static struct mt_sample_ring_record *at(struct mt_sample_ring *r, uint64_t pos)
{
	return (struct mt_sample_ring_record *)(r->data + (pos & r->mask));
}

struct mt_sample_ring_record *mt_sample_ring_reserve(struct mt_sample_ring *r, size_t len,
						     uint32_t kind)
{
	struct mt_sample_ring_header *h = r->h;
	uint64_t size = ALIGN16(len), pad, head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	uint64_t room = kind == MT_SAMPLE_RING_TOTALS ? r->size : r->size - r->size / 16;
	if (size > r->size / 4)
		return NULL;
	do {
		uint64_t off = head & r->mask;
		pad = off + size > r->size ? r->size - off : 0;
		uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
		if (head + pad + size - tail > room)
			return NULL;
	} while (!__atomic_compare_exchange_n(&h->head, &head, head + pad + size, 1,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	if (pad) {
		struct mt_sample_ring_record *p = at(r, head);
		p->size = (uint32_t)pad;
		p->kind = MT_SAMPLE_RING_PAD;
		__atomic_store_n(&p->commit, head ^ MT_SAMPLE_RING_COMMIT, __ATOMIC_RELEASE);
		head += pad;
	}
	struct mt_sample_ring_record *rec = at(r, head);
	rec->size = (uint32_t)size;
	rec->kind = kind;
	__atomic_store_n(&rec->commit, head ^ MT_SAMPLE_RING_RESERVED, __ATOMIC_RELEASE);
	return rec;
}

void mt_sample_ring_lose(struct mt_sample_ring *r, uint32_t kind)
{
	if (kind < MT_SAMPLE_RING_KINDS)
		__atomic_add_fetch(&r->h->lost[kind], 1, __ATOMIC_RELAXED);
}

/* The absolute position of a record, from its reserved commit word. */
void mt_sample_ring_commit(struct mt_sample_ring *r, struct mt_sample_ring_record *rec)
{
	(void)r;
	uint64_t pos = rec->commit ^ MT_SAMPLE_RING_RESERVED;
	__atomic_store_n(&rec->commit, pos ^ MT_SAMPLE_RING_COMMIT, __ATOMIC_RELEASE);
}

int mt_sample_ring_next(struct mt_sample_ring *r, uint64_t limit,
			const struct mt_sample_ring_record **out)
{
	for (;;) {
		uint64_t tail = mt_sample_ring_tail(r);
		if (tail >= limit)
			return 0;
		struct mt_sample_ring_record *rec = at(r, tail);
		if (__atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE) != (tail ^ MT_SAMPLE_RING_COMMIT))
			return -1;
		uint64_t size = rec->size, off = tail & r->mask;
		if (size < MT_SAMPLE_RING_PAD_SIZE || size % 16 || size > limit - tail ||
		    off + size > r->size)
			return -2;
		if (rec->kind != MT_SAMPLE_RING_PAD) {
			if (rec->kind >= MT_SAMPLE_RING_KINDS ||
			    size < sizeof(*rec) || rec->dyn_size > size - sizeof(*rec))
				return -2;
			*out = rec;
			return 1;
		}
		__atomic_store_n(&r->h->tail, tail + size, __ATOMIC_RELEASE);
	}
}

void mt_sample_ring_release(struct mt_sample_ring *r, const struct mt_sample_ring_record *rec)
{
	__atomic_store_n(&r->h->tail, mt_sample_ring_tail(r) + rec->size, __ATOMIC_RELEASE);
}

int mt_sample_ring_skip(struct mt_sample_ring *r)
{
	uint64_t tail = mt_sample_ring_tail(r);
	struct mt_sample_ring_record *rec = at(r, tail);
	uint64_t size = rec->size;
	if (__atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE) != (tail ^ MT_SAMPLE_RING_RESERVED) ||
	    size < sizeof(*rec) || size % 16 || size > mt_sample_ring_head(r) - tail ||
	    (tail & r->mask) + size > r->size)
		return -1;
	__atomic_store_n(&r->h->tail, tail + size, __ATOMIC_RELEASE);
	return 0;
}
