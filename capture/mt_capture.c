/* mt-capture: what the options ask for set up around mt_capture_run(), the
 * report after it, and the exit status. */
#include "capture/capture_err.h"
#include "capture/capture_events.h"
#include "capture/capture_files.h"
#include "capture/capture_keep.h"
#include "capture/capture_opts.h"
#include "capture/capture_ring.h"
#include "capture/capture_run.h"
#include "capture/capture_user.h"
#include "common/cli.h"
#include "common/trust.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The sample ring's size in --mmap-pages units (8 MiB by default): one
 * ring for all CPUs. */
#define RING_PAGES 4

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

/* What main sets up for the run, and removes after it. */
struct setup {
	struct mt_capture_events *evs;
	struct mt_capture_ring *ring;	/* sample mode with a command, else NULL */
	char *env[8];		/* NAME=VALUE for the command, malloc'd, NULL-ended */
	/* The file the events probe or the command preloads: the sampler, or
	 * a private copy of it or of the probed library. */
	char path[PATH_MAX];
	char orig[PATH_MAX];	/* the sampler found, or trace mode's libc */
	char tmpdir[PATH_MAX];	/* the private copy's directory, or "" */
	const char *probed;	/* trace mode with a command: the library asked for */
	struct mt_capture_user user;	/* whom the command runs as */
	pid_t holder;		/* the sample ring's holder for user (or 0) */
	int holder_release;
};

/* What main made.  Static: reachable when mt_die exits, and by the handler
 * below. */
static struct setup made;

/* The private copy goes, whichever way mt-capture ends (the mappings of a
 * removed copy stay valid). */
static void remove_copy(void)
{
	if (made.tmpdir[0]) {
		unlink(made.path);
		rmdir(made.tmpdir);
		made.tmpdir[0] = 0;
	}
}

/* The exit status for a library error, as env(1): 127 the command was
 * not found, 126 it cannot be run, 125 mt-capture itself failed. */
static enum mt_exit failed(int code)
{
	return code == MT_CAPTURE_ENOTFOUND ? MT_EXIT_NOT_FOUND :
	       code == MT_CAPTURE_ECANTRUN ? MT_EXIT_CANNOT_RUN : MT_EXIT_CAPTURE_FAILED;
}

static noreturn void die_err(const struct mt_capture_err *err)
{
	char msg[MT_CAPTURE_MSGLEN];
	mt_die(failed(err->code), "%s", mt_capture_err_message(err, msg, sizeof(msg)));
}

/* Where private copies go (capture_files.h), said once when not $TMPDIR. */
static const char *copy_base(void)
{
	char why[PATH_MAX * 2 + 128];
	const char *base = mt_capture_copy_base(why, sizeof(why));
	if (*why)
		mt_warn("%s", why);
	return base;
}

/* Sample mode: the sampler's markers, its environment and the sample ring. */
static void setup_sample(const struct mt_capture_opts *o, struct setup *s)
{
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN];
	if (o->pid) {
		if (mt_capture_find_mapped(o->pid, "libmt-sampler", s->path, sizeof(s->path)))
			mt_die(MT_EXIT_CAPTURE_FAILED, "process %d does not preload libmt-sampler.so: "
			       "use --mode trace", (int)o->pid);
	} else if (mt_capture_find_sampler(s->orig, &err)) {
		die_err(&err);
	} else if (!o->no_ring && !s->user.change) {
		/* No uprobe on it: the sampler itself, which stays after the
		 * capture for mt-unwind to read. */
		snprintf(s->path, sizeof(s->path), "%s", s->orig);
	} else {
		/* --no-ring's uprobes fire only in processes that map the copy;
		 * a command run as another user may not reach the sampler where
		 * it is (a build tree under root's 0700 directory): it maps the
		 * copy, which the stream names as the original. */
		if (mt_capture_private_copy(s->orig, copy_base(), s->tmpdir, s->path, &err))
			die_err(&err);
	}
	/* So that rebuilding or upgrading mt leaves this capture readable
	 * (capture_keep.h). */
	if (mt_capture_keep_by_build_id(o->pid ? s->path : s->orig, &err))
		mt_warn("%s", mt_capture_err_message(&err, msg, sizeof(msg)));
	int ring = o->cmd && !o->no_ring;
	if (mt_capture_events_sample(s->evs, s->path, o->stack_size, ring, &err))
		die_err(&err);
	if (!o->cmd)
		return;
	const char *old = getenv("LD_PRELOAD");
	if (asprintf(&s->env[0], "LD_PRELOAD=%s%s%s", s->path, old && *old ? ":" : "",
		     old ? old : "") < 0 ||
	    asprintf(&s->env[1], "MT_SAMPLER_RATE=%" PRIu64, o->rate) < 0 ||
	    (o->seeded && asprintf(&s->env[2], "MT_SAMPLER_SEED=%" PRIu64, o->seed) < 0) ||
	    /* The first image's stream (capture/sampler.c, "process images"):
	     * what it starts unseen mixes in its pid. */
	    (o->seeded && !(s->env[3] = strdup("MT_SAMPLER_STREAM=0000000000000000"))))
		mt_die(MT_EXIT_CAPTURE_FAILED, "out of memory");
	int n = o->seeded ? 4 : 2;
	/* --no-timeline: no ticker thread (capture/sampler.c, "the timeline") */
	if (o->no_timeline && !(s->env[n++] = strdup("MT_SAMPLER_TICK=0")))
		mt_die(MT_EXIT_CAPTURE_FAILED, "out of memory");
	if (!ring)
		return;
	/* The sample ring: RING_PAGES times the per-CPU ring, and room for 32
	 * samples and 64 KiB at least. */
	size_t size = RING_PAGES * o->mmap_pages * (size_t)sysconf(_SC_PAGESIZE);
	while (size < 32 * ((size_t)o->stack_size + 512) || size < 65536)
		size *= 2;
	char **ring_env = &s->env[n];
	if (mt_capture_ring_new(&s->ring, size, o->stack_size, !o->no_wait, ring_env, &err))
		die_err(&err);
	if (!s->user.change)
		return;
	/* The command cannot open root's descriptors: a process of its user's
	 * holds the ring for it. */
	if ((s->holder = mt_capture_user_hold(&s->user, mt_capture_ring_fd(s->ring),
					      &s->holder_release)) < 0) {
		mt_capture_err_set(&err, MT_CAPTURE_EUSER, errno, s->user.name, NULL);
		die_err(&err);
	}
	free(*ring_env);
	if (!(*ring_env = mt_capture_ring_env(s->ring, s->holder)))
		mt_die(MT_EXIT_CAPTURE_FAILED, "out of memory");
}

/* Trace mode: probes on the allocator, through a private copy of it when
 * mt-capture starts the command. */
static void setup_trace(const struct mt_capture_opts *o, struct setup *s)
{
	struct mt_capture_err err = { 0 };
	const char *lib = o->lib;
	if (!lib) {
		if (mt_capture_find_mapped(o->pid, "libc.so", s->orig, sizeof(s->orig)) &&
		    mt_capture_find_mapped(o->pid, "libc-", s->orig, sizeof(s->orig)))
			mt_die(MT_EXIT_CAPTURE_FAILED, "cannot find the libc%s; use --lib PATH",
			       o->pid ? " of that process" : "");
		lib = s->orig;
	}
	if (o->cmd) {
		/* The command finds our copy first in its library path; a static
		 * program given as --lib runs as the copy itself. */
		char real_lib[PATH_MAX] = "", real_cmd[PATH_MAX];
		int is_cmd = realpath(lib, real_lib) && strchr(o->cmd[0], '/') &&
			     realpath(o->cmd[0], real_cmd) && !strcmp(real_lib, real_cmd);
		if (mt_capture_private_copy(lib, copy_base(), s->tmpdir, s->path, &err))
			die_err(&err);
		const char *old = getenv("LD_LIBRARY_PATH");
		if (is_cmd)
			o->cmd[0] = s->path;
		else if (asprintf(&s->env[0], "LD_LIBRARY_PATH=%s%s%s", s->tmpdir,
				  old && *old ? ":" : "", old ? old : "") < 0)
			mt_die(MT_EXIT_CAPTURE_FAILED, "out of memory");
		else if (real_lib[0])
			s->env[1] = mt_capture_preload_the_copy(real_lib, s->path);
		s->probed = lib;
		lib = s->path;
	}
	if (mt_capture_events_trace(s->evs, lib, o->stack_size, o->count ? o->count : 1, &err))
		die_err(&err);
}

/* The output: -o FILE, else stdout (not a terminal).  @return : its fd. */
static int open_output(const struct mt_capture_opts *o, const char **name)
{
	*name = "stdout";
	if (o->output && strcmp(o->output, "-")) {
		int fd = mt_open_output(o->output);
		if (fd < 0)
			mt_die(MT_EXIT_CAPTURE_FAILED, "cannot create '%s': %s", o->output,
			       mt_open_output_strerror(errno));
		*name = o->output;
		return fd;
	}
	if (isatty(1))
		mt_die(MT_EXIT_CAPTURE_FAILED, "refusing to write a binary stream to a terminal: "
		       "use -o FILE or a pipe");
	return 1;
}

static void handle_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, NULL);
	sigaction(SIGURG, &sa, NULL);	/* the sample ring is half full (sample_ring.h) */
	signal(SIGPIPE, SIG_IGN);
}

/* The lines on stderr after the capture: what it got, and what it missed.
 * watch: the file the command had to map (NULL: none was watched);
 * write_failed: the stream could not be written (which is said after). */
static void report(const struct mt_capture_opts *o, const struct setup *s,
		   const struct mt_capture_stats *st, uint64_t waited_ns, const char *watch,
		   int write_failed)
{
	/* The closing line: a report, not an error. */
	fprintf(stderr, "%s: %" PRIu64 " samples, %" PRIu64 " lost, %" PRIu64 " bytes, %.3f s%s\n",
		mt_prog(), st->samples, st->lost, st->bytes, st->seconds,
		!st->lost ? "" : o->no_wait ?
		" (samples lost: without --no-wait the program waits for room)" :
		" (samples lost: raise --mmap-pages, or --rate in sample mode)");
	if (waited_ns >= 1000000)
		fprintf(stderr, "%s: the program's threads waited %.0f ms in all for room in the "
			"sample ring (--no-wait drops samples instead)\n", mt_prog(),
			(double)waited_ns / 1e6);
	if (st->ring_abandoned || st->ring_unread || st->ring_gap_bytes)
		mt_error("sample ring: %" PRIu64 " records abandoned by their writer, %" PRIu64
			 " bytes never completed, %" PRIu64 " bytes read past (their writer died "
			 "before writing, or the program wrote over them)", st->ring_abandoned,
			 st->ring_unread, st->ring_gap_bytes);
	if (st->ring_damaged && !write_failed)
		mt_error("the sample ring was written over (by the program?): its records were read "
			 "no further, and what they held is lost");
	if (watch && st->exited && !st->watch_maps && o->mode == MT_CAPTURE_SAMPLE)
		mt_error("no process of the command loaded the sampler (%s), so nothing was sampled: "
			 "a static program, or one that clears LD_PRELOAD, cannot be sampled (for a "
			 "static one: --mode trace --lib PROGRAM)", watch);
	else if (watch && st->exited && !st->watch_maps)
		mt_error("no process of the command mapped the probed copy of %s, so no allocator "
			 "call was seen: the command does not load it, or loads it by its path "
			 "(LD_PRELOAD set in the command, dlopen of a path, DT_RPATH), which bypasses "
			 "the copy that LD_LIBRARY_PATH puts first; preload it by name, or set "
			 "LD_PRELOAD for mt-capture itself", s->probed);
	if (st->unfollowed)
		mt_error("%" PRIu64 " threads or processes started after attaching were not followed "
			 "(uprobe events cannot be inherited into a running process)", st->unfollowed);
}

/* After the stream is complete: what became of the command or process
 * when a signal ended the capture before it did. */
static void said_stop(const struct mt_capture_opts *o, const struct mt_capture_stats *st)
{
	if (o->pid && st->signalled)
		fprintf(stderr, "%s: %s: capture ended; process %d left running\n", mt_prog(),
			stop_signal == SIGTERM ? "SIGTERM" : "SIGINT", (int)o->pid);
	else if (st->detached && st->killed)
		fprintf(stderr, "%s: second signal: capture ended; killed '%s' (pid %d)\n", mt_prog(),
			o->cmd[0], (int)st->pid);
	else if (st->detached && st->kill_errno)
		mt_error("second signal: capture ended; cannot kill '%s' (pid %d): %s; it is left "
			 "running", o->cmd[0], (int)st->pid, strerror(st->kill_errno));
	else if (st->detached && st->exited)
		fprintf(stderr, "%s: second signal: capture ended; '%s' (pid %d) had exited\n",
			mt_prog(), o->cmd[0], (int)st->pid);
}

/* What was lost, in words ("" when nothing was) into buf. */
static const char *losses(const struct mt_capture_stats *st, char *buf, size_t len)
{
	size_t n = 0;
	buf[0] = 0;
	if (st->lost)
		n += (size_t)snprintf(buf + n, len - n, "%" PRIu64 " samples lost", st->lost);
	if (st->ring_unread && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu64 " bytes of the sample ring never "
				      "completed", n ? ", " : "", st->ring_unread);
	if (st->ring_gap_bytes && n < len)
		n += (size_t)snprintf(buf + n, len - n, "%s%" PRIu64 " bytes of the sample ring read "
				      "past", n ? ", " : "", st->ring_gap_bytes);
	if (st->ring_damaged && n < len)
		snprintf(buf + n, len - n, "%sthe sample ring's records after it was written over",
			 n ? ", " : "");
	return buf;
}

/* As env(1) and timeout(1): the command's status (128+N for a signal N)
 * when the capture succeeded, else 125 with a message that says why and
 * what the command's status was.  err: the run's failure, if any. */
static int exit_status(const struct mt_capture_opts *o, const struct mt_capture_stats *st,
		       const struct mt_capture_err *err)
{
	int status = st->detached ? 128 + (int)stop_signal :
		     !st->exited ? 0 :
		     WIFEXITED(st->status) ? WEXITSTATUS(st->status) : 128 + WTERMSIG(st->status);
	char msg[MT_CAPTURE_MSGLEN], lost[512];
	if (err->code) {	/* the stream could not be written */
		mt_error("%s", mt_capture_err_message(err, msg, sizeof(msg)));
		if (st->exited)
			mt_die(MT_EXIT_CAPTURE_FAILED, "the capture failed after the command ran: exit "
			       "status 125, not the command's %d", status);
		exit(MT_EXIT_CAPTURE_FAILED);
	}
	if (o->strict && *losses(st, lost, sizeof(lost)))
		mt_die(MT_EXIT_CAPTURE_FAILED, "--strict: the capture lost data (%s): exit status "
		       "125, not %s%d", lost, st->exited ? "the command's " : "", status);
	return status;
}

int main(int argc, char **argv)
{
	mt_cli_init("mt-capture", argv);
	struct mt_capture_opts o;
	int parsed = mt_capture_opts_parse(argc, argv, &o);
	if (parsed > 0)
		return MT_EXIT_OK;
	if (parsed < 0) {	/* said why */
		mt_usage_hint("mt-capture [options] [--] COMMAND [ARGS...]");
		return MT_EXIT_CAPTURE_FAILED;
	}
	struct mt_capture_err err = { 0 };
	atexit(remove_copy);
	if (o.cmd && mt_capture_command_check(o.cmd[0], &err))
		die_err(&err);
	if (mt_capture_user_choose(o.user, o.as_root, &made.user, &err))
		die_err(&err);
	if (made.user.change && !o.user)
		mt_info("running the command as %s (uid %u), who ran sudo (--as-root keeps root)",
			made.user.name, (unsigned)made.user.uid);
	if (mt_capture_events_new(&made.evs))
		mt_die(MT_EXIT_CAPTURE_FAILED, "out of memory");
	if (o.mode == MT_CAPTURE_SAMPLE)
		setup_sample(&o, &made);
	else if (o.mode == MT_CAPTURE_TRACE)
		setup_trace(&o, &made);
	else if (mt_capture_events_named(made.evs, o.event ? o.event : "cpu-clock", o.stack_size,
					 o.freq, o.count, &err))
		die_err(&err);
	const char *out_name;
	int fd = open_output(&o, &out_name);
	handle_signals();

	/* The file the command must map for anything to be seen: the sampler
	 * (sample mode) or the probed copy (trace mode), by its kernel name. */
	char watch[PATH_MAX], watch_as[PATH_MAX];
	int watched = o.cmd && o.mode != MT_CAPTURE_EVENT && realpath(made.path, watch);
	/* A private copy is deleted at the end: the stream names the original. */
	const char *copied = o.mode == MT_CAPTURE_SAMPLE ? made.orig : made.probed;
	int renamed = watched && made.tmpdir[0] && copied && realpath(copied, watch_as);
	struct mt_capture_run_opts ro = {
		.evs = made.evs, .pid = o.pid, .argv = o.cmd, .env = made.env,
		.mmap_pages = o.mmap_pages, .ring = made.ring, .out_fd = fd, .out_name = out_name,
		.stops = &stops, .stop_signal = &stop_signal, .watch = watched ? watch : NULL,
		.watch_as = renamed ? watch_as : NULL, .user = &made.user,
	};
	struct mt_capture_stats st;
	int rc = mt_capture_run(&ro, &st, &err);
	uint64_t waited_ns = made.ring ? mt_capture_ring_waited_ns(made.ring) : 0;
	for (int i = 0; made.env[i]; i++)
		free(made.env[i]);
	if (made.holder > 0)
		mt_capture_user_release(made.holder, made.holder_release);
	mt_capture_ring_free(made.ring);
	mt_capture_events_free(made.evs);
	remove_copy();
	if (rc && rc != MT_CAPTURE_EWRITE)
		die_err(&err);	/* the command did not run */
	report(&o, &made, &st, waited_ns, watched ? watch : NULL, rc != 0);
	said_stop(&o, &st);
	return exit_status(&o, &st, &err);
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
