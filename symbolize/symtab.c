/* Sorted symbol tables; see symtab.h. */
#include "symbolize/symtab.h"

#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b)
{
	const struct mt_unwind_symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)		/* the preferred alias first */
		return x->rank > y->rank ? -1 : 1;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

int mt_unwind_symtab_load(struct mt_unwind_symtab *t, Dwfl_Module *mod)
{
	memset(t, 0, sizeof(*t));
	int n = dwfl_module_getsymtab(mod);
	if (n <= 0)
		return 0;
	t->v = malloc((size_t)n * sizeof(*t->v));
	if (!t->v)
		return MT_UNWIND_ENOMEM;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		int bind = GELF_ST_BIND(sym.st_info), under = 0;
		while (name[under] == '_' && under < 3)
			under++;
		int rank = (GELF_ST_VISIBILITY(sym.st_other) == STV_DEFAULT) * 64 +
			   (bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0) * 8 + (3 - under);
		t->v[t->n++] = (struct mt_unwind_symbol){
			.addr = addr, .size = sym.st_size, .name = name, .rank = rank,
		};
	}
	qsort(t->v, t->n, sizeof(*t->v), cmp);
	return 0;
}

void mt_unwind_symtab_release(struct mt_unwind_symtab *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

const struct mt_unwind_symbol *mt_unwind_symtab_find(const struct mt_unwind_symtab *t,
						     uint64_t addr)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {	/* first symbol with start > addr */
		size_t mid = (lo + hi) / 2;
		if (t->v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	/* The nearest start may be a small symbol nested in a bigger one, or
	 * several aliases: look back a little for one that covers addr. */
	uint64_t nearest = t->v[lo - 1].addr;
	const struct mt_unwind_symbol *sizeless = NULL;
	for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) {
		const struct mt_unwind_symbol *s = &t->v[i];
		if (s->size && addr < s->addr + s->size) {
			/* Aliases are sorted best first: take the first one. */
			while (i > 0 && t->v[i - 1].addr == s->addr && t->v[i - 1].size &&
			       addr < t->v[i - 1].addr + t->v[i - 1].size)
				s = &t->v[--i];
			return s;
		}
		if (!s->size && s->addr == nearest)
			sizeless = s;	/* the last one seen is the best */
	}
	return sizeless;
}
