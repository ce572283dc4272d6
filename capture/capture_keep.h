/* Copies of the sampler by build-id, so that a capture stays readable after
 * mt is rebuilt or upgraded (mt-unwind looks there: docs/unwind.md). */
#ifndef MT_CAPTURE_KEEP_H
#define MT_CAPTURE_KEEP_H

/* Copy the file at path to CACHE/build-id/HEX/BASENAME (common/cache_dir.h),
 * HEX its build-id, unless a copy is there already.  A file without a
 * build-id, or no cache directory, is left alone.
 * @return : 0 kept (or nothing to keep), -1 with errno set. */
int mt_capture_keep_by_build_id(const char *path);

#endif
