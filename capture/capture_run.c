/* The capture run: start or attach, open the events with libperf, drain the
 * ring buffers into a perf pipe stream, stop cleanly. */
#include "capture/capture_run.h"
#include "capture/capture_events.h"
#include "capture/capture_proc.h"
#include "capture/capture_ring.h"
#include "codec/perf_stream.h"
#include "common/cli.h"

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


/* Event lists: [0] holds the events bound to the command's tasks (all of
 * them when nothing is system-wide); [1] the system-wide uprobes, opened on
 * every CPU for any task (see prepare_uprobes). */
struct run {
	const struct mt_capture_run_opts *o;
	struct mt_capture_stats *st;
	struct perf_evlist *evlist[2];
	int first[2], nr[2];		/* their ranges in o->evs */
	struct perf_evsel *evsel[MT_CAPTURE_MAX_EVENTS];
	struct perf_cpu_map *cpus;
	struct perf_thread_map *threads[2];
	struct mt_perf_writer *w;
	pid_t child;
	int go_fd, err_fd;
	int write_failed;
	/* Each ring's data area (found at its first record, which the kernel
	 * puts at offset 0) and how far it was read: see drain(). */
	struct ring {
		struct perf_mmap *map;
		char *data;
		uint64_t off;
	} rings[2 * 1024];
	int nrings;
	size_t ring_size;		/* bytes of data per ring */
	int tracks_new_tasks;	/* -p with uprobes: count what is not followed */
	struct mt_capture_ring_drain ring_last;	/* the sample ring's last drain */
	int stops_seen;		/* stop signals acted on (*o->stops when caught up) */
};

/* Sample ids of the events written from the sample ring: far above the
 * kernel's, which count up from 1 since boot. */
#define RING_ID_BASE 0x6d74000000000000ULL

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
	/* The stream owns stdout: the command writes its own to stderr (as
	 * under perf record -o -). */
	if (o->out_fd == 1)
		dup2(2, 1);
	if (read(go_fd, &c, 1) != 1)
		_exit(MT_EXIT_CAPTURE_FAILED);	/* mt-capture gave up before starting us */
	close(go_fd);
	int e;
	if (o->user && o->user->change && mt_capture_user_become(o->user) != 0) {
		e = errno;	/* reported as the exec's failure */
		if (write(err_fd, &e, sizeof(e)) < 0) {
		}
		_exit(MT_EXIT_CANNOT_RUN);
	}
	static const char stream_var[] = "MT_SAMPLER_STREAM=";
	static char stream[96];
	for (char *const *e = o->env; e && *e; e++) {
		/* The sampler's stream for the command, addressed to its pid
		 * (capture/sampler.c, "process images"). */
		if (!strncmp(*e, stream_var, sizeof(stream_var) - 1) &&
		    snprintf(stream, sizeof(stream), "%s:%d", *e, (int)getpid()) < (int)sizeof(stream))
			putenv(stream);
		else
			putenv(*e);
	}
	execvp(o->argv[0], o->argv);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0) {
	}
	/* The parent reports e and ignores this status, env(1)'s all the same. */
	_exit(e == ENOENT ? MT_EXIT_NOT_FOUND : MT_EXIT_CANNOT_RUN);
}

/* The output's failure as MT_CAPTURE_EWRITE, with the writer's message
 * (else rc's, an MT_PERF_E* code). */
static int write_error(struct run *r, int rc, struct mt_capture_err *err)
{
	const char *why = r->w ? mt_perf_writer_error(r->w) : "";
	return mt_capture_err_set(err, MT_CAPTURE_EWRITE, 0, r->o->out_name,
				  *why ? why : mt_perf_strerror(rc));
}

static int launch(struct run *r, struct mt_capture_err *err)
{
	int go[2], ep[2];
	if (pipe2(go, O_CLOEXEC))
		return mt_capture_err_set(err, MT_CAPTURE_ESYS, errno, "pipe", NULL);
	if (pipe2(ep, O_CLOEXEC)) {
		mt_capture_err_set(err, MT_CAPTURE_ESYS, errno, "pipe", NULL);
		close(go[0]);
		close(go[1]);
		return MT_CAPTURE_ESYS;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		mt_capture_err_set(err, MT_CAPTURE_ESYS, errno, "fork", NULL);
		for (int i = 0; i < 2; i++) {
			close(go[i]);
			close(ep[i]);
		}
		return MT_CAPTURE_ESYS;
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

/* Uprobe events cannot be inherited cheaply: the kernel builds a new uprobe
 * for every inherited copy, in each new thread and child, and tears it down
 * at its exit, slowly (docs/capture.md, "UPROBES AND THREADS"), and it
 * reads the path again from config1 in the address space of the task that
 * clones.  So:
 * - launched command: the uprobes are system-wide (every CPU, any task) on
 *   a private copy of the probed file that only the command's processes map
 *   (mt-capture preloads or puts it first in the library path), and a dummy
 *   event bound to the command's tasks, inherited, reports their MMAP2,
 *   COMM, FORK and EXIT;
 * - running process (-p): uprobes on its existing threads, not inherited,
 *   behind the same dummy; threads and children it creates later are counted
 *   (FORK records) and reported as not followed. */
static int prepare_uprobes(struct run *r, struct mt_capture_err *err)
{
	struct mt_capture_events *evs = r->o->evs;
	int uprobes = 0, nr = mt_capture_events_nr(evs);
	for (int i = 0; i < nr; i++)
		uprobes += mt_capture_events_uprobe_path(evs, i) != NULL;
	r->first[0] = 0;
	r->nr[0] = nr;
	if (!uprobes)
		return 0;
	int rc = mt_capture_events_track_apart(evs, err);
	if (rc)
		return rc;
	nr = mt_capture_events_nr(evs);
	for (int i = 1; i < nr; i++)
		mt_capture_events_attr(evs, i)->inherit = 0;
	if (r->o->ring) {
		r->nr[0] = 1;	/* the markers' events come from the sample ring */
	} else if (r->o->pid) {
		r->nr[0] = nr;
		r->tracks_new_tasks = 1;
	} else {
		r->nr[0] = 1;
		r->first[1] = 1;
		r->nr[1] = nr - 1;
		for (int i = 1; i < nr; i++)
			mt_capture_events_attr(evs, i)->disabled = 0;	/* only our copy is probed */
	}
	return 0;
}

static int open_list(struct run *r, int l, struct mt_capture_err *err)
{
	struct mt_capture_events *evs = r->o->evs;
	struct perf_evlist *list = r->evlist[l] = perf_evlist__new();
	if (!list)
		return mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
	long page = sysconf(_SC_PAGESIZE);
	int first = r->first[l], n = r->nr[l];
	for (int i = first; i < first + n; i++) {
		struct perf_event_attr *a = mt_capture_events_attr(evs, i);
		a->enable_on_exec = r->child && a->disabled ? 1 : 0;
		/* Wake the reader when a quarter of the ring is used. */
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)((uint64_t)r->o->mmap_pages * (uint64_t)page / 4);
		r->evsel[i] = perf_evsel__new(a);
		if (!r->evsel[i])
			return mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
		perf_evlist__add(list, r->evsel[i]);
	}
	perf_evlist__set_maps(list, r->cpus, r->threads[l]);
	int rc = perf_evlist__open(list);
	/* 6.18 refuses a uprobe with ESRCH while the same one (same file and
	 * offset, e.g. libc's malloc from an earlier capture) is still being torn
	 * down, which is slow (see close_events): wait for it. */
	for (int tries = 0; rc == -ESRCH && tries < 200 && kill(r->o->pid ? r->o->pid : r->child, 0) == 0;
	     tries++) {
		usleep(50000);
		rc = perf_evlist__open(list);
	}
	/* Kernels before 5.12 have no build-id in MMAP2; fall back like perf. */
	if (rc == -EINVAL && perf_evsel__attr(r->evsel[first])->build_id) {
		perf_evsel__attr(r->evsel[first])->build_id = 0;
		rc = perf_evlist__open(list);
	}
	/* Kernel samples need more privilege than user ones. */
	if ((rc == -EACCES || rc == -EPERM) && !perf_evsel__attr(r->evsel[first])->exclude_kernel &&
	    perf_evsel__attr(r->evsel[first])->type < PERF_TYPE_MAX) {
		for (int i = first; i < first + n; i++)
			perf_evsel__attr(r->evsel[i])->exclude_kernel = 1;
		rc = perf_evlist__open(list);
	}
	if (rc == -EACCES || rc == -EPERM)
		return mt_capture_err_set(err, MT_CAPTURE_EPERM, -rc, NULL, NULL);
	if (rc) {
		/* The kernel's answer when the CPU has no such counter (virtual
		 * machines often have none). */
		int no_pmu = (rc == -ENOENT || rc == -EOPNOTSUPP) &&
			     (perf_evsel__attr(r->evsel[first])->type == PERF_TYPE_HARDWARE ||
			      perf_evsel__attr(r->evsel[first])->type == PERF_TYPE_RAW);
		return mt_capture_err_set(err, no_pmu ? MT_CAPTURE_ENOPMU : MT_CAPTURE_EEVENTOPEN, -rc,
					  mt_capture_events_name(evs, first), n > 1 ? " and the others" : "");
	}
	r->ring_size = (size_t)r->o->mmap_pages * (size_t)page;
	rc = perf_evlist__mmap(list, (int)r->o->mmap_pages);
	if (rc) {
		char pages[16];
		snprintf(pages, sizeof(pages), "%u", r->o->mmap_pages);
		return mt_capture_err_set(err, rc == -EPERM ? MT_CAPTURE_EMLOCK : MT_CAPTURE_EMMAP, -rc,
					  pages, NULL);
	}
	return 0;
}

static int open_events(struct run *r, struct mt_capture_err *err)
{
	for (int l = 0; l < 2; l++) {
		if (!r->nr[l])
			continue;
		int rc = open_list(r, l, err);
		if (rc)
			return rc;
	}
	return 0;
}

/* The pipe header, and an attr with its sample ids and a name per event. */
static int write_header(struct run *r, uint64_t *first_id, struct mt_capture_err *err)
{
	struct mt_capture_events *evs = r->o->evs;
	int ncpu = perf_cpu_map__nr(r->cpus), nthr = perf_thread_map__nr(r->threads[0]);
	uint64_t *ids = calloc((size_t)ncpu * (size_t)nthr, sizeof(*ids));
	int rc = mt_perf_writer_pipe_header(r->w);
	if (!ids)
		return mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
	for (int i = 0; !rc && i < mt_capture_events_nr(evs); i++) {
		size_t n = 0;
		const char *name = mt_capture_events_name(evs, i);
		int kind = mt_capture_events_ring_kind(evs, i);
		if (kind) {
			uint64_t id = RING_ID_BASE + (uint64_t)i;
			struct perf_event_attr a = *mt_capture_events_attr(evs, i);
			a.uprobe_path = 0;
			mt_capture_ring_event(r->o->ring, kind, &a, id);
			rc = mt_perf_writer_attr(r->w, &a, &id, 1);
			if (!rc)
				rc = mt_perf_writer_event_name(r->w, id, name);
			continue;
		}
		int threads = i < r->first[0] + r->nr[0] ? nthr : 1;
		for (int c = 0; c < ncpu; c++) {
			for (int t = 0; t < threads; t++) {
				struct perf_counts_values v = { 0 };
				if (perf_evsel__read(r->evsel[i], c, t, &v) == 0 && v.id)
					ids[n++] = v.id;
			}
		}
		if (!n) {
			free(ids);
			return mt_capture_err_set(err, MT_CAPTURE_EIDS, 0, name, NULL);
		}
		if (i == 0)
			*first_id = ids[0];
		/* The stream's copy: config1 is a pointer into this process. */
		struct perf_event_attr a = *perf_evsel__attr(r->evsel[i]);
		if (mt_capture_events_uprobe_path(evs, i))
			a.uprobe_path = 0;
		rc = mt_perf_writer_attr(r->w, &a, ids, n);
		if (!rc)
			rc = mt_perf_writer_event_name(r->w, ids[0], name);
	}
	free(ids);
	return rc ? write_error(r, rc, err) : 0;
}

static struct ring *ring_of(struct run *r, struct perf_mmap *map)
{
	for (int i = 0; i < r->nrings; i++)
		if (r->rings[i].map == map)
			return &r->rings[i];
	if (r->nrings == (int)(sizeof(r->rings) / sizeof(r->rings[0])))
		return NULL;
	r->rings[r->nrings] = (struct ring){ .map = map };
	return &r->rings[r->nrings++];
}

/* Copy record ev, the next one read from ring rg, to the output.  A record
 * that wraps around the ring's end is copied from the ring in its two
 * parts: libperf 6.1 copies such a record into a buffer of its own but
 * only its first sizeof(union perf_event) = 4168 bytes, so a sample with an
 * 8 KiB stack came out with the rest of an earlier one (its stack tail and
 * dyn_size, which then read 0).  @return : 0 or the writer's error. */
static int copy_record(struct run *r, struct ring *rg, union perf_event *ev,
		       const struct perf_event_header *instead)
{
	size_t size = ev->header.size;
	char *p = (char *)ev, *at = p;
	if (rg && !rg->data && rg->off == 0)
		rg->data = p;
	if (rg && rg->data) {
		at = rg->data + (rg->off & (r->ring_size - 1));
		rg->off += size;
	}
	if (instead)
		return mt_perf_writer_record(r->w, instead);
	if (at != p) {
		size_t first = (size_t)(rg->data + r->ring_size - at);
		if (first < size && (p < rg->data || p >= rg->data + r->ring_size))
			return mt_perf_writer_write(r->w, at, first) ||
			       mt_perf_writer_write(r->w, rg->data, size - first);
		rg->data = NULL;	/* cannot happen: stop tracking */
		rg->off = 1;
	}
	return mt_perf_writer_record(r->w, &ev->header);
}

/* The file name of an MMAP or MMAP2 record, else NULL. */
static const char *mmap_filename(const union perf_event *ev)
{
	if (ev->header.type == PERF_RECORD_MMAP2)
		return ev->mmap2.filename;
	if (ev->header.type == PERF_RECORD_MMAP)
		return ev->mmap.filename;
	return NULL;
}

/* Is ev an MMAP or MMAP2 record of the file named watch? */
static int maps_watched(const char *watch, const union perf_event *ev)
{
	const char *name = mmap_filename(ev);
	if (!name)
		return 0;
	const char *end = (const char *)ev + ev->header.size;
	size_t n = strlen(watch);
	return end > name && (size_t)(end - name) > n && !memcmp(name, watch, n + 1);
}

static _Alignas(8) uint8_t renamed[65536];	/* named_as's record (drain's thread) */

/* ev, an MMAP or MMAP2 record (of the private copy), naming file instead,
 * into buf (64 KiB): the name's padding to 8 bytes and the sample_id
 * trailer after it are kept.  @return : the record, or NULL when the new
 * one would not fit a record. */
static const struct perf_event_header *named_as(const union perf_event *ev, const char *file,
						uint8_t *buf)
{
	const char *old = mmap_filename(ev);
	size_t head = (size_t)(old - (const char *)ev), size = ev->header.size;
	size_t tail_at = head + ((strnlen(old, size - head) + 8) & ~(size_t)7);
	size_t name = (strlen(file) + 8) & ~(size_t)7;
	if (tail_at > size || head + name + (size - tail_at) > 65535)
		return NULL;
	size_t nsize = head + name + (size - tail_at);
	memcpy(buf, ev, head);
	memset(buf + head, 0, name);
	memcpy(buf + head, file, strlen(file));
	memcpy(buf + head + name, (const char *)ev + tail_at, size - tail_at);
	((struct perf_event_header *)buf)->size = (uint16_t)nsize;
	return (const struct perf_event_header *)buf;
}

/* Write the sample ring's complete records (see drain).  @return : how many. */
static uint64_t drain_sample_ring(struct run *r)
{
	struct mt_capture_ring_drain *d = &r->ring_last;
	if (mt_capture_ring_drain(r->o->ring, r->w, d))
		r->write_failed = 1;
	r->st->samples += d->samples;
	r->st->lost += d->lost;
	r->st->ring_abandoned += d->abandoned;
	r->st->ring_gap_bytes = d->gap_bytes;
	r->st->ring_damaged = d->damaged;
	return d->samples + (d->lost != 0);
}

/* Copy every record waiting in the rings to the output, the sample ring's
 * first.  A FINISHED_ROUND follows unless a sample ring record reserved
 * before this drain is still being written: it will come in a later round
 * with a time before this round's (docs/formats/sample-ring.md).
 * @return : the number of records copied. */
static uint64_t drain(struct run *r)
{
	uint64_t n = r->o->ring ? drain_sample_ring(r) : 0;
	struct perf_mmap *map;
	for (int l = 0; l < 2; l++) {
	if (!r->evlist[l])
		continue;
	perf_evlist__for_each_mmap(r->evlist[l], map, false) {
		if (perf_mmap__read_init(map) < 0)
			continue;
		struct ring *rg = ring_of(r, map);
		union perf_event *ev;
		while ((ev = perf_mmap__read_event(map)) != NULL) {
			const struct perf_event_header *instead = NULL;
			if (ev->header.type == PERF_RECORD_SAMPLE) {
				r->st->samples++;
			} else if (ev->header.type == PERF_RECORD_LOST) {
				r->st->lost += ev->lost.lost;
			} else if (ev->header.type == PERF_RECORD_FORK && r->tracks_new_tasks) {
				r->st->unfollowed++;
			} else if (r->o->watch && maps_watched(r->o->watch, ev)) {
				r->st->watch_maps++;
				if (r->o->watch_as)
					instead = named_as(ev, r->o->watch_as, renamed);
			}
			if (!r->write_failed && copy_record(r, rg, ev, instead))
				r->write_failed = 1;
			n++;
			perf_mmap__consume(map);
		}
		/* Not perf_mmap__read_done(): libperf 6.1's sets the read
		 * position to the ring's head as it is then, which skips what
		 * the kernel wrote since the last read_event (never read nor
		 * reported lost: mt-unwind counted marker events as dropped when
		 * a write came between the two; it is the "kernel drop without a
		 * LOST record" of docs/formats/capture-events.md).  read_event
		 * leaves the read position after the last record read. */
	}
	}
	if (n && !r->write_failed && !r->ring_last.pending) {
		struct perf_event_header h = { .type = MT_PERF_RECORD_FINISHED_ROUND, .size = sizeof(h) };
		if (mt_perf_writer_record(r->w, &h) || mt_perf_writer_flush(r->w))
			r->write_failed = 1;
	}
	r->st->records += n;
	return n;
}

/* Closing a uprobe event waits for RCU grace periods under a global lock,
 * for each fd in turn, which adds up for trace mode's many events
 * (docs/capture.md, "UPROBES AND THREADS").  The events are disabled and
 * drained by now: a child process takes over our references and pays that
 * in the background, so closing here only drops a reference and mt-capture
 * exits at once. */
static void close_events(struct run *r)
{
	for (int l = 0; l < 2; l++)
		if (r->evlist[l])
			perf_evlist__munmap(r->evlist[l]);
	/* The child must hold its references until ours are gone, or our
	 * close would be the last one and pay: it waits for the pipe's end.
	 * Not with -p: its uprobes are on the process's own libc, and probing
	 * the same file and offset again fails (ESRCH) until they are gone, so
	 * a capture that follows must find them closed. */
	int hold[2] = { -1, -1 };
	pid_t pid = r->o->pid || pipe2(hold, O_CLOEXEC) ? -1 : fork();
	if (pid == 0) {
		char c;
		close(hold[1]);
		int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {	/* hold no pipe of ours open */
			dup2(fd, 0);
			dup2(fd, 1);
			dup2(fd, 2);
		}
		while (read(hold[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);	/* the kernel closes the events */
	}
	if (hold[0] >= 0)
		close(hold[0]);
	for (int l = 0; l < 2; l++)
		if (r->evlist[l])
			perf_evlist__close(r->evlist[l]);
	if (hold[1] >= 0)
		close(hold[1]);
}

/* waitpid() for pid, again when a signal (SIGCHLD, the sample ring's
 * SIGURG) interrupts it.  @return : pid, or -1. */
static pid_t wait_for(pid_t pid, int *status)
{
	pid_t w;
	while ((w = waitpid(pid, status, 0)) < 0 && errno == EINTR)
		;
	return w;
}

/* A second stop signal: the command is not waited for.  It is killed
 * (SIGKILL; its process group when it leads one of its own, else the
 * command's process alone: it shares mt-capture's group otherwise, which
 * may hold the reader of the stream) and reaped if it dies within a
 * second.  One that has exited meanwhile is only reaped. */
static void end_command(struct run *r, struct mt_capture_stats *st)
{
	int status;
	if (waitpid(r->child, &status, WNOHANG) == r->child) {
		st->status = status;
		st->exited = 1;
		r->child = 0;
		return;
	}
	pid_t group = getpgid(r->child);
	int rc = group == r->child && group != getpgrp() ? kill(-group, SIGKILL) : -1;
	if (rc)
		rc = kill(r->child, SIGKILL);
	if (rc) {
		st->kill_errno = errno;
		return;
	}
	st->killed = 1;
	for (int i = 0; i < 100; i++) {
		pid_t w = waitpid(r->child, &status, WNOHANG);
		if (w == r->child || (w < 0 && errno != EINTR)) {
			r->child = 0;
			return;
		}
		usleep(10000);
	}
}

/* Act on the stop signals that came since the last call: the first is
 * passed on to the command, a second one ends the capture (st->detached).
 * @return : 1 when the capture is to end now. */
static int stop_signals(struct run *r, struct mt_capture_stats *st)
{
	int stops = *r->o->stops;
	if (stops == r->stops_seen)
		return 0;
	r->stops_seen = stops;
	if (!r->child)
		return 1;	/* -p: detach */
	if (stops > 1) {
		st->detached = 1;
		return 1;
	}
	kill(r->child, *r->o->stop_signal);
	return 0;
}

/* The end of a capture that ended before the command (the output failed):
 * wait for it, passing it the first stop signal; a second one ends the
 * wait (end_command). */
static void wait_command(struct run *r, struct mt_capture_stats *st)
{
	for (;;) {
		int status;
		pid_t w = waitpid(r->child, &status, 0);
		if (w == r->child) {
			st->status = status;
			st->exited = 1;
			return;
		}
		if (w < 0 && errno != EINTR)
			return;
		if (stop_signals(r, st) && st->detached) {
			end_command(r, st);
			return;
		}
	}
}

static int process_gone(pid_t pid)
{
	return kill(pid, 0) < 0 && errno == ESRCH;
}

int mt_capture_run(const struct mt_capture_run_opts *o, struct mt_capture_stats *st,
		   struct mt_capture_err *err)
{
	struct run r = { .o = o, .st = st, .go_fd = -1, .err_fd = -1 };
	int rc;
	pid_t *tids = NULL;
	memset(st, 0, sizeof(*st));
	libperf_init(libperf_quiet);	/* also sets its page size */
	double t0 = now();

	rc = prepare_uprobes(&r, err);
	if (!rc && o->pid) {
		int n = mt_capture_proc_threads(o->pid, &tids, err);
		rc = n < 0 ? n : 0;
		if (!rc)
			r.threads[0] = perf_thread_map__new_array(n, tids);
	} else if (!rc) {
		rc = launch(&r, err);
		if (!rc)
			r.threads[0] = perf_thread_map__new_array(1, &r.child);
		st->pid = r.child;
	}
	if (rc) {
		close(o->out_fd);
		return rc;
	}
	r.threads[1] = perf_thread_map__new_dummy();	/* pid -1: any task */
	r.cpus = perf_cpu_map__new(NULL);
	if (!r.threads[0] || !r.threads[1] || !r.cpus) {
		rc = mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
		goto out;
	}
	rc = open_events(&r, err);
	if (rc)
		goto out;
	if (mt_perf_writer_new(&r.w, o->out_fd, o->out_name)) {
		rc = mt_capture_err_set(err, MT_CAPTURE_ENOMEM, 0, NULL, NULL);
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
		perf_evlist__enable(r.evlist[0]);
	}
	rc = mt_perf_writer_flush(r.w);
	if (rc) {
		rc = write_error(&r, rc, err);
		goto out;
	}
	if (r.child) {
		int e = 0;
		if (write(r.go_fd, "g", 1) != 1) {
			rc = mt_capture_err_set(err, MT_CAPTURE_ESTART, errno, NULL, NULL);
			goto out;
		}
		close(r.go_fd);
		r.go_fd = -1;
		if (o->ring)
			mt_capture_ring_populate(o->ring);
		/* EOF: the exec succeeded (the pipe is close-on-exec). */
		ssize_t got;
		while ((got = read(r.err_fd, &e, sizeof(e))) < 0 && errno == EINTR)
			;
		if (got == sizeof(e)) {
			/* As env(1): 127 for a command not found, 126 for one
			 * found that cannot run. */
			rc = mt_capture_err_set(err, e == ENOENT ? MT_CAPTURE_ENOTFOUND : MT_CAPTURE_ECANTRUN,
						e, o->argv[0], NULL);
			wait_for(r.child, NULL);
			r.child = 0;
			goto out;
		}
	}

	int done = 0;
	while (!done) {
		/* SIGCHLD (handled by main, no SA_RESTART) ends the wait when the
		 * command exits; the short timeout bounds the race before it. */
		/* The sample ring wakes us only when half full: read it again
		 * soon when it was filling up. */
		int busy = o->ring && r.ring_last.bytes > r.ring_size;
		perf_evlist__poll(r.evlist[r.evlist[1] ? 1 : 0], busy ? 1 : 10);
		drain(&r);
		if (stop_signals(&r, st)) {
			st->signalled = 1;
			break;
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
	for (int l = 0; l < 2; l++)
		if (r.evlist[l])
			perf_evlist__disable(r.evlist[l]);
	/* Like the events, the ring takes nothing more: processes that outlive
	 * the command stop writing, and the drains below come to an end. */
	if (o->ring)
		mt_capture_ring_close(o->ring);
	while (drain(&r))
		;
	/* A record still being written when the command exited (by a process
	 * that outlives it): wait for it; an abandoned one is skipped after a
	 * second.  Records reserved after the last drain are not waited for. */
	for (int i = 0; o->ring && r.ring_last.pending && i < 150; i++) {
		usleep(10000);
		drain(&r);
	}
	st->ring_unread = r.ring_last.pending ? r.ring_last.unread : 0;
	rc = mt_perf_writer_flush(r.w);
	rc = r.write_failed || rc ? write_error(&r, rc ? rc : MT_PERF_EIO, err) : 0;
out:
	if (o->ring)
		mt_capture_ring_close(o->ring);
	if (r.child && st->detached) {
		/* A second signal: the stream is complete (flushed above), the
		 * command is not waited for. */
		end_command(&r, st);
	} else if (r.child && r.go_fd < 0 && !st->exited) {
		/* Capture ended early: the command carries on; wait for it. */
		wait_command(&r, st);
	} else if (r.child && !st->exited) {
		close(r.go_fd);	/* never started: it exits at once */
		r.go_fd = -1;
		wait_for(r.child, NULL);
	}
	if (r.go_fd >= 0)
		close(r.go_fd);
	if (r.err_fd >= 0)
		close(r.err_fd);
	if (r.w) {
		st->bytes = mt_perf_writer_bytes(r.w);
		mt_perf_writer_free(r.w);
	}
	/* The stream is complete: let its reader see the end now, before the
	 * slow teardown of uprobe events. */
	if (close(o->out_fd) && !rc)
		rc = mt_capture_err_set(err, MT_CAPTURE_EWRITE, errno, o->out_name, NULL);
	if (r.evlist[0] || r.evlist[1]) {
		close_events(&r);
		for (int l = 0; l < 2; l++)
			if (r.evlist[l])
				perf_evlist__delete(r.evlist[l]);	/* deletes the evsels */
	}
	perf_cpu_map__put(r.cpus);
	perf_thread_map__put(r.threads[0]);
	perf_thread_map__put(r.threads[1]);
	free(tids);
	st->seconds = now() - t0;
	return rc;
}
