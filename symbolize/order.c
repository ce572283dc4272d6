/* Time-ordered release of records; see order.h.  Records are copied into
 * chunks that are recycled once all their records are released, so nothing
 * is copied twice and no fresh pages are faulted in at every round. */
#include "symbolize/order.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Small enough to stay in the caches and to be recycled soon: a chunk is
 * refilled only once all its records are released, and 4 MiB ones meant a
 * fresh 4 MiB of queue (1000 page faults, all cache misses) every few
 * rounds, which 256 KiB ones avoid (mt-unwind's CPU on bench/unwind.sh's
 * files). */
#define CHUNK_SIZE ((size_t)256 << 10)
#define MAX_SPARE 16

struct chunk {
	uint8_t *data;
	size_t len, cap;
	size_t live;		/* records not yet released */
	struct chunk *next;	/* in the spare list */
};

struct entry {
	uint64_t time, seq;
	struct chunk *chunk;
	size_t off, size;
	int kind;
};

struct mt_unwind_order {
	struct chunk *cur;	/* being filled */
	struct chunk *spare;	/* empty, for reuse */
	int nr_spare;
	struct entry *e;
	size_t n, ecap;
	struct entry *tmp;	/* merge buffer of ecap entries, when made */
	uint64_t seq;
	size_t bytes;		/* held */
	int sorted;		/* e[] is sorted */
	mt_unwind_order_ahead_fn ahead;
};

void mt_unwind_order_set_ahead(struct mt_unwind_order *q, mt_unwind_order_ahead_fn ahead)
{
	q->ahead = ahead;
}

int mt_unwind_order_new(struct mt_unwind_order **out)
{
	*out = calloc(1, sizeof(**out));
	return *out ? 0 : MT_UNWIND_ENOMEM;
}

static void chunk_free(struct chunk *c)
{
	if (c) {
		free(c->data);
		free(c);
	}
}

void mt_unwind_order_free(struct mt_unwind_order *q)
{
	if (!q)
		return;
	/* Chunks still holding records are reachable only from entries. */
	for (size_t i = 0; i < q->n; i++) {
		struct chunk *c = q->e[i].chunk;
		if (c && --c->live == 0 && c != q->cur)
			chunk_free(c);
	}
	chunk_free(q->cur);
	while (q->spare) {
		struct chunk *c = q->spare;
		q->spare = c->next;
		chunk_free(c);
	}
	free(q->e);
	free(q->tmp);
	free(q);
}

size_t mt_unwind_order_bytes(const struct mt_unwind_order *q)
{
	return q->bytes;
}

static struct chunk *chunk_get(struct mt_unwind_order *q, size_t need)
{
	struct chunk *c = q->spare;
	if (c && c->cap >= need) {
		q->spare = c->next;
		q->nr_spare--;
		c->len = 0;
		c->live = 0;
		return c;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cap = need > CHUNK_SIZE ? need : CHUNK_SIZE;
	if (!(c->data = malloc(c->cap))) {
		free(c);
		return NULL;
	}
	return c;
}

static void chunk_release(struct mt_unwind_order *q, struct chunk *c)
{
	if (--c->live || c == q->cur)
		return;
	if (q->nr_spare < MAX_SPARE && c->cap == CHUNK_SIZE) {
		c->next = q->spare;
		q->spare = c;
		q->nr_spare++;
	} else {
		chunk_free(c);
	}
}

void *mt_unwind_order_reserve(struct mt_unwind_order *q, size_t max)
{
	size_t need = (max + 7) & ~(size_t)7;
	if (!q->cur || q->cur->cap - q->cur->len < need) {
		struct chunk *c = chunk_get(q, need);
		if (!c)
			return NULL;
		struct chunk *old = q->cur;
		q->cur = c;
		if (old && old->live == 0) {	/* everything in it was released */
			old->live = 1;
			chunk_release(q, old);
		}
	}
	if (q->n == q->ecap) {
		size_t ecap = q->ecap ? q->ecap * 2 : 1024;
		struct entry *e = realloc(q->e, ecap * sizeof(*e));
		if (!e)
			return NULL;
		q->e = e;
		q->ecap = ecap;
		free(q->tmp);	/* made again at the next sort, at the new size */
		q->tmp = NULL;
	}
	return q->cur->data + q->cur->len;
}

void mt_unwind_order_commit(struct mt_unwind_order *q, int kind, size_t size, uint64_t time)
{
	size_t need = (size + 7) & ~(size_t)7;
	struct chunk *c = q->cur;
	/* Mostly in order already: stay sorted while that holds. */
	if (q->n == 0)
		q->sorted = 1;
	else if (q->e[q->n - 1].time > time)
		q->sorted = 0;
	q->e[q->n++] = (struct entry){ .time = time, .seq = q->seq++, .chunk = c,
				       .off = c->len, .size = size, .kind = kind };
	c->len += need;
	c->live++;
	q->bytes += need;
}

int mt_unwind_order_push(struct mt_unwind_order *q, int kind, const void *a, size_t alen,
			 const void *b, size_t blen, uint64_t time)
{
	uint8_t *room = mt_unwind_order_reserve(q, alen + blen);
	if (!room)
		return MT_UNWIND_ENOMEM;
	memcpy(room, a, alen);
	if (blen)
		memcpy(room + alen, b, blen);
	mt_unwind_order_commit(q, kind, alen + blen, time);
	return 0;
}

static int before(const struct entry *x, const struct entry *y)
{
	return x->time < y->time || (x->time == y->time && x->seq < y->seq);
}

static int cmp(const void *a, const void *b)
{
	return before(a, b) ? -1 : before(b, a);
}

/* The end of the sorted run that starts at i. */
static size_t run_end(const struct entry *e, size_t i, size_t n)
{
	while (i + 1 < n && !before(&e[i + 1], &e[i]))
		i++;
	return i + 1;
}

/* Sort e[]: it is a few sorted runs (each CPU's ring buffer drained in a
 * round, after what the last flush left), so neighbouring runs are merged
 * until one is left, O(n log runs).  qsort's O(n log n), with a call per
 * comparison, weighed on the main thread of a make -j2 recording.
 * Without memory for the merge buffer, qsort. */
static void sort_entries(struct mt_unwind_order *q)
{
	if (!q->tmp && !(q->tmp = malloc(q->ecap * sizeof(*q->tmp)))) {
		qsort(q->e, q->n, sizeof(*q->e), cmp);
		return;
	}
	struct entry *src = q->e, *dst = q->tmp;
	size_t n = q->n, runs;
	do {
		runs = 0;
		for (size_t i = 0; i < n; runs++) {
			size_t m = run_end(src, i, n), j = m < n ? run_end(src, m, n) : n;
			size_t a = i, b = m, k = i;
			while (a < m && b < j)
				dst[k++] = before(&src[b], &src[a]) ? src[b++] : src[a++];
			while (a < m)
				dst[k++] = src[a++];
			while (b < j)
				dst[k++] = src[b++];
			i = j;
		}
		struct entry *t = src;
		src = dst;
		dst = t;
	} while (runs > 1);
	if (src != q->e) {	/* the sorted copy is in tmp: trade the arrays */
		q->tmp = q->e;
		q->e = src;
	}
}

int mt_unwind_order_flush(struct mt_unwind_order *q, uint64_t limit,
			  mt_unwind_order_fn fn, void *ctx)
{
	if (q->n == 0)
		return 0;
	if (!q->sorted) {
		sort_entries(q);
		q->sorted = 1;
	}
	size_t k = 0;
	while (k < q->n && q->e[k].time <= limit) {
		struct entry *e = &q->e[k++];
		if (q->ahead && k < q->n && q->e[k].time <= limit)
			q->ahead(q->e[k].kind, q->e[k].chunk->data + q->e[k].off, ctx);
		fn(e->kind, e->chunk->data + e->off, e->size, ctx);
		q->bytes -= (e->size + 7) & ~(size_t)7;
		chunk_release(q, e->chunk);
	}
	if (k) {
		memmove(q->e, q->e + k, (q->n - k) * sizeof(*q->e));
		q->n -= k;
	}
	if (q->cur && q->cur->live == 0)
		q->cur->len = 0;	/* all released: refill from the start */
	return 0;
}
