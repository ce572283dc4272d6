/* mt: running mt-fold on the unwound text of one or two captures. */
#ifndef MT_FRONT_FOLD_H
#define MT_FRONT_FOLD_H

#include "front/unwound.h"

/* mt-fold's mode for `mt report`: the allocation sites (mt-fold --sites). */
#define MT_FRONT_FOLD_REPORT "--sites"

/* An mt-fold run: argv (NULL-terminated, without the program and inputs),
 * its stdout (-1: mt's), and the program to run in mt-fold's place (NULL:
 * mt-fold; another reader of the text, given the same arguments and "-"). */
struct mt_fold_run {
	char **args;
	int out;
	const char *prog;
};

/* Runs mt-fold on the unwound text of capture path: runs[0..nruns) each read
 * the same text (their own pipe).  With base (mt diff) one run, given
 * `--diff BASE` for base's text.  metric (NULL: mt-fold's default) is
 * checked against the captures: an allocation metric of an event capture is
 * refused (exit 1, said).  on_first (may be NULL) is called with path's first
 * event line before mt-fold has its whole input, so before it writes (to
 * print a header above it).
 * @return : the exit status: mt-unwind's failure, else mt-fold's, else
 *           mt-unwind's warning (1), else 0. */
int mt_front_fold(const char *path, const char *base, const struct mt_fold_run *runs,
		  int nruns, int no_cache, int verbose, const char *metric,
		  void (*on_first)(void *ctx, const struct mt_unwound_first *f), void *ctx);

#endif
