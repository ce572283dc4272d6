/* mt-fold --pprof: profiles written as gzipped pprof protobuf (profile.proto,
 * encoded with protobuf-c from fold/profile.proto; docs/pprof.md).
 *
 * Allocation captures follow Go's heap profiles: sample types
 * alloc_objects/count, alloc_space/bytes, inuse_objects/count,
 * inuse_space/bytes holding mt-fold's estimates (already scaled up: not
 * sampled counts), period_type space/bytes and period the sampling rate.
 * Event captures: samples/count and cpu/nanoseconds (cpu-clock, task-clock;
 * another event: NAME/count).  Each stack key must start with the comm, pid
 * and tid prefix frames (MT_FOLD_PREFIX_COMM | PID | TID): they become the
 * labels comm, pid and tid.
 */
#ifndef MT_FOLD_PPROF_H
#define MT_FOLD_PPROF_H

#include <stddef.h>
#include <stdint.h>

#include "fold/locs.h"
#include "fold/profile.h"

struct mt_fold_label {
	const char *key, *value;
};

/* Finished profiles (one per set of input labels) written into one file,
 * each sample with its group's labels. */
struct mt_fold_pprof_group {
	const struct mt_fold_profile *p;
	const struct mt_fold_label *labels;
	unsigned nlabels;
};

struct mt_fold_pprof_stats {
	uint64_t samples, locations, functions, mappings;
	uint64_t clamped;	/* values above INT64_MAX, written as INT64_MAX */
};

/* The encoded, uncompressed profile into *buf (malloc'd, *len bytes).
 * @return : 0, MT_FOLD_ENOMEM, or MT_FOLD_ESTATE when a stack key lacks the
 * prefix frames. */
int mt_fold_pprof_encode(const struct mt_fold_pprof_group *g, unsigned ngroups,
			 const struct mt_fold_locs *locs, uint8_t **buf, size_t *len,
			 struct mt_fold_pprof_stats *st);

/* Encode and write gzipped to path ("-": stdout).
 * @return : 0, MT_FOLD_ENOMEM, MT_FOLD_ESTATE, or MT_FOLD_EIO (errno set). */
int mt_fold_pprof_write(const char *path, const struct mt_fold_pprof_group *g,
			unsigned ngroups, const struct mt_fold_locs *locs,
			struct mt_fold_pprof_stats *st);

/* Parse --label KEY=VALUE (arg, which is split at '=' and must outlive
 * labels) into labels[*n] (at most max).  Keys: letters, digits, '_', '.',
 * '-'; not comm, pid or tid; each once.  @return : 0, or -1 (said). */
int mt_fold_pprof_label(char *arg, struct mt_fold_label *labels, unsigned *n, unsigned max);

/* An input argument FILE@KEY=VALUE[,KEY=VALUE...] (with --pprof): unless
 * arg names an existing file, split it at its last '@' (arg keeps FILE)
 * and point *labels at "KEY=VALUE,..." (checked as --label's, values
 * without ',' or ';', no key of the global labels).
 * @return : 1 when it had labels, 0 for a plain name, -1 (said). */
int mt_fold_pprof_input_labels(char *arg, const struct mt_fold_label *global, unsigned nglobal,
			       const char **labels);

/* mt_fold_pprof_input_labels on each of the n input arguments: *input_labels
 * gets an array of n (to free; NULL entries for plain names), or NULL when
 * none has labels.  @return : 0, -1 (a bad argument, said), MT_FOLD_ENOMEM. */
int mt_fold_pprof_inputs(char **args, int n, const struct mt_fold_label *global,
			 unsigned nglobal, const char ***input_labels);

#endif
