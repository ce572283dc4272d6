/* A snapshot: everything a report shows, derived once from a finished
 * profile for one metric.  The table, the JSON and the diff are all rendered
 * from snapshots, so the figures they print always agree.
 *
 * Sites are functions: a site's self is the events whose leaf frame it is,
 * its total the events with it anywhere in the stack (once per stack, so
 * recursion is not counted twice).  Prefix frames (--comm/--pid/--tid) are
 * not sites.
 */
#ifndef MT_FOLD_SNAPSHOT_H
#define MT_FOLD_SNAPSHOT_H

#include "fold/est.h"
#include "fold/memory.h"
#include "fold/profile.h"

struct mt_fold_site {
	const char *name;		/* owned by the snapshot */
	struct mt_fold_est total_acc, self_acc;
	struct mt_fold_value total, self;
	uint64_t events;		/* events behind total (for exact rows) */
	uint64_t self_events;		/* events behind self */
	int few;			/* sampled with fewer than `few` samples */
};

/* An exact figure from the sampler next to the estimate of it. */
struct mt_fold_check {
	int has_exact;
	mt_fold_i128 exact;		/* may be < 0: see per-thread inuse */
	struct mt_fold_value est;
	int in_interval;		/* lo <= exact <= hi (meaningless when the
					 * group is partial); forked: exact <= hi */
	int forked;			/* live objects of forked images: exact is
					 * only a lower bound of the estimate's
					 * counterpart */
};

enum { MT_FOLD_CHECK_BYTES, MT_FOLD_CHECK_OBJECTS, MT_FOLD_CHECK_INUSE_BYTES,
       MT_FOLD_CHECK_INUSE_OBJECTS, MT_FOLD_NCHECKS };

/* A thread, a process, or all: exact totals and estimates side by side. */
struct mt_fold_group {
	uint32_t pid, tid;		/* tid 0 for a process, both 0 for all */
	const char *comm;		/* NULL for processes and all */
	struct mt_fold_totals totals;	/* exact, when totals.lines */
	int partial;			/* the exact totals leave out process images
					 * that sent none (killed, say): not
					 * comparable with the estimates */
	struct mt_fold_check check[MT_FOLD_NCHECKS];
	struct mt_fold_value metric;	/* the snapshot metric's estimate */
};

/* One stack of the collapsed output, for tools drawing it (mt-flamegraph
 * shows samples and errors in its tooltips). */
struct mt_fold_stack_row {
	const char *stack;		/* as in the collapsed output */
	double value;
	uint64_t n;
	int exact;
};

struct mt_fold_snapshot_options {
	enum mt_fold_metric metric;
	double conf;			/* confidence level, e.g. 0.95 */
	uint32_t top;			/* rows shown; 0 = all */
	uint64_t min_samples;		/* hide rows with fewer samples */
	uint64_t few;			/* flag sampled rows with fewer samples */
	int sizes, lifetimes;		/* --sizes, --lifetimes: print them */
	size_t width;			/* text: columns (0: no limit) */
};

struct mt_fold_snapshot {
	struct mt_fold_snapshot_options opt;
	struct mt_fold_counts counts;
	const char *mode;		/* "sample", "trace", "event", "mixed", "none" */
	struct mt_fold_value total;	/* the metric over all events */
	struct mt_fold_site *sites;	/* all sites with a value, best first */
	uint32_t nsites;
	uint32_t nshown;		/* rows after --min-samples and --top */
	uint32_t *shown;		/* their indexes into sites */
	struct mt_fold_group *threads;	/* sorted by pid, tid */
	uint32_t nthreads;
	struct mt_fold_group *procs;	/* processes with scope=process totals */
	uint32_t nprocs;
	struct mt_fold_group all;
	struct mt_fold_stack_row *stacks;	/* sorted by stack, value rounding to > 0 */
	uint32_t nstacks;
	int has_totals;			/* any exact totals in the input */
	/* For figures derived later from the profile's accumulators (allocation
	 * sites): the weight of one sample where a group saw none, and the
	 * sampler's exact count that bounds every interval of a metric (< 0:
	 * none), as the sites here use them. */
	double wfb[MT_FOLD_NMETRICS];
	double bound[MT_FOLD_NMETRICS];
	struct mt_fold_memory *mem;	/* timeline, peak, temporaries, histograms */
	struct mt_fold_live live;	/* live over time (buckets 0: not asked) */
	const char **live_keys;		/* live.rows' stack keys (in names) */
	struct mt_fold_strtab *names;	/* private: owns the site names */
	char *event;			/* private: owns counts.event */
};

/* Build a snapshot of a finished profile (mt_fold_profile_finish).  The
 * snapshot copies what it needs and does not refer to p afterwards.
 * @return : 0 or MT_FOLD_ENOMEM (with *out NULL). */
int mt_fold_snapshot_new(struct mt_fold_snapshot **out, const struct mt_fold_profile *p,
			 const struct mt_fold_snapshot_options *opt);


/* Accepts NULL. */
void mt_fold_snapshot_free(struct mt_fold_snapshot *s);

#endif
