/* The sample ring's protocol (sample_ring.h): lock-free, allocation-free.
 * Every value read from the shared memory is checked before it bounds an
 * access: the program can write there. */
#include "capture/sample_ring.h"

#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define ALIGN16(n) (((n) + 15) & ~(uint64_t)15)

uint64_t mt_sample_ring_pid_ns(void)
{
	struct stat sb;
	return stat("/proc/self/ns/pid", &sb) ? 0 : (uint64_t)sb.st_ino;
}

uint64_t mt_sample_ring_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

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
	r->tail = __atomic_load_n(&h->tail, __ATOMIC_RELAXED);
	return 0;
}

static struct mt_sample_ring_record *at(struct mt_sample_ring *r, uint64_t pos)
{
	return (struct mt_sample_ring_record *)(r->data + (pos & r->mask));
}

struct mt_sample_ring_record *mt_sample_ring_reserve(struct mt_sample_ring *r, size_t len,
						     uint32_t kind, uint32_t pid, uint32_t tid,
						     uint64_t *pos)
{
	struct mt_sample_ring_header *h = r->h;
	uint64_t size = ALIGN16(len), pad, head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
	uint64_t room = kind == MT_SAMPLE_RING_TOTALS || kind == MT_SAMPLE_RING_TICK ? r->size
									     : r->size - r->size / 16;
	if (size > r->size / 4)
		return NULL;
	for (;;) {
		uint64_t tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
		if (head & 15)
			return NULL;	/* written over: no record may straddle the end */
		if (tail > head) {	/* our head is older than the tail we read */
			head = __atomic_load_n(&h->head, __ATOMIC_RELAXED);
			if (tail > head)
				return NULL;	/* written over */
			continue;
		}
		uint64_t off = head & r->mask;
		pad = off + size > r->size ? r->size - off : 0;
		if (head + pad + size - tail > room)
			return NULL;
		if (__atomic_compare_exchange_n(&h->head, &head, head + pad + size, 1,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
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
	rec->pid = pid;
	rec->tid = tid;
	__atomic_store_n(&rec->commit, head ^ MT_SAMPLE_RING_RESERVED, __ATOMIC_RELEASE);
	*pos = head;
	return rec;
}

void mt_sample_ring_wake(struct mt_sample_ring *r)
{
	struct mt_sample_ring_header *h = r->h;
	uint64_t fill = __atomic_load_n(&h->head, __ATOMIC_RELAXED) -
			__atomic_load_n(&h->tail, __ATOMIC_RELAXED);
	if (fill >= r->size / 2 && fill <= r->size && !__atomic_load_n(&h->wake, __ATOMIC_RELAXED) &&
	    !__atomic_exchange_n(&h->wake, 1, __ATOMIC_RELAXED)) {
		pid_t pid = (pid_t)__atomic_load_n(&h->reader_pid, __ATOMIC_RELAXED);
		if (pid > 0)
			kill(pid, MT_SAMPLE_RING_WAKE);
	}
}

void mt_sample_ring_lose(struct mt_sample_ring *r, uint32_t kind)
{
	if (kind < MT_SAMPLE_RING_KINDS)
		__atomic_add_fetch(&r->h->lost[kind], 1, __ATOMIC_RELAXED);
}

void mt_sample_ring_commit(struct mt_sample_ring *r, struct mt_sample_ring_record *rec,
			   uint64_t pos)
{
	(void)r;
	__atomic_store_n(&rec->commit, pos ^ MT_SAMPLE_RING_COMMIT, __ATOMIC_RELEASE);
}

/* The fixed part of the record at tail, copied (16 bytes of a pad). */
static uint64_t copy_at_tail(struct mt_sample_ring *r, struct mt_sample_ring_record *copy,
			     uint64_t limit)
{
	const struct mt_sample_ring_record *rec = at(r, r->tail);
	uint64_t commit = __atomic_load_n(&rec->commit, __ATOMIC_ACQUIRE);
	uint64_t room = r->size - (r->tail & r->mask);	/* to the end of the data area */
	size_t n = sizeof(*copy) <= room && sizeof(*copy) <= limit - r->tail ? sizeof(*copy)
									   : MT_SAMPLE_RING_PAD_SIZE;
	memcpy(copy, rec, n);
	if (n < sizeof(*copy))
		memset((char *)copy + n, 0, sizeof(*copy) - n);
	return commit;
}

/* Is the copied record one that can be, at tail before limit?  (complete:
 * its dyn_size is written too.) */
static int plausible(const struct mt_sample_ring *r, const struct mt_sample_ring_record *c,
		     uint64_t limit, int complete)
{
	uint64_t size = c->size;
	if (size < MT_SAMPLE_RING_PAD_SIZE || size % 16 || size > limit - r->tail ||
	    (r->tail & r->mask) + size > r->size || c->kind >= MT_SAMPLE_RING_KINDS)
		return 0;
	if (c->kind == MT_SAMPLE_RING_PAD)
		return complete;
	return size >= sizeof(*c) && (!complete || c->dyn_size <= size - sizeof(*c));
}

int mt_sample_ring_next(struct mt_sample_ring *r, uint64_t limit,
			struct mt_sample_ring_record *copy, const unsigned char **stack)
{
	for (;;) {
		if (r->tail >= limit)
			return 0;
		if (copy_at_tail(r, copy, limit) != (r->tail ^ MT_SAMPLE_RING_COMMIT))
			return -1;
		if (!plausible(r, copy, limit, 1))
			return -2;
		if (copy->kind != MT_SAMPLE_RING_PAD) {
			*stack = at(r, r->tail)->stack;
			return 1;
		}
		mt_sample_ring_release(r, copy);
	}
}

void mt_sample_ring_release(struct mt_sample_ring *r, const struct mt_sample_ring_record *copy)
{
	r->tail += copy->size;
	__atomic_store_n(&r->h->tail, r->tail, __ATOMIC_RELEASE);
}

/* The reserved record at tail, copied.  @return : 0, or -1 (none). */
static int reserved_at_tail(struct mt_sample_ring *r, uint64_t limit,
			    struct mt_sample_ring_record *c)
{
	if (r->tail >= limit || copy_at_tail(r, c, limit) != (r->tail ^ MT_SAMPLE_RING_RESERVED) ||
	    !plausible(r, c, limit, 0))
		return -1;
	return 0;
}

int mt_sample_ring_stuck(struct mt_sample_ring *r, uint64_t limit, uint32_t *kind, uint32_t *pid,
			 uint32_t *tid)
{
	struct mt_sample_ring_record c;
	if (reserved_at_tail(r, limit, &c))
		return -1;
	*kind = c.kind;
	*pid = c.pid;
	*tid = c.tid;
	return 0;
}

uint64_t mt_sample_ring_resync(struct mt_sample_ring *r, uint64_t limit)
{
	uint64_t from = r->tail;
	struct mt_sample_ring_record c;
	for (r->tail = from + 16; r->tail < limit; r->tail += 16) {
		uint64_t w = copy_at_tail(r, &c, limit);
		if ((w == (r->tail ^ MT_SAMPLE_RING_COMMIT) && plausible(r, &c, limit, 1)) ||
		    (w == (r->tail ^ MT_SAMPLE_RING_RESERVED) && plausible(r, &c, limit, 0))) {
			__atomic_store_n(&r->h->tail, r->tail, __ATOMIC_RELEASE);
			return r->tail - from;
		}
	}
	r->tail = from;
	return 0;
}

int mt_sample_ring_skip(struct mt_sample_ring *r, uint64_t limit)
{
	struct mt_sample_ring_record c;
	if (reserved_at_tail(r, limit, &c))
		return -1;
	mt_sample_ring_release(r, &c);
	return 0;
}
