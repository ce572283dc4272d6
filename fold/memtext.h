/* The text of memory over time for --report and --sites: the peak and
 * temporaries summary, the compact chart, the reconciliation block, and
 * (--sizes, --lifetimes) the histograms.  Nothing is written for an input
 * without tick lines and seq= weights (and no --sizes/--lifetimes), so older
 * captures' reports stay as they were. */
#ifndef MT_FOLD_MEMTEXT_H
#define MT_FOLD_MEMTEXT_H

#include <stddef.h>
#include <stdio.h>

#include "fold/sites.h"
#include "fold/snapshot.h"

/* Summary lines, chart and reconciliation, each block followed by a blank
 * line; width 0: no limit (the chart then takes 120 columns). */
void mt_fold_render_memory(FILE *f, const struct mt_fold_snapshot *s, size_t width);

/* The histograms asked for (s->opt.sizes, s->opt.lifetimes). */
void mt_fold_render_hists(FILE *f, const struct mt_fold_snapshot *s, size_t width);

/* --sizes, --lifetimes in --sites: the histograms of the first sites of t
 * (at most top and 5). */
struct mt_fold_sites;
void mt_fold_render_site_hists(FILE *f, const struct mt_fold_snapshot *s,
			       const struct mt_fold_sites *t, uint32_t top, size_t width);

/* The chart alone: at most 8 rows of live (#) and RSS (:) over time, an
 * axis and a line of time labels with the peak marked (^), in width
 * columns (>= 40). */
void mt_fold_render_chart(FILE *f, const struct mt_fold_tick *pts, size_t n, uint64_t start,
			  uint64_t peak_time, size_t width);

#endif
