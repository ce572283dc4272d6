/* Files of the debug cache named by a module's build-id, DIR/HEX.SUFFIX
 * (the scope indexes, symbol tables and CFI rows): read only when we may
 * trust them (common/trust.c: ours or root's, writable by no one else),
 * written whole to a temporary file beside them and renamed over. */
#ifndef MT_UNWIND_CACHE_FILE_H
#define MT_UNWIND_CACHE_FILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/uio.h>

/* The longest build-id a cache file is named after. */
#define MT_UNWIND_CACHE_MAX_ID 64

/* @return : DIR/HEX.SUFFIX (malloc'd), or NULL: no directory (NULL or
 * ""), a build-id empty or longer than MT_UNWIND_CACHE_MAX_ID, no memory. */
char *mt_unwind_cache_file_path(const char *dir, const uint8_t *id, size_t id_len,
				const char *suffix);

/* Open path to read it, a regular file we may trust of at most max bytes.
 * @return : a descriptor (*st filled); -1 when there is none (ENOENT,
 * ENOTDIR: not written yet); -2 when it is unusable (another user's,
 * writable by others, larger than max, not a regular file, an error). */
int mt_unwind_cache_file_open(const char *path, uint64_t max, struct stat *st);

/* Map path read-only, as mt_unwind_cache_file_open takes it, also unusable
 * below min bytes.  @return : 1 mapped (*map, *len: munmap them), 0 none,
 * -1 unusable. */
int mt_unwind_cache_file_map(const char *path, size_t min, uint64_t max, void **map,
			     size_t *len);

/* Write the n parts, in order, as path: a temporary file beside it (mode
 * 0644, dir made as the debug cache makes it), renamed over path.
 * @return : 0, or -1 (nothing left behind). */
int mt_unwind_cache_file_write(const char *dir, const char *path, const struct iovec *parts,
			       int n);

#endif
