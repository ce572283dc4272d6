/* mt's per-user cache directory: $XDG_CACHE_HOME/mt, else ~/.cache/mt.
 * Shared by mt-capture, which keeps there a copy of each sampler build it
 * preloads (build-id/HEX/libmt-sampler.so), and mt-unwind: its debug cache
 * (debug/) and those copies. */
#ifndef MT_CACHE_DIR_H
#define MT_CACHE_DIR_H

/* @return : "ROOT/sub", malloc'd; NULL when neither variable holds an
 *           absolute path, or out of memory. */
char *mt_cache_dir(const char *sub);

#endif
