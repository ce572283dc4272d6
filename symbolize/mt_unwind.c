/* mt-unwind: perf stack dumps to one text line per event (see
 * docs/formats/unwind-text.md and docs/unwind.md).  The main: options, the
 * input, the loop over its records, the summary and the exit code.  What
 * the events mean is in events.c, how lines are written in emit.c, the
 * order records are replayed in and the unwinding on arrival in replay.c. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/input.h"
#include "common/cli.h"
#include "common/trust.h"
#include "common/cache_dir.h"
#include "common/progress.h"
#include "symbolize/emit.h"
#include "symbolize/events.h"
#include "symbolize/jobs.h"
#include "symbolize/maps.h"
#include "symbolize/module.h"
#include "symbolize/prefault.h"
#include "symbolize/replay.h"
#include "symbolize/summary.h"

/* At the end, the memory goes back to the system with the process: freeing
 * it first (every module's libdw sessions, the caches) takes a noticeable
 * part of a short run, after the output is complete.  Builds with
 * AddressSanitizer free it all, so that its leak check still sees leaks. */
#if defined(__SANITIZE_ADDRESS__)	/* gcc */
#define FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)	/* clang */
#define FREE_AT_EXIT 1
#endif
#endif
#ifndef FREE_AT_EXIT
#define FREE_AT_EXIT 0
#endif

static void usage(FILE *f)
{
	fprintf(f,
"usage: mt-unwind [options] IN\n"
"Unwind and symbolise the stack dumps of a perf stream: one line per event.\n"
"IN is an .mtz file, a perf.data file or a perf pipe stream (perf record -z\n"
"included); '-' reads stdin.\n"
"Output format: docs/formats/unwind-text.md.\n"
"\n"
"  -o FILE              write to FILE instead of stdout\n"
"  --addrs              print every frame as [module+0xADDR] (ELF address)\n"
"  --srcline            append ' (file:line)' to each frame\n"
"  --pprof-info         also modules with build-ids, each physical frame's\n"
"                       module and address, functions' first lines (for\n"
"                       mt-fold --pprof; docs/formats/unwind-text.md)\n"
"  --no-inline          do not expand inlined calls\n"
"  --no-demangle        keep C++/Rust symbol names mangled\n"
"  --max-depth N        walk at most N physical frames (default 256)\n"
"  -j, --jobs N         walk stacks on N threads (default: the CPUs it may\n"
"                       use less one, for the writer thread; 1: one thread);\n"
"                       the output is the same for every N\n"
"  --pid LIST           only events of these processes (comma-separated)\n"
"  --tid LIST           only events of these threads (comma-separated)\n"
"  --debuginfo-path DIR search DIR (colon-separated list) for separate debug\n"
"                       info before /usr/lib/debug; debuginfod is used when\n"
"                       DEBUGINFOD_URLS is set\n"
"  --symfs DIR          a symbol archive (mt archive): modules by their recorded\n"
"                       build-id from DIR/.build-id first, then as mapped;\n"
"                       separate debug info from DIR first\n"
"  --list-modules FILE  write the modules used, the files read for each and\n"
"                       their build-ids to FILE at the end (for mt archive)\n"
"  --debug-cache DIR    keep inflated copies of compressed debug files, and\n"
"                       DWARF scope indexes, in DIR (default\n"
"                       $XDG_CACHE_HOME/mt/debug or ~/.cache/mt/debug):\n"
"                       later runs skip decompressing and indexing them\n"
"  --no-debug-cache     no such copies: decompress and index in every run\n"
"  --decode-only        read and parse every record, write nothing (benchmarks)\n"
"  -q, --quiet          no summary on stderr (warnings and errors still)\n"
"  -h, --help           this text\n"
"\n"
"Exit codes: 0 ok; 1 data problem (input truncated, corrupt or partly\n"
"undecodable: what could be read is still written); 2 usage; 3 environment\n"
"(cannot open or read the input, cannot create or write the output, out of\n"
"memory).\n");
}

/* ---- options ------------------------------------------------------------ */

static int idset_parse(struct mt_unwind_idset *s, const char *arg)
{
	const char *p = arg;
	while (*p) {
		char *end;
		errno = 0;
		unsigned long x = strtoul(p, &end, 10);
		if (end == p || errno || x > UINT32_MAX || (*end && *end != ','))
			return -1;
		uint32_t *v = realloc(s->v, (s->n + 1) * sizeof(*v));
		if (!v)
			return -1;
		s->v = v;
		s->v[s->n++] = (uint32_t)x;
		p = *end ? end + 1 : end;
	}
	return s->n ? 0 : -1;
}

struct opts {
	struct mt_unwind_symopts sym;
	unsigned max_depth;
	unsigned jobs;			/* 0: not given */
	struct mt_unwind_idset pids, tids;
	const char *debuginfo_path;
	const char *symfs;
	const char *list_modules;
	const char *debug_cache;	/* NULL: the default directory */
	int no_debug_cache;
	const char *output;
	int decode_only;
	int quiet;
	const char *input;
};

/* Everything one run holds. */
struct run {
	struct opts *o;
	struct mt_input *in;
	struct mt_perf_reader *reader;		/* the input's */
	struct mt_perf_features *features;	/* a perf.data file's, or NULL */
	struct mt_unwind_modules *modules;
	struct mt_unwind_maps *maps;
	struct mt_unwind_emit emit;
	struct mt_unwind_replay *replay;
	struct mt_unwind_events *events;
	struct mt_unwind_scopes_stats scopes;	/* the scope index cache */
	struct mt_unwind_rules_stats rules;	/* the CFI row cache */
};

static void warn_msg(void *ctx, const char *msg)
{
	(void)ctx;
	mt_warn("%s", msg);
}

static void error_msg(void *ctx, const char *msg)
{
	(void)ctx;
	mt_error("%s", msg);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int nomem(const struct run *r)
{
	return r->emit.nomem || (r->replay && mt_unwind_replay_nomem(r->replay)) ||
	       (r->events && mt_unwind_events_nomem(r->events));
}

/* ---- main --------------------------------------------------------------- */

static int parse_args(int argc, char **argv, struct opts *o)
{
	enum { O_ADDRS = 256, O_SRCLINE, O_NOINLINE, O_NODEMANGLE, O_MAXDEPTH, O_PID, O_TID,
	       O_DEBUGINFO, O_DECODE, O_DEBUG_CACHE, O_NO_DEBUG_CACHE, O_PPROF_INFO,
	       O_SYMFS, O_LIST_MODULES };
	static const struct option lo[] = {
		{ "addrs", no_argument, NULL, O_ADDRS },
		{ "srcline", no_argument, NULL, O_SRCLINE },
		{ "pprof-info", no_argument, NULL, O_PPROF_INFO },
		{ "no-inline", no_argument, NULL, O_NOINLINE },
		{ "no-demangle", no_argument, NULL, O_NODEMANGLE },
		{ "max-depth", required_argument, NULL, O_MAXDEPTH },
		{ "jobs", required_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, O_PID },
		{ "tid", required_argument, NULL, O_TID },
		{ "debuginfo-path", required_argument, NULL, O_DEBUGINFO },
		{ "symfs", required_argument, NULL, O_SYMFS },
		{ "list-modules", required_argument, NULL, O_LIST_MODULES },
		{ "decode-only", no_argument, NULL, O_DECODE },
		{ "debug-cache", required_argument, NULL, O_DEBUG_CACHE },
		{ "no-debug-cache", no_argument, NULL, O_NO_DEBUG_CACHE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	o->max_depth = 256;
	int c;
	while ((c = getopt_long(argc, argv, "o:qhj:", lo, NULL)) != -1) {
		char *end;
		unsigned long v;
		switch (c) {
		case 'o': o->output = optarg; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); exit(0);
		case O_ADDRS: o->sym.addrs = 1; break;
		case O_SRCLINE: o->sym.srcline = 1; break;
		case O_PPROF_INFO: o->sym.pprof_info = 1; break;
		case O_NOINLINE: o->sym.no_inline = 1; break;
		case O_NODEMANGLE: o->sym.no_demangle = 1; break;
		case O_DECODE: o->decode_only = 1; break;
		case O_DEBUGINFO: o->debuginfo_path = optarg; break;
		case O_SYMFS: o->symfs = optarg; break;
		case O_LIST_MODULES: o->list_modules = optarg; break;
		case O_DEBUG_CACHE: o->debug_cache = optarg; o->no_debug_cache = 0; break;
		case O_NO_DEBUG_CACHE: o->no_debug_cache = 1; break;
		case 'j':
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > 1024) {
				mt_error("-j: '%s' is not a number in 1..1024", optarg);
				return -1;
			}
			o->jobs = (unsigned)v;
			break;
		case O_MAXDEPTH:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || end == optarg || v < 1 || v > 65536) {
				mt_error("--max-depth: '%s' is not a number in 1..65536", optarg);
				return -1;
			}
			o->max_depth = (unsigned)v;
			break;
		case O_PID:
		case O_TID:
			if (idset_parse(c == O_PID ? &o->pids : &o->tids, optarg) != 0) {
				mt_error("--%s: '%s' is not a comma-separated list of ids",
					 c == O_PID ? "pid" : "tid", optarg);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	if (optind + 1 != argc) {
		mt_error("%s", optind >= argc ? "no input given"
							    : "more than one input given");
		return -1;
	}
	o->input = argv[optind];
	return 0;
}

/* May the cache in dir be read?  Not when another user can change it
 * (root with that user's HOME, say): said once.  One not made yet is
 * checked as it is made (common/trust.h). */
static int cache_dir_trusted(const char *dir, const char *what)
{
	char why[8192];
	if (!dir || mt_dir_trusted(dir, why, sizeof(why)) != 0)
		return 1;
	mt_warn("not using the %s in '%s': %s", what, dir, why);
	return 0;
}

/* -j's default: the CPUs this process may use but one, which the writer
 * thread keeps busy (symbolising and formatting: 0.8 of a CPU beside the
 * reader's on a python3 profile).  With 2 CPUs that is one thread: a
 * worker there only competed with the writer, and -j 2 took 1.1-1.5 times
 * -j 1's time (docs/BENCHMARKS.md). */
static unsigned default_jobs(void)
{
	unsigned n = mt_unwind_jobs_cpus();
	return n > 2 ? n - 1 : 1;
}

/* The input, its features, the modules, maps, writer, replay and events.
 * @return : MT_EXIT_OK, or the exit code (reported). */
static int setup(struct run *r, int out_fd)
{
	const struct opts *o = r->o;
	const char *name = mt_input_name(r->in);
	enum mt_file_kind kind = mt_input_kind(r->in), whole;
	/* Collapsed stacks are told by their whole first line. */
	if (kind == MT_FILE_OTHER && mt_file_kind_peek(name, &whole) == 0)
		kind = whole;
	switch (kind) {
	case MT_FILE_EMPTY:
		mt_error("'%s' is empty", name);
		return MT_EXIT_DATA;
	case MT_FILE_UNWIND_TEXT:
		mt_error("'%s' is mt-unwind output already: fold it with mt-fold", name);
		return MT_EXIT_DATA;
	case MT_FILE_FOLDED:
		mt_error("'%s' is %s: draw it with mt-flamegraph", name,
			 mt_file_kind_str(MT_FILE_FOLDED));
		return MT_EXIT_DATA;
	default:
		break;
	}
	/* One decoding worker: a second one competes with the writer thread
	 * for the other core and fills one more frame buffer. */
	struct mt_input_mtz_opts mtz = { .threads = 1, .warn = warn_msg };
	int rc = mt_input_perf_reader(r->in, &mtz, &r->reader);
	if (rc != 0) {
		mt_error("%s", mt_input_error(r->in));
		return rc == MT_PERF_ENOMEM || rc == MT_PERF_EIO ? MT_EXIT_ENV : MT_EXIT_DATA;
	}
	if (*mt_perf_reader_warning(r->reader))
		mt_warn("'%s': %s", name, mt_perf_reader_warning(r->reader));
	int regular = mt_input_is_regular(r->in), is_mtz = mt_input_mtz(r->in) != NULL;
	if ((!is_mtz || !o->decode_only) && (rc = mt_input_features(r->in, &r->features)) != 0) {
		if (rc == MT_PERF_ENOMEM)
			return mt_error("out of memory"), MT_EXIT_ENV;
		/* An .mtz of a perf.data file: its names and build-ids are in the
		 * feature sections at the end of the original. */
		mt_warn("'%s': the event names and build-ids of the perf.data file inside could"
			" not be read (damaged end?): events are named by their attrs only", name);
	} else if (!regular && !o->decode_only &&
		   mt_perf_reader_format(r->reader) == MT_PERF_FILE) {
		mt_warn("'%s': a perf.data file read from a pipe: its event names and build-ids"
			" come after the data and cannot be read first: events are named by their"
			" attrs only (give the file by name)", name);
	}
	struct mt_unwind_replay_opts ro = {
		.max_depth = o->max_depth,
		.jobs = o->jobs ? o->jobs : default_jobs(),
		.decode_only = o->decode_only,
		.spec_fd = mt_input_rereadable(r->in) && !o->decode_only ? mt_input_fd(r->in) : -1,
		.input = o->input,
		.warn = error_msg,
	};
	struct mt_unwind_events_opts eo = {
		.pids = &o->pids, .tids = &o->tids, .decode_only = o->decode_only,
	};
	/* absolute: build-id trees are searched in absolute directories only */
	char *symfs = NULL;
	if (o->symfs && !(symfs = realpath(o->symfs, NULL)))
		return mt_error("cannot use --symfs '%s': %s", o->symfs, strerror(errno)),
		       MT_EXIT_ENV;
	rc = mt_unwind_modules_new(&r->modules, o->debuginfo_path);
	if (rc == 0)
		rc = mt_unwind_modules_set_symfs(r->modules, symfs);
	free(symfs);
	if (rc != 0 ||
	    (rc = mt_unwind_maps_new(&r->maps, r->modules)) != 0)
		return mt_error("%s", mt_unwind_strerror(rc)), MT_EXIT_ENV;
	mt_unwind_emit_init(&r->emit, o->decode_only ? -1 : out_fd, !o->decode_only, &o->sym,
			    r->maps, r->modules);
	if ((rc = mt_unwind_replay_new(&r->replay, &ro, r->reader, r->maps, &r->emit)) != 0 ||
	    (rc = mt_unwind_events_new(&r->events, &eo, r->reader, r->features, &r->emit, r->maps,
				       mt_unwind_replay_put_stack, r->replay)) != 0)
		return mt_error("%s", mt_unwind_strerror(rc)), MT_EXIT_ENV;
	mt_unwind_replay_set_events(r->replay, r->events);
	for (size_t i = 0; i < mt_perf_features_nr_build_ids(r->features); i++)
		mt_unwind_replay_build_id(r->replay, mt_perf_features_build_id(r->features, i));
	char *kept = mt_cache_dir("build-id");
	if (cache_dir_trusted(kept, "kept copies of the sampler"))
		mt_unwind_modules_set_kept_dir(r->modules, kept);
	free(kept);
	if (!o->no_debug_cache) {
		/* a relative --debug-cache is taken from the current directory:
		 * the cache's trust checks walk an absolute path */
		char given[PATH_MAX];
		char *dir = o->debug_cache ? NULL : mt_unwind_debug_cache_default_dir();
		const char *use = dir;
		if (o->debug_cache)
			use = mt_path_absolute(o->debug_cache, given, sizeof(given)) == 0 ?
				      given : o->debug_cache;
		if (cache_dir_trusted(use, "debug cache"))
			mt_unwind_modules_set_debug_cache(r->modules, use);
		free(dir);
	}
	/* Loaders read symbols (and DWARF for inline frames or file:line) in a
	 * libdwfl session of their own; --addrs with inline frames needs the
	 * DWARF too, and a session apart from the unwinder's (see cfi.c). */
	int need_dwarf = !o->sym.no_inline || o->sym.srcline || o->sym.pprof_info;
	if (!o->decode_only && (!o->sym.addrs || need_dwarf))
		mt_unwind_modules_prefetch(r->modules, need_dwarf);
	return MT_EXIT_OK;
}

/* --list-modules: "# mt-unwind modules 1", then per module, tab-separated:
 * build-id (the recorded one, else the file's; "" none), state (ok,
 * missing, not-regular, bad-elf, mismatch), device and inode of the file
 * opened (0 0 when none), the path as mapped, the file opened, the
 * separate debug file, the dwz common file's build-id and path ("" each
 * when none).  Tab, newline and backslash in a path are written \t \n \\.
 * docs/unwind.md. */
struct list_ctx {
	FILE *f;
	int too_long;
};

static void put_field(FILE *f, const char *s)
{
	fputc('\t', f);
	for (; s && *s; s++) {
		if (*s == '\t')
			fputs("\\t", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (*s == '\\')
			fputs("\\\\", f);
		else
			fputc(*s, f);
	}
}

static void list_module(struct mt_unwind_module *m, void *arg)
{
	static const char *const states[] = {
		[MT_UNWIND_MOD_OK] = "ok", [MT_UNWIND_MOD_MISSING] = "missing",
		[MT_UNWIND_MOD_NOT_REGULAR] = "not-regular", [MT_UNWIND_MOD_BAD_ELF] = "bad-elf",
		[MT_UNWIND_MOD_MISMATCH] = "mismatch",
	};
	struct list_ctx *c = arg;
	char id[41], debug[4096], alt[4096], alt_id[129];
	mt_unwind_module_build_id_hex(m, 1, id);
	if (!id[0])
		mt_unwind_module_build_id_hex(m, 0, id);
	dev_t dev = 0;
	ino_t ino = 0;
	const char *opened = mt_unwind_module_opened(m, &dev, &ino);
	if (mt_unwind_module_debug_files(m, debug, sizeof(debug), alt, sizeof(alt), alt_id) != 0)
		c->too_long++;
	fprintf(c->f, "%s\t%s\t%ju\t%ju", id, states[mt_unwind_module_state(m)], (uintmax_t)dev,
		(uintmax_t)ino);
	put_field(c->f, mt_unwind_module_path(m));
	put_field(c->f, opened);
	put_field(c->f, debug);
	put_field(c->f, alt_id);
	put_field(c->f, alt);
	fputc('\n', c->f);
}

/* @return : MT_EXIT_OK or MT_EXIT_ENV (said). */
static int list_modules(struct run *r, const char *path)
{
	int fd = mt_open_output(path);
	if (fd < 0) {
		mt_error("cannot create '%s': %s", path, mt_open_output_strerror(errno));
		return MT_EXIT_ENV;
	}
	struct list_ctx c = { .f = fdopen(fd, "w") };
	if (!c.f) {
		close(fd);
		return mt_error("out of memory"), MT_EXIT_ENV;
	}
	fputs("# mt-unwind modules 1\n", c.f);
	mt_unwind_modules_each(r->modules, list_module, &c);
	int bad = ferror(c.f);
	if (fclose(c.f) != 0 || bad) {
		mt_error("cannot write '%s': %s", path, strerror(errno));
		return MT_EXIT_ENV;
	}
	if (c.too_long)
		mt_warn("'%s': %d debug file paths too long: left out", path, c.too_long);
	return MT_EXIT_OK;
}

/* Every record through the replay.  @return : the exit status so far. */
static int read_records(struct run *r)
{
	const char *name = mt_input_name(r->in);
	const struct mt_unwind_events_stats *est = mt_unwind_events_stats(r->events);
	size_t map_len;
	const void *map = mt_perf_reader_mapping(r->reader, &map_len);
	struct mt_unwind_prefault *prefault = mt_unwind_prefault_start(map, map_len,
									!r->o->decode_only);
	struct mt_progress progress;
	mt_progress_init(&progress, mt_prog(), mt_progress_input_size(mt_input_fd(r->in)),
			 r->o->quiet);
	int at_offsets = mt_input_rereadable(r->in), status = MT_EXIT_OK, rc;
	unsigned long nr_items = 0;
	struct mt_perf_item it;
	for (;;) {
		rc = mt_perf_reader_next(r->reader, &it);
		if (rc < 0 && !mt_perf_reader_fatal(r->reader)) {
			/* A record whose size holds and whose content does not
			 * (an id no attr has, fields past its end): counted,
			 * named (the first few), and reading goes on after it. */
			if (est->undecodable < 10)
				mt_error("'%s': %s: skipped", name, mt_perf_reader_error(r->reader));
			mt_unwind_events_undecodable(r->events);
			continue;
		}
		if (rc != 1)
			break;
		if (it.kind == MT_PERF_ITEM_RECORD)
			mt_unwind_replay_record(r->replay, &it, map, map_len);
		mt_unwind_emit_check(&r->emit);
		if (r->emit.out_error || nomem(r))
			break;
		/* The mapping is needed from the oldest record the replay
		 * still holds in it on (checked every 64 records). */
		if ((++nr_items & 63) == 0 && map)
			mt_unwind_prefault_done(prefault,
						mt_unwind_replay_keep_from(r->replay, it.offset));
		if ((nr_items & 1023) == 0)
			mt_progress_update(&progress, at_offsets ? it.offset
					   : mt_input_bytes_read(r->in));
	}
	if (rc < 0) {
		mt_error("'%s': %s", name, mt_perf_reader_error(r->reader));
		status = rc == MT_PERF_EIO || rc == MT_PERF_ENOMEM ? MT_EXIT_ENV : MT_EXIT_DATA;
	}
	mt_unwind_prefault_stop(prefault);
	mt_progress_release(&progress);
	return status;
}

int main(int argc, char **argv)
{
	mt_cli_init("mt-unwind", argv);
	struct opts o = { 0 };
	struct run r = { .o = &o };
	int status, out_fd = 1, rc;
	/* Heaps grow 16 MiB past each request (address space only: pages are
	 * touched as they are used): fewer mprotect calls in the threads' heaps. */
	mallopt(M_TOP_PAD, 16 << 20);
	if (parse_args(argc, argv, &o) != 0) {
		status = mt_usage_hint("mt-unwind [options] IN");
		goto out;
	}
	if ((rc = mt_input_open(&r.in, o.input)) != 0) {
		mt_error("%s", rc == MT_PERF_ENOMEM ? "out of memory" : mt_input_error(r.in));
		status = MT_EXIT_ENV;
		goto out;
	}
	if (o.output && !o.decode_only && mt_input_kind(r.in) != MT_FILE_EMPTY &&
	    mt_input_kind(r.in) != MT_FILE_UNWIND_TEXT) {
		out_fd = mt_open_output(o.output);
		if (out_fd < 0) {
			mt_error("cannot create '%s': %s", o.output, mt_open_output_strerror(errno));
			status = MT_EXIT_ENV;
			goto out;
		}
	}
	if ((status = setup(&r, out_fd)) != MT_EXIT_OK)
		goto out;
	double t0 = now();
	if (!o.decode_only) {
		struct mt_unwind_out *out = mt_unwind_emit_out(&r.emit);
		mt_unwind_out_str(out, "# mt-unwind 1\n# input: ");
		mt_unwind_out_str(out, mt_input_name(r.in));
		mt_unwind_out_str(out, "\n");
	}
	status = read_records(&r);
	mt_unwind_replay_finish(r.replay);
	mt_unwind_events_finish(r.events, mt_unwind_replay_last_time(r.replay));
	int out_errno = mt_unwind_emit_finish(&r.emit);
	double secs = now() - t0;
	if (nomem(&r)) {
		mt_error("out of memory");
		status = MT_EXIT_ENV;
		goto out;
	}
	if (out_errno) {
		mt_error("cannot write '%s': %s", o.output ? o.output : "<stdout>",
			 strerror(out_errno));
		status = MT_EXIT_ENV;
		goto out;
	}
	struct mtz_reader *mtz = mt_input_mtz(r.in);
	if (mtz && mtz_reader_damage(mtz)) {
		mt_error("'%s': damaged: %" PRIu64 " parts could not be read",
			 mt_input_name(r.in), mtz_reader_damage(mtz));
		if (!status)
			status = MT_EXIT_DATA;
	}
	if ((mt_unwind_events_stats(r.events)->undecodable ||
	     mt_unwind_replay_undecodable(r.replay) || mt_unwind_replay_data_error(r.replay)) &&
	    !status)
		status = MT_EXIT_DATA;
	/* after the output: a reader of it need not wait */
	r.scopes = mt_unwind_modules_save_scopes(r.modules);
	mt_unwind_modules_save_rules(r.modules, &r.rules);
	struct mt_unwind_summary sum = {
		.emit = &r.emit,
		.events = mt_unwind_events_stats(r.events),
		.replay = mt_unwind_replay_stats(r.replay),
		.replay_undecodable = mt_unwind_replay_undecodable(r.replay),
		.modules = r.modules,
		.scopes = &r.scopes,
		.rules = &r.rules,
		.quiet = o.quiet,
	};
	mt_unwind_summary_print(&sum, secs);
	if (o.list_modules && !o.decode_only && (rc = list_modules(&r, o.list_modules)) != 0)
		status = rc;
	if (o.output && out_fd != 1) {
		int e = close(out_fd);
		out_fd = 1;
		if (e != 0) {
			mt_error("cannot write '%s': %s", o.output, strerror(errno));
			status = MT_EXIT_ENV;
		}
	}
out:
	mt_unwind_emit_release(&r.emit);	/* ends the writer thread */
	if (out_fd > 1)
		close(out_fd);
	if (!FREE_AT_EXIT)
		return status;
	mt_unwind_events_free(r.events);
	mt_unwind_replay_free(r.replay);
	mt_unwind_maps_free(r.maps);
	mt_unwind_modules_free(r.modules);
	mt_perf_features_free(r.features);
	mt_input_free(r.in);
	free(o.pids.v);
	free(o.tids.v);
	return status;
}
