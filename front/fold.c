/* mt: running mt-fold on the unwound text of captures (see fold.h). */
#include "front/fold.h"
#include "front/run.h"
#include "front/unwound.h"
#include "common/cli.h"

#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* mt-fold names its --diff base in its output: it is given a link named as
 * the base (its basename) to the pipe, in a private directory it runs in. */
struct base_link {
	char dir[PATH_MAX], link[PATH_MAX + 64];
	const char *name;
};

static int make_base_link(struct base_link *l, const char *base, int fd)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(l->dir, sizeof(l->dir), "%s/mt.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (!mkdtemp(l->dir))
		return mt_error("cannot create a directory in '%s': %s", tmp && *tmp == '/' ? tmp : "/tmp",
				strerror(errno));
	const char *b = strrchr(base, '/');
	b = b ? b + 1 : base;
	if (!*b || !strcmp(b, ".") || !strcmp(b, ".."))
		b = "base";
	l->name = b;
	char target[64];
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	snprintf(l->link, sizeof(l->link), "%s/%s", l->dir, b);
	if (symlink(target, l->link) != 0) {
		int e = errno;
		rmdir(l->dir);
		return mt_error("cannot create '%s': %s", l->link, strerror(e));
	}
	return 0;
}

static void drop_base_link(struct base_link *l)
{
	unlink(l->link);
	rmdir(l->dir);
}

/* attempt(): mt-fold's stdout was closed under it (SIGPIPE). */
#define STDOUT_GONE 1000

struct check {
	const char *path, *metric;
	void (*on_first)(void *ctx, const struct mt_unwound_first *f);
	void *ctx;
	int refused;	/* check_first's status */
};

/* An allocation metric asked of an event capture: refused, not a table of
 * zeros. */
static int check_first(void *vc, const struct mt_unwound_first *f)
{
	struct check *c = vc;
	if (c->metric && !strcmp(f->kind, "sample") &&
	    (!strncmp(c->metric, "alloc_", 6) || !strncmp(c->metric, "inuse_", 6) ||
	     !strncmp(c->metric, "peak_", 5) || !strncmp(c->metric, "temp_", 5))) {
		mt_error("'%s' is a capture of %s samples, not of allocations: --metric %s "
			 "does not apply (period or samples do)", c->path,
			 *f->event ? f->event : "event", c->metric);
		return c->refused = MT_EXIT_DATA;
	}
	if (c->on_first)
		c->on_first(c->ctx, f);
	return 0;
}

/* One attempt.  @return : status, or MT_UNWOUND_RETRY. */
static int attempt(const char *fold, const char *path, const char *base,
		   const struct mt_fold_run *runs, int nruns, int no_cache, int verbose,
		   struct check *uc, struct check *bc)
{
	struct mt_unwound *u = NULL, *b = NULL;
	struct base_link link = { .name = NULL };
	pid_t pids[MT_UNWOUND_MAX_READERS];
	int fds[MT_UNWOUND_MAX_READERS], nfds = 0, bfd = -1, started = 0;
	int rc = mt_unwound_open(&u, path, no_cache, verbose);
	if (!rc && base)
		rc = mt_unwound_open(&b, base, no_cache, verbose);
	if (!rc && !(rc = mt_unwound_pipes(u, nruns, fds)))
		nfds = nruns;
	if (!rc && b && !(rc = mt_unwound_pipes(b, 1, &bfd)) && make_base_link(&link, base, bfd))
		rc = MT_EXIT_ENV;
	for (int i = 0; !rc && i < nruns; i++) {
		char *argv[32];
		int a = 0;
		argv[a++] = (char *)(runs[i].prog ? runs[i].prog : fold);
		for (char **p = runs[i].args; *p && a < 28; p++)
			argv[a++] = *p;
		if (b) {
			argv[a++] = "--diff";
			argv[a++] = (char *)link.name;
		}
		argv[a++] = "-";
		argv[a] = NULL;
		pids[i] = mt_front_spawn(argv, fds[i], runs[i].out, b ? &bfd : NULL, b ? 1 : 0,
					 b ? link.dir : NULL, 0);
		if (pids[i] < 0)
			rc = MT_EXIT_ENV;
		else
			started++;
	}
	for (int i = 0; i < nfds; i++)
		mt_front_close(&fds[i]);
	mt_front_close(&bfd);
	if (!rc)
		rc = mt_unwound_start(u, pids, nruns);
	if (!rc && b)
		rc = mt_unwound_start(b, pids, nruns);
	int ust = 0, bst = 0;
	if (!rc) {
		ust = mt_unwound_finish(u, pids, nruns, check_first, uc);
		if (b)
			bst = mt_unwound_finish(b, pids, nruns, check_first, bc);
	}
	/* readers mt stopped say nothing */
	int stopped = ust >= 2 || bst >= 2 || ust == MT_UNWOUND_RETRY || bst == MT_UNWOUND_RETRY ||
		      uc->refused || bc->refused, fst = 0;
	for (int i = 0; i < started; i++) {
		int s = mt_front_wait(pids[i], "mt-fold", stopped ? 2 : 1);
		if (s && !fst)
			fst = s;
	}
	if (link.name)
		drop_base_link(&link);
	mt_unwound_free(u);
	mt_unwound_free(b);
	if (rc)
		return rc;
	if (ust == MT_UNWOUND_RETRY || bst == MT_UNWOUND_RETRY)
		return MT_UNWOUND_RETRY;
	if (uc->refused || bc->refused)
		return uc->refused ? uc->refused : bc->refused;
	/* mt-unwind's failure first: mt-fold, killed or given nothing, says less */
	if (ust >= 2 || bst >= 2)
		return ust >= 2 ? ust : bst;
	if (fst == 128 + SIGPIPE)
		return STDOUT_GONE;
	if (fst)
		return fst >= 128 ? MT_EXIT_ENV : fst;
	return ust ? ust : bst;
}

int mt_front_fold(const char *path, const char *base, const struct mt_fold_run *runs,
		  int nruns, int no_cache, int verbose, const char *metric,
		  void (*on_first)(void *ctx, const struct mt_unwound_first *f), void *ctx)
{
	char *fold = mt_front_stage("mt-fold");
	if (!fold)
		return MT_EXIT_ENV;
	struct check uc = { path, metric, on_first, ctx, 0 }, bc = { base, metric, NULL, NULL, 0 };
	int rc = attempt(fold, path, base, runs, nruns, no_cache, verbose, &uc, &bc);
	if (rc == MT_UNWOUND_RETRY)	/* the damaged entry is gone: unwind anew */
		rc = attempt(fold, path, base, runs, nruns, no_cache, verbose, &uc, &bc);
	if (rc == MT_UNWOUND_RETRY)
		rc = (mt_error("the unwound cache failed twice: try --no-cache"), MT_EXIT_ENV);
	free(fold);
	if (rc == STDOUT_GONE) {	/* its reader went (| head): end as a filter does */
		signal(SIGPIPE, SIG_DFL);
		raise(SIGPIPE);
		rc = MT_EXIT_ENV;
	}
	return rc;
}
