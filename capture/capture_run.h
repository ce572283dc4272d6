/* The capture run: start or attach, open the events with libperf, drain the
 * ring buffers into a perf pipe stream, stop cleanly. */
#ifndef MT_CAPTURE_RUN_H
#define MT_CAPTURE_RUN_H

#include "capture/capture_err.h"
#include "capture/capture_user.h"

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

struct mt_capture_events;
struct mt_capture_ring;

struct mt_capture_run_opts {
	struct mt_capture_events *evs;
	pid_t pid;		/* -p: attach to this running process, or 0 */
	char *const *argv;	/* else run this command */
	char *const *env;	/* NAME=VALUE strings to set in the command, NULL-ended */
	unsigned mmap_pages;	/* per CPU ring, a power of two */
	struct mt_capture_ring *ring;	/* sample mode's ring, or NULL */
	int out_fd;		/* closed by mt_capture_run once the stream is complete */
	const char *out_name;
	/* The file whose code the capture needs the command to run (the
	 * sampler, or trace mode's probed copy), as the kernel names it in
	 * MMAP records: its mappings are counted (st->watch_maps); NULL: none. */
	const char *watch;
	/* When watch is a private copy (trace mode; --no-ring's sampler), the
	 * file it copies: MMAP records name it instead (the copy is deleted at
	 * the end; its bytes and build-id are the original's).  NULL: none. */
	const char *watch_as;
	/* Whom the command runs as (capture_user.h), or NULL: as we do. */
	const struct mt_capture_user *user;
	/* Set by the SIGINT/SIGTERM handlers: how many arrived, the last one. */
	const volatile sig_atomic_t *stops, *stop_signal;
};

struct mt_capture_stats {
	uint64_t samples;	/* SAMPLE records written */
	uint64_t lost;		/* samples lost: in LOST records of the kernel's rings and
				 * of the sample ring (dropped, or abandoned by their writer) */
	uint64_t records;	/* records written, samples included */
	uint64_t bytes;		/* of the stream written */
	uint64_t unfollowed;	/* -p with uprobes: threads/children created meanwhile */
	uint64_t watch_maps;	/* executable mappings of o->watch seen */
	uint64_t ring_abandoned;	/* sample ring: records whose writer stopped midway */
	uint64_t ring_unread;	/* sample ring: bytes held back by an incomplete record, at the end */
	uint64_t ring_gap_bytes;	/* sample ring: bytes of writers that died before
					 * their first store, read past */
	int ring_damaged;	/* sample ring: an impossible record stopped the reading */
	double seconds;
	int status;		/* the command's wait status (launch mode) */
	int exited;		/* status is valid */
	int detached;		/* ended by a second signal, without waiting for the command */
	int signalled;		/* ended by a stop signal (-p: the first) */
	pid_t pid;		/* launch mode: the command's pid (0 before it was started) */
	int killed;		/* detached: the command was sent SIGKILL */
	int kill_errno;		/* detached: SIGKILL could not be sent (errno), or 0 */
};

/* Open the events of o->evs on the command o->argv (started here, enabled
 * at its exec) or on every thread of o->pid, write the stream to o->out_fd
 * until the command exits, pid disappears or a stop signal comes, and fill
 * *st.  The first stop signal is passed on to a launched command and
 * capture goes on until it exits; a second one ends the capture at once:
 * the stream is completed, then the command is sent SIGKILL and not
 * waited for (st->detached; st->killed, st->kill_errno, or st->exited
 * when it had exited meanwhile).  With -p the
 * first signal ends the capture and the process runs on.
 * o->out_fd is closed in every case; the stream is complete in every case
 * where the output could be written.  o and what it points to must live
 * until the call returns; o->evs's attrs are changed (see capture_run.c).
 * @return : 0; or, before the command ran (st->exited 0; a command started
 * and never exec'd is waited for): MT_CAPTURE_ENOTFOUND, ECANTRUN (its exec
 * failed with sys_errno), ESTART, EPERM, EEVENTOPEN, ENOPMU, EMMAP, EMLOCK,
 * EIDS, ETOOMANY, ENOMEM, ESYS, the codes of mt_capture_proc_synthesize and
 * mt_capture_proc_threads (-p); or MT_CAPTURE_EWRITE, also after the
 * command ran (then st->exited and st->status say how it ended).  err is
 * filled on failure. */
int mt_capture_run(const struct mt_capture_run_opts *o, struct mt_capture_stats *st,
		   struct mt_capture_err *err);

#endif
