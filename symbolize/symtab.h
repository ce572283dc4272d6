/* A module's function symbols sorted by address, for binary search: libdwfl's
 * dwfl_module_addrinfo scans the whole table on every call, which made
 * symbol lookups of first-seen pcs the unwinder's main cost. */
#ifndef MT_UNWIND_SYMTAB_H
#define MT_UNWIND_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/error.h"

struct mt_unwind_symbol {
	uint64_t addr, size;
	const char *name;	/* owned by libdwfl's module, lives with it */
	int rank;		/* among aliases, the higher the better */
};

struct mt_unwind_symtab {
	struct mt_unwind_symbol *v;
	size_t n;
};

/* Collect mod's symbols (.symtab, from the debug file when the main file
 * lacks one, else .dynsym, as libdwfl picks them).
 * @return : 0, or MT_UNWIND_ENOMEM.  An empty table is not an error. */
int mt_unwind_symtab_load(struct mt_unwind_symtab *t, Dwfl_Module *mod);

void mt_unwind_symtab_release(struct mt_unwind_symtab *t);

/* The symbol holding addr: the one with the greatest start <= addr whose
 * size covers addr (a sizeless symbol counts when it is the nearest).
 * Among aliases, as perf chooses: default visibility, then global over weak
 * over local, then fewer leading underscores, then the shorter name
 * ("malloc" rather than "__libc_malloc").  @return : it, or NULL. */
const struct mt_unwind_symbol *mt_unwind_symtab_find(const struct mt_unwind_symtab *t,
						     uint64_t addr);

#endif
