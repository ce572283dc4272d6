/* mt-fold: mt-unwind text in, collapsed stacks or a report with errors out. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cli.h"
#include "common/filekind.h"
#include "fold/diff.h"
#include "fold/line.h"
#include "fold/pprof.h"
#include "fold/profile.h"
#include "fold/render.h"
#include "fold/sites.h"
#include "fold/sitestext.h"
#include "fold/snapshot.h"
#include "fold/width.h"

#define MAX_BAD_SHOWN 10

#define SYNOPSIS "mt-fold [options] [FILE...]"

static const char usage[] =
	"usage: " SYNOPSIS "\n"
	"Folds mt-unwind output (FILEs merged, stdin when none or '-') into collapsed\n"
	"stacks for FlameGraph, inferno and speedscope, or a report whose every\n"
	"estimate carries its sample count, error and 95% interval.\n"
	"\n"
	"  --metric M        alloc_bytes (default for allocation captures),\n"
	"                    alloc_objects, inuse_bytes, inuse_objects (live at the\n"
	"                    end: leaks),\n"
	"                    samples (events), period (default for event captures),\n"
	"                    peak_bytes, peak_objects (live at each process's peak,\n"
	"                    from its tick lines), temp_bytes, temp_objects (freed\n"
	"                    by their thread before its next allocation)\n"
	"  --at TIME         peak_* at TIME after the first event for every process\n"
	"                    (1.5 = 1.5s, 1500ms, 200us, 10ns)\n"
	"  --live-buckets N  with --json: \"live_over_time\", what was live at the end\n"
	"                    of each of N equal time buckets of the run, by stack\n"
	"  --sizes, --lifetimes\n"
	"                    with --report or --sites: log2 histograms of requested\n"
	"                    sizes, of lifetimes (ns, and allocations in between)\n"
	"  --event NAME      fold only the samples of event NAME (needed when the input\n"
	"                    has several: their periods do not add up)\n"
	"  --comm, --pid, --tid\n"
	"                    add the command name, 'pid N', 'tid N' as root frames\n"
	"  --report          a table: exact sampler totals beside the estimates, then\n"
	"                    the top sites with self and total, n, RSE and interval\n"
	"  --json            the same snapshot as JSON (docs/formats/fold-json.md)\n"
	"  --sites           which code allocates: the allocation sites (first frame\n"
	"                    outside the allocator) with their call paths, fitted to\n"
	"                    the terminal (docs/fold.md)\n"
	"  --tree, --callers the same as a call tree top-down, or bottom-up from the\n"
	"                    sites\n"
	"  --paths N         call paths under each site (default 3, 0 = all)\n"
	"  --min-share PCT   trees: leave out nodes below PCT% of the total (default 1)\n"
	"  --alloc-fn ERE    also count functions matching ERE as the allocator's\n"
	"  --width N, --wide fit N columns (default $COLUMNS, the terminal, or 80);\n"
	"                    --wide: no limit, every row\n"
	"  --only-pid N, --only-tid N, --only-comm NAME\n"
	"                    fold only these threads' events (repeatable)\n"
	"  --top N           rows in --report/--json/--diff (default 20, 0 = all),\n"
	"                    sites in --sites (default 10)\n"
	"  --min-samples N   leave out rows backed by fewer than N samples\n"
	"  --few N           mark rows with fewer than N samples with '?' (default 10)\n"
	"  --confidence C    interval level, 0 < C < 1 (default 0.95)\n"
	"  --diff BASE       change per allocation site from BASE (mt-unwind output) to\n"
	"                    the inputs, tested so that chance marks any site in at\n"
	"                    most 1 - C of diffs (Holm); table, or --json\n"
	"  --pprof OUT       write a gzipped pprof profile to OUT ('-': stdout) instead\n"
	"                    (every metric, labels comm, pid, tid; docs/pprof.md)\n"
	"  --label KEY=VALUE with --pprof: a label on every sample (host, service...);\n"
	"                    FILE@KEY=VALUE[,KEY=VALUE] labels one input's samples\n"
	"  -h, --help        this text\n"
	"\n"
	"exit status: 0 ok; 1 data problem (bad lines were skipped and listed on stderr);\n"
	"2 usage (also: samples of several events and no --event, or none of the event\n"
	"named); 3 environment (an input that cannot be opened or read, an output that\n"
	"cannot be written, out of memory).  Lost events reported by the capture are a\n"
	"warning (exit 0).\n";

struct bad_ctx {
	uint64_t shown, total;
};

static void on_bad_line(void *vctx, const char *file, uint64_t lineno, int err,
			const char *bad_key)
{
	struct bad_ctx *ctx = vctx;
	ctx->total++;
	if (ctx->shown >= MAX_BAD_SHOWN)
		return;
	ctx->shown++;
	if (bad_key)
		mt_error("%s:%llu: %s '%s'", file, (unsigned long long)lineno,
			mt_fold_strerror(err), bad_key);
	else
		mt_error("%s:%llu: %s", file, (unsigned long long)lineno,
			mt_fold_strerror(err));
}

struct too_big_ctx {
	uint64_t shown, total;
	enum mt_fold_metric metric;
};

static void on_too_big(void *vctx, const char *stack, size_t len, const char *count)
{
	struct too_big_ctx *ctx = vctx;
	ctx->total++;
	if (ctx->shown >= MAX_BAD_SHOWN)
		return;
	ctx->shown++;
	mt_error("stack '%.*s': %s %s does not fit a collapsed count (at most %llu): left out",
		 (int)(len > 4096 ? 4096 : len), stack, mt_fold_metric_name(ctx->metric), count,
		 (unsigned long long)MT_FOLD_COLLAPSED_MAX);
}

/* An input that is a capture (an .mtz, perf.data or perf stream) or
 * collapsed stacks rather than mt-unwind output: said, with what to run.
 * @return : 1 when so, else 0. */
static int wrong_kind(const char *path, const char *name)
{
	enum mt_file_kind k;
	if (mt_file_kind_peek(path, &k) != 0)
		return 0;
	if (k == MT_FILE_MTZ || k == MT_FILE_PERF_DATA || k == MT_FILE_PERF_PIPE)
		mt_error("'%s' is %s, not mt-unwind output: unwind it first"
			 " (mt-unwind '%s' | mt-fold)", name, mt_file_kind_str(k), name);
	else if (k == MT_FILE_FOLDED)
		mt_error("'%s' is %s already: draw it with mt-flamegraph", name,
			 mt_file_kind_str(k));
	else
		return 0;
	return 1;
}

/* Read every file into p; an input that cannot be opened is reported and
 * the others are still folded.  @return : exit status so far (MT_EXIT_OK or
 * MT_EXIT_ENV, or MT_EXIT_DATA for a capture given instead), or -1 when out
 * of memory (reported; nothing sensible can be written). */
static int read_inputs(struct mt_fold_profile *p, char **files, int nfiles,
		       const char **labels, struct bad_ctx *bad)
{
	static char *stdin_only[] = { "-" };
	int status = 0;
	if (nfiles == 0) {
		files = stdin_only;
		nfiles = 1;
	}
	for (int i = 0; i < nfiles; i++) {
		int is_stdin = strcmp(files[i], "-") == 0;
		const char *name = is_stdin ? "<stdin>" : files[i];
		FILE *f = is_stdin ? stdin : fopen(files[i], "r");
		if (!f) {
			mt_error("cannot open '%s': %s", files[i], strerror(errno));
			status = MT_EXIT_ENV;
			continue;
		}
		if (wrong_kind(files[i], name)) {
			if (status < MT_EXIT_DATA)
				status = MT_EXIT_DATA;
			fclose(f);
			continue;
		}
		int r = labels ? mt_fold_profile_input_labels(p, labels[i]) : 0;
		if (!r)
			r = mt_fold_profile_read(p, f, name, on_bad_line, bad);
		unsigned long long at = (unsigned long long)mt_fold_profile_read_line(p);
		if (r == MT_FOLD_EIO) {
			mt_error("cannot read '%s': %s", name, strerror(errno));
			status = MT_EXIT_ENV;
		} else if (r == MT_FOLD_ENOMEM) {
			/* getline could not hold the line: not the end of the
			 * input, and what follows it is unread */
			mt_error("cannot read '%s': line %llu: out of memory", name, at);
			if (!is_stdin)
				fclose(f);
			return -1;
		} else if (r) {
			mt_error("'%s': %s", name, mt_fold_strerror(r));
			if (!is_stdin)
				fclose(f);
			return -1;
		}
		if (!is_stdin)
			fclose(f);
	}
	return status;
}

/* Append "NAME: N samples" for each event name of c to buf. */
static void list_events(char *buf, size_t n, const struct mt_fold_counts *c)
{
	size_t k = strlen(buf);
	for (unsigned i = 0; i < c->nr_event_names && k < n; i++)
		k += (size_t)snprintf(buf + k, n - k, "%s%s: %llu samples", i ? ", " : "",
				      mt_fold_event_label(c->event_names[i].name),
				      (unsigned long long)c->event_names[i].samples);
	if (c->more_events && k < n)
		snprintf(buf + k, n - k, ", %llu of further events",
			 (unsigned long long)c->more_events);
}

/* The samples must be of one event, or of the one --event names.
 * @return : 0, or MT_EXIT_USAGE (reported). */
static int check_events(const struct mt_fold_profile *p, const struct mt_fold_profile *base,
			const char *only)
{
	const struct mt_fold_counts *c = mt_fold_profile_counts(p);
	const struct mt_fold_counts *b = base ? mt_fold_profile_counts(base) : NULL;
	char names[1024] = "", bnames[1024] = "";
	list_events(names, sizeof(names), c);
	if (b)
		list_events(bnames, sizeof(bnames), b);
	if (only) {
		const struct mt_fold_counts *lacking = !c->kind[MT_FOLD_SAMPLE] ? c
			: b && !b->kind[MT_FOLD_SAMPLE] ? b : NULL;
		if (!lacking)
			return 0;
		const char *has = lacking == c ? names : bnames;
		mt_error("no sample of event '%s' in %s: %s%s", only,
			 lacking == c ? "the input" : "the --diff base",
			 *has ? "it has samples of " : "it has no sample line", has);
		return MT_EXIT_USAGE;
	}
	unsigned distinct = c->nr_event_names + (c->more_events != 0);
	if (b)	/* base names the inputs lack */
		for (unsigned i = 0; i < b->nr_event_names; i++) {
			unsigned j = 0;
			while (j < c->nr_event_names &&
			       strcmp(c->event_names[j].name, b->event_names[i].name) != 0)
				j++;
			distinct += j == c->nr_event_names;
		}
	if (distinct <= 1)
		return 0;
	mt_error("samples of several events (%s%s%s): their periods do not add "
		"up; fold one at a time with --event NAME", names,
		*bnames ? "; in the --diff base " : "", bnames);
	return MT_EXIT_USAGE;
}

/* A decimal in 0..max for option opt.  @return : 0, or -1 (reported). */
static int parse_uint(const char *opt, const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (!*s || *end || errno || s[0] == '-')
		return mt_error("%s wants a non-negative integer, not '%s'", opt, s);
	if (v > max)
		return mt_error("%s wants at most %llu, not '%s'", opt, (unsigned long long)max, s);
	*out = v;
	return 0;
}

/* A duration for option opt: seconds as a decimal ("1.5"), or with a unit
 * ns, us, ms, s.  @return : 0, or -1 (reported). */
static int parse_time(const char *opt, const char *s, uint64_t *ns)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	double scale = 1e9;
	if (end != s) {
		if (!strcmp(end, "ns"))
			scale = 1;
		else if (!strcmp(end, "us"))
			scale = 1e3;
		else if (!strcmp(end, "ms"))
			scale = 1e6;
		else if (!strcmp(end, "s") || !*end)
			scale = 1e9;
		else
			end = (char *)s;
	}
	if (end == s || errno || !(v >= 0) || v * scale >= 9.2e18 || s[0] == '-' ||
	    s[0] == ' ')
		return mt_error("%s wants a time after the first event (1.5, 1500ms, 2s), "
				"not '%s'", opt, s);
	*ns = (uint64_t)llround(v * scale);
	return 0;
}

/* The peak and temp metrics need what older captures lack: tick lines,
 * seq= weights.  @return : 1 when metric m cannot be made (reported). */
static int needs_missing(const struct mt_fold_profile *p, const struct mt_fold_profile *base,
			 enum mt_fold_metric m, int have_at)
{
	const struct mt_fold_profile *sides[2] = { p, base };
	for (int i = 0; i < 2 && sides[i]; i++) {
		const struct mt_fold_counts *c = mt_fold_profile_counts(sides[i]);
		const char *which = i ? "the --diff base" : "the input";
		if (mt_fold_metric_is_peak(m) && !c->kind[MT_FOLD_TICK] && !have_at) {
			mt_error("no tick lines in %s: %s needs the sampler's ticks (capture "
				 "with an mt-capture that writes mt:tick, issue 27), or --at TIME",
				 which, mt_fold_metric_name(m));
			return 1;
		}
		if (mt_fold_metric_is_temp(m) && !c->seq_allocs) {
			mt_error("no seq= on the alloc lines of %s: %s needs the threads' "
				 "allocation counts (capture with an mt-capture that records "
				 "them in mt:alloc and mt:free, issue 27)", which, mt_fold_metric_name(m));
			return 1;
		}
	}
	return 0;
}

static int fold_main(int argc, char **argv, struct mt_fold_alloc_fns *afns,
		     uint32_t *only_pids, uint32_t *only_tids, const char **only_comms)
{
	enum { O_METRIC = 256, O_COMM, O_PID, O_TID, O_REPORT, O_JSON, O_TOP, O_MIN,
	       O_FEW, O_CONF, O_DIFF, O_EVENT, O_SITES, O_TREE, O_CALLERS, O_PATHS,
	       O_MINSHARE, O_ALLOCFN, O_WIDTH, O_WIDE, O_ONLYPID, O_ONLYTID, O_ONLYCOMM,
	       O_PPROF, O_LABEL, O_AT, O_SIZES, O_LIFETIMES, O_LIVEBUCKETS };
	static const struct option longopts[] = {
		{ "metric", required_argument, NULL, O_METRIC },
		{ "comm", no_argument, NULL, O_COMM },
		{ "pid", no_argument, NULL, O_PID },
		{ "tid", no_argument, NULL, O_TID },
		{ "report", no_argument, NULL, O_REPORT },
		{ "json", no_argument, NULL, O_JSON },
		{ "top", required_argument, NULL, O_TOP },
		{ "min-samples", required_argument, NULL, O_MIN },
		{ "few", required_argument, NULL, O_FEW },
		{ "confidence", required_argument, NULL, O_CONF },
		{ "diff", required_argument, NULL, O_DIFF },
		{ "event", required_argument, NULL, O_EVENT },
		{ "sites", no_argument, NULL, O_SITES },
		{ "tree", no_argument, NULL, O_TREE },
		{ "callers", no_argument, NULL, O_CALLERS },
		{ "paths", required_argument, NULL, O_PATHS },
		{ "min-share", required_argument, NULL, O_MINSHARE },
		{ "alloc-fn", required_argument, NULL, O_ALLOCFN },
		{ "width", required_argument, NULL, O_WIDTH },
		{ "wide", no_argument, NULL, O_WIDE },
		{ "only-pid", required_argument, NULL, O_ONLYPID },
		{ "only-tid", required_argument, NULL, O_ONLYTID },
		{ "only-comm", required_argument, NULL, O_ONLYCOMM },
		{ "pprof", required_argument, NULL, O_PPROF },
		{ "label", required_argument, NULL, O_LABEL },
		{ "at", required_argument, NULL, O_AT },
		{ "sizes", no_argument, NULL, O_SIZES },
		{ "lifetimes", no_argument, NULL, O_LIFETIMES },
		{ "live-buckets", required_argument, NULL, O_LIVEBUCKETS },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct mt_fold_snapshot_options opt = { .conf = 0.95, .top = 20, .few = 10 };
	int have_metric = 0, report = 0, json = 0, sites = 0, have_top = 0, wide = 0, c;
	enum mt_fold_tree_kind tree = MT_FOLD_TREE_NONE;
	struct mt_fold_sites_options so = { .paths = 3, .min_share = 1, .groups = 5 };
	long width = 0;
	struct mt_fold_filter filter = { .pids = only_pids, .tids = only_tids,
					 .comms = only_comms };
	unsigned prefix = 0;
	const char *diff_base = NULL, *only_event = NULL, *pprof = NULL;
	struct mt_fold_label labels[16];
	unsigned nlabels = 0;
	struct mt_fold_locs *locs = NULL;
	uint64_t u, at_ns = 0;
	int have_at = 0;
	unsigned live_buckets = 0;

	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_METRIC:
			if (mt_fold_metric_parse(optarg, &opt.metric)) {
				mt_error("unknown metric '%s'", optarg);
				return mt_usage_hint(SYNOPSIS);
			}
			have_metric = 1;
			break;
		case O_COMM: prefix |= MT_FOLD_PREFIX_COMM; break;
		case O_PID: prefix |= MT_FOLD_PREFIX_PID; break;
		case O_TID: prefix |= MT_FOLD_PREFIX_TID; break;
		case O_REPORT: report = 1; break;
		case O_JSON: json = 1; break;
		case O_TOP:
			if (parse_uint("--top", optarg, UINT32_MAX, &u))
				return mt_usage_hint(SYNOPSIS);
			opt.top = (uint32_t)u;
			have_top = 1;
			break;
		case O_SITES: sites = 1; break;
		case O_TREE: sites = 1; tree = MT_FOLD_TREE_DOWN; break;
		case O_CALLERS: sites = 1; tree = MT_FOLD_TREE_CALLERS; break;
		case O_WIDE: wide = 1; break;
		case O_PATHS:
			if (parse_uint("--paths", optarg, UINT32_MAX, &u))
				return mt_usage_hint(SYNOPSIS);
			so.paths = (uint32_t)u;
			break;
		case O_WIDTH:
			if (parse_uint("--width", optarg, 1000000, &u))
				return mt_usage_hint(SYNOPSIS);
			if (u < MT_FOLD_MIN_WIDTH) {
				mt_error("--width wants at least %d columns, not '%s'",
					 MT_FOLD_MIN_WIDTH, optarg);
				return mt_usage_hint(SYNOPSIS);
			}
			width = (long)u;
			break;
		case O_MINSHARE: {
			char *end;
			so.min_share = strtod(optarg, &end);
			if (!*optarg || *end || !(so.min_share >= 0 && so.min_share <= 100)) {
				mt_error("--min-share wants a percentage from 0 to 100, "
					"not '%s'", optarg);
				return mt_usage_hint(SYNOPSIS);
			}
			break;
		}
		case O_ALLOCFN: {
			char why[256];
			int r2 = mt_fold_alloc_fns_add(afns, optarg, why, sizeof(why));
			if (r2 == MT_FOLD_ENOMEM) {
				mt_error("out of memory");
				return MT_EXIT_ENV;
			}
			if (r2) {
				mt_error("--alloc-fn '%s': %s", optarg, why);
				return mt_usage_hint(SYNOPSIS);
			}
			break;
		}
		case O_ONLYPID:
		case O_ONLYTID:
			if (parse_uint(c == O_ONLYPID ? "--only-pid" : "--only-tid", optarg,
				       UINT32_MAX, &u))
				return mt_usage_hint(SYNOPSIS);
			if (c == O_ONLYPID)
				only_pids[filter.npids++] = (uint32_t)u;
			else
				only_tids[filter.ntids++] = (uint32_t)u;
			break;
		case O_ONLYCOMM: only_comms[filter.ncomms++] = optarg; break;
		case O_MIN:
			if (parse_uint("--min-samples", optarg, UINT64_MAX, &opt.min_samples))
				return mt_usage_hint(SYNOPSIS);
			break;
		case O_FEW:
			if (parse_uint("--few", optarg, UINT64_MAX, &opt.few))
				return mt_usage_hint(SYNOPSIS);
			break;
		case O_CONF: {
			char *end;
			opt.conf = strtod(optarg, &end);
			if (*end || !(opt.conf > 0 && opt.conf < 1)) {
				mt_error("--confidence wants a level between 0 and 1, "
					"not '%s'", optarg);
				return mt_usage_hint(SYNOPSIS);
			}
			break;
		}
		case O_DIFF: diff_base = optarg; break;
		case O_EVENT: only_event = optarg; break;
		case O_PPROF: pprof = optarg; break;
		case O_LABEL:
			if (mt_fold_pprof_label(optarg, labels, &nlabels, 16))
				return mt_usage_hint(SYNOPSIS);
			break;
		case O_AT:
			if (parse_time("--at", optarg, &at_ns))
				return mt_usage_hint(SYNOPSIS);
			have_at = 1;
			break;
		case O_SIZES: opt.sizes = 1; break;
		case O_LIFETIMES: opt.lifetimes = 1; break;
		case O_LIVEBUCKETS:
			if (parse_uint("--live-buckets", optarg, MT_FOLD_LIVE_MAX_BUCKETS, &u))
				return mt_usage_hint(SYNOPSIS);
			if (!u) {
				mt_error("--live-buckets wants at least 1 bucket, not '%s'", optarg);
				return mt_usage_hint(SYNOPSIS);
			}
			live_buckets = (unsigned)u;
			break;
		case 'h':
			fputs(usage, stdout);
			return MT_EXIT_OK;
		default:	/* getopt said why */
			return mt_usage_hint(SYNOPSIS);
		}
	}
	if (report && json) {
		mt_error("--report and --json are exclusive (both render the same "
			"snapshot)");
		return MT_EXIT_USAGE;
	}
	if (sites && (report || json || diff_base)) {
		mt_error("--sites, --tree and --callers are exclusive with --report, "
			"--json and --diff (--json carries the sites)");
		return MT_EXIT_USAGE;
	}
	if (live_buckets && (!json || diff_base)) {
		mt_error("--live-buckets adds a section to --json: give --json, without --diff");
		return MT_EXIT_USAGE;
	}
	if (sites && !have_top)
		opt.top = 10;
	so.top = opt.top;
	so.tree = tree;
	so.width = mt_fold_resolve_width(width, wide, getenv("COLUMNS"), 1);
	opt.width = so.width;
	if (wide || opt.top == 0)
		so.groups = 0;

	if (pprof && (report || json || diff_base || sites)) {
		mt_error("--pprof writes the profile only: run mt-fold again for "
			"--report, --json, --diff or --sites");
		return MT_EXIT_USAGE;
	}
	if (nlabels && !pprof) {
		mt_error("--label labels the samples of --pprof OUT: give --pprof");
		return MT_EXIT_USAGE;
	}
	const char **input_labels = NULL;	/* FILE@KEY=VALUE,... */
	if (pprof) {	/* the labels come from these frames */
		prefix = MT_FOLD_PREFIX_COMM | MT_FOLD_PREFIX_PID | MT_FOLD_PREFIX_TID;
		int r = mt_fold_pprof_inputs(argv + optind, argc - optind, labels, nlabels,
					     &input_labels);
		if (r == MT_FOLD_ENOMEM) {
			mt_error("out of memory");
			return MT_EXIT_ENV;
		}
		if (r)
			return mt_usage_hint(SYNOPSIS);
		if (input_labels)
			prefix |= MT_FOLD_PREFIX_LABELS;
	}

	static char outbuf[1 << 16];
	setvbuf(stdout, outbuf, _IOFBF, sizeof(outbuf));
	struct bad_ctx bad = { 0 };
	struct mt_fold_profile *p = mt_fold_profile_new(prefix), *base = NULL;
	struct mt_fold_snapshot *snap = NULL, *bsnap = NULL;
	struct mt_fold_diff *diff = NULL;
	struct mt_fold_sites *st = NULL, *bst = NULL;
	struct too_big_ctx too_big = { 0 };
	int status = 0, r = 0;
	if (!p)
		goto oom;
	mt_fold_profile_only_event(p, only_event);
	mt_fold_profile_filter(p, &filter);
	if (have_at)
		mt_fold_profile_at(p, at_ns);
	mt_fold_profile_live_buckets(p, live_buckets);
	/* the histograms are for the JSON and --sizes/--lifetimes: kept
	 * otherwise they cost a fifth of the fold's time */
	mt_fold_profile_histograms(p, json || opt.sizes || opt.lifetimes);
	if (pprof) {
		if (!(locs = mt_fold_locs_new(1)))
			goto oom;
		mt_fold_profile_keep_locations(p, locs);
	}
	status = read_inputs(p, argv + optind, argc - optind, input_labels, &bad);
	if (status < 0)
		goto oom_said;
	if (diff_base) {
		char *bfiles[] = { (char *)diff_base };
		if (!(base = mt_fold_profile_new(prefix)))
			goto oom;
		mt_fold_profile_only_event(base, only_event);
		mt_fold_profile_filter(base, &filter);
		if (have_at)
			mt_fold_profile_at(base, at_ns);
		int s2 = read_inputs(base, bfiles, 1, NULL, &bad);
		if (s2 < 0)
			goto oom_said;
		/* A side with a file left out is not the run it names: a diff
		 * against it would show changes that are not there. */
		if (status || s2) {
			mt_error("no diff: %s could not be read", s2 ? "the --diff base" : "an input");
			if (s2 > status)
				status = s2;
			goto out;
		}
	}
	if (check_events(p, base, only_event)) {
		if (!status)	/* an input that could not be read says more */
			status = MT_EXIT_USAGE;
		goto out;
	}
	if (mt_fold_profile_finish(p) || (base && mt_fold_profile_finish(base)))
		goto oom;
	if (!have_metric)
		opt.metric = mt_fold_profile_default_metric(p);
	if (needs_missing(p, base, opt.metric, have_at)) {
		status = MT_EXIT_DATA;
		goto out;
	}

	if (pprof) {
		struct mt_fold_pprof_group g = { p, labels, nlabels };
		struct mt_fold_pprof_stats st;
		r = mt_fold_pprof_write(pprof, &g, 1, locs, &st);
		if (r == MT_FOLD_ENOMEM)
			goto oom;
		if (r) {
			mt_error("cannot write '%s': %s", pprof, strerror(errno));
			status = MT_EXIT_ENV;
		}
		if (st.clamped)
			mt_warn("%llu values above 2^63-1 written as 2^63-1 in '%s'",
				(unsigned long long)st.clamped, pprof);
		r = 0;
	} else if (diff_base) {
		if (mt_fold_snapshot_new(&snap, p, &opt) || mt_fold_snapshot_new(&bsnap, base, &opt) ||
		    mt_fold_sites_new(&st, p, snap, afns, MT_FOLD_TREE_NONE) ||
		    mt_fold_sites_new(&bst, base, bsnap, afns, MT_FOLD_TREE_NONE) ||
		    mt_fold_diff_new(&diff, bsnap, bst, snap, st, opt.top))
			goto oom;
		r = json ? mt_fold_render_diff_json(stdout, diff, diff_base)
			 : mt_fold_render_diff_table(stdout, diff, diff_base);
	} else if (sites || json) {
		if (mt_fold_snapshot_new(&snap, p, &opt) ||
		    mt_fold_sites_new(&st, p, snap, afns, tree))
			goto oom;
		r = json ? mt_fold_render_json_sites(stdout, snap, st, so.paths)
			 : mt_fold_render_sites(stdout, snap, st, &so);
	} else if (report) {
		if (mt_fold_snapshot_new(&snap, p, &opt))
			goto oom;
		r = mt_fold_render_table(stdout, snap);
	} else {
		too_big.metric = opt.metric;
		r = mt_fold_render_collapsed_checked(stdout, p, opt.metric, on_too_big, &too_big);
		if (r == MT_FOLD_ERANGE)	/* reported below */
			r = 0;
	}
	if (r == MT_FOLD_ENOMEM)
		goto oom;
	if (fflush(stdout) || r) {
		mt_error("cannot write '<stdout>': %s", strerror(errno));
		status = MT_EXIT_ENV;
	}

	const struct mt_fold_counts *cnt = mt_fold_profile_counts(p);
	if (!cnt->events && cnt->filtered_out && status == MT_EXIT_OK)
		mt_warn("--only-pid, --only-tid and --only-comm left out every event "
			"(%llu): every figure is 0", (unsigned long long)cnt->filtered_out);
	else if (!cnt->events && !cnt->bad_lines && status == MT_EXIT_OK)	/* else said why */
		mt_warn("the input holds no events (an empty capture, or "
			"not mt-unwind's output): every figure is 0");
	char num[40];
	if (cnt->lost_events || cnt->lost_records)
		mt_warn("the capture lost %s events (%llu lost records)",
			mt_fold_u128_str(num, cnt->lost_events), (unsigned long long)cnt->lost_records);
	if (cnt->silent_images)
		mt_warn("%s process images sent no exact totals: the exact"
			" totals leave them out", mt_fold_u128_str(num, cnt->silent_images));
	if (cnt->unsampled_images)
		mt_warn("%s process images never ran the sampler (static"
			" programs, or LD_PRELOAD cleared): their allocations are in no figure",
			mt_fold_u128_str(num, cnt->unsampled_images));
	if (mt_fold_dumps_too_small(cnt))
		mt_warn("%llu of %llu stacks end where their stack dump "
			"ends: their outer callers are missing; capture with a larger dump "
			"(mt-capture --stack-size 65528, perf record --call-graph dwarf,65528)",
			(unsigned long long)cnt->end_of_dump, (unsigned long long)cnt->stacks);
	if (bad.total) {
		uint64_t skipped = cnt->bad_lines + (base ? mt_fold_profile_counts(base)->bad_lines : 0);
		mt_error("%llu bad lines skipped, not folded%s",
			(unsigned long long)skipped,
			bad.total > bad.shown ? " (the first ones listed above)" : "");
		if (status < MT_EXIT_DATA)
			status = MT_EXIT_DATA;
	}
	if (too_big.total) {
		mt_error("%llu stacks left out of the collapsed output: their %s does not fit a "
			 "64-bit count%s; --report shows them", (unsigned long long)too_big.total,
			 mt_fold_metric_name(opt.metric),
			 too_big.total > too_big.shown ? " (the first ones listed above)" : "");
		if (status < MT_EXIT_DATA)
			status = MT_EXIT_DATA;
	}
	goto out;	/* status: the worst of the inputs' and the output's */
oom:
	mt_error("out of memory");
oom_said:
	status = MT_EXIT_ENV;
out:
	mt_fold_diff_free(diff);
	mt_fold_sites_free(st);
	mt_fold_sites_free(bst);
	mt_fold_snapshot_free(snap);
	mt_fold_snapshot_free(bsnap);
	mt_fold_profile_free(p);
	mt_fold_profile_free(base);
	mt_fold_locs_free(locs);
	free(input_labels);
	return status;
}

int main(int argc, char **argv)
{
	mt_cli_init("mt-fold", argv);
	/* what the options fill: the --alloc-fn patterns, the --only-* lists
	 * (at most argc of each) */
	struct mt_fold_alloc_fns *afns = mt_fold_alloc_fns_new();
	uint32_t *pids = calloc((size_t)argc + 1, sizeof(uint32_t));
	uint32_t *tids = calloc((size_t)argc + 1, sizeof(uint32_t));
	const char **comms = calloc((size_t)argc + 1, sizeof(char *));
	int status = MT_EXIT_ENV;
	if (afns && pids && tids && comms)
		status = fold_main(argc, argv, afns, pids, tids, comms);
	else
		mt_error("out of memory");
	mt_fold_alloc_fns_free(afns);
	free(pids);
	free(tids);
	free(comms);
	return status;
}
