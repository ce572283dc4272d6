/* Records for a process that was running before capture began, rebuilt
 * from /proc. */
#ifndef MT_CAPTURE_PROC_H
#define MT_CAPTURE_PROC_H

#include "capture/capture_err.h"

#include <stdint.h>
#include <sys/types.h>

struct mt_perf_writer;

/* Write synthesized COMM (one per thread) and MMAP2 (executable mappings)
 * records for the running process pid to w, as the kernel would have for a
 * process started under capture; id is the tracking event's sample id.
 * *records is increased by the number written, also when it fails midway.
 * @return : 0, or MT_CAPTURE_ENOPROC (pid is gone), EOPEN, ENOTHREADS,
 * ENOMEM (reading /proc), ESYNTH (a record the writer refused: see
 * mt_perf_writer_error) (err filled). */
int mt_capture_proc_synthesize(struct mt_perf_writer *w, pid_t pid, uint64_t id,
			       uint64_t *records, struct mt_capture_err *err);

/* The threads of pid from /proc/pid/task.
 * @return : their count (>= 1), with *tids a malloc'd array of them that the
 * caller frees; or MT_CAPTURE_ENOPROC, EOPEN, ENOTHREADS, ENOMEM (err
 * filled, *tids untouched). */
int mt_capture_proc_threads(pid_t pid, pid_t **tids, struct mt_capture_err *err);

#endif
