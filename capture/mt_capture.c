/* mt-capture: options, checks and exit codes around mt_capture_run(). */
#include "capture/capture_err.h"
#include "capture/capture_events.h"
#include "capture/capture_ring.h"
#include "capture/capture_run.h"
#include "common/cli.h"
#include "capture/capture_keep.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The sample ring's size in --mmap-pages units (8 MiB by default): one
 * ring for all CPUs. */
#define RING_PAGES 4

static const char usage_text[] =
	"usage: mt-capture [options] [--] COMMAND [ARGS...]\n"
	"       mt-capture [options] -p PID\n"
	"\n"
	"Capture allocations (or any perf event) with user stacks as a perf pipe\n"
	"stream on stdout, for mt-encode, mt-unwind or `perf script -i`.\n"
	"\n"
	"Modes:\n"
	"  --mode sample   (default with a command) preload libmt-sampler.so: byte-sampled\n"
	"                  allocations with stacks, frees of sampled pointers, exact totals\n"
	"  --mode trace    (default with -p) uprobes on every allocator call in libc or --lib\n"
	"  --mode event    (default with -e) any perf event, e.g. -e cpu-clock -F 999\n"
	"\n"
	"Options:\n"
	"  -o, --output FILE      write the stream to FILE instead of stdout\n"
	"  -p, --pid PID          attach to a running process (trace, event; sample if it\n"
	"                         already preloads libmt-sampler.so)\n"
	"      --rate BYTES       sample mode: mean bytes between sample points (524288);\n"
	"                         1 records every allocation\n"
	"      --seed N           sample mode: reproducible sampling (default: fresh seed)\n"
	"      --lib PATH         trace mode: the allocator to probe (default: libc)\n"
	"  -e, --event NAME       event mode: the event (cpu-clock, task-clock, cycles, ...,\n"
	"                         a tracepoint SYSTEM:EVENT such as sched:sched_switch,\n"
	"                         a raw hardware event rHEX)\n"
	"  -F, --freq HZ          event mode: samples per second (default 999; tracepoints:\n"
	"                         every hit unless -F or -c)\n"
	"  -c, --count N          event mode: a sample every N events; trace mode: record\n"
	"                         every Nth call of each function (no return probes)\n"
	"      --stack-size N     bytes of user stack per sample (8192, at most 65528;\n"
	"                         deep stacks, as clang's, want 65528)\n"
	"      --mmap-pages N     ring buffer pages per CPU, a power of two (512); sample\n"
	"                         mode's sample ring is 4 times that\n"
	"      --no-ring          sample mode: the sampler's events reach mt-capture through\n"
	"                         uprobes on its markers, not a shared ring (slower)\n"
	"      --no-wait          sample mode: when the sample ring is full, drop samples\n"
	"                         (counted as lost) instead of making the program wait\n"
	"  -h, --help             this text\n"
	"\n"
	"Environment: MT_SAMPLER=PATH overrides where libmt-sampler.so is found\n"
	"(default: DIR/../lib/mt, DIR/.. and DIR, DIR holding mt-capture). Sample mode\n"
	"keeps a copy of each sampler build in $XDG_CACHE_HOME/mt/build-id (else\n"
	"~/.cache/mt/build-id), for mt-unwind once mt is rebuilt or upgraded.\n"
	"\n"
	"At the end one line on stderr: samples, lost samples, bytes, duration.\n"
	"Exit status: the command's (128+N when killed by signal N); with -p 0.\n"
	"Errors: 1 output failed or data lost in writing (also: the program wrote\n"
	"over the sample ring), 2 usage (also: COMMAND not found, unknown event or\n"
	"tracepoint), 3 environment (perf_event_open denied: perf_event_paranoid /\n"
	"CAP_PERFMON; sampler or uprobe PMU missing; tracefs unreadable or not mounted).\n";

static volatile sig_atomic_t stops, stop_signal;

/* Interrupts the poll for ring buffer data when the command exits, or when
 * a writer finds the sample ring half full. */
static void on_child(int sig)
{
	(void)sig;
}

static void on_stop(int sig)
{
	stop_signal = sig;
	stops++;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	if (!s || !*s || *s == '-')
		return -1;
	unsigned long long x = strtoull(s, &end, 0);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

/* Is cmd runnable (a path, or a name found in PATH)? */
static int command_exists(const char *cmd, char *why, size_t len)
{
	if (strchr(cmd, '/')) {
		if (access(cmd, X_OK) == 0)
			return 1;
		snprintf(why, len, "%s", strerror(errno));
		return 0;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path;; p++) {
		const char *e = strchrnul(p, ':');
		char full[PATH_MAX];
		snprintf(full, sizeof(full), "%.*s/%s", (int)(e - p), e == p ? "." : p, cmd);
		struct stat sb;
		if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode) && access(full, X_OK) == 0)
			return 1;
		if (!*e)
			break;
		p = e;
	}
	snprintf(why, len, "command not found");
	return 0;
}

/* Our preload library libmt-sampler.so (name): $MT_SAMPLER itself when set
 * (other names: a file in its directory), else beside the binary (installed
 * layout PREFIX/bin + PREFIX/lib/mt, build tree build/bin + build).  out:
 * PATH_MAX bytes, the real path. */
static int find_lib(const char *name, char *out)
{
	const char *env = getenv("MT_SAMPLER");
	if (env && *env) {
		char dir[PATH_MAX], cand[PATH_MAX * 2];
		if (!strcmp(name, "libmt-sampler.so"))
			return realpath(env, out) ? 0 : -1;
		snprintf(dir, sizeof(dir), "%s", env);
		snprintf(cand, sizeof(cand), "%s/%s", dirname(dir), name);
		return realpath(cand, out) ? 0 : -1;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = 0;
	const char *dir = dirname(exe);
	static const char *const rel[] = { "../lib/mt/", "../", "" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		char cand[PATH_MAX * 2];
		snprintf(cand, sizeof(cand), "%s/%s%s", dir, rel[i], name);
		if (access(cand, R_OK) == 0 && realpath(cand, out))
			return 0;
	}
	return -1;
}

/* "LD_PRELOAD=..." for the command: mt-capture's LD_PRELOAD with every
 * entry that is the file real (a realpath) replaced by copy, since a
 * library preloaded by its path would bypass the copy that LD_LIBRARY_PATH
 * puts first.  @return : the string, or NULL when nothing was replaced or
 * memory ran out (then the warning after the capture says what happened). */
static char *preload_the_copy(const char *real, const char *copy)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old || !*old)
		return NULL;
	size_t cap = sizeof("LD_PRELOAD=") + strlen(old) * (strlen(copy) + 1);
	char *out = malloc(cap), *o = out, entry[PATH_MAX], found[PATH_MAX];
	if (!out)
		return NULL;
	o += sprintf(o, "LD_PRELOAD=");
	int replaced = 0, first = 1;
	for (const char *p = old; *p; ) {
		size_t n = strcspn(p, ": ");
		if (n) {
			int same = 0;
			if (n < sizeof(entry)) {
				memcpy(entry, p, n);
				entry[n] = 0;
				same = strchr(entry, '/') && realpath(entry, found) && !strcmp(found, real);
			}
			if (!first)
				*o++ = ':';
			first = 0;
			if (same) {
				o += sprintf(o, "%s", copy);
				replaced = 1;
			} else {	/* as it was, however long */
				memcpy(o, p, n);
				o += n;
				*o = 0;
			}
		}
		p += n;
		p += strspn(p, ": ");
	}
	if (!replaced) {
		free(out);
		return NULL;
	}
	return out;
}

/* A private copy of file in a new directory under $TMPDIR: uprobes on it
 * fire only in the processes mt-capture starts (see capture_run.c).
 * dir and out: PATH_MAX bytes.  @return : 0 or -1 with errno. */
static int private_copy(const char *file, char *dir, char *out)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, PATH_MAX, "%s/mt-capture.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	char copy[PATH_MAX], base[PATH_MAX];
	snprintf(base, sizeof(base), "%s", file);
	snprintf(copy, sizeof(copy), "%.*s/%s", PATH_MAX / 2, dir, basename(base));
	int in = open(file, O_RDONLY | O_CLOEXEC), outfd = -1, rc = -1;
	if (in < 0)
		goto out;
	outfd = open(copy, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	if (outfd < 0)
		goto out;
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(outfd, buf, (size_t)n) != n)
			goto out;
	if (n == 0 && close(outfd) == 0) {
		outfd = -1;
		snprintf(out, PATH_MAX, "%s", copy);
		rc = 0;
	}
out:
	if (in >= 0)
		close(in);
	if (outfd >= 0)
		close(outfd);
	if (rc) {
		int e = errno;
		unlink(copy);
		rmdir(dir);
		errno = e;
	}
	return rc;
}

/* The first mapped file of pid (0: ourselves) whose basename starts with
 * prefix, e.g. the libc or the sampler a running process uses. */
static int find_mapped(pid_t pid, const char *prefix, char *out, size_t len)
{
	char path[64], line[PATH_MAX + 256];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/maps");
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	int rc = -1;
	while (rc && fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');
		if (!name)
			continue;
		name[strcspn(name, "\n")] = 0;
		const char *base = strrchr(name, '/') + 1;
		if (!strncmp(base, prefix, strlen(prefix))) {
			snprintf(out, len, "%s", name);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

int main(int argc, char **argv)
{
	mt_cli_init("mt-capture");
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "mode", required_argument, NULL, 'm' },
		{ "rate", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },
		{ "lib", required_argument, NULL, 'l' },
		{ "event", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "stack-size", required_argument, NULL, 'S' },
		{ "mmap-pages", required_argument, NULL, 'M' },
		{ "no-ring", no_argument, NULL, 'R' },
		{ "no-wait", no_argument, NULL, 'W' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *output = NULL, *mode_s = NULL, *lib = NULL, *event = NULL;
	uint64_t pid = 0, rate = 524288, seed = 0, freq = 0, count = 0, stack = 8192, pages = 512;
	int seeded = 0, no_ring = 0, no_wait = 0, opt;
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN];

	while ((opt = getopt_long(argc, argv, "+o:p:e:F:c:h", longopts, NULL)) != -1) {
		uint64_t *num = NULL;
		switch (opt) {
		case 'o': output = optarg; break;
		case 'm': mode_s = optarg; break;
		case 'l': lib = optarg; break;
		case 'e':
			if (event)	/* one event per capture: not the last one silently */
				mt_die(MT_EXIT_USAGE, "-e given twice ('%s', '%s'): one event per capture",
				       event, optarg);
			event = optarg;
			break;
		case 'p': num = &pid; break;
		case 'r': num = &rate; break;
		case 's': num = &seed; seeded = 1; break;
		case 'F': num = &freq; break;
		case 'c': num = &count; break;
		case 'S': num = &stack; break;
		case 'M': num = &pages; break;
		case 'R': no_ring = 1; break;
		case 'W': no_wait = 1; break;
		case 'h': fputs(usage_text, stdout); return MT_EXIT_OK;
		default: fputs(usage_text, stderr); return MT_EXIT_USAGE;
		}
		if (num && parse_u64(optarg, num))
			mt_die(MT_EXIT_USAGE, "invalid number '%s' for -%s", optarg,
			       (char[]){ (char)(opt < 'a' && opt != 'F' ? '-' : opt), 0 });
	}
	char **cmd = argv + optind;
	int have_cmd = optind < argc;
	if (have_cmd == (pid != 0))
		mt_die(MT_EXIT_USAGE, "give a command or -p PID (one of them)\nTry 'mt-capture --help'.");
	if (pid > INT32_MAX)
		mt_die(MT_EXIT_USAGE, "invalid pid");
	enum mt_capture_mode mode = event ? MT_CAPTURE_EVENT : pid ? MT_CAPTURE_TRACE : MT_CAPTURE_SAMPLE;
	if (mode_s) {
		if (!strcmp(mode_s, "sample"))
			mode = MT_CAPTURE_SAMPLE;
		else if (!strcmp(mode_s, "trace"))
			mode = MT_CAPTURE_TRACE;
		else if (!strcmp(mode_s, "event"))
			mode = MT_CAPTURE_EVENT;
		else
			mt_die(MT_EXIT_USAGE, "unknown mode '%s' (sample, trace or event)", mode_s);
	}
	if (stack > 65528 || stack % 8)
		mt_die(MT_EXIT_USAGE, "--stack-size must be a multiple of 8, at most 65528");
	if (!pages || (pages & (pages - 1)) || pages > (1u << 20))
		mt_die(MT_EXIT_USAGE, "--mmap-pages must be a power of two");
	if (!rate)
		mt_die(MT_EXIT_USAGE, "--rate must be at least 1");
	if (freq && count)
		mt_die(MT_EXIT_USAGE, "-F and -c exclude each other");
	if (event && mode != MT_CAPTURE_EVENT)
		mt_die(MT_EXIT_USAGE, "-e needs --mode event");
	if (freq && mode != MT_CAPTURE_EVENT)
		mt_die(MT_EXIT_USAGE, "-F is for event mode");
	if (count && mode == MT_CAPTURE_SAMPLE)
		mt_die(MT_EXIT_USAGE, "-c is for trace and event modes (sample mode: --rate)");
	if (lib && mode != MT_CAPTURE_TRACE)
		mt_die(MT_EXIT_USAGE, "--lib is for trace mode");
	if (no_ring && (mode != MT_CAPTURE_SAMPLE || pid))
		mt_die(MT_EXIT_USAGE, "--no-ring is for sample mode with a command (-p always uses "
		       "uprobes)");
	if (no_wait && (mode != MT_CAPTURE_SAMPLE || pid || no_ring))
		mt_die(MT_EXIT_USAGE, "--no-wait is for sample mode with a command through the "
		       "sample ring (uprobe events cannot wait)");
	if (have_cmd) {
		char why[128];
		if (!command_exists(cmd[0], why, sizeof(why)))
			mt_die(MT_EXIT_USAGE, "cannot run '%s': %s", cmd[0], why);
	}

	struct mt_capture_events *evs;
	if (mt_capture_events_new(&evs))
		mt_die(MT_EXIT_ENV, "out of memory");
	char path[PATH_MAX], orig[PATH_MAX], tmpdir[PATH_MAX] = "";
	char *env[6] = { NULL };
	const char *probed = NULL;	/* trace mode: the library asked for */
	struct mt_capture_ring *ring = NULL;
	int use_ring = mode == MT_CAPTURE_SAMPLE && have_cmd && !no_ring, rc;
	switch (mode) {
	case MT_CAPTURE_SAMPLE:
		if (pid) {
			if (find_mapped((pid_t)pid, "libmt-sampler", path, sizeof(path)))
				mt_die(MT_EXIT_USAGE,
				       "process %s does not preload libmt-sampler.so: use --mode trace",
				       argv[optind - 1]);
		} else if (find_lib("libmt-sampler.so", orig)) {
			mt_die(MT_EXIT_ENV, "cannot find libmt-sampler.so (set MT_SAMPLER=PATH)");
		} else if (strncmp(strrchr(orig, '/') ? strrchr(orig, '/') + 1 : orig,
				   "libmt-sampler.so", 16)) {
			/* mt-unwind tells the sampler's frames and processes by
			 * the file name mapped: another name would read as a
			 * capture without the sampler. */
			mt_die(MT_EXIT_ENV, "the sampler '%s': its file name must begin with"
			       " libmt-sampler.so", orig);
		} else if (!no_ring) {
			/* No uprobe on it: the sampler itself, which stays after
			 * the capture for mt-unwind to read. */
			snprintf(path, sizeof(path), "%s", orig);
		} else if (private_copy(orig, tmpdir, path)) {
			mt_die(MT_EXIT_ENV, "cannot copy '%s' to a private directory: %s", orig,
			       strerror(errno));
		}
		/* So that rebuilding or upgrading mt leaves this capture
		 * readable (capture_keep.h). */
		if (mt_capture_keep_by_build_id(pid ? path : orig, &err) != 0)
			mt_warn("%s", mt_capture_err_message(&err, msg, sizeof(msg)));
		rc = mt_capture_events_sample(evs, path, (unsigned)stack, use_ring, &err);
		if (!rc && have_cmd) {
			const char *old = getenv("LD_PRELOAD");
			if (asprintf(&env[0], "LD_PRELOAD=%s%s%s", path, old && *old ? ":" : "",
				     old ? old : "") < 0 ||
			    asprintf(&env[1], "MT_SAMPLER_RATE=%" PRIu64, rate) < 0 ||
			    (seeded && asprintf(&env[2], "MT_SAMPLER_SEED=%" PRIu64, seed) < 0) ||
			    /* The first image's stream (capture/sampler.c, "process
			     * images"): what it starts unseen mixes in its pid. */
			    (seeded && !(env[3] = strdup("MT_SAMPLER_STREAM=0000000000000000"))))
				mt_die(MT_EXIT_ENV, "out of memory");
		}
		if (!rc && use_ring) {
			/* The sample ring: RING_PAGES times the per-CPU ring, and
			 * room for 32 samples and 64 KiB at least. */
			size_t ring_size = RING_PAGES * pages * (size_t)sysconf(_SC_PAGESIZE);
			while (ring_size < 32 * (stack + 512) || ring_size < 65536)
				ring_size *= 2;
			if (mt_capture_ring_new(&ring, ring_size, (unsigned)stack, !no_wait,
						&env[seeded ? 4 : 2], &err))
				mt_die(MT_EXIT_ENV, "%s", mt_capture_err_message(&err, msg, sizeof(msg)));
		}
		break;
	case MT_CAPTURE_TRACE:
		if (!lib) {
			if (find_mapped((pid_t)pid, "libc.so", orig, sizeof(orig)) &&
			    find_mapped((pid_t)pid, "libc-", orig, sizeof(orig)))
				mt_die(MT_EXIT_ENV, "cannot find the libc%s; use --lib PATH",
				       pid ? " of that process" : "");
			lib = orig;
		}
		if (have_cmd) {
			/* The command finds our copy first in its library path; a
			 * static program given as --lib runs as the copy itself. */
			char real_lib[PATH_MAX] = "", real_cmd[PATH_MAX];
			int is_cmd = realpath(lib, real_lib) && strchr(cmd[0], '/') &&
				     realpath(cmd[0], real_cmd) && !strcmp(real_lib, real_cmd);
			if (private_copy(lib, tmpdir, path))
				mt_die(MT_EXIT_ENV, "cannot copy '%s' to a private directory: %s", lib,
				       strerror(errno));
			const char *old = getenv("LD_LIBRARY_PATH");
			if (is_cmd)
				cmd[0] = path;
			else if (asprintf(&env[0], "LD_LIBRARY_PATH=%s%s%s", tmpdir,
					  old && *old ? ":" : "", old ? old : "") < 0)
				mt_die(MT_EXIT_ENV, "out of memory");
			else if (real_lib[0])
				env[1] = preload_the_copy(real_lib, path);
			probed = lib;
			lib = path;
		}
		rc = mt_capture_events_trace(evs, lib, (unsigned)stack, count ? count : 1, &err);
		break;
	default:
		rc = mt_capture_events_named(evs, event ? event : "cpu-clock", (unsigned)stack,
					     freq, count, &err);
		break;
	}
	if (rc)
		mt_die(rc == MT_CAPTURE_EEVENT || rc == MT_CAPTURE_ETPNAME ||
		       rc == MT_CAPTURE_ETPUNKNOWN ? MT_EXIT_USAGE : MT_EXIT_ENV, "%s",
		       mt_capture_err_message(&err, msg, sizeof(msg)));

	int fd = 1;
	const char *out_name = "stdout";
	if (output && strcmp(output, "-")) {
		fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			mt_die(MT_EXIT_ENV, "cannot open '%s': %s", output, strerror(errno));
		out_name = output;
	} else if (isatty(1)) {
		mt_die(MT_EXIT_USAGE, "refusing to write a binary stream to a terminal: use -o FILE "
		       "or a pipe");
	}

	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGURG, &sa, NULL);	/* the sample ring is half full (sample_ring.h) */
	signal(SIGPIPE, SIG_IGN);

	/* The file the command must map for anything to be seen: the sampler
	 * (sample mode) or the probed copy (trace mode), by its kernel name. */
	char watch[PATH_MAX], watch_as[PATH_MAX];
	int watched = have_cmd && mode != MT_CAPTURE_EVENT && realpath(path, watch);
	/* A private copy is deleted at the end: the stream names the original. */
	const char *copied = mode == MT_CAPTURE_SAMPLE ? orig : probed;
	int renamed = watched && tmpdir[0] && copied && realpath(copied, watch_as);
	struct mt_capture_run_opts ro = {
		.evs = evs, .pid = (pid_t)pid, .argv = have_cmd ? cmd : NULL, .env = env,
		.mmap_pages = (unsigned)pages, .ring = ring, .out_fd = fd, .out_name = out_name,
		.stops = &stops, .stop_signal = &stop_signal, .watch = watched ? watch : NULL,
		.watch_as = renamed ? watch_as : NULL,
	};
	struct mt_capture_stats st;
	rc = mt_capture_run(&ro, &st, &err);
	uint64_t waited_ns = ring ? mt_capture_ring_waited_ns(ring) : 0;
	for (int i = 0; env[i]; i++)
		free(env[i]);
	mt_capture_ring_free(ring);
	mt_capture_events_free(evs);
	if (tmpdir[0]) {	/* mapped copies stay valid after the unlink */
		unlink(path);
		rmdir(tmpdir);
	}
	if (rc)
		mt_capture_err_message(&err, msg, sizeof(msg));
	if (rc && rc != MT_CAPTURE_EWRITE) {
		mt_die(rc == MT_CAPTURE_ENOTFOUND || rc == MT_CAPTURE_ECANTRUN ? MT_EXIT_USAGE : MT_EXIT_ENV,
		       "%s", msg);
	}
	/* The closing line: a report, not an error. */
	fprintf(stderr, "%s: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " bytes, %.3f s%s\n",
		mt_prog(), st.samples, st.lost, st.bytes, st.seconds,
		!st.lost ? "" : no_wait ? " (samples lost: without --no-wait the program waits for room)"
				       : " (samples lost: raise --mmap-pages, or --rate in sample mode)");
	if (waited_ns >= 1000000)
		fprintf(stderr, "%s: the program's threads waited %.0f ms in all for room in the "
			"sample ring (--no-wait drops samples instead)\n", mt_prog(),
			(double)waited_ns / 1e6);
	if (st.ring_abandoned || st.ring_unread || st.ring_gap_bytes)
		mt_error("sample ring: %" PRIu64 " records abandoned by their "
			"writer, %" PRIu64 " bytes never completed, %" PRIu64 " bytes read past (their "
			"writer died before writing, or the program wrote over them)", st.ring_abandoned,
			st.ring_unread, st.ring_gap_bytes);
	if (st.ring_damaged && !rc)
		mt_error("the sample ring was written over (by the program?): "
			"its records were read no further, and what they held is lost");
	if (watched && st.exited && !st.watch_maps && mode == MT_CAPTURE_SAMPLE)
		mt_error("no process of the command loaded the sampler (%s), so nothing was sampled: "
			 "a static program, or one that clears LD_PRELOAD, cannot be sampled (for a "
			 "static one: --mode trace --lib PROGRAM)", watch);
	else if (watched && st.exited && !st.watch_maps)
		mt_error("no process of the command mapped the probed copy of %s, so no allocator "
			 "call was seen: the command does not load it, or loads it by its path "
			 "(LD_PRELOAD set in the command, dlopen of a path, DT_RPATH), which bypasses "
			 "the copy that LD_LIBRARY_PATH puts first; preload it by name, or set "
			 "LD_PRELOAD for mt-capture itself", probed);
	if (st.unfollowed)
		mt_error("%" PRIu64 " threads or processes started after attaching "
			"were not followed (uprobe events cannot be inherited into a running "
			"process)", st.unfollowed);
	if (rc)
		mt_die(MT_EXIT_DATA, "%s", msg);
	if (st.ring_damaged)
		return MT_EXIT_DATA;
	if (st.detached)
		return 128 + (int)stop_signal;
	if (st.exited)
		return WIFEXITED(st.status) ? WEXITSTATUS(st.status) : 128 + WTERMSIG(st.status);
	return 0;
}

/* Under LeakSanitizer (SANITIZE=1): libperf 6.1's perf_evsel__delete()
 * frees neither the sample ids nor the cpu and thread map references that
 * perf_evlist__set_maps() gave each evsel, and its public API has no call
 * that does.  Those allocations, and only those, are not reported. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:perf_evsel__alloc_id\n"
	       "leak:xyarray__new\n"
	       "leak:perf_thread_map__realloc\n"
	       "leak:perf_cpu_map__alloc\n";
}

const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	return "print_suppressions=0";
}
