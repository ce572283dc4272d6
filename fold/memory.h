/* Memory over time, peak, temporaries, sizes and lifetimes: the figures a
 * snapshot shows besides its metric, finished once from the profile
 * (docs/fold.md, "Memory over time").  The snapshot owns them. */
#ifndef MT_FOLD_MEMORY_H
#define MT_FOLD_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#include "fold/est.h"
#include "fold/hist.h"
#include "fold/timeline.h"

struct mt_fold_profile;

struct mt_fold_mem_proc {
	uint32_t pid;
	char *comm;			/* "" when unknown */
	size_t points_read;		/* its tick lines */
	struct mt_fold_tick *pts;	/* downsampled, times in perf ns */
	size_t n;
	int has_rss;			/* a point has rss */
	uint64_t peak, peak_error, peak_time;
};

/* A histogram's non-empty buckets, finished. */
struct mt_fold_mem_bucket {
	unsigned b;
	struct mt_fold_value objects, bytes;
};
struct mt_fold_mem_hist {
	struct mt_fold_mem_bucket *v;
	unsigned n;
};

/* One reconciliation row: requested (estimate), block and RSS (exact). */
struct mt_fold_mem_recon {
	struct mt_fold_value requested;
	int has_block, has_rss;
	int64_t block;
	uint64_t rss;
};

struct mt_fold_memory {
	int has_ticks, has_seq;
	uint64_t start;			/* perf time of the first event */
	int64_t at;			/* --at: ns since start; -1: per process */
	struct mt_fold_value peak_bytes, peak_objects, temp_bytes, temp_objects;
	struct mt_fold_value alloc_bytes;	/* for the share */
	double temp_share;		/* temp_bytes / alloc_bytes estimate */
	uint64_t peak_unticked;
	struct mt_fold_mem_proc *procs;	/* by pid */
	size_t nprocs;
	struct mt_fold_tick *total;	/* downsampled */
	size_t ntotal;
	int total_has_rss;
	uint64_t total_peak, total_peak_error, total_peak_time;
	/* the peak moment: --at's, the one process's, or (several
	 * processes) each its own: peak_time_known 0 */
	int peak_time_known;
	uint64_t peak_moment;		/* perf time */
	struct mt_fold_mem_recon at_peak, at_end;
	struct mt_fold_mem_hist sizes, life_ns, life_allocs;
	struct mt_fold_value freed, not_freed;
};

/* The most the requested bytes live at the processes' peaks can be: their
 * exact block peaks, each with its error, summed; -1 where that does not
 * hold: with --at (a moment between ticks), without ticks, or with images
 * of forked processes (forked_lines: their live bytes count the frees of
 * their parent's blocks, and can be less than their own blocks hold). */
double mt_fold_memory_peak_bound(const struct mt_fold_profile *p, uint64_t forked_lines);

/* Finish the figures of a finished profile p; wfb: the snapshot's weights
 * where a group saw none (fold/snapshot.h), by metric; peak_bound: as
 * mt_fold_memory_peak_bound, the top of the peak's intervals (or -1).
 * @return : 0 or MT_FOLD_ENOMEM (*out NULL). */
int mt_fold_memory_new(struct mt_fold_memory **out, const struct mt_fold_profile *p,
		       double conf, const double *wfb, double peak_bound);
void mt_fold_memory_free(struct mt_fold_memory *m);

/* A histogram from cells (one site's): its non-empty buckets of which.
 * @return : 0 or MT_FOLD_ENOMEM. */
int mt_fold_memory_cells(struct mt_fold_mem_hist *out, const struct mt_fold_cells *c,
			 unsigned which, double conf, const double *wfb);
void mt_fold_memory_hist_free(struct mt_fold_mem_hist *h);

#endif
