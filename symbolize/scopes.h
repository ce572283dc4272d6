/* The scopes holding a pc, from a per-CU index of scope code ranges.
 *
 * Finding the inlined subroutines and the function around a pc means a
 * descent through the CU's DIE tree, testing the ranges of every sibling at
 * each level: in a big CU (an interpreter's main loop, with thousands of
 * inline instances) that was slow for each distinct pc, much of a run's
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
#include <stddef.h>
#include <stdint.h>

struct mt_unwind_scopes;

/* The concrete scope DIEs under cu that hold pc (subprograms, inlined
 * subroutines, lexical blocks, ...), innermost first, at most max of them,
 * into out; *index is the module's index set (created on first use).
 * @return : the count (0: no scope holds pc), or -1 when the index cannot
 *           answer (imported units, nesting deeper than 256 or than max,
 *           out of memory): the caller asks libdw (dwarf_getscopes). */
int mt_unwind_scopes_find(struct mt_unwind_scopes **index, Dwarf_Die *cu, Dwarf_Addr pc,
			  Dwarf_Die *out, int max);

/* Keep the indexes across runs in dir (the debug cache; see scopes_file.h)
 * for the DWARF dw of the file with build-id id: read the ones a previous
 * run saved there, if they check out, and let mt_unwind_scopes_save write
 * the set back.  Creates *index if need be.
 * @return : 1 read; 0 no file (or nothing to attach); -1 a file that does
 *           not check out (counted as unsound, replaced by the save). */
int mt_unwind_scopes_attach(struct mt_unwind_scopes **index, Dwarf *dw, const char *dir,
			    const uint8_t *id, size_t id_len);

/* Write the set to its file when it has indexes the file lacks.
 * @return : 1 written, 0 nothing to write, -1 failed (counted in the stats). */
int mt_unwind_scopes_save(struct mt_unwind_scopes *index);

struct mt_unwind_scopes_stats {
	unsigned loaded;	/* indexes read from the cache */
	unsigned built;		/* made from the DWARF */
	unsigned saved;		/* written to the cache */
	unsigned unsound;	/* cache files that did not check out */
	unsigned failed;	/* saves that could not write the file */
};

/* Accepts NULL (all zero). */
struct mt_unwind_scopes_stats mt_unwind_scopes_stats(const struct mt_unwind_scopes *index);

/* Accepts NULL. */
void mt_unwind_scopes_free(struct mt_unwind_scopes *index);

#endif
