/* The compile unit whose code holds an address.
 *
 * libdwfl finds it through .debug_aranges, which clang does not write by
 * default: a module without any gets an index of every unit's code ranges
 * (DW_AT_ranges, or low and high pc), built once, when first needed.  (A
 * module whose .debug_aranges leave some units out, gcc's and clang's
 * objects linked together, is not helped.)  A skeleton unit (split DWARF: gcc or clang -gsplit-dwarf)
 * gives way to its split unit, read from the .dwo file, which holds the
 * scopes.
 */
#ifndef MT_UNWIND_CU_H
#define MT_UNWIND_CU_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct mt_unwind_cus;

/* The unit of mod (whose DWARF is dw, at bias dwbias) holding the ELF
 * address vaddr, into *out; *bias gets the bias of its addresses.  *index
 * is the module's range index, made on first use.
 * @return : 1 found, 0 not (no DWARF covers vaddr, or out of memory). */
int mt_unwind_cu_find(struct mt_unwind_cus **index, Dwfl_Module *mod, Dwarf *dw,
		      Dwarf_Addr dwbias, uint64_t vaddr, Dwarf_Die *out, Dwarf_Addr *bias);

/* Is cu a split unit (its DIEs in a .dwo file, not in the module's own
 * DWARF)? */
int mt_unwind_cu_is_split(Dwarf_Die *cu);

/* Accepts NULL. */
void mt_unwind_cus_free(struct mt_unwind_cus *index);

#endif
