/* mt: the unwound text of a capture, from mt-unwind or from the cache.
 *
 * A capture (.mtz, perf.data, perf pipe stream) is unwound once: mt-unwind's
 * output is kept, zstd-compressed, in $XDG_CACHE_HOME/mt/unwound (else
 * ~/.cache/mt/unwound), keyed by the capture's identity (real path, device,
 * inode, size, mtime and ctime in ns), the mt-unwind options and the
 * mt-unwind binary's identity (the same fields of it): a changed capture or
 * a rebuilt mt-unwind is never served stale.  docs/front.md has the format
 * and the bounds (30 days, 1 GiB).
 *
 * The text reaches its readers (mt-fold runs) through pipes, written by a
 * source process mt forks: it decompresses a cached entry, or copies
 * mt-unwind's output to the readers and to a new entry, or copies an
 * mt-unwind text file given as it is.  Use:
 *   mt_unwound_open       plan (the input checked, the cache looked up)
 *   mt_unwound_pipes      the read ends for the readers, which mt starts
 *   mt_unwound_start      mt-unwind and the source
 *   mt_unwound_finish     the handshake at the end, the cache entry kept
 */
#ifndef MT_FRONT_UNWOUND_H
#define MT_FRONT_UNWOUND_H

#include <sys/types.h>

#define MT_UNWOUND_MAX_READERS 8

/* mt_unwound_finish: a cached entry turned out damaged; the readers were
 * killed before they saw the end, the entry is removed: run again. */
#define MT_UNWOUND_RETRY (-2)

struct mt_unwound;

/* What the text's first event line says (docs/formats/unwind-text.md);
 * "" when it has none. */
struct mt_unwound_first {
	char kind[16];		/* alloc, free, totals, sample, lost */
	char comm[256];
	char event[256];	/* event= of a sample line */
};

/* Plans reading capture path: opens it (a missing file: "cannot open"), tells
 * its kind (not a capture: says what it is), looks the cache up unless
 * no_cache; verbose says where the text comes from ("unwound: cached").
 * @return : 0 with *out set, or an exit code (said). */
int mt_unwound_open(struct mt_unwound **out, const char *path, int no_cache, int verbose);

/* n (<= MT_UNWOUND_MAX_READERS) pipes: their read ends (close-on-exec) in
 * fds, for the readers; mt closes them once the readers run.
 * @return : 0, or an exit code (said). */
int mt_unwound_pipes(struct mt_unwound *u, int n, int *fds);

/* Starts mt-unwind (unless cached or text) and the source, which kills the
 * readers pids[0..n) when a cached entry proves damaged.
 * @return : 0, or an exit code (said). */
int mt_unwound_start(struct mt_unwound *u, const pid_t *pids, int n);

/* Waits for the text to end: then its first event line is known
 * (mt_unwound_first), and, when mt-unwind failed outright (exit 2 or more,
 * or a signal), the readers pids are killed before they see the end of
 * their input.  hook (may be NULL) runs then, before the readers see the
 * end (to print a header on stdout above their output, or to refuse the
 * input: a nonzero return, said by the hook, kills the readers and is
 * returned).  Then lets the source end the readers' input, and waits for it
 * and mt-unwind, keeping the new cache entry when both succeeded.  Call
 * before waiting for the readers.
 * @return : 0; mt-unwind's status (1: it warned of damage in the capture,
 *           its partial text was read; 2 or more: failed, said); the hook's;
 *           or MT_UNWOUND_RETRY. */
int mt_unwound_finish(struct mt_unwound *u, const pid_t *pids, int n,
		      int (*hook)(void *ctx, const struct mt_unwound_first *f), void *ctx);

const struct mt_unwound_first *mt_unwound_first(const struct mt_unwound *u);

/* The capture's path as given. */
const char *mt_unwound_path(const struct mt_unwound *u);

void mt_unwound_free(struct mt_unwound *u);

#endif
