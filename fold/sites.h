/* Allocation sites: stacks grouped by the first frame (leaf to root) that
 * is not the allocator or one of its wrappers, with the call paths that lead
 * to each; and the call trees (top-down, or callers of the sites) cut at
 * the sites.  Figures are the profile's own accumulators added up and
 * finished as the snapshot finishes its sites (fold/est.c), so a site's
 * interval means what every interval of the report means.
 */
#ifndef MT_FOLD_SITES_H
#define MT_FOLD_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "fold/est.h"
#include "fold/profile.h"
#include "fold/snapshot.h"

/* The site of a stack without frames. */
#define MT_FOLD_SITE_NO_STACK "(no stack)"

/* Which functions are the allocator's: the default table (docs/fold.md,
 * "Allocation sites") and the patterns added. */
struct mt_fold_alloc_fns;

/* @return : a matcher of the default table, or NULL when out of memory. */
struct mt_fold_alloc_fns *mt_fold_alloc_fns_new(void);
void mt_fold_alloc_fns_free(struct mt_fold_alloc_fns *a);

/* Add a POSIX extended regular expression matched against the bare name
 * (--alloc-fn; unanchored, as grep -E: anchor it with ^ and $).
 * @return : 0; -1 for a bad expression (why in err); MT_FOLD_ENOMEM. */
int mt_fold_alloc_fns_add(struct mt_fold_alloc_fns *a, const char *ere, char *err,
			  size_t errlen);

/* Is the bare function name[0..len) an allocator function? */
int mt_fold_is_alloc_fn(const struct mt_fold_alloc_fns *a, const char *name, size_t len);

/* The same for a frame as mt-unwind writes it ("name_[i] (file:line)"). */
int mt_fold_is_alloc_frame(const struct mt_fold_alloc_fns *a, const char *frame, size_t len);

/* Split a frame into its bare name (without "_[i]" and " (file:line)") and
 * its location "file:line" (*llen 0 when there is none, or it is ??:0). */
void mt_fold_frame_split(const char *frame, size_t len, size_t *nlen, const char **loc,
			 size_t *llen);

/* One way to reach a site: its callers, nearest first. */
struct mt_fold_path {
	const char *frames;		/* frames joined by ';', the site's caller
					 * first, the root last; "" at the root */
	struct mt_fold_est acc;
	struct mt_fold_value value;
};

struct mt_fold_alloc_site {
	const char *name;		/* bare function name */
	const char *loc;		/* "file:line", or "" */
	struct mt_fold_est acc, allocs_acc;	/* the metric; alloc_objects */
	struct mt_fold_value value, allocs;
	uint64_t events;		/* events behind it */
	struct mt_fold_cells cells;	/* sizes and lifetimes (fold/hist.h) */
	struct mt_fold_path *paths;	/* best first */
	uint32_t npaths;
};

/* A node of a call tree. */
struct mt_fold_tree_node {
	const char *frame;		/* as in the input */
	struct mt_fold_est acc;
	struct mt_fold_value value;
	uint32_t child, next;		/* first child, next sibling (best
					 * first); UINT32_MAX: none */
};

enum mt_fold_tree_kind { MT_FOLD_TREE_NONE, MT_FOLD_TREE_DOWN, MT_FOLD_TREE_CALLERS };

struct mt_fold_sites {
	enum mt_fold_metric metric;
	struct mt_fold_alloc_site *sites;	/* best first */
	uint32_t nsites;
	uint64_t allocator_only;	/* stacks whose every frame is the
					 * allocator's (their site: the outermost) */
	struct mt_fold_tree_node *nodes;	/* with a tree */
	uint32_t nnodes, root;		/* root: first top-level node */
	void *priv;
};

/* Group the stacks of a finished profile p by site, for the metric of
 * snapshot s (made from p), and build the tree asked for.
 * @return : 0 or MT_FOLD_ENOMEM (*out NULL). */
int mt_fold_sites_new(struct mt_fold_sites **out, const struct mt_fold_profile *p,
		      const struct mt_fold_snapshot *s, const struct mt_fold_alloc_fns *a,
		      enum mt_fold_tree_kind tree);
void mt_fold_sites_free(struct mt_fold_sites *t);

#endif
