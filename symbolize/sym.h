/* Frame text per pc: the symbol, the inline chain expanded from DWARF
 * (DW_TAG_inlined_subroutine scopes), demangled names and source lines,
 * formatted once per (module, address) and cached on the module, so a pc
 * seen twice costs one hash lookup. */
#ifndef MT_UNWIND_SYM_H
#define MT_UNWIND_SYM_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/maps.h"
#include "symbolize/module.h"

struct mt_unwind_symopts {
	int addrs;		/* every frame as [module+0xADDR] */
	int srcline;		/* append " (file:line)" */
	int no_inline;		/* physical frames only */
	int no_demangle;
	int pprof_info;		/* " {FILE:START}" per frame, " @N+0xADDR" per
				 * physical frame, "# module" lines (batch.h) */
};

/* One physical frame's text: its frames root-to-leaf joined by ';'. */
struct mt_unwind_sym {
	uint32_t len;		/* bytes in text, without the NUL */
	uint16_t nframes;	/* 1 + inline frames */
	char text[];
};

/* The text for ELF address vaddr (the pc, or pc-1 for a return address) in
 * module m, which must be in state MT_UNWIND_MOD_OK.  Cached on m with the
 * options of the first call: use one set of options per module cache.
 * One thread at a time may symbolise (the cache is not locked); it may run
 * beside the unwinder, as libdw is only used under m->lock.
 * @return : the text (owned by m), or NULL when out of memory. */
const struct mt_unwind_sym *mt_unwind_sym_get(struct mt_unwind_module *m, uint64_t vaddr,
					      const struct mt_unwind_symopts *o);

/* Format a frame that has no usable module into buf (size n, NUL-ended):
 * "[unknown+0xPC]" outside every mapping, "[name+0xOFF]" with the file
 * offset when the file cannot be read, with "_[x]" appended on a build-id
 * mismatch.  @return : the length written. */
size_t mt_unwind_sym_unknown(char *buf, size_t n, const struct mt_unwind_map *map,
			     uint64_t pc);

#endif
