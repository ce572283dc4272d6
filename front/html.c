/* mt report --html, mt diff --html: one self-contained HTML page.
 *
 * The unwound text is folded once with the capture's default metric:
 * mt-fold --json --live-buckets (its "live_over_time": what was live at
 * each moment by stack, for "what was live at a moment").  mt-html
 * --list-metrics then names the other metrics the capture has (the peak and
 * temporary ones only when mt-fold's JSON carries "peak" and "temporary"),
 * folded in one more pass (the cached text), and mt-html assembles the
 * page from the documents.  docs/front.md, "HTML report". */
#include "front/fold.h"
#include "front/run.h"
#include "front/sub.h"
#include "common/cli.h"
#include "common/trust.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Sites per metric on the page (the table): the page stays small. */
#define HTML_TOP "200"
/* Time resolution of "what was live at a moment": 1/300 of the run. */
#define HTML_LIVE_BUCKETS "300"
#define MAX_METRICS 8

struct work {
	char dir[PATH_MAX];
	char files[MAX_METRICS + 4][PATH_MAX + 32];
	int nfiles;
	char *html;	/* mt-html's path */
};

static int work_open(struct work *w)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(w->dir, sizeof(w->dir), "%s/mt.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	w->nfiles = 0;
	if (!(w->html = mt_front_stage("mt-html")))
		return MT_EXIT_ENV;
	if (!mkdtemp(w->dir)) {
		mt_error("cannot create a directory in '%s': %s", tmp && *tmp == '/' ? tmp : "/tmp",
			 strerror(errno));
		free(w->html);
		w->html = NULL;
		return MT_EXIT_ENV;
	}
	return 0;
}

/* A new file name in the work directory. */
static char *work_file(struct work *w, const char *name)
{
	char *p = w->files[w->nfiles++];
	size_t dl = strlen(w->dir);	/* < PATH_MAX: the name fits after it */
	memcpy(p, w->dir, dl);
	p[dl] = '/';
	snprintf(p + dl + 1, sizeof(w->files[0]) - dl - 1, "%s", name);
	return p;
}

static void work_close(struct work *w)
{
	for (int i = 0; i < w->nfiles; i++)
		unlink(w->files[i]);
	if (w->html)
		rmdir(w->dir);
	free(w->html);
}

static void save_comm(void *ctx, const struct mt_unwound_first *f)
{
	snprintf(ctx, 256, "%s", f->comm);
}

/* Runs mt-html with argv (argv[0] set here), stdout to out_fd (-1: mt's).
 * @return : its status; MT_EXIT_ENV when it cannot run or was killed. */
static int run_html(struct work *w, char **argv, int out_fd)
{
	argv[0] = w->html;
	pid_t pid = mt_front_spawn(argv, -1, out_fd, NULL, 0, NULL, 0);
	int rc = pid < 0 ? MT_EXIT_ENV : mt_front_wait(pid, "mt-html", 0);
	return rc >= 128 ? MT_EXIT_ENV : rc;
}

/* The metrics mt-html --list-metrics names for json, into m (malloc'd
 * strings, the document's own first).  @return : the count, or -exit code. */
static int list_metrics(struct work *w, const char *json, char *m[MAX_METRICS])
{
	char *list = work_file(w, "metrics");
	int fd = mt_open_output(list);
	if (fd < 0)
		return mt_error("cannot create '%s': %s", list, mt_open_output_strerror(errno)),
		       -MT_EXIT_ENV;
	char *argv[] = { NULL, "--list-metrics", (char *)json, NULL };
	int rc = run_html(w, argv, fd);
	close(fd);
	if (rc)
		return -rc;
	FILE *f = fopen(list, "re");
	if (!f)
		return mt_error("cannot open '%s': %s", list, strerror(errno)), -MT_EXIT_ENV;
	char line[128];
	int n = 0;
	while (n < MAX_METRICS && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (*line && !(m[n++] = strdup(line)))
			break;
	}
	fclose(f);
	return n;
}

/* mt-fold refused or wrote nothing (its status said why). */
static int empty(const char *path)
{
	FILE *f = fopen(path, "re");
	int c = f ? fgetc(f) : EOF;
	if (f)
		fclose(f);
	return c == EOF;
}

static int output_ok(const char *out)
{
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO)) {
		mt_error("refusing to write a page to a terminal (give -o FILE)");
		return MT_EXIT_USAGE;
	}
	return 0;
}

int mt_html_report(const char *file, const char *out, const char *metric, char **fold,
		   int no_cache, int verbose)
{
	struct work w;
	char *metrics[MAX_METRICS] = { NULL };
	int nm = 0, rc = output_ok(out), fds[MAX_METRICS] = { -1, -1, -1, -1, -1, -1, -1, -1 };
	if (rc || (rc = work_open(&w)))
		return rc;
	char comm[256] = "";
	/* pass 1: the default (or asked) metric and what was live over time */
	char *json0 = work_file(&w, "m0.json");
	char *a0[40] = { "--json", "--top", HTML_TOP, "--live-buckets", HTML_LIVE_BUCKETS };
	int a = 5;
	if (metric) {
		a0[a++] = "--metric";
		a0[a++] = (char *)metric;
	}
	for (char **p = fold; *p && a < 38; p++)
		a0[a++] = *p;
	a0[a] = NULL;
	if ((fds[0] = mt_open_output(json0)) < 0) {
		rc = (mt_error("cannot create '%s': %s", json0, mt_open_output_strerror(errno)),
		      MT_EXIT_ENV);
		goto out;
	}
	struct mt_fold_run r1 = { a0, fds[0], NULL };
	rc = mt_front_fold(file, NULL, &r1, 1, no_cache, verbose, metric, save_comm, comm);
	mt_front_close(&fds[0]);
	if (rc > 1 || (rc && empty(json0)))
		goto out;
	int warned = rc;	/* mt-unwind's warning: the page is of what could be read */
	/* pass 2: the capture's other metrics */
	int n = list_metrics(&w, json0, metrics);
	if (n < 0) {
		rc = -n;
		goto out;
	}
	nm = n;
	char *files[MAX_METRICS] = { json0 };
	char *args[MAX_METRICS][44];
	struct mt_fold_run r2[MAX_METRICS];
	int nr = 0;
	for (int i = 1; i < nm; i++) {
		char name[32];
		snprintf(name, sizeof(name), "m%d.json", i);
		files[i] = work_file(&w, name);
		if ((fds[nr] = mt_open_output(files[i])) < 0) {
			rc = (mt_error("cannot create '%s': %s", files[i],
				       mt_open_output_strerror(errno)), MT_EXIT_ENV);
			goto out;
		}
		char **v = args[nr];
		int k = 0;
		v[k++] = "--json";
		v[k++] = "--top";
		v[k++] = HTML_TOP;
		v[k++] = "--metric";
		v[k++] = metrics[i];
		for (char **p = fold; *p && k < 42; p++)
			v[k++] = *p;
		v[k] = NULL;
		r2[nr] = (struct mt_fold_run){ v, fds[nr], NULL };
		nr++;
	}
	if (nr) {
		rc = mt_front_fold(file, NULL, r2, nr, no_cache, verbose, metrics[1], NULL, NULL);
		for (int i = 0; i < nr; i++)
			mt_front_close(&fds[i]);
		if (rc > 1)
			goto out;
	}
	/* the page */
	char title[512];
	snprintf(title, sizeof(title), "mt report: %s, '%s'", *comm ? comm : "?", file);
	char *hv[32] = { NULL, "-o", (char *)out, "--title", title, "--capture", (char *)file };
	int h = 7;
	for (int i = 0; i < nm; i++)
		hv[h++] = files[i];
	hv[h] = NULL;
	rc = run_html(&w, hv, -1);
	if (!rc && strcmp(out, "-"))
		mt_info("report page: %s (%s of %s; %d metrics)", out, metrics[0],
			*comm ? comm : "?", nm);
	if (!rc)
		rc = warned;
out:
	for (int i = 0; i < MAX_METRICS; i++) {
		mt_front_close(&fds[i]);
		free(metrics[i]);
	}
	work_close(&w);
	return rc;
}

int mt_html_diff(const char *base, const char *new, const char *out, const char *metric,
		 int no_cache, int verbose)
{
	struct work w;
	char *metrics[MAX_METRICS] = { NULL };
	int rc = output_ok(out), fd = -1, warned = 0;
	if (rc || (rc = work_open(&w)))
		return rc;
	char *paths[3] = { work_file(&w, "new.json"), work_file(&w, "base.json"),
			   work_file(&w, "diff.json") };
	const char *caps[3] = { new, base, new }, *bases[3] = { NULL, NULL, base };
	char comm[256] = "";
	for (int i = 0; i < 3; i++) {
		char *args[8] = { "--json", "--top", i == 2 ? "0" : HTML_TOP };
		int k = 3;
		if (metric) {
			args[k++] = "--metric";
			args[k++] = (char *)metric;
		}
		args[k] = NULL;
		if ((fd = mt_open_output(paths[i])) < 0) {
			rc = (mt_error("cannot create '%s': %s", paths[i],
				       mt_open_output_strerror(errno)), MT_EXIT_ENV);
			goto out;
		}
		struct mt_fold_run r = { args, fd, NULL };
		rc = mt_front_fold(caps[i], bases[i], &r, 1, no_cache, verbose, metric,
				   i ? NULL : save_comm, i ? NULL : comm);
		mt_front_close(&fd);
		if (rc > 1 || (rc && empty(paths[i])))
			goto out;
		if (rc)
			warned = rc;
		/* NEW's metric for both sides and the diff (mt-fold's default for NEW) */
		if (i == 0 && !metric) {
			int n = list_metrics(&w, paths[0], metrics);
			if (n <= 0) {
				rc = n < 0 ? -n : (mt_error("mt-fold --json gave no metric for '%s'",
							    new), MT_EXIT_DATA);
				goto out;
			}
			metric = metrics[0];
		}
	}
	char title[1024];
	snprintf(title, sizeof(title), "mt diff: %s, %s: '%s' -> '%s'", *comm ? comm : "?", metric,
		 base, new);
	char *hv[] = { NULL, "-o", (char *)out, "--title", title, "--capture", (char *)new,
		       "--diff", paths[2], "--base", paths[1], "--new", paths[0], NULL };
	rc = run_html(&w, hv, -1);
	if (!rc && strcmp(out, "-"))
		mt_info("diff page: %s (%s change, '%s' -> '%s')", out, metric, base, new);
	if (!rc)
		rc = warned;
out:
	mt_front_close(&fd);
	for (int i = 0; i < MAX_METRICS; i++)
		free(metrics[i]);
	work_close(&w);
	return rc;
}
