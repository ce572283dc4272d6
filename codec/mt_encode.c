/* mt-encode: perf stream (pipe or perf.data) to .mtz and back (-d). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "codec/mtz.h"
#include "codec/perf_stream.h"
#include "common/prealloc.h"
#include "common/cli.h"
#include "common/filekind.h"
#include "common/progress.h"
#include "common/trust.h"
#include "common/io.h"


static void usage(FILE *f)
{
	fprintf(f,
"usage: mt-encode [options] [IN]         perf stream or perf.data -> .mtz\n"
"       mt-encode -d [options] [IN]      .mtz -> the original bytes (also: mt-decode)\n"
"\n"
"IN defaults to stdin ('-'); output goes to stdout unless -o is given.\n"
"\n"
"options:\n"
"  -o, --output FILE    write to FILE instead of stdout\n"
"  -d, --decode         decode an .mtz back to the perf stream, byte for byte\n"
"      --raw            no delta coding of stacks, zstd only (kill switch)\n"
"  -l, --level N        zstd level for the coded sections, 1..19 (default 9)\n"
"      --frame-size N   bytes of input per frame, 4096..67108864 (default\n"
"                       33554432); smaller frames lose less on damage\n"
"  -T, --threads N      frames encoded (or decoded) in parallel, 0..8\n"
"                       (default 2, decoding 1; 0: no worker threads)\n"
"      --hash-bits N    bits of each stack's check hash, 64 (default) or 32:\n"
"                       32 saves 4 bytes per sample, and a wrongly rebuilt\n"
"                       stack then escapes its check once in 2^32\n"
"      --stats          print detailed statistics on stderr\n"
"      --status         when stderr is a terminal, a status line at most once a\n"
"                       second: elapsed, samples, bytes in and written, lost\n"
"                       (in place of the progress line; mt record uses it)\n"
"  -q, --quiet          no summary line, no progress\n"
"  -f, --force          write to a terminal anyway\n"
"  -h, --help           this help\n"
"\n"
"exit status:\n"
"  0  success\n"
"  1  data problem: input rejected, records that do not parse (kept as they\n"
"     are), or damaged/truncated frames skipped\n"
"  2  usage error\n"
"  3  environment: cannot open, create or write a file\n");
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double mb(uint64_t b)
{
	return (double)b / 1e6;
}

/* @return : the output's fd (stdout for none or "-": main refused a
 * terminal), or -1 (reported). */
static int open_output(const char *path)
{
	if (!path || strcmp(path, "-") == 0)
		return STDOUT_FILENO;
	int fd = mt_open_output(path);
	if (fd < 0)
		mt_error("cannot create '%s': %s", path, mt_open_output_strerror(errno));
	return fd;
}

/* Close an output open_output opened.  @return : status, or MT_EXIT_ENV when
 * the close reports an error no write did. */
static int close_output(const char *path, int fd, int status)
{
	if (fd != STDOUT_FILENO && close(fd) != 0 && status == MT_EXIT_OK) {
		mt_error("cannot write '%s': %s", path, strerror(errno));
		return MT_EXIT_ENV;
	}
	return status;
}

struct opts {
	const char *in, *out;
	const char *in_name, *out_name;	/* for messages: "<stdin>", "<stdout>" for "-" */
	int decode, stats, quiet, force, status;
	int threads_set;	/* -T given */
	struct mtz_options mtz;
};

/* Records that do not parse are named up to this many (mt-unwind names as
 * many), then only counted: a stream whose every sample is bad made one
 * line per record. */
#define KEPT_NAMED 10
#define KEPT_NAMED_STR "10"

/* --status: one line on the terminal, redrawn at most once a second:
 * what a capture in progress has produced so far. */
struct status_line {
	int on, shown;
	double t0, next;
	uint64_t lost;		/* events LOST and LOST_SAMPLES records count */
};

static void status_count_lost(struct status_line *sl, const struct mt_perf_item *item)
{
	const struct perf_event_header *h = item->header;
	uint64_t n;
	if (!sl->on || !h)
		return;
	if (h->type == PERF_RECORD_LOST && item->size >= 24)
		memcpy(&n, (const char *)item->data + 16, 8);
	else if (h->type == PERF_RECORD_LOST_SAMPLES && item->size >= 16)
		memcpy(&n, (const char *)item->data + 8, 8);
	else
		return;
	sl->lost += n;
}

static void status_draw(struct status_line *sl, const struct mtz_writer *w, int last)
{
	double t = now();
	if (!sl->on || (!last && t < sl->next))
		return;
	sl->next = t + 1.0;
	if (last) {
		if (sl->shown)
			fputs("\r\033[K", stderr);
		sl->shown = 0;
		return;
	}
	struct mtz_stats st;
	mtz_writer_stats(w, &st);
	sl->shown = 1;
	fprintf(stderr, "\r%s: %.0fs, %llu samples, %.1f MB in, %.1f MB written, %llu lost\033[K",
		mt_prog(), t - sl->t0, (unsigned long long)st.samples, mb(st.bytes_in),
		mb(st.bytes_out), (unsigned long long)sl->lost);
	fflush(stderr);
}

/* The output is created once the input has opened as what it should be:
 * an input refused at once leaves no empty file behind, and an existing
 * file is not truncated for nothing. */
static int encode(const struct opts *o)
{
	struct mt_perf_reader *pr = NULL;
	struct mtz_writer *w = NULL;
	int status = MT_EXIT_OK, rc;
	double t0 = now();

	if ((rc = mt_perf_reader_open(&pr, o->in))) {
		const char *msg = mt_perf_reader_error(NULL);
		if (rc == MT_PERF_EIO) {	/* errno kept */
			mt_error("cannot %s '%s': %s", strncmp(msg, "cannot open", 11) == 0 ?
				 "open" : "read", o->in_name, strerror(errno));
			return MT_EXIT_ENV;
		}
		mt_error("'%s': %s", o->in_name, *msg ? msg : mt_perf_strerror(rc));
		return MT_EXIT_DATA;
	}
	if (*mt_perf_reader_warning(pr))
		mt_warn("'%s': %s", o->in_name, mt_perf_reader_warning(pr));
	int ofd = open_output(o->out);
	if (ofd < 0) {
		mt_perf_reader_free(pr);
		return MT_EXIT_ENV;
	}
	if ((rc = mtz_writer_new(&w, ofd, o->out_name, &o->mtz))) {
		mt_error("%s", mtz_strerror(rc));
		mt_perf_reader_free(pr);
		return close_output(o->out, ofd, rc == MTZ_ENOMEM ? MT_EXIT_ENV : MT_EXIT_USAGE);
	}
	struct mt_progress prog_line;
	uint64_t total = 0;
	if (strcmp(o->in, "-") != 0) {
		int fd = open(o->in, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			total = mt_progress_input_size(fd);
			close(fd);
		}
	} else {
		total = mt_progress_input_size(STDIN_FILENO);
	}
	/* the first draw after a second, or MT_PROGRESS_DELAY_MS (tests: 0) */
	const char *delay = getenv("MT_PROGRESS_DELAY_MS");
	struct status_line sl = { .on = o->status && isatty(STDERR_FILENO), .t0 = t0,
				  .next = t0 + (delay && *delay >= '0' && *delay <= '9' ?
						atof(delay) / 1000 : 1.0) };
	mt_progress_init(&prog_line, mt_prog(), total, o->quiet || sl.on);

	struct mt_perf_item item;
	uint64_t kept = 0, n = 0, item_end = 0, salvaged = 0;
	int stopped = 0;
	for (;;) {
		rc = mt_perf_reader_next(pr, &item);
		if (rc == 0)
			break;
		if (rc < 0) {
			mt_progress_release(&prog_line);
			status_draw(&sl, w, 1);
			status = MT_EXIT_DATA;
			if (mt_perf_reader_fatal(pr)) {	/* the framing is lost */
				mt_error("'%s': %s", o->in_name, mt_perf_reader_error(pr));
				/* The rest as it is: decoding still gives the
				 * input back. */
				if (!salvaged && mt_perf_reader_salvage(pr) == 0) {
					salvaged = item_end;
					continue;
				}
				stopped = 1;
				break;
			}
			/* Its size holds, its content does not: kept as it is,
			 * not delta-coded, so that decoding still gives the
			 * input back. */
			if (kept < KEPT_NAMED)
				mt_error("'%s': %s: kept as it is", o->in_name,
					 mt_perf_reader_error(pr));
			kept++;
		}
		if ((rc = mtz_writer_item(w, pr, &item))) {
			mt_progress_release(&prog_line);
			mt_error("%s", mtz_writer_error(w));
			status = rc == MTZ_EIO ? MT_EXIT_ENV : MT_EXIT_DATA;
			goto out;
		}
		if (!item.unpacked)
			item_end = item.offset + item.size;
		status_count_lost(&sl, &item);
		/* a clock read per 1024 records costs nothing measurable; the
		 * status line wants one per 64 (a slow capture) */
		if ((++n & 1023) == 0)
			mt_progress_update(&prog_line, item.offset);
		if ((n & 63) == 0)
			status_draw(&sl, w, 0);
	}
	mt_progress_release(&prog_line);
	status_draw(&sl, w, 1);
	if ((rc = mtz_writer_finish(w))) {
		mt_error("%s", mtz_writer_error(w));
		status = rc == MTZ_EIO ? MT_EXIT_ENV : MT_EXIT_DATA;
		goto out;
	}
	mt_progress_release(&prog_line);
	if (stopped)
		mt_error("'%s': the input could not be read past the error above: "
			 "the output holds what came before it", o->in_name);
	else if (salvaged)
		mt_error("'%s': the input from offset %llu on, after the error above, "
			 "is kept as it is (not parsed nor delta-coded): decoding gives it back",
			 o->in_name, (unsigned long long)salvaged);
	if (kept)
		mt_error("'%s': %llu record%s could not be parsed and %s kept as "
			 "%s (not delta-coded)%s", o->in_name, (unsigned long long)kept,
			kept == 1 ? "" : "s", kept == 1 ? "is" : "are", kept == 1 ? "it is" : "they are",
			kept > KEPT_NAMED ? "; the first " KEPT_NAMED_STR " are named above" : "");

	struct mtz_stats st;
	mtz_writer_stats(w, &st);
	double secs = now() - t0;
	if (o->stats) {
		mt_info("input        %llu bytes (%s), %llu records, %llu samples",
			(unsigned long long)st.bytes_in,
			mt_perf_reader_format(pr) == MT_PERF_PIPE ? "pipe" : "file",
			(unsigned long long)st.records, (unsigned long long)st.samples);
		mt_info("coded        %llu samples, %llu stack bytes, %llu keyframes, "
			"%llu fallbacks", (unsigned long long)st.coded,
			(unsigned long long)st.stack_bytes, (unsigned long long)st.keyframes,
			(unsigned long long)st.fallbacks);
		mt_info("pad          %llu stack bytes past dyn_size (stale ring bytes), "
			"%.1f%% of them found in earlier output", (unsigned long long)st.pad_bytes,
			st.pad_bytes ? 100.0 * (double)st.pad_matched / (double)st.pad_bytes : 0.0);
		mt_info("output       %llu bytes in %llu frames (%s)",
			(unsigned long long)st.bytes_out, (unsigned long long)st.frames,
			o->mtz.raw ? "raw, zstd only" : "delta + zstd");
		mt_info("per sample   %.1f bytes in, %.1f bytes out",
			st.samples ? (double)st.bytes_in / (double)st.samples : 0.0,
			st.samples ? (double)st.bytes_out / (double)st.samples : 0.0);
	}
	if (!o->quiet)
		mt_info("%llu records, %.1f MB stack in, %.1f MB in, %.2f MB out, "
			"ratio %.1fx, %llu keyframes, %llu fallbacks, %.0f MB/s",
			(unsigned long long)st.records, mb(st.stack_bytes), mb(st.bytes_in),
			mb(st.bytes_out),
			st.bytes_out ? (double)st.bytes_in / (double)st.bytes_out : 0.0,
			(unsigned long long)st.keyframes, (unsigned long long)st.fallbacks,
			secs > 0 ? mb(st.bytes_in) / secs : 0.0);
out:
	mt_progress_release(&prog_line);
	status_draw(&sl, w, 1);
	mtz_writer_free(w);
	mt_perf_reader_free(pr);
	return close_output(o->out, ofd, status);
}

/* Damage reports while decoding: ctx is the progress line, erased first. */
static void warn(void *ctx, const char *msg)
{
	mt_progress_release(ctx);
	mt_error("%s", msg);
}

/* The .mtz input, read through a counter: the progress line shows the
 * bytes of .mtz consumed (the reader reads ahead of what it has decoded). */
struct counted_input {
	int fd;
	uint64_t bytes;
};

static ssize_t counted_read(void *ctx, void *buf, size_t len)
{
	struct counted_input *in = ctx;
	ssize_t n = read(in->fd, buf, len);
	if (n > 0)
		in->bytes += (uint64_t)n;
	return n;
}

static int decode(const struct opts *o)
{
	struct mtz_reader *r = NULL;
	double t0 = now();
	struct counted_input in = { .fd = STDIN_FILENO };
	if (strcmp(o->in, "-") != 0 && (in.fd = open(o->in, O_RDONLY | O_CLOEXEC)) < 0) {
		mt_error("cannot open '%s': %s", o->in_name, strerror(errno));
		return MT_EXIT_ENV;
	}
	int rc = mtz_reader_new(&r, counted_read, &in, o->in_name);
	if (rc) {
		if (rc == MTZ_EIO)
			mt_error("cannot read '%s': %s", o->in_name, strerror(errno));
		else
			mt_error("'%s': %s", o->in_name, mtz_strerror(rc));
		if (in.fd != STDIN_FILENO)
			close(in.fd);
		return rc == MTZ_ENOMEM || rc == MTZ_EIO ? MT_EXIT_ENV : MT_EXIT_DATA;
	}
	int ofd = open_output(o->out);
	if (ofd < 0) {
		mtz_reader_free(r);
		if (in.fd != STDIN_FILENO)
			close(in.fd);
		return MT_EXIT_ENV;
	}
	struct mt_progress prog_line;
	mt_progress_init(&prog_line, mt_prog(), mt_progress_input_size(in.fd), o->quiet);
	mtz_reader_set_warn(r, warn, &prog_line);
	/* One worker by default: this thread writes what it decodes, on the
	 * other core; a second worker took more CPU (fresh buffers) for the
	 * same or a later finish when writing to a file. */
	mtz_reader_set_threads(r, o->threads_set ? o->mtz.threads : 1);
	int status = MT_EXIT_OK;
	struct mt_prealloc ahead;
	mt_prealloc_init(&ahead, ofd);
	for (;;) {
		const void *p;
		ssize_t n = mtz_reader_chunk(r, &p);
		if (n == 0)
			break;
		if (n < 0) {
			mt_progress_release(&prog_line);
			mt_error("%s", mtz_reader_error(r));
			status = errno == ENOMEM ? MT_EXIT_ENV : MT_EXIT_DATA;
			break;
		}
		/* frames are megabytes: one update per chunk is cheap */
		mt_progress_update(&prog_line, in.bytes);
		mt_prealloc_ahead(&ahead, (size_t)n);
		if (mt_write_all(ofd, p, (size_t)n)) {
			int e = errno;
			mt_progress_release(&prog_line);
			mt_error("cannot write '%s': %s", o->out_name, strerror(e));
			status = MT_EXIT_ENV;
			break;
		}
	}
	mt_progress_release(&prog_line);
	mt_prealloc_end(&ahead);
	struct mtz_stats st;
	mtz_reader_stats(r, &st);
	if (status == MT_EXIT_OK && mtz_reader_damage(r))
		status = MT_EXIT_DATA;
	double secs = now() - t0;
	if (st.frames_lost && !st.frames_skipped)
		mt_error("'%s': %llu frame%s lost (%llu bytes of .mtz skipped)", o->in_name,
			 (unsigned long long)st.frames_lost,
			st.frames_lost == 1 ? "" : "s", (unsigned long long)st.bytes_lost);
	else if (st.frames_skipped)
		mt_error("'%s': %llu frame%s lost, %llu skipped as repeated or out of order "
			 "(%llu bytes of .mtz skipped)", o->in_name,
			 (unsigned long long)st.frames_lost, st.frames_lost == 1 ? "" : "s",
			 (unsigned long long)st.frames_skipped, (unsigned long long)st.bytes_lost);
	else if (st.bytes_lost)
		mt_error("'%s': %llu bytes of .mtz skipped", o->in_name,
			 (unsigned long long)st.bytes_lost);
	if (o->stats)
		mt_info("%llu frames intact, %llu samples decoded (%llu keyframes), "
			"%.1f ns per record", (unsigned long long)st.frames,
			(unsigned long long)st.samples, (unsigned long long)st.keyframes,
			st.records ? secs * 1e9 / (double)st.records : 0.0);
	if (!o->quiet)
		mt_info("%llu records, %.2f MB in, %.1f MB out, %llu frames, "
			"%llu lost, %.0f MB/s", (unsigned long long)st.records,
			mb(st.bytes_in), mb(st.bytes_out), (unsigned long long)st.frames,
			(unsigned long long)st.frames_lost, secs > 0 ? mb(st.bytes_out) / secs : 0.0);
	mtz_reader_free(r);
	if (in.fd != STDIN_FILENO)
		close(in.fd);
	return close_output(o->out, ofd, status);
}

static int parse_num(const char *s, long lo, long hi, long *v)
{
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (errno || end == s || *end || x < lo || x > hi)
		return -1;
	*v = x;
	return 0;
}

/* An input of the other direction's kind, or mt-unwind text: said, with
 * what to run instead.  @return : 1 when so (reported), else 0. */
static int wrong_kind(const struct opts *o)
{
	enum mt_file_kind k;
	if (mt_file_kind_peek(o->in, &k) != 0)
		return 0;	/* stdin, or opening it will say why */
	if (k == MT_FILE_EMPTY)
		return mt_error("'%s' is empty", o->in_name), 1;
	if (k == MT_FILE_UNWIND_TEXT)
		return mt_error("'%s' is mt-unwind output: fold it with mt-fold", o->in_name), 1;
	if (k == MT_FILE_FOLDED)
		return mt_error("'%s' is %s: draw it with mt-flamegraph", o->in_name,
				mt_file_kind_str(k)), 1;
	if (!o->decode && k == MT_FILE_MTZ)
		return mt_error("'%s' is an .mtz file already: decode it with mt-decode, or"
				" unwind it with mt-unwind", o->in_name), 1;
	if (o->decode && (k == MT_FILE_PERF_DATA || k == MT_FILE_PERF_PIPE))
		return mt_error("'%s' is %s, not an .mtz file: encode it with mt-encode",
				o->in_name, mt_file_kind_str(k)), 1;
	return 0;
}

int main(int argc, char **argv)
{
	enum { OPT_RAW = 256, OPT_STATS, OPT_FRAME, OPT_HASH_BITS, OPT_STATUS };
	static const struct option longs[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "decode", no_argument, NULL, 'd' },
		{ "raw", no_argument, NULL, OPT_RAW },
		{ "level", required_argument, NULL, 'l' },
		{ "frame-size", required_argument, NULL, OPT_FRAME },
		{ "threads", required_argument, NULL, 'T' },
		{ "hash-bits", required_argument, NULL, OPT_HASH_BITS },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "status", no_argument, NULL, OPT_STATUS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct opts o = { .in = "-" };
	const char *base = strrchr(argv[0], '/');
	base = base ? base + 1 : argv[0];
	mtz_options_init(&o.mtz);
	if (strcmp(base, "mt-decode") == 0) {
		mt_cli_init("mt-decode", argv);
		o.decode = 1;
	} else {
		mt_cli_init("mt-encode", argv);
	}
	const char *synopsis = o.decode ? "mt-decode [options] [IN]" : "mt-encode [options] [IN]";
	int c;
	long v;
	while ((c = getopt_long(argc, argv, "o:dl:T:qfh", longs, NULL)) != -1) {
		switch (c) {
		case 'o': o.out = optarg; break;
		case 'd': o.decode = 1; break;
		case OPT_RAW: o.mtz.raw = 1; break;
		case 'l':
			if (parse_num(optarg, 1, 19, &v)) {
				mt_error("--level wants 1..19, not '%s'", optarg);
				return mt_usage_hint(synopsis);
			}
			o.mtz.level = (int)v;
			break;
		case OPT_FRAME:
			if (parse_num(optarg, 4096, 64L << 20, &v)) {
				mt_error("--frame-size wants 4096..67108864, not '%s'", optarg);
				return mt_usage_hint(synopsis);
			}
			o.mtz.frame_size = (size_t)v;
			break;
		case 'T':
			if (parse_num(optarg, 0, 8, &v)) {
				mt_error("--threads wants 0..8, not '%s'", optarg);
				return mt_usage_hint(synopsis);
			}
			o.mtz.threads = (int)v;
			o.threads_set = 1;
			break;
		case OPT_HASH_BITS:
			if (parse_num(optarg, 32, 64, &v) || (v != 32 && v != 64)) {
				mt_error("--hash-bits wants 32 or 64, not '%s'",
					optarg);
				return mt_usage_hint(synopsis);
			}
			o.mtz.hash_bits = (int)v;
			break;
		case OPT_STATS: o.stats = 1; break;
		case OPT_STATUS: o.status = 1; break;
		case 'q': o.quiet = 1; break;
		case 'f': o.force = 1; break;
		case 'h': usage(stdout); return MT_EXIT_OK;
		default: return mt_usage_hint(synopsis);	/* getopt said why */
		}
	}
	if (argc - optind > 1) {
		mt_error("more than one input given");
		return mt_usage_hint(synopsis);
	}
	if (optind < argc)
		o.in = argv[optind];
	o.in_name = strcmp(o.in, "-") == 0 ? "<stdin>" : o.in;
	o.out_name = !o.out || strcmp(o.out, "-") == 0 ? "<stdout>" : o.out;
	if (wrong_kind(&o))
		return MT_EXIT_DATA;
	/* Binary output to a terminal is refused before any input is read. */
	if ((!o.out || strcmp(o.out, "-") == 0) && !o.force && isatty(STDOUT_FILENO)) {
		mt_error("refusing to write binary data to a terminal "
			"(use -o FILE or -f)");
		return MT_EXIT_USAGE;
	}
	return o.decode ? decode(&o) : encode(&o);
}
