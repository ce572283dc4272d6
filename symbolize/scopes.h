/* The scopes holding a pc, from a per-CU index of scope code ranges.
 *
 * Finding the inlined subroutines and the function around a pc means a
 * descent through the CU's DIE tree, testing the ranges of every sibling at
 * each level: in a big CU (an interpreter's main loop, with thousands of
 * inline instances) that was ~40 us per distinct pc and half of a run's
 * time.  Instead, a CU gets an index on first use: the code ranges of its
 * functions (and of what holds them: namespaces, classes), sorted, each
 * linked to the range that encloses it; a function gets one of everything
 * in it (blocks, inline instances) when a pc first falls in it.  Then a pc
 * costs two binary searches and a climb.  Functions no pc falls in are
 * never walked.
 */
#ifndef MT_UNWIND_SCOPES_H
#define MT_UNWIND_SCOPES_H

#include <elfutils/libdw.h>

struct mt_unwind_scopes;

/* The concrete scope DIEs under cu that hold pc (subprograms, inlined
 * subroutines, lexical blocks, ...), innermost first, at most max of them,
 * into out; *index is the module's index set (created on first use).
 * @return : the count (0: no scope holds pc), or -1 when the index cannot
 *           answer (imported units, nesting deeper than 256 or than max,
 *           out of memory): the caller asks libdw (dwarf_getscopes). */
int mt_unwind_scopes_find(struct mt_unwind_scopes **index, Dwarf_Die *cu, Dwarf_Addr pc,
			  Dwarf_Die *out, int max);

/* Accepts NULL. */
void mt_unwind_scopes_free(struct mt_unwind_scopes *index);

#endif
