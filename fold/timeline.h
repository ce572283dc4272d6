/* The timeline: the sampler's tick lines (exact live bytes, cumulative
 * allocated bytes, RSS) per process, their peak moments, and the series the
 * JSON and the report's chart show (docs/fold.md, "Memory over time").
 *
 * Points go in per process image as they are read (any order); after
 * mt_fold_timeline_finish() the points of each process are in time order
 * and its peak moment is known.
 */
#ifndef MT_FOLD_TIMELINE_H
#define MT_FOLD_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "fold/line.h"

#define MT_FOLD_RSS_NONE UINT64_MAX

/* One tick of a process, or one point of a derived series. */
struct mt_fold_tick {
	uint64_t time;		/* perf time, ns */
	int64_t live;		/* exact live block bytes */
	uint64_t alloc_bytes, block_bytes;	/* cumulative, requested and block */
	uint64_t rss;		/* MT_FOLD_RSS_NONE: unreadable */
};

struct mt_fold_tl_proc {
	uint32_t input, pid;	/* input: the profile's labels id, 0 none */
	char *comm;		/* the latest tick's comm (owned) */
	struct mt_fold_tick *pts;
	size_t n, cap;
	/* The peak moment (after finish): the largest peak= of the ticks at
	 * its peak_time= (a tick's own TIME when its live= exceeds that). */
	uint64_t peak, peak_error, peak_time;
};

struct mt_fold_timeline {
	struct mt_fold_tl_proc *procs;
	size_t nprocs, cap;
	uint64_t ticks;		/* tick lines added */
	int finished;
};

/* @return : 0 or MT_FOLD_ENOMEM.  ev is a tick line (MT_FOLD_TICK). */
int mt_fold_timeline_add(struct mt_fold_timeline *tl, uint32_t input,
			 const struct mt_fold_event *ev);

/* Sort points, find the peak moments.  Idempotent. */
void mt_fold_timeline_finish(struct mt_fold_timeline *tl);

/* The process (input, pid), or NULL when it sent no tick. */
const struct mt_fold_tl_proc *mt_fold_timeline_proc(const struct mt_fold_timeline *tl,
						     uint32_t input, uint32_t pid);

/* The last point of pr at or before t, or NULL (t before the first). */
const struct mt_fold_tick *mt_fold_timeline_at(const struct mt_fold_tl_proc *pr, uint64_t t);

void mt_fold_timeline_release(struct mt_fold_timeline *tl);

/* At most this many points per series in the JSON. */
#define MT_FOLD_TIMELINE_MAX 2000

/* Downsample in[0..n) (in time order) to at most max points (max >= 1)
 * into out (room for min(n, max)): equal time buckets over [first,
 * last], each giving its point of largest live (at that point's time,
 * with that point's rss) carrying the bucket's last cumulative values.
 * The point of largest live overall is always kept, as every bucket's
 * largest is.  @return : the number of points written. */
size_t mt_fold_timeline_downsample(const struct mt_fold_tick *in, size_t n, size_t max,
				   struct mt_fold_tick *out);

/* A process's series with its peak point in place: its ticks, plus a point
 * at the peak moment (live = peak, cumulative values and rss those of the
 * tick before) when no tick holds it.  *out malloc'd.
 * @return : the number of points, or (size_t)-1 when out of memory. */
size_t mt_fold_timeline_series(const struct mt_fold_tl_proc *pr, struct mt_fold_tick **out);

/* The total over processes: the sum of their series as step functions on
 * the union of their times (a process counts from its first point, its
 * last value until its exit tick, then 0 live and 0 rss; its cumulative
 * bytes stay); rss MT_FOLD_RSS_NONE where no process has one.  The total's
 * peak: its largest live, the peak errors summed (*peak_error).
 * @return : points in *out (malloc'd), or (size_t)-1 when out of memory. */
size_t mt_fold_timeline_total(const struct mt_fold_timeline *tl, struct mt_fold_tick **out,
			      uint64_t *peak_error);

#endif
