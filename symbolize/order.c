/* Time-ordered release of records; see order.h. */
#include "symbolize/order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t time, seq;
	size_t off, size;
};

struct mt_unwind_order {
	uint8_t *arena;
	size_t len, cap;
	struct entry *e;
	size_t n, ecap;
	uint64_t seq;
	int sorted;		/* e[] is sorted */
};

int mt_unwind_order_new(struct mt_unwind_order **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

void mt_unwind_order_free(struct mt_unwind_order *q)
{
	if (!q)
		return;
	free(q->arena);
	free(q->e);
	free(q);
}

size_t mt_unwind_order_bytes(const struct mt_unwind_order *q)
{
	return q->len;
}

int mt_unwind_order_push(struct mt_unwind_order *q, const void *rec, size_t size,
			 uint64_t time)
{
	size_t need = (size + 7) & ~(size_t)7;
	if (q->cap - q->len < need) {
		size_t cap = q->cap ? q->cap : (1 << 20);
		while (cap - q->len < need)
			cap *= 2;
		uint8_t *a = realloc(q->arena, cap);
		if (!a)
			return -ENOMEM;
		q->arena = a;
		q->cap = cap;
	}
	if (q->n == q->ecap) {
		size_t ecap = q->ecap ? q->ecap * 2 : 1024;
		struct entry *e = realloc(q->e, ecap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		q->e = e;
		q->ecap = ecap;
	}
	memcpy(q->arena + q->len, rec, size);
	/* Mostly in order already: stay sorted while that holds. */
	if (q->n && (q->e[q->n - 1].time > time))
		q->sorted = 0;
	else if (q->n == 0)
		q->sorted = 1;
	q->e[q->n++] = (struct entry){ .time = time, .seq = q->seq++, .off = q->len,
				       .size = size };
	q->len += need;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int mt_unwind_order_flush(struct mt_unwind_order *q, uint64_t limit,
			  void (*fn)(const void *rec, size_t size, void *ctx), void *ctx)
{
	if (q->n == 0)
		return 0;
	if (!q->sorted) {
		qsort(q->e, q->n, sizeof(*q->e), cmp);
		q->sorted = 1;
	}
	size_t k = 0;
	while (k < q->n && q->e[k].time <= limit) {
		fn(q->arena + q->e[k].off, q->e[k].size, ctx);
		k++;
	}
	if (k == q->n) {
		q->n = 0;
		q->len = 0;
		return 0;
	}
	if (k == 0)
		return 0;
	/* Compact what is left to the front of the arena, in arrival order
	 * of offsets (entries stay sorted by time). */
	size_t rest = q->n - k;
	uint8_t *a = malloc(q->cap);
	if (!a)
		return -ENOMEM;
	size_t len = 0;
	for (size_t i = 0; i < rest; i++) {
		struct entry *e = &q->e[k + i];
		memcpy(a + len, q->arena + e->off, e->size);
		e->off = len;
		len += (e->size + 7) & ~(size_t)7;
		q->e[i] = *e;
	}
	free(q->arena);
	q->arena = a;
	q->len = len;
	q->n = rest;
	return 0;
}
