/* Per-CU and per-function indexes of scope code ranges; see scopes.h. */
#include "symbolize/scopes.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>

#include "symbolize/hashmap.h"

#define MAX_DEPTH 256

/* One code range of a scope DIE.  The ranges of a well-formed tree nest or
 * are disjoint, so each has one tightest enclosing range: parent. */
struct range {
	Dwarf_Addr lo, hi;	/* [lo, hi) */
	uint32_t die;		/* in dies[]: preorder, so a parent comes first */
	int32_t parent;		/* index, or -1 */
};

/* The scopes under one DIE: a CU (down to its functions, not into them)
 * or a function (everything in it). */
struct index {
	int unusable;		/* the walk failed: answer -1 */
	struct range *r;
	size_t n, cap;
	Dwarf_Die *dies;	/* the scope DIEs with code, in tree order */
	size_t ndies, dcap;
};

struct mt_unwind_scopes {
	struct mt_unwind_hashmap by_die;	/* DIE offset -> struct index * */
};

/* A DIE that may hold scopes with code, as libdw's scope walk decides. */
static int may_nest(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return 1;
	}
	return 0;
}

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return 0;
	size_t c = *cap ? 2 * *cap : 64;
	void *q = realloc(*p, c * size);
	if (!q)
		return -1;
	*p = q;
	*cap = c;
	return 0;
}

static int add_ranges(struct index *x, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	int any = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (lo >= hi)
			continue;
		if (!any) {
			if (x->ndies == UINT32_MAX ||
			    grow((void **)&x->dies, &x->dcap, x->ndies, sizeof(*x->dies)) != 0)
				return -1;
			x->dies[x->ndies++] = *die;
			any = 1;
		}
		if (grow((void **)&x->r, &x->cap, x->n, sizeof(*x->r)) != 0)
			return -1;
		x->r[x->n++] = (struct range){ .lo = lo, .hi = hi, .die = (uint32_t)(x->ndies - 1) };
	}
	return 0;
}

/* The ranges of the scope DIEs under root, depth first, descending where
 * scopes may nest (as libdw's scope walk does) but, from a CU, not into
 * functions: each function gets its own index when a pc falls in it. */
static int collect(struct index *x, Dwarf_Die *root, int from_cu)
{
	Dwarf_Die stack[MAX_DEPTH];
	if (dwarf_child(root, &stack[0]) != 0)
		return 0;
	int depth = 1;
	while (depth > 0) {
		Dwarf_Die *cur = &stack[depth - 1];
		int tag = dwarf_tag(cur);
		if (tag == DW_TAG_imported_unit)
			return -1;	/* scopes in another unit: libdw's walk */
		if (may_nest(tag)) {
			if (add_ranges(x, cur) != 0)
				return -1;
			if ((!from_cu || tag != DW_TAG_subprogram) && dwarf_haschildren(cur) > 0) {
				if (depth == MAX_DEPTH)
					return -1;
				if (dwarf_child(cur, &stack[depth]) == 0) {
					depth++;
					continue;
				}
			}
		}
		/* next sibling, climbing out of finished levels */
		while (depth > 0) {
			int rc = dwarf_siblingof(&stack[depth - 1], &stack[depth - 1]);
			if (rc == 0)
				break;
			if (rc < 0)
				return -1;
			depth--;
		}
	}
	return 0;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;	/* the wider one encloses */
	return (x->die > y->die) - (x->die < y->die);
}

/* Sort, then link each range to the tightest earlier one still open at
 * its start. */
static int link(struct index *x)
{
	if (x->n)	/* qsort(NULL, 0) is undefined */
		qsort(x->r, x->n, sizeof(*x->r), cmp_range);
	int32_t *open = malloc((x->n ? x->n : 1) * sizeof(*open));
	if (!open)
		return -1;
	size_t nopen = 0;
	for (size_t i = 0; i < x->n; i++) {
		while (nopen && x->r[open[nopen - 1]].hi <= x->r[i].lo)
			nopen--;
		x->r[i].parent = nopen ? open[nopen - 1] : -1;
		open[nopen++] = (int32_t)i;
	}
	free(open);
	return 0;
}

/* The index of the scopes under root, built on first use; NULL when it
 * cannot be had. */
static struct index *index_of(struct mt_unwind_scopes **set, Dwarf_Die *root, int from_cu)
{
	if (!*set && !(*set = calloc(1, sizeof(**set))))
		return NULL;
	uint64_t key = dwarf_dieoffset(root), v;
	struct index *x;
	if (mt_unwind_hashmap_get(&(*set)->by_die, key, &v)) {
		x = (struct index *)(uintptr_t)v;
		return x->unusable ? NULL : x;
	}
	if (!(x = calloc(1, sizeof(*x))))
		return NULL;
	if (mt_unwind_hashmap_put(&(*set)->by_die, key, (uintptr_t)x) != 0) {
		free(x);
		return NULL;
	}
	if (collect(x, root, from_cu) != 0 || link(x) != 0) {
		x->unusable = 1;
		free(x->r);
		free(x->dies);
		x->r = NULL;
		x->dies = NULL;
		x->n = x->cap = x->ndies = x->dcap = 0;
		return NULL;
	}
	return x;
}

/* The innermost range holding pc, or -1: the last one starting at or
 * before pc, then out to one that holds it. */
static int32_t innermost(const struct index *x, Dwarf_Addr pc)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (x->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	int32_t i = (int32_t)lo - 1;
	while (i >= 0 && pc >= x->r[i].hi)
		i = x->r[i].parent;
	return i;
}

/* Append the DIEs of range i and its enclosing ones.  @return : -1 when
 * out is full. */
static int climb(const struct index *x, int32_t i, Dwarf_Die *out, int *n, int max)
{
	for (; i >= 0; i = x->r[i].parent) {
		if (*n == max)
			return -1;
		out[(*n)++] = x->dies[x->r[i].die];
	}
	return 0;
}

int mt_unwind_scopes_find(struct mt_unwind_scopes **set, Dwarf_Die *cu, Dwarf_Addr pc,
			  Dwarf_Die *out, int max)
{
	struct index *top = index_of(set, cu, 1);
	if (!top)
		return -1;
	int32_t i = innermost(top, pc);
	int n = 0;
	if (i >= 0) {
		Dwarf_Die *fn = &top->dies[top->r[i].die];
		if (dwarf_tag(fn) == DW_TAG_subprogram) {
			struct index *in = index_of(set, fn, 0);
			if (!in || climb(in, innermost(in, pc), out, &n, max) != 0)
				return -1;
		}
	}
	return climb(top, i, out, &n, max) != 0 ? -1 : n;
}

void mt_unwind_scopes_free(struct mt_unwind_scopes *set)
{
	if (!set)
		return;
	struct mt_unwind_hashmap *h = &set->by_die;
	for (size_t i = 0; i < h->cap; i++) {
		if (h->keys[i] == MT_UNWIND_HASH_EMPTY)
			continue;
		struct index *x = (struct index *)(uintptr_t)h->vals[i];
		free(x->r);
		free(x->dies);
		free(x);
	}
	mt_unwind_hashmap_release(h);
	free(set);
}
