/* Records for a process that was running before capture began, rebuilt
 * from /proc. */
#ifndef MT_CAPTURE_PROC_H
#define MT_CAPTURE_PROC_H

#include "capture/capture_err.h"

#include <stdint.h>
#include <sys/types.h>

struct mt_perf_writer;

/* Write synthesized COMM (one per thread) and MMAP2 (executable mappings)
 * records for the running process pid, as the kernel would have for a
 * process started under capture; id is the tracking event's sample id.
 * @return : 0 or -1 (err); *records counts what was written. */
int mt_capture_proc_synthesize(struct mt_perf_writer *w, pid_t pid, uint64_t id,
			       uint64_t *records, char *err);

/* The threads of pid from /proc/pid/task.  @return : count (>= 1) with a
 * malloc'd array in *tids, or -1 (err). */
int mt_capture_proc_threads(pid_t pid, pid_t **tids, char *err);

#endif
