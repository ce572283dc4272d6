/* Rows compiled in a run, by address; see rule_ranges.h. */
#include "symbolize/rule_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "symbolize/error.h"
#include "symbolize/rules_file.h"

/* Ranges scanned one by one before a merge: a merge moves the whole
 * sorted part, so it must not come at every add. */
#define TAIL 32

const struct mt_unwind_rule *mt_unwind_rule_ranges_find(const struct mt_unwind_rule_ranges *r,
							uint64_t vaddr)
{
	size_t lo = 0, hi = r->sorted;
	while (lo < hi) {	/* first range with lo > vaddr */
		size_t mid = (lo + hi) / 2;
		if (r->v[mid].lo <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && vaddr < r->v[lo - 1].hi)
		return r->v[lo - 1].rule;
	for (size_t i = r->sorted; i < r->n; i++)
		if (r->v[i].lo <= vaddr && vaddr < r->v[i].hi)
			return r->v[i].rule;
	return NULL;
}

static int by_lo(const void *a, const void *b)
{
	const struct mt_unwind_rules_new *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort the tail and merge it into the sorted part, from the back. */
static void merge(struct mt_unwind_rule_ranges *r)
{
	size_t nt = r->n - r->sorted;
	if (!nt)
		return;
	struct mt_unwind_rules_new tail[TAIL];
	if (nt > TAIL) {	/* never from add; a caller's whole sort */
		qsort(r->v, r->n, sizeof(*r->v), by_lo);
		r->sorted = r->n;
		return;
	}
	memcpy(tail, r->v + r->sorted, nt * sizeof(*tail));
	qsort(tail, nt, sizeof(*tail), by_lo);
	size_t i = r->sorted, k = nt, out = r->n;
	while (k) {
		if (i && r->v[i - 1].lo > tail[k - 1].lo)
			r->v[--out] = r->v[--i];
		else
			r->v[--out] = tail[--k];
	}
	r->sorted = r->n;
}

int mt_unwind_rule_ranges_add(struct mt_unwind_rule_ranges *r, uint64_t lo, uint64_t hi,
			      const struct mt_unwind_rule *rule)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		struct mt_unwind_rules_new *v = realloc(r->v, cap * sizeof(*v));
		if (!v)
			return MT_UNWIND_ENOMEM;
		r->v = v;
		r->cap = cap;
	}
	r->v[r->n++] = (struct mt_unwind_rules_new){ lo, hi, rule };
	if (r->n - r->sorted >= TAIL)
		merge(r);
	return 0;
}

void mt_unwind_rule_ranges_sort(struct mt_unwind_rule_ranges *r)
{
	merge(r);
}

void mt_unwind_rule_ranges_clear(struct mt_unwind_rule_ranges *r)
{
	r->n = r->sorted = 0;
}

void mt_unwind_rule_ranges_release(struct mt_unwind_rule_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}
