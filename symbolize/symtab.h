/* A module's function symbols sorted by address, for binary search: libdwfl's
 * dwfl_module_addrinfo scans the whole table on every call, which made
 * symbol lookups of first-seen pcs the unwinder's main cost.
 *
 * Collecting and sorting a large table (cc1's 29,000 dynamic symbols) is
 * itself a large part of a short run, and a build runs cc1 in every
 * compile: the sorted table is kept in the debug cache, DIR/<build-id>.syms
 * (docs/formats/symtab-cache.md), and later runs map it instead. */
#ifndef MT_UNWIND_SYMTAB_H
#define MT_UNWIND_SYMTAB_H

#include <elfutils/libdwfl.h>
#include <stddef.h>
#include <stdint.h>

#include "symbolize/error.h"

/* As stored in the cache file (24 bytes, little-endian). */
struct mt_unwind_symbol {
	uint64_t addr, size;
	uint32_t name;		/* offset in the table's names */
	int32_t rank;		/* among aliases, the higher the better */
};

struct mt_unwind_symtab {
	const struct mt_unwind_symbol *v;
	size_t n;
	const char *names;	/* NUL-ended names */
	size_t names_len;
	void *map;		/* the cache file mapped (v and names in it), */
	size_t map_len;		/* else NULL: v and names are malloc'ed */
};

static inline const char *mt_unwind_symtab_name(const struct mt_unwind_symtab *t,
						const struct mt_unwind_symbol *s)
{
	return t->names + s->name;
}

/* What the symbol table cache did (counted atomically: loader threads). */
struct mt_unwind_symtab_stats {
	unsigned read;		/* tables mapped from the cache */
	unsigned built;		/* collected from the ELF file and sorted */
	unsigned saved;		/* written to the cache */
	unsigned unsound;	/* cache files that did not check out, or that
				 * another user can have written: not used */
	unsigned failed;	/* could not be written */
};

/* Collect mod's symbols (.symtab, from the debug file when the main file
 * lacks one, else .dynsym, as libdwfl picks them) and sort them.
 * @return : 0, or MT_UNWIND_ENOMEM.  An empty table is not an error. */
int mt_unwind_symtab_load(struct mt_unwind_symtab *t, Dwfl_Module *mod);

/* The same, through the cache in dir for build-id id (dir NULL or "", or
 * no build-id: mt_unwind_symtab_load): a sound file made from the same
 * source is mapped; otherwise the table is built and saved.  st may be
 * NULL.  @return : 0, or MT_UNWIND_ENOMEM. */
int mt_unwind_symtab_load_cached(struct mt_unwind_symtab *t, Dwfl_Module *mod, const char *dir,
				 const uint8_t *id, size_t id_len,
				 struct mt_unwind_symtab_stats *st);

/* What the symbols of mod come from: the number of symbols libdwfl
 * reports, and the identity (device, inode, size, modification and change
 * times) of the main file and, when it has no .symtab, of the separate
 * debug file libdwfl found (an inflated copy in cache_dir, which any run
 * may make again, by its being one), hashed.  0 when it cannot be told
 * (no file: the vdso): then nothing is cached. */
uint64_t mt_unwind_symtab_source(Dwfl_Module *mod, const char *cache_dir);

/* The cache file for build-id id in dir, checked whole (size, checksum,
 * build-id, source, order, names) and trusted (common/trust.h), mapped
 * into t.  @return : 1 read; 0 no such file; -1 unsound or untrusted. */
int mt_unwind_symtab_file_read(const char *dir, const uint8_t *id, size_t id_len,
			       uint64_t source, struct mt_unwind_symtab *t);

/* Write t as dir's file for build-id id (a temporary name, then renamed).
 * @return : 0, or MT_UNWIND_EIO. */
int mt_unwind_symtab_file_write(const char *dir, const uint8_t *id, size_t id_len,
				uint64_t source, const struct mt_unwind_symtab *t);

void mt_unwind_symtab_release(struct mt_unwind_symtab *t);

/* The symbol holding addr: the one with the greatest start <= addr whose
 * size covers addr (a sizeless symbol counts when it is the nearest).
 * Among aliases, as perf chooses: default visibility, then global over weak
 * over local, then fewer leading underscores, then the shorter name
 * ("malloc" rather than "__libc_malloc").  @return : it, or NULL. */
const struct mt_unwind_symbol *mt_unwind_symtab_find(const struct mt_unwind_symtab *t,
						     uint64_t addr);

#endif
