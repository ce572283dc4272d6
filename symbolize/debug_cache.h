/* A cache of uncompressed copies of separate debug files.
 *
 * Distributions ship debug files with compressed DWARF sections
 * (SHF_COMPRESSED, zlib), and libdw inflates every one of them each time a
 * file is opened: for glibc's debug file that takes more CPU than
 * unwinding and symbolising a 30k-sample profile (bench/unwind.sh runs
 * with and without the cache).  Sections compressed with zstd, which
 * libelf reads only from elfutils 0.189 on, are inflated here
 * with libzstd: a copy is then the only way their DWARF is read at all
 * (module.c asks for one of the program itself when it has no debug file).  The cache keeps one
 * inflated copy per build-id, DIR/<build-id>.debug, written once (to a
 * temporary name, then renamed, so concurrent runs never see half a file)
 * and mapped directly by libdw afterwards.  A copy whose build-id, layout
 * or source does not check out is replaced, never used; one another user
 * could have written is not used either.
 */
#ifndef MT_UNWIND_DEBUG_CACHE_H
#define MT_UNWIND_DEBUG_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "symbolize/error.h"

struct mt_unwind_debug_cache_stats {
	unsigned hits;		/* copies found and used */
	unsigned written;	/* copies made in this run */
	unsigned bad;		/* copies found unsound (replaced, if possible) */
	unsigned failed;	/* could not be made (the original was used) */
	unsigned untrusted;	/* found and not used: another user's, or writable
				 * by others (common/trust.h) */
};

/* The default directory: $XDG_CACHE_HOME/mt/debug, else
 * $HOME/.cache/mt/debug.  @return : a malloc'ed path, or NULL when neither
 * variable is set (no cache) or on ENOMEM. */
char *mt_unwind_debug_cache_default_dir(void);

/* Make directory dir and its parents, as mkdir -p, every one of them
 * changeable by no other user (common/trust.h).  @return : 0, or
 * MT_UNWIND_EIO (errno kept; a directory that is not trusted too). */
int mt_unwind_cache_mkdirs(const char *dir);

/* The copy for build-id @id in @dir, if there is a sound one made from the
 * file open on @src (its identity, else its content: see the trailer in
 * debug_cache.c) and owned by this user or root, writable by no one else
 * (one that is not is counted as untrusted; one unsound, as bad, and
 * replaced by the next mt_unwind_debug_cache_add).  @path_out receives its
 * malloc'ed path.  Thread-safe; @st is updated atomically.  @return : an
 * fd on it, or -1. */
int mt_unwind_debug_cache_lookup(const char *dir, const uint8_t *id, size_t id_len, int src,
				 char **path_out, struct mt_unwind_debug_cache_stats *st);

/* The source the copy at @path was made from (its trailer: the
 * original's identity and content hash), hashed: what a table made from
 * the copy depends on, which a copy made again from the same file keeps.
 * @return : the hash, or 0 when @path is no copy with a sound trailer. */
uint64_t mt_unwind_debug_cache_copy_source(const char *path);

/* Make the copy of the debug file open on @fd (not consumed), whose build-id
 * must be @id.  @return : an fd on the copy (its path in @path_out); -1 when
 * the file has no compressed section or another build-id (not counted), or
 * when the copy cannot be made (counted as failed). */
int mt_unwind_debug_cache_add(const char *dir, int fd, const uint8_t *id, size_t id_len,
			      char **path_out, struct mt_unwind_debug_cache_stats *st);

#endif
