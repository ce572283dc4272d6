/* mt: running mt-fold on the unwound text of one or two captures. */
#ifndef MT_FRONT_FOLD_H
#define MT_FRONT_FOLD_H

/* mt-fold's mode for `mt report`: --report until mt-fold has --sites (the
 * allocation sites table), then "--sites". */
#define MT_FRONT_FOLD_REPORT "--report"

/* An mt-fold run: argv (NULL-terminated, without the program and inputs),
 * its stdout (-1: mt's). */
struct mt_fold_run {
	char **args;
	int out;
};

/* Runs mt-fold on the unwound text of capture path: runs[0..nruns) each read
 * the same text (their own pipe).  With base (mt diff) one run, given
 * `--diff BASE` for base's text.  on_comm (may be NULL) is called with the
 * command name of the text's first event ("" when none) before mt-fold has
 * its whole input, so before it writes (to print a header above it).
 * @return : the exit status: mt-unwind's failure, else mt-fold's, else
 *           mt-unwind's warning (1), else 0. */
int mt_front_fold(const char *path, const char *base, const struct mt_fold_run *runs,
		  int nruns, int no_cache, int verbose,
		  void (*on_comm)(void *ctx, const char *comm), void *ctx);

#endif
