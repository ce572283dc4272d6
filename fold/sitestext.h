/* The text report of allocation sites (--sites), the call trees (--tree,
 * --callers), and the JSON array of sites: every line fitted to a width
 * (fold/width.h), every figure with its unit. */
#ifndef MT_FOLD_SITESTEXT_H
#define MT_FOLD_SITESTEXT_H

#include <stdio.h>

#include "fold/sites.h"
#include "fold/snapshot.h"

struct mt_fold_sites_options {
	size_t width;			/* columns; 0: no limit (--wide) */
	uint32_t top;			/* sites shown; 0: all */
	uint32_t paths;			/* paths under each site; 0: all */
	uint32_t groups;		/* thread and process rows; 0: all */
	double min_share;		/* trees: nodes below this % left out */
	enum mt_fold_tree_kind tree;	/* NONE: the sites */
};

/* Summary, threads and processes, then the sites or the tree.
 * @return : 0 or MT_FOLD_EIO. */
int mt_fold_render_sites(FILE *f, const struct mt_fold_snapshot *s,
			 const struct mt_fold_sites *t, const struct mt_fold_sites_options *o);

/* "1.50 ms": nanoseconds as ns, us, ms or s, three significant digits.
 * buf holds 32 bytes.  @return : buf. */
char *mt_fold_format_time(char *buf, double ns);

/* What a figure summed over all the events without sampling (trace mode,
 * counts) misses, so that it is not called exact: NULL when nothing.
 * "events lost" (the capture lost some), "stacks cut" (stacks cut short:
 * for per-site figures), "images unsampled" (process images that never ran
 * the sampler: their allocations are in no figure). */
static inline const char *mt_fold_exact_misses(const struct mt_fold_counts *c, int per_site)
{
	if (c->lost_events || c->lost_records)
		return "events lost";
	if (per_site && c->truncated)
		return "stacks cut";
	if (c->unsampled_images)
		return "images unsampled";
	return NULL;
}

/* Per-site figures are never called exact: see mt_fold_exact_misses. */
static inline int mt_fold_stacks_cut(const struct mt_fold_counts *c)
{
	return mt_fold_exact_misses(c, 1) != NULL;
}

#endif
