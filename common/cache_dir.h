/* mt's per-user cache directory: $XDG_CACHE_HOME/mt, else ~/.cache/mt.
 * Shared by mt-capture, which keeps there a copy of each sampler build it
 * preloads (build-id/HEX/libmt-sampler.so), and mt-unwind: its debug cache
 * (debug/) and those copies. */
#ifndef MT_CACHE_DIR_H
#define MT_CACHE_DIR_H

#include <stddef.h>
#include <stdint.h>

/* @return : "ROOT/sub", malloc'd; NULL when neither variable holds an
 *           absolute path, or out of memory. */
char *mt_cache_dir(const char *sub);

/* @id as lowercase hex into @out (2 * @id_len + 1 bytes): how the cache,
 * build-id trees and separate debug files name files by build-id, and how
 * messages show build-ids. */
void mt_build_id_hex(char *out, const uint8_t *id, size_t id_len);

#endif
