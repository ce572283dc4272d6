/* Compile units by address; see cu.h. */
#include "symbolize/cu.h"

#include <dwarf.h>
#include <stdlib.h>

struct cu_range {
	uint64_t lo, hi;	/* [lo, hi), DWARF addresses */
	Dwarf_Off die;		/* the unit's DIE */
};

struct mt_unwind_cus {
	struct cu_range *v;
	size_t n;
};

static int by_lo(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Every code range of every unit of dw that can hold code.  A unit whose
 * ranges cannot be read is left out (libdwfl could not place it either).
 * Only for DWARF without .debug_aranges: where there are some, a pc they
 * miss is in no unit (glibc's hand-written functions), and reading the
 * ranges of all 1,500 of glibc's units is a cost every run would pay. */
static int build(struct mt_unwind_cus *x, Dwarf *dw)
{
	Dwarf_Aranges *ar;
	size_t cap = 0, nar;
	if (dwarf_getaranges(dw, &ar, &nar) == 0 && nar > 0)
		return 0;
	Dwarf_CU *cu = NULL;
	Dwarf_Die die;
	uint8_t type;
	while (dwarf_get_units(dw, cu, &cu, NULL, &type, &die, NULL) == 0) {
		if (type != DW_UT_compile && type != DW_UT_skeleton && type != DW_UT_partial)
			continue;
		Dwarf_Addr base, lo, hi;
		for (ptrdiff_t off = 0; (off = dwarf_ranges(&die, off, &base, &lo, &hi)) > 0;) {
			if (lo >= hi)
				continue;
			if (x->n == cap) {
				size_t ncap = cap ? 2 * cap : 64;
				struct cu_range *v = realloc(x->v, ncap * sizeof(*v));
				if (!v)
					return -1;
				x->v = v;
				cap = ncap;
			}
			x->v[x->n++] = (struct cu_range){ lo, hi, dwarf_dieoffset(&die) };
		}
	}
	if (x->n)	/* qsort(NULL, 0) is undefined */
		qsort(x->v, x->n, sizeof(*x->v), by_lo);
	return 0;
}

/* The range holding a, or NULL.  Units do not overlap; a few ranges back
 * are looked at all the same, for one that starts before a smaller one. */
static const struct cu_range *lookup(const struct mt_unwind_cus *x, uint64_t a)
{
	size_t lo = 0, hi = x->n;
	while (lo < hi) {	/* first range starting after a */
		size_t mid = lo + (hi - lo) / 2;
		if (x->v[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, k = 0; i-- > 0 && k < 8; k++)
		if (a < x->v[i].hi)
			return &x->v[i];
	return NULL;
}

/* A skeleton unit's DIEs are in its split unit. */
static void split_unit(Dwarf_Die *cu)
{
	uint8_t type;
	Dwarf_Die sub;
	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, &sub, NULL, NULL, NULL) == 0 &&
	    type == DW_UT_skeleton && sub.addr && dwarf_tag(&sub) == DW_TAG_compile_unit)
		*cu = sub;
}

int mt_unwind_cu_find(struct mt_unwind_cus **index, Dwfl_Module *mod, Dwarf *dw,
		      Dwarf_Addr dwbias, uint64_t vaddr, Dwarf_Die *out, Dwarf_Addr *bias)
{
	Dwarf_Die *cu = dwfl_module_addrdie(mod, vaddr, bias);
	if (cu) {
		*out = *cu;
	} else {
		if (!dw)
			return 0;
		if (!*index) {
			struct mt_unwind_cus *x = calloc(1, sizeof(*x));
			if (!x)
				return 0;
			if (build(x, dw) != 0) {
				mt_unwind_cus_free(x);
				return 0;
			}
			*index = x;
		}
		const struct cu_range *r = lookup(*index, vaddr - dwbias);
		if (!r || !dwarf_offdie(dw, r->die, out))
			return 0;
		*bias = dwbias;
	}
	split_unit(out);
	return 1;
}

int mt_unwind_cu_is_split(Dwarf_Die *cu)
{
	uint8_t type;
	return dwarf_cu_info(cu->cu, NULL, &type, NULL, NULL, NULL, NULL, NULL) == 0 &&
	       type == DW_UT_split_compile;
}

void mt_unwind_cus_free(struct mt_unwind_cus *index)
{
	if (!index)
		return;
	free(index->v);
	free(index);
}
