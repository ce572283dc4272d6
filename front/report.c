/* mt report FILE, mt diff BASE NEW: mt-fold's tables from a capture, through
 * the unwound cache. */
#include "front/fold.h"
#include "front/sub.h"
#include "common/cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* mt-fold's mode for --json; the table is MT_FRONT_FOLD_REPORT (fold.h). */
#define FOLD_JSON "--json"

#define REPORT_SYNOPSIS "mt report FILE [options]"
#define DIFF_SYNOPSIS "mt diff BASE NEW [options]"

void mt_help_report(FILE *f)
{
	fputs("usage: " REPORT_SYNOPSIS "\n"
	      "The allocation sites (or the hottest code) of a capture, as a table on stdout:\n"
	      "mt-unwind --srcline FILE, then mt-fold.  FILE is an .mtz file (mt record), a\n"
	      "perf.data file, a perf pipe stream or mt-unwind output.  The unwound text is\n"
	      "cached: a second report (or mt flame) of the same capture does not unwind\n"
	      "again (docs/front.md).\n"
	      "\n"
	      "  --metric M      alloc_bytes (default for allocations), alloc_objects,\n"
	      "                  inuse_bytes, inuse_objects (live at the end: leaks),\n"
	      "                  samples, period (default for event captures),\n"
	      "                  peak_bytes, peak_objects (live at the process's peak),\n"
	      "                  temp_bytes, temp_objects (freed before the thread's\n"
	      "                  next allocation)\n"
	      "  --at TIME       peak_* at TIME after the start instead (1.5, 1500ms)\n"
	      "  --sizes         a histogram of the requested sizes\n"
	      "  --lifetimes     histograms of the lifetimes (time, allocations between)\n"
	      "  --top N         rows (default 20, 0 = all)\n"
	      "  --tree          sites as a call tree       (mt-fold --tree)\n"
	      "  --callers       who calls each site        (mt-fold --callers)\n"
	      "  --alloc-fn RE   functions that count as allocators (mt-fold --alloc-fn)\n"
	      "  --paths N       call paths shown per site  (mt-fold --paths)\n"
	      "  --pid N, --tid N, --comm NAME\n"
	      "                  only the events of that process, thread or command\n"
	      "  --wide          do not shorten names to the terminal's width\n"
	      "  --json          the same as JSON (docs/formats/fold-json.md)\n"
	      "  --html          one HTML page instead, self-contained: summary, memory\n"
	      "                  over time, flame graphs of every metric, the tables\n"
	      "                  (docs/front.md); to -o OUT (default: FILE with .html\n"
	      "                  in place of .mtz, .perf or .data; - for stdout)\n"
	      "  -o, --output OUT  with --html: where the page goes\n"
	      "  --pprof OUT     a gzipped pprof profile instead, for go tool pprof,\n"
	      "                  Pyroscope, Parca (docs/pprof.md)\n"
	      "  --label K=V     with --pprof: a label on every sample (host, service...)\n"
	      "  --no-cache      unwind again, keep nothing\n"
	      "  -v, --verbose   say where the unwound text comes from\n"
	      "  -h, --help      this text\n"
	      "\n"
	      "exit status: 0 ok; 1 data problem (FILE is not a capture, or damaged: what\n"
	      "could be read is reported); 2 usage; 3 environment (FILE cannot be opened,\n"
	      "a stage program is missing).\n", f);
}

void mt_help_diff(FILE *f)
{
	fputs("usage: " DIFF_SYNOPSIS "\n"
	      "Per-site change from capture BASE to capture NEW, with whether each exceeds\n"
	      "the combined error: mt-fold --diff on both unwound texts (cached as for mt\n"
	      "report).  The options apply to both.\n"
	      "\n"
	      "  --metric M      as mt report (default: mt-fold's for NEW)\n"
	      "  --top N         rows (default 20, 0 = all)\n"
	      "  --json          the same as JSON\n"
	      "  --html          one HTML page instead: the differential flame graph and\n"
	      "                  the diff table (docs/front.md), to -o OUT (default:\n"
	      "                  NEW's name with .diff.html)\n"
	      "  -o, --output OUT  with --html: where the page goes\n"
	      "  --no-cache      unwind again, keep nothing\n"
	      "  -v, --verbose   say where the unwound texts come from\n"
	      "  -h, --help      this text\n"
	      "\n"
	      "exit status: as mt report.\n", f);
}

enum {
	O_TREE = 256, O_CALLERS, O_METRIC, O_ALLOC_FN, O_TOP, O_PATHS, O_PID, O_TID,
	O_COMM, O_WIDE, O_JSON, O_NO_CACHE, O_PPROF, O_LABEL, O_AT, O_SIZES, O_LIFETIMES,
	O_HTML,
};

/* What each option becomes for mt-fold (NULL: mt's own). */
static const char *fold_name(int opt)
{
	switch (opt) {
	case O_TREE: return "--tree";
	case O_CALLERS: return "--callers";
	case O_METRIC: return "--metric";
	case O_ALLOC_FN: return "--alloc-fn";
	case O_TOP: return "--top";
	case O_PATHS: return "--paths";
	case O_PID: return "--only-pid";
	case O_TID: return "--only-tid";
	case O_COMM: return "--only-comm";
	case O_WIDE: return "--wide";
	case O_PPROF: return "--pprof";
	case O_LABEL: return "--label";
	case O_AT: return "--at";
	case O_SIZES: return "--sizes";
	case O_LIFETIMES: return "--lifetimes";
	default: return NULL;
	}
}

struct parsed {
	char *fold[40];
	int nfold, json, no_cache, verbose, pprof, html, shape;
	const char *metric, *out;
	char **files;
	int nfiles;
};

/* @return : 0, 1 after --help, or an exit code. */
static int parse(int argc, char **argv, const struct option *longs, const char *synopsis,
		 void (*help)(FILE *), struct parsed *p)
{
	int c;
	argv[0] = "mt";
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:vh", longs, NULL)) != -1) {
		const char *name = fold_name(c);
		if (name) {
			if (p->nfold + 2 >= (int)(sizeof(p->fold) / sizeof(p->fold[0])) - 4) {
				mt_error("too many options");
				return mt_usage_hint(synopsis);
			}
			p->fold[p->nfold++] = (char *)name;
			if (c == O_METRIC)
				p->metric = optarg;
			if (c == O_PPROF)
				p->pprof = 1;
			if (c == O_TREE || c == O_CALLERS || c == O_WIDE || c == O_PPROF ||
			    c == O_LABEL)
				p->shape = c;
			if (optarg)
				p->fold[p->nfold++] = optarg;
			continue;
		}
		switch (c) {
		case O_JSON: p->json = 1; break;
		case O_HTML: p->html = 1; break;
		case 'o': p->out = optarg; break;
		case O_NO_CACHE: p->no_cache = 1; break;
		case 'v': p->verbose = 1; break;
		case 'h': help(stdout); return 1;
		default: return mt_usage_hint(synopsis);
		}
	}
	p->files = argv + optind;
	p->nfiles = argc - optind;
	if (p->out && !p->html) {
		mt_error("-o goes with --html (the table goes to stdout)");
		return mt_usage_hint(synopsis);
	}
	if (p->html && (p->json || p->shape)) {
		mt_error("--html is a page of its own: not with --%s",
			 p->json ? "json" : fold_name(p->shape) + 2);
		return mt_usage_hint(synopsis);
	}
	return 0;
}

/* The page's name: -o, else FILE's with suffix.  NULL: out of memory (said). */
static const char *page_out(const struct parsed *p, const char *file, const char *suffix,
			    char **def)
{
	*def = NULL;
	if (p->out)
		return p->out;
	if (!(*def = mt_front_default_out(file, suffix)))
		mt_error("out of memory");
	return *def;
}

static void print_header(void *file, const struct mt_unwound_first *f)
{
	printf("mt report: %s, '%s'\n\n", *f->comm ? f->comm : "?", (const char *)file);
	fflush(stdout);
}

int mt_cmd_report(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "tree", no_argument, NULL, O_TREE },
		{ "callers", no_argument, NULL, O_CALLERS },
		{ "metric", required_argument, NULL, O_METRIC },
		{ "alloc-fn", required_argument, NULL, O_ALLOC_FN },
		{ "top", required_argument, NULL, O_TOP },
		{ "paths", required_argument, NULL, O_PATHS },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "comm", required_argument, NULL, O_COMM },
		{ "wide", no_argument, NULL, O_WIDE },
		{ "json", no_argument, NULL, O_JSON },
		{ "pprof", required_argument, NULL, O_PPROF },
		{ "label", required_argument, NULL, O_LABEL },
		{ "at", required_argument, NULL, O_AT },
		{ "sizes", no_argument, NULL, O_SIZES },
		{ "lifetimes", no_argument, NULL, O_LIFETIMES },
		{ "html", no_argument, NULL, O_HTML },
		{ "output", required_argument, NULL, 'o' },
		{ "no-cache", no_argument, NULL, O_NO_CACHE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct parsed p = { .nfold = 0 };
	int rc = parse(argc, argv, longs, REPORT_SYNOPSIS, mt_help_report, &p);
	if (rc)
		return rc == 1 ? MT_EXIT_OK : rc;
	if (p.nfiles != 1) {
		mt_error(p.nfiles ? "give one capture (mt diff compares two)" : "no capture given");
		return mt_usage_hint(REPORT_SYNOPSIS);
	}
	if (p.html) {
		/* the filters apply to every fold of the page; the page picks
		 * its own metrics and --top.  Every option left is NAME VALUE:
		 * parse() refused those without a value. */
		char *filters[40];
		int nf = 0;
		for (int i = 0; i + 1 < p.nfold; i += 2) {
			if (!strcmp(p.fold[i], "--metric") || !strcmp(p.fold[i], "--top"))
				continue;
			filters[nf++] = p.fold[i];
			filters[nf++] = p.fold[i + 1];
		}
		filters[nf] = NULL;
		char *def;
		const char *out = page_out(&p, p.files[0], ".html", &def);
		if (!out)
			return MT_EXIT_ENV;
		rc = mt_html_report(p.files[0], out, p.metric, filters, p.no_cache, p.verbose);
		free(def);
		return rc;
	}
	/* the mode first: mt-fold --sites, --json and --pprof exclude each other */
	if (!p.pprof || p.json) {
		memmove(p.fold + 1, p.fold, (size_t)p.nfold * sizeof(p.fold[0]));
		p.fold[0] = p.json ? FOLD_JSON : MT_FRONT_FOLD_REPORT;
		p.nfold++;
	}
	p.fold[p.nfold] = NULL;
	struct mt_fold_run run = { p.fold, -1, NULL };
	/* a header names the program; JSON stays one document */
	return mt_front_fold(p.files[0], NULL, &run, 1, p.no_cache, p.verbose, p.metric,
			     p.json || p.pprof ? NULL : print_header, p.files[0]);
}

int mt_cmd_diff(int argc, char **argv)
{
	static const struct option longs[] = {
		{ "metric", required_argument, NULL, O_METRIC },
		{ "top", required_argument, NULL, O_TOP },
		{ "json", no_argument, NULL, O_JSON },
		{ "html", no_argument, NULL, O_HTML },
		{ "output", required_argument, NULL, 'o' },
		{ "no-cache", no_argument, NULL, O_NO_CACHE },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct parsed p = { .nfold = 0 };
	int rc = parse(argc, argv, longs, DIFF_SYNOPSIS, mt_help_diff, &p);
	if (rc)
		return rc == 1 ? MT_EXIT_OK : rc;
	if (p.nfiles != 2) {
		mt_error("give two captures, BASE and NEW");
		return mt_usage_hint(DIFF_SYNOPSIS);
	}
	if (p.html) {
		char *def;
		const char *out = page_out(&p, p.files[1], ".diff.html", &def);
		if (!out)
			return MT_EXIT_ENV;
		rc = mt_html_diff(p.files[0], p.files[1], out, p.metric, p.no_cache, p.verbose);
		free(def);
		return rc;
	}
	if (p.json)
		p.fold[p.nfold++] = FOLD_JSON;
	p.fold[p.nfold] = NULL;
	struct mt_fold_run run = { p.fold, -1, NULL };
	return mt_front_fold(p.files[1], p.files[0], &run, 1, p.no_cache, p.verbose, p.metric,
			     NULL, NULL);
}
