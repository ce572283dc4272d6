/* mt flame FILE: a flame graph of a capture in one step.  Two mt-fold runs
 * read the same unwound text (collapsed stacks, and --json for the error
 * bars), then mt-flamegraph draws them. */
#include "front/fold.h"
#include "front/run.h"
#include "front/sub.h"
#include "common/cli.h"
#include "common/trust.h"

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

#define SYNOPSIS "mt flame FILE [-o OUT.svg] [--metric M] [--reverse]"

void mt_help_flame(FILE *f)
{
	fputs("usage: " SYNOPSIS "\n"
	      "A flame graph of a capture (an .mtz file, perf.data, a perf pipe stream or\n"
	      "mt-unwind output) in one step: mt-fold's collapsed stacks and its --json\n"
	      "statistics (the error bars) from the same unwound text (cached as for mt\n"
	      "report), drawn by mt-flamegraph.  The title names the program, the metric\n"
	      "and its unit.\n"
	      "\n"
	      "  -o, --output OUT  the SVG (default: FILE with .svg in place of .mtz,\n"
	      "                    .perf or .data: mt.COMM.PID.svg)\n"
	      "  --metric M        as mt report (default: alloc_bytes for allocations,\n"
	      "                    period for event captures)\n"
	      "  --reverse         stacks leaf first: who allocates, whoever calls it\n"
	      "  --no-cache        unwind again, keep nothing\n"
	      "  -v, --verbose     say where the unwound text comes from\n"
	      "  -h, --help        this text\n"
	      "\n"
	      "exit status: as mt report.\n", f);
}

/* OUT by default: FILE without .mtz/.perf/.data, then .svg. */
static char *default_out(const char *file)
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
	return asprintf(&out, "%.*s.svg", (int)n, file) < 0 ? NULL : out;
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

int mt_cmd_flame(int argc, char **argv)
{
	enum { O_METRIC = 256, O_REVERSE, O_NO_CACHE };
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "reverse", no_argument, NULL, O_REVERSE },
		{ "no-cache", no_argument, NULL, O_NO_CACHE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *out = NULL, *metric = NULL;
	int reverse = 0, no_cache = 0, verbose = 0, c;
	argv[0] = "mt";
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:vh", longs, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case O_METRIC: metric = optarg; break;
		case O_REVERSE: reverse = 1; break;
		case O_NO_CACHE: no_cache = 1; break;
		case 'v': verbose = 1; break;
		case 'h': mt_help_flame(stdout); return MT_EXIT_OK;
		default: return mt_usage_hint(SYNOPSIS);
		}
	}
	if (argc - optind != 1) {
		mt_error(argc == optind ? "no capture given" : "give one capture");
		return mt_usage_hint(SYNOPSIS);
	}
	const char *file = argv[optind];
	char *def = NULL;
	if (!out && !(out = def = default_out(file)))
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
	char *fargs[4] = { NULL }, *jargs[6] = { "--json", "--top", "0", NULL };
	if (metric) {
		fargs[0] = jargs[3] = "--metric";
		fargs[1] = jargs[4] = (char *)metric;
	}
	struct mt_fold_run runs[2] = { { fargs, ffd }, { jargs, jfd } };
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
	pid_t pid = mt_front_spawn(fg, -1, -1, NULL, 0, NULL, 0);
	rc = pid < 0 ? MT_EXIT_ENV : mt_front_wait(pid, "mt-flamegraph", 0);
	if (rc >= 128)
		rc = MT_EXIT_ENV;
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
