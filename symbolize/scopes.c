/* Per-CU and per-function indexes of scope code ranges; see scopes.h. */
#include "symbolize/scopes.h"

#include <dwarf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/hashmap.h"
#include "symbolize/scopes_file.h"

#define MAX_DEPTH 256

typedef struct mt_unwind_scope_range range_t;

/* The scopes under one DIE: a CU (down to its functions, not into them)
 * or a function (everything in it).  Built from the DWARF, or read from
 * the cache: then r and keys point into the file's buffer and each DIE is
 * made from its key when first needed. */
struct index {
	int unusable;		/* the walk failed: answer -1 */
	int from_file;		/* 1: read from the cache; -1: read but wrong, to build */
	int keep;		/* built from the set's DWARF: may be saved */
	range_t *r;
	size_t n, cap;
	Dwarf_Die *dies;	/* the scope DIEs with code, in tree order */
	size_t ndies, dcap;
	const uint64_t *keys;	/* from the file: each DIE's offset and tag */
};

struct mt_unwind_scopes {
	struct mt_unwind_hashmap by_die;	/* DIE offset -> struct index * */
	/* the cache (see scopes_file.h); dw NULL: none */
	Dwarf *dw;
	char *dir;
	uint8_t id[64];
	size_t id_len;
	uint64_t identity;
	struct mt_unwind_scopes_file file;
	int dirty;		/* an index the file lacks, or a file to replace */
	struct mt_unwind_scopes_stats st;
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
		x->r[x->n++] = (range_t){ .lo = lo, .hi = hi, .die = (uint32_t)(x->ndies - 1) };
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
	const range_t *x = a, *y = b;
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

static void index_clear(struct index *x)
{
	if (!x->from_file)
		free(x->r);
	free(x->dies);
	memset(x, 0, sizeof(*x));
}

/* Fill x with the scopes under root, from the DWARF. */
static void build(struct mt_unwind_scopes *set, struct index *x, Dwarf_Die *root, int from_cu)
{
	index_clear(x);
	set->st.built++;
	if (collect(x, root, from_cu) != 0 || link(x) != 0) {
		index_clear(x);
		x->unusable = 1;
		return;
	}
	x->keep = set->dw && dwarf_cu_getdwarf(root->cu) == set->dw;
	set->dirty |= x->keep;
}

static struct mt_unwind_scopes *set_of(struct mt_unwind_scopes **set)
{
	if (!*set)
		*set = calloc(1, sizeof(**set));
	return *set;
}

/* The index of the scopes under root, built on first use; NULL when it
 * cannot be had. */
static struct index *index_of(struct mt_unwind_scopes **setp, Dwarf_Die *root, int from_cu)
{
	struct mt_unwind_scopes *set = set_of(setp);
	if (!set)
		return NULL;
	uint64_t key = dwarf_dieoffset(root), v;
	struct index *x;
	if (mt_unwind_hashmap_get(&set->by_die, key, &v)) {
		x = (struct index *)(uintptr_t)v;
		if (x->from_file < 0)
			build(set, x, root, from_cu);
		return x->unusable ? NULL : x;
	}
	if (!(x = calloc(1, sizeof(*x))))
		return NULL;
	if (mt_unwind_hashmap_put(&set->by_die, key, (uintptr_t)x) != 0) {
		free(x);
		return NULL;
	}
	build(set, x, root, from_cu);
	return x->unusable ? NULL : x;
}

/* The i-th scope DIE of x.  One read from the cache is made from its key,
 * and checked: NULL when the DWARF has no such DIE there (a file that does
 * not match after all) or out of memory. */
static Dwarf_Die *die_at(struct mt_unwind_scopes *set, struct index *x, uint32_t i)
{
	if (!x->from_file)
		return &x->dies[i];
	if (!x->dies && !(x->dies = calloc(x->ndies, sizeof(*x->dies))))
		return NULL;
	Dwarf_Die *d = &x->dies[i];
	if (!d->addr) {
		uint64_t k = x->keys[i];
		if (!dwarf_offdie(set->dw, MT_UNWIND_SCOPE_KEY_OFF(k), d) ||
		    dwarf_tag(d) != MT_UNWIND_SCOPE_KEY_TAG(k)) {
			d->addr = NULL;
			return NULL;
		}
	}
	return d;
}

/* The file's indexes are wrong for this DWARF: rebuild each when next
 * used, and replace the file at the end. */
static void file_unsound(struct mt_unwind_scopes *set)
{
	struct mt_unwind_hashmap *h = &set->by_die;
	for (size_t i = 0; i < h->cap; i++) {
		if (h->keys[i] == MT_UNWIND_HASH_EMPTY)
			continue;
		struct index *x = (struct index *)(uintptr_t)h->vals[i];
		if (x->from_file) {
			index_clear(x);
			x->from_file = -1;	/* to build at the next index_of */
		}
	}
	set->st.unsound++;
	set->dirty = 1;
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

#define FULL -1
#define STALE -2

/* Append the DIEs of range i and its enclosing ones.  @return : 0, FULL
 * when out is full, STALE when a DIE from the cache is not in the DWARF. */
static int climb(struct mt_unwind_scopes *set, struct index *x, int32_t i, Dwarf_Die *out,
		 int *n, int max)
{
	for (; i >= 0; i = x->r[i].parent) {
		if (*n == max)
			return FULL;
		Dwarf_Die *d = die_at(set, x, x->r[i].die);
		if (!d)
			return STALE;
		out[(*n)++] = *d;
	}
	return 0;
}

static int find(struct mt_unwind_scopes **setp, Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *out,
		int max)
{
	struct index *top = index_of(setp, cu, 1);
	if (!top)
		return FULL;
	struct mt_unwind_scopes *set = *setp;
	int32_t i = innermost(top, pc);
	int n = 0, rc;
	if (i >= 0) {
		Dwarf_Die *fn = die_at(set, top, top->r[i].die);
		if (!fn)
			return STALE;
		if (dwarf_tag(fn) == DW_TAG_subprogram) {
			Dwarf_Die f = *fn;
			struct index *in = index_of(setp, &f, 0);
			if (!in)
				return FULL;
			if ((rc = climb(set, in, innermost(in, pc), out, &n, max)) != 0)
				return rc;
		}
	}
	return (rc = climb(set, top, i, out, &n, max)) != 0 ? rc : n;
}

int mt_unwind_scopes_find(struct mt_unwind_scopes **set, Dwarf_Die *cu, Dwarf_Addr pc,
			  Dwarf_Die *out, int max)
{
	int n = find(set, cu, pc, out, max);
	if (n == STALE) {
		file_unsound(*set);
		n = find(set, cu, pc, out, max);
	}
	return n < 0 ? -1 : n;
}

int mt_unwind_scopes_attach(struct mt_unwind_scopes **setp, Dwarf *dw, const char *dir,
			    const uint8_t *id, size_t id_len)
{
	struct mt_unwind_scopes *set = set_of(setp);
	if (!set || set->dw || !dw || !dir || id_len == 0 || id_len > sizeof(set->id))
		return 0;
	uint64_t identity = mt_unwind_scopes_identity(dw);
	if (!identity || !(set->dir = strdup(dir)))
		return 0;
	set->dw = dw;
	memcpy(set->id, id, id_len);
	set->id_len = id_len;
	set->identity = identity;
	int rc = mt_unwind_scopes_file_read(dir, id, id_len, identity, &set->file);
	for (size_t i = 0; rc > 0 && i < set->file.n; i++) {
		const struct mt_unwind_scopes_entry *e = &set->file.e[i];
		uint64_t v;
		struct index *x = NULL;
		if (mt_unwind_hashmap_get(&set->by_die, e->root, &v) ||
		    !(x = calloc(1, sizeof(*x))) ||
		    mt_unwind_hashmap_put(&set->by_die, e->root, (uintptr_t)x) != 0) {
			free(x);
			rc = -1;	/* the same root twice, or no memory */
			break;
		}
		x->from_file = 1;
		x->r = (range_t *)e->r;	/* the file's buffer: malloc'ed */
		x->n = e->n;
		x->keys = e->keys;
		x->ndies = e->nkeys;
		set->st.loaded++;
	}
	if (rc < 0) {
		file_unsound(set);
		set->st.loaded = 0;
	}
	return rc;
}

/* x as a file entry; its keys made (into *keys, malloc'ed) when it was
 * built.  @return : 0, or -1 when it cannot be kept. */
static int entry_of(struct index *x, struct mt_unwind_scopes_entry *e, uint64_t **keys)
{
	*keys = NULL;
	e->r = x->r;
	e->n = x->n;
	e->nkeys = x->ndies;
	if (x->from_file > 0) {
		e->keys = x->keys;
		return 0;
	}
	if (!x->keep || !(*keys = malloc((x->ndies ? x->ndies : 1) * sizeof(**keys))))
		return -1;
	for (size_t i = 0; i < x->ndies; i++) {
		Dwarf_Off off = dwarf_dieoffset(&x->dies[i]);
		int tag = dwarf_tag(&x->dies[i]);
		if (off >= (uint64_t)1 << 48 || tag <= 0 || tag > 0xffff) {
			free(*keys);
			*keys = NULL;
			return -1;
		}
		(*keys)[i] = MT_UNWIND_SCOPE_KEY(off, tag);
	}
	e->keys = *keys;
	return 0;
}

int mt_unwind_scopes_save(struct mt_unwind_scopes *set)
{
	if (!set || !set->dw || !set->dirty)
		return 0;
	struct mt_unwind_hashmap *h = &set->by_die;
	struct mt_unwind_scopes_entry *e = calloc(h->len ? h->len : 1, sizeof(*e));
	uint64_t **keys = calloc(h->len ? h->len : 1, sizeof(*keys));
	size_t n = 0;
	int rc = -1;
	if (!e || !keys)
		goto out;
	for (size_t i = 0; i < h->cap; i++) {
		if (h->keys[i] == MT_UNWIND_HASH_EMPTY)
			continue;
		struct index *x = (struct index *)(uintptr_t)h->vals[i];
		e[n].root = h->keys[i];
		if (!x->unusable && entry_of(x, &e[n], &keys[n]) == 0)
			n++;
	}
	rc = mt_unwind_scopes_file_write(set->dir, set->id, set->id_len, set->identity, e, n);
	if (rc == 0) {
		set->st.saved += (unsigned)n;
		set->dirty = 0;
	}
out:
	set->st.failed += rc != 0;
	for (size_t i = 0; keys && i < n; i++)
		free(keys[i]);
	free(keys);
	free(e);
	return rc == 0 ? 1 : -1;
}

struct mt_unwind_scopes_stats mt_unwind_scopes_stats(const struct mt_unwind_scopes *set)
{
	struct mt_unwind_scopes_stats none = { 0 };
	return set ? set->st : none;
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
		index_clear(x);
		free(x);
	}
	mt_unwind_hashmap_release(h);
	mt_unwind_scopes_file_release(&set->file);
	free(set->dir);
	free(set);
}
