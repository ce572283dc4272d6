/* How the capture library reports errors: one convention for every module
 * in capture/ (libperf's habit, with the subjects git's messages name).
 *
 * A function that can fail returns 0 (or the non-negative result its
 * contract names) on success and a negative MT_CAPTURE_E* code on failure.
 * When it takes a struct mt_capture_err *err, it fills it on failure: the
 * code, the errno behind it (0 when the system gave none), the subject the
 * message names (a path, an event or function name) and, for the messages
 * that need one, a detail (a second name, or the reason when no errno gives
 * it).  err may be NULL: the caller then gets the code alone.  A function
 * without err fails for one reason only, which its code and contract name.
 *
 * The library never prints.  mt_capture_err_message() writes the message
 * for a filled err from its code's entry in the one table (capture_err.c),
 * e.g. "cannot open '/x.so': No such file or directory";
 * mt_capture_strerror() gives that entry's text alone, without a subject.
 * Messages are lowercase, without the program's prefix.
 */
#ifndef MT_CAPTURE_ERR_H
#define MT_CAPTURE_ERR_H

#include <limits.h>
#include <stddef.h>

enum mt_capture_error {
	MT_CAPTURE_OK = 0,
	MT_CAPTURE_ENOMEM = -1,		/* out of memory */
	MT_CAPTURE_ESYS = -2,		/* a system call failed: subject names it */
	MT_CAPTURE_EPERM = -3,		/* perf_event_open denied */
	MT_CAPTURE_ENOTFOUND = -4,	/* the command was not found */
	MT_CAPTURE_ECANTRUN = -5,	/* the command was found and cannot be run */
	MT_CAPTURE_ESTART = -6,		/* the command could not be started */
	MT_CAPTURE_EWRITE = -7,		/* the output failed */
	MT_CAPTURE_EOPEN = -8,		/* a file cannot be opened */
	MT_CAPTURE_ENOPROC = -9,	/* no such process */
	MT_CAPTURE_ENOTHREADS = -10,	/* a process without threads */
	MT_CAPTURE_ENOTELF = -11,	/* not an ELF file */
	MT_CAPTURE_ENOPHDR = -12,	/* an ELF file without program headers */
	MT_CAPTURE_ENOSEGMENT = -13,	/* a symbol outside every loadable segment */
	MT_CAPTURE_ENOUPROBE = -14,	/* the kernel has no uprobe PMU */
	MT_CAPTURE_EUPROBETYPE = -15,	/* the uprobe PMU's type cannot be read */
	MT_CAPTURE_ENOTSAMPLER = -16,	/* the sampler lacks a marker */
	MT_CAPTURE_ENOALLOCATOR = -17,	/* a library without allocator functions */
	MT_CAPTURE_ETOOMANY = -18,	/* too many events */
	MT_CAPTURE_EEVENT = -19,	/* an event name that names none */
	MT_CAPTURE_ETPNAME = -20,	/* not a tracepoint name */
	MT_CAPTURE_ETPUNKNOWN = -21,	/* no such tracepoint */
	MT_CAPTURE_ETPDENIED = -22,	/* tracefs cannot be read */
	MT_CAPTURE_ENOTRACEFS = -23,	/* tracefs is not mounted */
	MT_CAPTURE_EEVENTOPEN = -24,	/* perf_event_open failed */
	MT_CAPTURE_ENOPMU = -25,	/* no hardware counter for the event */
	MT_CAPTURE_EMMAP = -26,		/* the ring buffers cannot be mapped */
	MT_CAPTURE_EMLOCK = -27,	/* the same, beyond perf_event_mlock_kb */
	MT_CAPTURE_EIDS = -28,		/* an event's sample ids cannot be read */
	MT_CAPTURE_ESYNTH = -29,	/* synthesized records cannot be written */
	MT_CAPTURE_ERING = -30,		/* the sample ring cannot be made */
	MT_CAPTURE_EKEEP = -31,		/* the sampler cannot be kept in the cache */
	MT_CAPTURE_ENOSAMPLER = -32,	/* libmt-sampler.so cannot be found */
	MT_CAPTURE_ESAMPLERNAME = -33,	/* the sampler's file has another name */
	MT_CAPTURE_ECOPY = -34,		/* a private copy cannot be made */
	MT_CAPTURE_EUSER = -35,		/* no such user to run the command as */
	MT_CAPTURE_ERRORS = 36		/* how many codes there are, 0 included */
};

struct mt_capture_err {
	int code;		/* MT_CAPTURE_E*, 0 until a failure fills it */
	int sys_errno;		/* the errno behind it, else 0 */
	char subject[PATH_MAX];	/* what failed: a path, an event name, ...; else "" */
	char detail[512];	/* a second name, or the reason when there is no errno */
};

/* The longest message mt_capture_err_message() writes. */
#define MT_CAPTURE_MSGLEN (PATH_MAX + 1024)

/* @return : the table's message for code, without subject ("cannot open a
 * file"); "unknown error" for a code that is none.  Static. */
const char *mt_capture_strerror(int code);

/* Fill err, when it is not NULL: code, sys_errno (0: none), subject and
 * detail (NULL: ""), cut to their fields' size.
 * @return : code, so that `return mt_capture_err_set(...)` reads well. */
int mt_capture_err_set(struct mt_capture_err *err, int code, int sys_errno, const char *subject,
		       const char *detail);

/* The whole message for err into buf (len bytes, MT_CAPTURE_MSGLEN is
 * always enough): its code's entry with the subject, the detail and the
 * errno's text in their places.  @return : buf. */
const char *mt_capture_err_message(const struct mt_capture_err *err, char *buf, size_t len);

#endif
