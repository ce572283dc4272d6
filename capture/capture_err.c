/* The capture library's error messages (see capture_err.h). */
#include "capture/capture_err.h"

#include <stdio.h>
#include <string.h>

/* Each code's message: text alone (mt_capture_strerror), and the whole
 * message, in which {s} stands for the subject, {d} for the detail and {e}
 * for the errno's text (the detail when there is no errno). */
static const struct {
	const char *text, *format;
} messages[MT_CAPTURE_ERRORS] = {
	[-MT_CAPTURE_OK] = { "success", "success" },
	[-MT_CAPTURE_ENOMEM] = { "out of memory", "out of memory" },
	[-MT_CAPTURE_ESYS] = { "a system call failed", "{s}: {e}" },
	[-MT_CAPTURE_EPERM] = {
		"perf_event_open denied",
		"perf_event_open denied: {e} (lower /proc/sys/kernel/perf_event_paranoid, "
		"or grant CAP_PERFMON, e.g. setcap cap_perfmon+ep mt-capture)" },
	[-MT_CAPTURE_ENOTFOUND] = { "command not found", "cannot run '{s}': {e}" },
	[-MT_CAPTURE_ECANTRUN] = { "the command cannot be run", "cannot run '{s}': {e}" },
	[-MT_CAPTURE_ESTART] = { "cannot start the command", "cannot start the command: {e}" },
	[-MT_CAPTURE_EWRITE] = { "cannot write the output", "cannot write '{s}': {e}" },
	[-MT_CAPTURE_EOPEN] = { "cannot open a file", "cannot open '{s}': {e}" },
	[-MT_CAPTURE_ENOPROC] = { "no such process", "cannot open '{s}': no such process" },
	[-MT_CAPTURE_ENOTHREADS] = { "the process has no threads", "'{s}': no threads" },
	[-MT_CAPTURE_ENOTELF] = { "not an ELF file", "'{s}' is not an ELF file" },
	[-MT_CAPTURE_ENOPHDR] = { "an ELF file without program headers", "'{s}': no program headers" },
	[-MT_CAPTURE_ENOSEGMENT] = {
		"a symbol lies in no loadable segment",
		"'{s}': symbol '{d}' lies in no loadable segment" },
	[-MT_CAPTURE_ENOUPROBE] = {
		"no uprobe PMU",
		"cannot open '{s}': {e} (kernel without CONFIG_UPROBE_EVENTS?)" },
	[-MT_CAPTURE_EUPROBETYPE] = { "the uprobe PMU's type is not a number", "'{s}': not a number" },
	[-MT_CAPTURE_ENOTSAMPLER] = {
		"a marker function is missing: not the mt sampler?",
		"'{s}' has no function {d}: not the mt sampler?" },
	[-MT_CAPTURE_ENOALLOCATOR] = {
		"no allocator function to probe",
		"'{s}' defines none of the allocator functions" },
	[-MT_CAPTURE_ETOOMANY] = { "too many events", "too many events (at most {s})" },
	[-MT_CAPTURE_EEVENT] = {
		"unknown event",
		"unknown event '{s}' (known: {d}, tracepoints SYSTEM:EVENT, raw rHEX)" },
	[-MT_CAPTURE_ETPNAME] = {
		"not a tracepoint name",
		"'{s}' is not a tracepoint name (SYSTEM:EVENT)" },
	[-MT_CAPTURE_ETPUNKNOWN] = {
		"unknown tracepoint",
		"unknown tracepoint '{s}' (see perf list tracepoint, or /sys/kernel/tracing/events)" },
	[-MT_CAPTURE_ETPDENIED] = {
		"tracefs cannot be read",
		"cannot read tracepoint '{s}' in tracefs: permission denied (tracefs wants root)" },
	[-MT_CAPTURE_ENOTRACEFS] = {
		"tracefs is not mounted",
		"cannot find tracepoint '{s}': tracefs is not mounted "
		"(mount -t tracefs nodev /sys/kernel/tracing)" },
	[-MT_CAPTURE_EEVENTOPEN] = { "cannot open an event", "cannot open event '{s}'{d}: {e}" },
	[-MT_CAPTURE_ENOPMU] = {
		"no hardware counter for the event",
		"cannot open event '{s}'{d}: {e} (no hardware counter for it here, a virtual "
		"machine? cpu-clock and task-clock need none)" },
	[-MT_CAPTURE_EMMAP] = {
		"cannot map the ring buffers",
		"cannot map the ring buffers ({s} pages per CPU): {e}" },
	[-MT_CAPTURE_EMLOCK] = {
		"cannot map the ring buffers: perf_event_mlock_kb",
		"cannot map the ring buffers ({s} pages per CPU): {e} "
		"(see /proc/sys/kernel/perf_event_mlock_kb)" },
	[-MT_CAPTURE_EIDS] = { "cannot read an event's sample ids", "cannot read the sample ids of '{s}'" },
	[-MT_CAPTURE_ESYNTH] = {
		"cannot write the synthesized records",
		"cannot write the synthesized records" },
	[-MT_CAPTURE_ERING] = {
		"cannot make the sample ring",
		"cannot make the sample ring ({s} bytes): {e}" },
	[-MT_CAPTURE_EKEEP] = {
		"cannot keep a copy of the sampler in the cache",
		"cannot keep a copy of '{s}' in the cache ({e}): after mt is rebuilt, "
		"mt-unwind will not read this capture's stacks" },
	[-MT_CAPTURE_ENOSAMPLER] = {
		"cannot find libmt-sampler.so",
		"cannot find libmt-sampler.so (set MT_SAMPLER=PATH)" },
	[-MT_CAPTURE_ESAMPLERNAME] = {
		"the sampler's file name must begin with libmt-sampler.so",
		"the sampler '{s}': its file name must begin with libmt-sampler.so" },
	[-MT_CAPTURE_EUSER] = {
		"cannot run the command as that user",
		"cannot run the command as '{s}': {e}" },
	[-MT_CAPTURE_ECOPY] = {
		"cannot make a private copy",
		"cannot copy '{s}' to a private directory: {e}" },
};

static int known(int code)
{
	return code <= 0 && code > -MT_CAPTURE_ERRORS && messages[-code].text;
}

const char *mt_capture_strerror(int code)
{
	return known(code) ? messages[-code].text : "unknown error";
}

int mt_capture_err_set(struct mt_capture_err *err, int code, int sys_errno, const char *subject,
		       const char *detail)
{
	if (err) {
		err->code = code;
		err->sys_errno = sys_errno;
		snprintf(err->subject, sizeof(err->subject), "%s", subject ? subject : "");
		snprintf(err->detail, sizeof(err->detail), "%s", detail ? detail : "");
	}
	return code;
}

const char *mt_capture_err_message(const struct mt_capture_err *err, char *buf, size_t len)
{
	const char *f = known(err->code) ? messages[-err->code].format : "unknown error";
	size_t n = 0;
	if (!len)
		return buf;
	buf[0] = 0;
	for (; *f && n + 1 < len; f++) {
		const char *part = NULL;
		if (f[0] == '{' && f[1] && f[2] == '}') {
			if (f[1] == 's')
				part = err->subject;
			else if (f[1] == 'd')
				part = err->detail;
			else if (f[1] == 'e')
				part = err->sys_errno ? strerror(err->sys_errno) : err->detail;
		}
		if (part) {
			n += (size_t)snprintf(buf + n, len - n, "%s", part);
			f += 2;
		} else {
			buf[n++] = *f;
			buf[n] = 0;
		}
	}
	return buf;
}
