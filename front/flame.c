/* mt flame FILE: a flame graph of a capture in one step.  Two mt-fold runs
 * read the same unwound text (collapsed stacks, and --json for the error
 * bars), then mt-flamegraph draws them.
 * mt flame --diff BASE NEW: each capture folded with the metric, with
 * --metric samples and --json; the stacks joined into 'STACK BASE NEW'
 * lines (a stack missing on one side counts 0 there), the samples likewise,
 * drawn by mt-flamegraph --diff --diff-samples. */
#include "front/fold.h"
#include "front/run.h"
#include "front/sub.h"
#include "common/cli.h"
#include "common/trust.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How mt-flamegraph is told the unit (bytes, objects, ns, events). */
#define FLAME_UNIT_OPT "--unit"

#define SYNOPSIS "mt flame FILE [-o OUT.svg] [--metric M] [--reverse]\n" \
	"       mt flame --diff BASE NEW [-o OUT.svg] [--metric M] [--reverse]"

void mt_help_flame(FILE *f)
{
	fputs("usage: " SYNOPSIS "\n"
	      "A flame graph of a capture (an .mtz file, perf.data, a perf pipe stream or\n"
	      "mt-unwind output) in one step: mt-fold's collapsed stacks and its --json\n"
	      "statistics (the error bars) from the same unwound text (cached as for mt\n"
	      "report), drawn by mt-flamegraph.  The title names the program, the metric\n"
	      "and its unit.\n"
	      "\n"
	      "With --diff, a differential flame graph of NEW against BASE: widths follow\n"
	      "NEW, red frames grew, blue ones shrank, coloured only where the change is\n"
	      "significant (each frame's samples against Binomial(n, 1/2), exact two-sided\n"
	      "p, Holm's step-down at 5% family-wise); hover for the change and its error.\n"
	      "The test assumes both captures sample alike: captures of different modes,\n"
	      "rates or events are refused (exit 1).\n"
	      "\n"
	      "  -o, --output OUT  the SVG (default: FILE with .svg in place of .mtz,\n"
	      "                    .perf or .data: mt.COMM.PID.svg; with --diff NEW's\n"
	      "                    name with .diff.svg)\n"
	      "  --diff            compare two captures, BASE then NEW\n"
	      "  --metric M        as mt report (default: alloc_bytes for allocations,\n"
	      "                    period for event captures; peak_bytes: live at the\n"
	      "                    peak, temp_bytes: temporaries)\n"
	      "  --at TIME         with --metric peak_*: live at TIME after the start\n"
	      "  --reverse         stacks leaf first: who allocates, whoever calls it\n"
	      "  --no-cache        unwind again, keep nothing\n"
	      "  -v, --verbose     say where the unwound text comes from\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "exit status: as mt report.\n", f);
}

/* OUT by default: FILE without .mtz/.perf/.data, then suffix (.svg). */
char *mt_front_default_out(const char *file, const char *suffix)
{
	static const char *const ext[] = { ".mtz", ".perf", ".data" };
	size_t n = strlen(file);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t e = strlen(ext[i]);
		if (n > e && strcmp(file + n - e, ext[i]) == 0 && file[n - e - 1] != '/') {
			n -= e;
			break;
		}
	}
	char *out;
	return asprintf(&out, "%.*s%s", (int)n, file, suffix) < 0 ? NULL : out;
}

/* The string value of "key": "VALUE" in the JSON text s, into v (len). */
static int json_str(const char *s, const char *key, char *v, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	const char *p = strstr(s, pat);
	if (!p)
		return -1;
	p += strlen(pat);
	size_t i = 0;
	while (*p && *p != '"' && i + 1 < len)
		v[i++] = *p++;
	v[i] = 0;
	return 0;
}

/* The unit of metric (of event, for period): docs/front.md. */
static const char *unit_of(const char *metric, const char *event)
{
	size_t n = strlen(metric);
	if (n > 6 && !strcmp(metric + n - 6, "_bytes"))
		return "bytes";
	if (n > 8 && !strcmp(metric + n - 8, "_objects"))
		return "objects";
	/* the event's name without perf's modifiers (":ppp", ":u") or an index ("#1") */
	size_t e = strcspn(event, ":#");
	if (!strcmp(metric, "period") && ((e == 9 && !strncmp(event, "cpu-clock", 9)) ||
					  (e == 10 && !strncmp(event, "task-clock", 10))))
		return "ns";
	return "events";
}

/* The raw JSON value of "key" (null, a number, a string or a flat object)
 * in s, into v (len); "" when absent. */
static void json_raw(const char *s, const char *key, char *v, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	const char *p = strstr(s, pat);
	size_t i = 0;
	if (p) {
		p += strlen(pat);
		char end = *p == '{' ? '}' : ',';
		while (*p && *p != '\n' && i + 1 < len) {
			if (*p == end) {
				if (end == '}')
					v[i++] = *p;
				break;
			}
			v[i++] = *p++;
		}
	}
	v[i] = 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	/* the keys come first: 64 KiB is plenty */
	if (buf)
		n = fread(buf, 1, cap - 1, f);
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

static void save_comm(void *ctx, const struct mt_unwound_first *f)
{
	snprintf(ctx, 256, "%s", f->comm);
}

/* ---- --diff */

struct fline {
	char *stack;
	unsigned long long n;
};

static int fline_cmp(const void *a, const void *b)
{
	return strcmp(((const struct fline *)a)->stack, ((const struct fline *)b)->stack);
}

static void flines_free(struct fline *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
}

/* mt-fold's collapsed output at path (for capture what), sorted by stack.
 * @return : 0, or an exit code (said). */
static int read_folded(const char *path, const char *what, struct fline **out, size_t *nout)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return mt_error("cannot open '%s': %s", path, strerror(errno)), MT_EXIT_ENV;
	char *line = NULL;
	size_t cap = 0, n = 0, vcap = 0;
	ssize_t len;
	struct fline *v = NULL;
	unsigned long lineno = 0;
	int rc = 0;
	while (!rc && (len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!len)
			continue;
		char *sp = strrchr(line, ' '), *end = NULL;
		errno = 0;
		unsigned long long c = sp && isdigit((unsigned char)sp[1]) ?
				       strtoull(sp + 1, &end, 10) : 0;
		if (!end || *end || errno || sp == line) {
			mt_error("mt-fold's stacks of '%s': line %lu is not 'STACK COUNT'", what,
				 lineno);
			rc = MT_EXIT_DATA;
			break;
		}
		if (n == vcap) {
			struct fline *nv = realloc(v, (vcap = vcap ? 2 * vcap : 256) * sizeof(*v));
			if (!nv) {
				rc = MT_EXIT_ENV;
				break;
			}
			v = nv;
		}
		*sp = 0;
		if (!(v[n].stack = strdup(line))) {
			rc = MT_EXIT_ENV;
			break;
		}
		v[n++].n = c;
	}
	if (!rc && ferror(f))
		rc = (mt_error("cannot read '%s': %s", path, strerror(errno)), MT_EXIT_ENV);
	else if (rc == MT_EXIT_ENV)
		mt_error("out of memory");
	free(line);
	fclose(f);
	if (rc) {
		flines_free(v, n);
		return rc;
	}
	qsort(v, n, sizeof(*v), fline_cmp);
	*out = v;
	*nout = n;
	return 0;
}

/* 'STACK A B' lines of the stacks of a and b into out (0 where a side has
 * none); duplicates summed.  @return : 0, or an exit code (said). */
static int join_folded(const char *a, const char *b, const char *what_a, const char *what_b,
		       const char *out)
{
	struct fline *va = NULL, *vb = NULL;
	size_t na = 0, nb = 0;
	int rc = read_folded(a, what_a, &va, &na);
	if (!rc)
		rc = read_folded(b, what_b, &vb, &nb);
	int fd = rc ? -1 : mt_open_output(out);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	if (!rc && !f) {
		mt_error("cannot create '%s': %s", out, mt_open_output_strerror(errno));
		if (fd >= 0)
			close(fd);
		rc = MT_EXIT_ENV;
	}
	for (size_t i = 0, j = 0; !rc && (i < na || j < nb);) {
		int c = i == na ? 1 : j == nb ? -1 : strcmp(va[i].stack, vb[j].stack);
		const char *key = c <= 0 ? va[i].stack : vb[j].stack;
		unsigned long long x = 0, y = 0;
		while (i < na && !strcmp(va[i].stack, key))
			x += va[i++].n;
		while (j < nb && !strcmp(vb[j].stack, key))
			y += vb[j++].n;
		fprintf(f, "%s %llu %llu\n", key, x, y);
	}
	if (f && fclose(f) && !rc)
		rc = (mt_error("cannot write '%s': %s", out, strerror(errno)), MT_EXIT_ENV);
	flines_free(va, na);
	flines_free(vb, nb);
	return rc;
}

/* The files of one side of a diff, in dir. */
struct side {
	const char *file;
	char folded[PATH_MAX + 16], samples[PATH_MAX + 16], json[PATH_MAX + 16];
	char comm[256];
	char metric[64], event[256], mode[32], rate[128], every[128];
	char lost[32];		/* input.lost_events */
	int exact;		/* total.exact: nothing sampled, nothing missed */
};

/* Folds side s's capture three ways: the metric, samples, --json. */
static int fold_side(struct side *s, const char *dir, const char *tag, const char *metric,
		     int no_cache, int verbose)
{
	snprintf(s->folded, sizeof(s->folded), "%s/%s.folded", dir, tag);
	snprintf(s->samples, sizeof(s->samples), "%s/%s.samples", dir, tag);
	snprintf(s->json, sizeof(s->json), "%s/%s.json", dir, tag);
	int fds[3] = { -1, -1, -1 }, rc = MT_EXIT_ENV;
	const char *paths[3] = { s->folded, s->samples, s->json };
	for (int i = 0; i < 3; i++) {
		if ((fds[i] = mt_open_output(paths[i])) < 0) {
			mt_error("cannot create '%s': %s", paths[i], mt_open_output_strerror(errno));
			goto out;
		}
	}
	char *fargs[3] = { NULL }, *sargs[3] = { "--metric", "samples", NULL };
	char *jargs[6] = { "--json", "--top", "0", NULL };
	if (metric) {
		fargs[0] = jargs[3] = "--metric";
		fargs[1] = jargs[4] = (char *)metric;
	}
	struct mt_fold_run runs[3] = { { fargs, fds[0], NULL }, { sargs, fds[1], NULL },
				       { jargs, fds[2], NULL } };
	rc = mt_front_fold(s->file, NULL, runs, 3, no_cache, verbose, metric, save_comm, s->comm);
	if (rc)
		goto out;
	char *stats = slurp(s->json);
	if (!stats || json_str(stats, "metric", s->metric, sizeof(s->metric))) {
		mt_error("mt-fold --json gave no metric for '%s'", s->file);
		free(stats);
		rc = MT_EXIT_DATA;
		goto out;
	}
	json_str(stats, "event", s->event, sizeof(s->event));
	json_str(stats, "mode", s->mode, sizeof(s->mode));
	json_raw(stats, "rate", s->rate, sizeof(s->rate));
	json_raw(stats, "every", s->every, sizeof(s->every));
	json_raw(stats, "lost_events", s->lost, sizeof(s->lost));
	char total[512];
	json_raw(stats, "total", total, sizeof(total));
	s->exact = strstr(total, "\"exact\": true") != NULL;
	free(stats);
out:
	for (int i = 0; i < 3; i++)
		mt_front_close(&fds[i]);
	return rc;
}

/* A {"min": A, "max": B} of mt-fold --json as "A" or "A..B"; null as "-". */
static void range(const char *raw, char *buf, size_t len)
{
	unsigned long long lo, hi;
	if (sscanf(raw, "{\"min\": %llu, \"max\": %llu}", &lo, &hi) == 2)
		snprintf(buf, len, lo == hi ? "%llu" : "%llu..%llu", lo, hi);
	else
		snprintf(buf, len, "%s", !strcmp(raw, "null") ? "-" : raw);
}

/* Run mt-flamegraph with argv fg.  @return : its status; MT_EXIT_ENV when
 * it cannot be started or was killed. */
static int run_flamegraph(char **fg)
{
	pid_t pid = mt_front_spawn(fg, -1, -1, NULL, 0, NULL, 0);
	int rc = pid < 0 ? MT_EXIT_ENV : mt_front_wait(pid, "mt-flamegraph", 0);
	return rc >= 128 ? MT_EXIT_ENV : rc;
}

/* How a side counts and samples, for a message:
 * "alloc_bytes, mode sample, rate 65536, every -". */
static void how(const struct side *s, char *buf, size_t len)
{
	char r[128], e[128];
	range(s->rate, r, sizeof(r));
	range(s->every, e, sizeof(e));
	snprintf(buf, len, "%s, mode %s, rate %s, every %s%s%s", s->metric, s->mode, r, e,
		 *s->event ? ", event " : "", s->event);
}

static int flame_diff(const char *base, const char *new, const char *out, const char *metric,
		      int reverse, int no_cache, int verbose, char *flamegraph)
{
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], dv[PATH_MAX + 16], dn[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/mt.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return mt_error("cannot create a directory in '%s': %s",
				tmp && *tmp == '/' ? tmp : "/tmp", strerror(errno)), MT_EXIT_ENV;
	snprintf(dv, sizeof(dv), "%s/diff.folded", dir);
	snprintf(dn, sizeof(dn), "%s/diff.samples", dir);
	static struct side sb, sn;
	memset(&sb, 0, sizeof(sb));
	memset(&sn, 0, sizeof(sn));
	sb.file = base;
	sn.file = new;
	int rc = fold_side(&sb, dir, "base", metric, no_cache, verbose);
	if (!rc)
		rc = fold_side(&sn, dir, "new", metric, no_cache, verbose);
	if (rc)
		goto out;
	if (strcmp(sb.metric, sn.metric) || strcmp(sb.event, sn.event) ||
	    strcmp(sb.mode, sn.mode) || strcmp(sb.rate, sn.rate) || strcmp(sb.every, sn.every)) {
		char hb[768], hn[768];
		how(&sb, hb, sizeof(hb));
		how(&sn, hn, sizeof(hn));
		mt_error("cannot compare '%s' (%s) with '%s' (%s): the test of a change "
			 "assumes both captures count and sample alike (record them with the "
			 "same options)", base, hb, new, hn);
		rc = MT_EXIT_DATA;
		goto out;
	}
	/* every call of a trace (every=1) is exact: no sampling to test; with
	 * events lost it is not exact either, and no test applies */
	int trace = !strcmp(sn.mode, "trace") && !strcmp(sn.every, "{\"min\": 1, \"max\": 1}");
	int exact = trace && sb.exact && sn.exact;
	char lost_sub[512];
	if (trace && !exact) {
		mt_warn("'%s' lost %s events, '%s' %s: the trace is not exact, its changes "
			"include the losses and are not tested", base, sb.lost, new, sn.lost);
		snprintf(lost_sub, sizeof(lost_sub), "red grew, blue shrank; traces of every "
			 "call that lost events (%s, %s): the changes include the losses, none "
			 "tested; widths: new", sb.lost, sn.lost);
	}
	if ((rc = join_folded(sb.folded, sn.folded, base, new, dv)) ||
	    (!trace && (rc = join_folded(sb.samples, sn.samples, base, new, dn))))
		goto out;
	const char *unit = unit_of(sn.metric, sn.event);
	char title[1024];
	snprintf(title, sizeof(title), "%s: %s change, %s -> %s (%s)", *sn.comm ? sn.comm : "?",
		 sn.metric, base, new, unit);
	char *fg[20] = { flamegraph, "--diff", "--title", title, FLAME_UNIT_OPT, (char *)unit,
			 "-o", (char *)out };
	int a = 8;
	if (exact) {
		fg[a++] = "--subtitle";
		fg[a++] = "red grew, blue shrank; exact captures (trace, every call): every "
			  "change is measured, none tested; widths: new";
	} else if (trace) {
		fg[a++] = "--subtitle";
		fg[a++] = lost_sub;
	} else {
		fg[a++] = "--diff-samples";
		fg[a++] = dn;
	}
	if (reverse)
		fg[a++] = "--reverse";
	fg[a++] = dv;
	fg[a] = NULL;
	rc = run_flamegraph(fg);
	if (!rc && strcmp(out, "-"))
		mt_info("flame graph: %s (%s change of %s, %s -> %s)", out, sn.metric,
			*sn.comm ? sn.comm : "?", base, new);
out:
	{
		const char *files[] = { sb.folded, sb.samples, sb.json, sn.folded, sn.samples,
					sn.json, dv, dn };
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			if (*files[i])
				unlink(files[i]);
	}
	rmdir(dir);
	return rc;
}

int mt_cmd_flame(int argc, char **argv)
{
	enum { O_METRIC = 256, O_REVERSE, O_NO_CACHE, O_DIFF, O_AT };
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "reverse", no_argument, NULL, O_REVERSE },
		{ "no-cache", no_argument, NULL, O_NO_CACHE },
		{ "diff", no_argument, NULL, O_DIFF },
		{ "at", required_argument, NULL, O_AT },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *metric = NULL, *at = NULL;
	int reverse = 0, no_cache = 0, verbose = 0, diff = 0, c;
	argv[0] = "mt";
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:vh", longs, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case O_METRIC: metric = optarg; break;
		case O_REVERSE: reverse = 1; break;
		case O_NO_CACHE: no_cache = 1; break;
		case O_DIFF: diff = 1; break;
		case O_AT: at = optarg; break;
		case 'v': verbose = 1; break;
		case 'h': mt_help_flame(stdout); return MT_EXIT_OK;
		default: return mt_usage_hint(SYNOPSIS);
		}
	}
	if (argc - optind != 1 + diff) {
		if (diff)
			mt_error("--diff wants two captures, BASE and NEW (%d given)", argc - optind);
		else
			mt_error(argc == optind ? "no capture given" : "give one capture");
		return mt_usage_hint(SYNOPSIS);
	}
	if (at && diff) {
		mt_error("--at is for one capture: mt flame --diff compares whole captures");
		return mt_usage_hint(SYNOPSIS);
	}
	const char *file = argv[optind + diff];
	char *def = NULL;
	if (!out && !(out = def = mt_front_default_out(file, diff ? ".diff.svg" : ".svg")))
		return mt_error("out of memory"), MT_EXIT_ENV;
	if (!strcmp(out, "-") && isatty(STDOUT_FILENO)) {
		free(def);
		mt_error("refusing to write an SVG to a terminal (give -o FILE)");
		return MT_EXIT_USAGE;
	}
	char *flamegraph = mt_front_stage("mt-flamegraph");
	if (!flamegraph) {
		free(def);
		return MT_EXIT_ENV;
	}
	if (diff) {
		int drc = flame_diff(argv[optind], file, out, metric, reverse, no_cache, verbose,
				     flamegraph);
		free(flamegraph);
		free(def);
		return drc;
	}

	/* the folds' outputs, in a private directory */
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX], folded[PATH_MAX + 16], json[PATH_MAX + 16];
	snprintf(dir, sizeof(dir), "%s/mt.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
	int rc = MT_EXIT_ENV, ffd = -1, jfd = -1;
	if (!mkdtemp(dir)) {
		mt_error("cannot create a directory in '%s': %s", tmp && *tmp == '/' ? tmp : "/tmp",
			 strerror(errno));
		goto out_free;
	}
	snprintf(folded, sizeof(folded), "%s/folded", dir);
	snprintf(json, sizeof(json), "%s/stats.json", dir);
	if ((ffd = mt_open_output(folded)) < 0 || (jfd = mt_open_output(json)) < 0) {
		mt_error("cannot create '%s': %s", ffd < 0 ? folded : json,
			 mt_open_output_strerror(errno));
		goto out;
	}
	/* the same metric for both: the error bars are the bars' own */
	char *fargs[6] = { NULL }, *jargs[8] = { "--json", "--top", "0", NULL };
	int nf = 0, nj = 3;
	if (metric) {
		fargs[nf++] = jargs[nj++] = "--metric";
		fargs[nf++] = jargs[nj++] = (char *)metric;
	}
	if (at) {
		fargs[nf++] = jargs[nj++] = "--at";
		fargs[nf++] = jargs[nj++] = (char *)at;
	}
	struct mt_fold_run runs[2] = { { fargs, ffd, NULL }, { jargs, jfd, NULL } };
	char comm[256] = "";
	rc = mt_front_fold(file, NULL, runs, 2, no_cache, verbose, metric, save_comm, comm);
	mt_front_close(&ffd);
	mt_front_close(&jfd);
	if (rc)
		goto out;

	char *stats = slurp(json);
	char m[64] = "", ev[256] = "";
	if (!stats || json_str(stats, "metric", m, sizeof(m))) {
		mt_error("mt-fold --json gave no metric for '%s'", file);
		free(stats);
		rc = MT_EXIT_DATA;
		goto out;
	}
	json_str(stats, "event", ev, sizeof(ev));	/* null for allocations */
	free(stats);
	const char *unit = unit_of(m, ev);
	char title[512];
	snprintf(title, sizeof(title), "%s: %s (%s)", *comm ? comm : "?", m, unit);
	char *fg[16] = { flamegraph, "--stats", json, "--title", title, FLAME_UNIT_OPT,
			 (char *)unit, "--colors", strstr(m, "_bytes") || strstr(m, "_objects") ?
			 "mem" : "cpu", "-o", (char *)out };
	int a = 11;
	if (reverse)
		fg[a++] = "--reverse";
	fg[a++] = folded;
	fg[a] = NULL;
	rc = run_flamegraph(fg);
	if (!rc && strcmp(out, "-"))
		mt_info("flame graph: %s (%s of %s)", out, m, *comm ? comm : "?");
out:
	mt_front_close(&ffd);
	mt_front_close(&jfd);
	unlink(folded);
	unlink(json);
	rmdir(dir);
out_free:
	free(flamegraph);
	free(def);
	return rc;
}
