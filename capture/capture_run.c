/* The capture run: start or attach, open the events with libperf, drain the
 * ring buffers into a perf pipe stream, stop cleanly. */
#include "capture/capture.h"
#include "codec/perf_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <perf/core.h>
#include <perf/cpumap.h>
#include <perf/event.h>
#include <perf/evlist.h>
#include <perf/evsel.h>
#include <perf/mmap.h>
#include <perf/threadmap.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FINISHED_ROUND 68	/* PERF_RECORD_FINISHED_ROUND, a perf tool record */

struct run {
	const struct mt_capture_run_opts *o;
	struct mt_capture_stats *st;
	struct perf_evlist *evlist;
	struct perf_evsel *evsel[MT_CAPTURE_MAX_EVENTS];
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads;
	struct mt_perf_writer *w;
	pid_t child;
	int go_fd, err_fd;
	int write_failed;
};

/* libperf's debug output would mix with ours: errors come back as codes. */
static int libperf_quiet(enum libperf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Child side of a launch: wait for the go byte, then exec.  Never returns. */
static void child_exec(const struct mt_capture_run_opts *o, int go_fd, int err_fd)
{
	char c;
	signal(SIGPIPE, SIG_DFL);	/* mt-capture ignores it; the command must not */
	if (read(go_fd, &c, 1) != 1)
		_exit(127);	/* mt-capture gave up before starting us */
	close(go_fd);
	for (char *const *e = o->env; e && *e; e++)
		putenv(*e);
	execvp(o->argv[0], o->argv);
	int e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0) {
	}
	_exit(127);
}

static int launch(struct run *r, char *err)
{
	int go[2], ep[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(ep, O_CLOEXEC)) {
		snprintf(err, MT_CAPTURE_ERRLEN, "pipe: %s", strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, MT_CAPTURE_ERRLEN, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		close(go[1]);
		close(ep[0]);
		child_exec(r->o, go[0], ep[1]);
	}
	close(go[0]);
	close(ep[1]);
	r->child = pid;
	r->go_fd = go[1];
	r->err_fd = ep[0];
	return 0;
}

static int open_events(struct run *r, char *err)
{
	struct mt_capture_events *evs = r->o->evs;
	r->evlist = perf_evlist__new();
	if (!r->evlist) {
		snprintf(err, MT_CAPTURE_ERRLEN, "out of memory");
		return -1;
	}
	for (int i = 0; i < evs->nr; i++) {
		evs->ev[i].attr.enable_on_exec = r->child ? 1 : 0;
		r->evsel[i] = perf_evsel__new(&evs->ev[i].attr);
		if (!r->evsel[i]) {
			snprintf(err, MT_CAPTURE_ERRLEN, "out of memory");
			return -1;
		}
		perf_evlist__add(r->evlist, r->evsel[i]);
	}
	perf_evlist__set_maps(r->evlist, r->cpus, r->threads);
	int rc = perf_evlist__open(r->evlist);
	/* Kernels before 5.12 have no build-id in MMAP2; fall back like perf. */
	if (rc == -EINVAL && perf_evsel__attr(r->evsel[0])->build_id) {
		perf_evsel__attr(r->evsel[0])->build_id = 0;
		rc = perf_evlist__open(r->evlist);
	}
	/* Kernel samples need more privilege than user ones. */
	if ((rc == -EACCES || rc == -EPERM) && !perf_evsel__attr(r->evsel[0])->exclude_kernel &&
	    perf_evsel__attr(r->evsel[0])->type < PERF_TYPE_MAX) {
		for (int i = 0; i < evs->nr; i++)
			perf_evsel__attr(r->evsel[i])->exclude_kernel = 1;
		rc = perf_evlist__open(r->evlist);
	}
	if (rc == -EACCES || rc == -EPERM) {
		snprintf(err, MT_CAPTURE_ERRLEN,
			 "perf_event_open denied: %s (lower /proc/sys/kernel/perf_event_paranoid, "
			 "or grant CAP_PERFMON, e.g. setcap cap_perfmon+ep mt-capture)", strerror(-rc));
		return MT_CAPTURE_EPERM;
	}
	if (rc) {
		snprintf(err, MT_CAPTURE_ERRLEN, "cannot open event '%s' and the others: %s",
			 evs->ev[0].name, strerror(-rc));
		return -1;
	}
	rc = perf_evlist__mmap(r->evlist, (int)r->o->mmap_pages);
	if (rc) {
		snprintf(err, MT_CAPTURE_ERRLEN,
			 "cannot map the ring buffers (%u pages per CPU): %s%s", r->o->mmap_pages,
			 strerror(-rc), rc == -EPERM ? " (see /proc/sys/kernel/perf_event_mlock_kb)" : "");
		return rc == -EPERM ? MT_CAPTURE_EPERM : -1;
	}
	return 0;
}

/* The pipe header, and an attr with its sample ids and a name per event. */
static int write_header(struct run *r, uint64_t *first_id, char *err)
{
	struct mt_capture_events *evs = r->o->evs;
	int ncpu = perf_cpu_map__nr(r->cpus), nthr = perf_thread_map__nr(r->threads);
	uint64_t *ids = calloc((size_t)ncpu * (size_t)nthr, sizeof(*ids));
	int rc = mt_perf_writer_pipe_header(r->w);
	if (!ids) {
		snprintf(err, MT_CAPTURE_ERRLEN, "out of memory");
		return -1;
	}
	for (int i = 0; !rc && i < evs->nr; i++) {
		size_t n = 0;
		for (int c = 0; c < ncpu; c++) {
			for (int t = 0; t < nthr; t++) {
				struct perf_counts_values v = { 0 };
				if (perf_evsel__read(r->evsel[i], c, t, &v) == 0 && v.id)
					ids[n++] = v.id;
			}
		}
		if (!n) {
			snprintf(err, MT_CAPTURE_ERRLEN, "cannot read the sample ids of '%s'",
				 evs->ev[i].name);
			free(ids);
			return -1;
		}
		if (i == 0)
			*first_id = ids[0];
		/* The stream's copy: config1 is a pointer into this process. */
		struct perf_event_attr a = *perf_evsel__attr(r->evsel[i]);
		if (evs->ev[i].path[0])
			a.uprobe_path = 0;
		rc = mt_perf_writer_attr(r->w, &a, ids, n);
		if (!rc)
			rc = mt_perf_writer_event_name(r->w, ids[0], evs->ev[i].name);
	}
	free(ids);
	if (rc) {
		snprintf(err, MT_CAPTURE_ERRLEN, "cannot write '%s': %s", r->o->out_name,
			 mt_perf_strerror(rc));
		return MT_CAPTURE_EWRITE;
	}
	return 0;
}

/* Copy every record waiting in the rings to the output.
 * @return : the number of records copied. */
static uint64_t drain(struct run *r)
{
	uint64_t n = 0;
	struct perf_mmap *map;
	perf_evlist__for_each_mmap(r->evlist, map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		union perf_event *ev;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			if (ev->header.type == PERF_RECORD_SAMPLE)
				r->st->samples++;
			else if (ev->header.type == PERF_RECORD_LOST)
				r->st->lost += ev->lost.lost;
			if (!r->write_failed && mt_perf_writer_record(r->w, &ev->header))
				r->write_failed = 1;
			n++;
			perf_mmap__consume(map);
		}
		perf_mmap__read_done(map);
	}
	if (n && !r->write_failed) {
		struct perf_event_header h = { .type = FINISHED_ROUND, .size = sizeof(h) };
		if (mt_perf_writer_record(r->w, &h) || mt_perf_writer_flush(r->w))
			r->write_failed = 1;
	}
	r->st->records += n;
	return n;
}

static int process_gone(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

int mt_capture_run(const struct mt_capture_run_opts *o, struct mt_capture_stats *st, char *err)
{
	struct run r = { .o = o, .st = st, .go_fd = -1, .err_fd = -1 };
	int rc = -1;
	pid_t *tids = NULL;
	memset(st, 0, sizeof(*st));
	libperf_init(libperf_quiet);	/* also sets its page size */
	double t0 = now();

	if (o->pid) {
		int n = mt_capture_proc_threads(o->pid, &tids, err);
		if (n < 0)
			return -1;
		r.threads = perf_thread_map__new_array(n, tids);
	} else {
		if (launch(&r, err))
			return -1;
		r.threads = perf_thread_map__new_array(1, &r.child);
	}
	r.cpus = perf_cpu_map__new(NULL);
	if (!r.threads || !r.cpus) {
		snprintf(err, MT_CAPTURE_ERRLEN, "out of memory");
		goto out;
	}
	rc = open_events(&r, err);
	if (rc)
		goto out;
	rc = mt_perf_writer_new(&r.w, o->out_fd, o->out_name);
	if (rc) {
		snprintf(err, MT_CAPTURE_ERRLEN, "out of memory");
		rc = -1;
		goto out;
	}
	uint64_t first_id = 0;
	rc = write_header(&r, &first_id, err);
	if (rc)
		goto out;
	if (o->pid) {
		rc = mt_capture_proc_synthesize(r.w, o->pid, first_id, &st->records, err);
		if (rc)
			goto out;
		perf_evlist__enable(r.evlist);
	}
	if (mt_perf_writer_flush(r.w)) {
		snprintf(err, MT_CAPTURE_ERRLEN, "cannot write '%s': %s", o->out_name,
			 mt_perf_writer_error(r.w));
		rc = MT_CAPTURE_EWRITE;
		goto out;
	}
	if (r.child) {
		int e = 0;
		if (write(r.go_fd, "g", 1) != 1) {
			snprintf(err, MT_CAPTURE_ERRLEN, "cannot start the command: %s", strerror(errno));
			rc = -1;
			goto out;
		}
		close(r.go_fd);
		r.go_fd = -1;
		/* EOF: the exec succeeded (the pipe is close-on-exec). */
		ssize_t got;
		while ((got = read(r.err_fd, &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (got == sizeof(e)) {
			snprintf(err, MT_CAPTURE_ERRLEN, "cannot run '%s': %s", o->argv[0], strerror(e));
			waitpid(r.child, NULL, 0);
			r.child = 0;
			rc = MT_CAPTURE_ENOEXEC;
			goto out;
		}
	}

	int stops_seen = 0, done = 0;
	while (!done) {
		perf_evlist__poll(r.evlist, 100);
		drain(&r);
		int stops = *o->stops;
		if (stops != stops_seen) {
			stops_seen = stops;
			if (!r.child)
				break;
			if (stops > 1) {
				st->detached = 1;
				break;
			}
			kill(r.child, *o->stop_signal);
		}
		if (r.child) {
			int status;
			pid_t w = waitpid(r.child, &status, WNOHANG);
			if (w == r.child) {
				st->status = status;
				st->exited = 1;
				r.child = 0;
				done = 1;
			}
		} else if (process_gone(o->pid)) {
			done = 1;
		}
		if (r.write_failed)
			break;
	}
	perf_evlist__disable(r.evlist);
	while (drain(&r))
		;
	if (r.write_failed || mt_perf_writer_flush(r.w)) {
		snprintf(err, MT_CAPTURE_ERRLEN, "cannot write '%s': %s", o->out_name,
			 mt_perf_writer_error(r.w));
		rc = MT_CAPTURE_EWRITE;
	} else {
		rc = 0;
	}
out:
	if (r.child && r.go_fd < 0 && !st->exited && !st->detached) {
		/* Capture ended early: the command carries on; wait for it. */
		int status;
		if (waitpid(r.child, &status, 0) == r.child) {
			st->status = status;
			st->exited = 1;
		}
	} else if (r.child && !st->exited) {
		close(r.go_fd);	/* never started: it exits 127 */
		r.go_fd = -1;
		waitpid(r.child, NULL, 0);
	}
	if (r.go_fd >= 0)
		close(r.go_fd);
	if (r.err_fd >= 0)
		close(r.err_fd);
	if (r.w) {
		st->bytes = mt_perf_writer_bytes(r.w);
		mt_perf_writer_free(r.w);
	}
	if (r.evlist) {
		perf_evlist__munmap(r.evlist);
		perf_evlist__close(r.evlist);
		perf_evlist__delete(r.evlist);	/* deletes the evsels */
	}
	perf_cpu_map__put(r.cpus);
	perf_thread_map__put(r.threads);
	free(tids);
	st->seconds = now() - t0;
	return rc;
}
