/* The location details of mt-unwind --pprof-info (docs/formats/unwind-text.md):
 * "# module N BUILDID PATH" lines, " @N+0xADDR" after the last frame of a
 * physical frame and " {FILE:START}" after a frame whose function's first
 * line is known.
 *
 * Module numbers are per input file; a table shared by every profile that
 * keeps locations renumbers them (global numbers from 1, one per distinct
 * build-id and path), so merged inputs share mappings.  Without keeping,
 * the suffixes are taken off: mt-fold's collapsed stacks and reports of
 * --pprof-info output are those of the same output without it.
 */
#ifndef MT_FOLD_LOCS_H
#define MT_FOLD_LOCS_H

#include <stddef.h>
#include <stdint.h>

#include "fold/line.h"

struct mt_fold_locs;

/* @param keep : rewrite module numbers to global ones (else strip).
 * @return : a new table, or NULL when out of memory. */
struct mt_fold_locs *mt_fold_locs_new(int keep);
void mt_fold_locs_free(struct mt_fold_locs *l);	/* accepts NULL */

/* A new input file: its module numbers start afresh. */
void mt_fold_locs_file(struct mt_fold_locs *l);

/* A comment line of the input.  @return : 1 when it was a module line
 * (taken), 0 for another comment, MT_FOLD_ENOMEM. */
int mt_fold_locs_comment(struct mt_fold_locs *l, const char *line, size_t len);

/* Has the current file given module lines (its frames carry suffixes)? */
int mt_fold_locs_active(const struct mt_fold_locs *l);

/* The frames of an event with their suffixes stripped or renumbered, into
 * *out (valid until the next call).  A " @N" naming no module line of the
 * file loses its address (counted in mt_fold_locs_unknown).
 * @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_locs_frames(struct mt_fold_locs *l, struct mt_fold_str in, struct mt_fold_str *out);

/* Global modules, numbers 1 .. count. */
uint32_t mt_fold_locs_module_count(const struct mt_fold_locs *l);
/* Module g's build-id in hex ("" when none) and path. */
void mt_fold_locs_module(const struct mt_fold_locs *l, uint32_t g, const char **build_id,
			 const char **path);
/* Frames whose module number no module line gave. */
uint64_t mt_fold_locs_unknown(const struct mt_fold_locs *l);

/* One frame of a key written with kept locations, taken apart.  Strings
 * point into the frame; absent parts have length 0 (or mod 0, start 0). */
struct mt_fold_frame {
	struct mt_fold_str name;	/* without "_[i]" and the suffixes */
	int inlined;			/* "_[i]" */
	struct mt_fold_str file;	/* " (FILE:LINE)" */
	int64_t line;
	struct mt_fold_str fn_file;	/* " {FILE:START}" */
	int64_t start;
	uint32_t mod;			/* " @G+0xADDR": G (0: none) */
	uint64_t addr;
};

void mt_fold_frame_parse(const char *s, size_t len, struct mt_fold_frame *f);

#endif
