/* Copies of the sampler by build-id, so that a capture stays readable after
 * mt is rebuilt or upgraded (mt-unwind looks there: docs/unwind.md). */
#ifndef MT_CAPTURE_KEEP_H
#define MT_CAPTURE_KEEP_H

#include "capture/capture_err.h"

/* Copy the file at path to CACHE/build-id/HEX/BASENAME (common/cache_dir.h),
 * HEX its build-id, unless a copy is there already.  A file without a
 * build-id, or no cache directory, is left alone.  The copy is written to
 * a temporary name and renamed into place once checked, so a copy cut short
 * is never found.
 * @return : 0 kept (or nothing to keep), or MT_CAPTURE_EKEEP with the
 * errno (err filled). */
int mt_capture_keep_by_build_id(const char *path, struct mt_capture_err *err);

#endif
