/* Output: collapsed stacks, the report table and JSON (diffs: fold/diff.h).
 * All functions write to f and return 0, or MT_FOLD_EIO when a write failed
 * (errno kept) or MT_FOLD_ENOMEM.
 */
#ifndef MT_FOLD_RENDER_H
#define MT_FOLD_RENDER_H

#include <stdio.h>

#include "fold/profile.h"
#include "fold/snapshot.h"

/* Collapsed stacks of a finished profile for FlameGraph, inferno and
 * speedscope: "frame;frame;... N\n" per stack, sorted by stack, N the metric
 * rounded to an integer; stacks whose N is 0 are left out.  N is at most
 * MT_FOLD_COLLAPSED_MAX (the readers' 64-bit counts): a stack whose N is
 * larger is left out too, and is passed to too_big (if not NULL) with its
 * key and its N in decimal (the exact sum, or a rounded estimate).
 * @return : 0, MT_FOLD_ERANGE when stacks were left out so (the others are
 * written), MT_FOLD_EIO or MT_FOLD_ENOMEM. */
#define MT_FOLD_COLLAPSED_MAX UINT64_MAX
typedef void (*mt_fold_too_big_fn)(void *ctx, const char *stack, size_t len,
				   const char *count);
int mt_fold_render_collapsed_checked(FILE *f, const struct mt_fold_profile *p,
				     enum mt_fold_metric metric, mt_fold_too_big_fn too_big,
				     void *ctx);

/* The same, without naming the stacks left out. */
int mt_fold_render_collapsed(FILE *f, const struct mt_fold_profile *p,
			     enum mt_fold_metric metric);

/* The report: header (input, exact totals beside estimates) and the table of
 * the snapshot's shown sites. */
int mt_fold_render_table(FILE *f, const struct mt_fold_snapshot *s);

/* The same snapshot as JSON (docs/formats/fold-json.md). */
int mt_fold_render_json(FILE *f, const struct mt_fold_snapshot *s);

/* The same with the "allocation_sites" array: the snapshot's top sites of
 * t (made from it), each with up to paths call paths (0: all). */
struct mt_fold_sites;
int mt_fold_render_json_sites(FILE *f, const struct mt_fold_snapshot *s,
			      const struct mt_fold_sites *t, uint32_t paths);

/* Writes s as a JSON string (quotes included), escaping '"', '\\', control
 * characters, and invalid UTF-8 as U+FFFD. */
void mt_fold_json_string(FILE *f, const char *s);

/* A number as the report's JSON writes it (null for NaN and infinities),
 * and a value object {"value", "n", "exact", "rse", "lo", "hi"}. */
void mt_fold_json_num(FILE *f, double v);
void mt_fold_json_value(FILE *f, const struct mt_fold_value *v);

/* "32.0 MiB", "1.05 M": three significant digits, 1024-based for bytes.
 * buf must hold 32 bytes. @return : buf. */
char *mt_fold_format_amount(char *buf, double v, int bytes);

#endif
