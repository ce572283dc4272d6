/* Error messages and record names of the perf stream library. */
#include "codec/perf_internal.h"

#include <stdio.h>

const char *mt_perf_strerror(int err)
{
	switch (err) {
	case MT_PERF_OK: return "success";
	case MT_PERF_EIO: return "read or write failed";
	case MT_PERF_ETRUNC: return "input ends inside a header or record";
	case MT_PERF_EMAGIC: return "not a perf stream or perf.data file";
	case MT_PERF_EFORMAT: return "inconsistent size or offset";
	case MT_PERF_ENOMEM: return "out of memory";
	case MT_PERF_ENOATTR: return "sample matches no attr";
	}
	return "unknown error";
}

static const char *const kernel_names[] = {
	[PERF_RECORD_MMAP] = "MMAP",
	[PERF_RECORD_LOST] = "LOST",
	[PERF_RECORD_COMM] = "COMM",
	[PERF_RECORD_EXIT] = "EXIT",
	[PERF_RECORD_THROTTLE] = "THROTTLE",
	[PERF_RECORD_UNTHROTTLE] = "UNTHROTTLE",
	[PERF_RECORD_FORK] = "FORK",
	[PERF_RECORD_READ] = "READ",
	[PERF_RECORD_SAMPLE] = "SAMPLE",
	[PERF_RECORD_MMAP2] = "MMAP2",
	[PERF_RECORD_AUX] = "AUX",
	[PERF_RECORD_ITRACE_START] = "ITRACE_START",
	[PERF_RECORD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PERF_RECORD_SWITCH] = "SWITCH",
	[PERF_RECORD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PERF_RECORD_NAMESPACES] = "NAMESPACES",
	[PERF_RECORD_KSYMBOL] = "KSYMBOL",
	[PERF_RECORD_BPF_EVENT] = "BPF_EVENT",
	[PERF_RECORD_CGROUP] = "CGROUP",
	[PERF_RECORD_TEXT_POKE] = "TEXT_POKE",
	[PERF_RECORD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
};

static const char *const user_names[] = {
	[MT_PERF_RECORD_HEADER_ATTR - 64] = "HEADER_ATTR",
	[MT_PERF_RECORD_HEADER_EVENT_TYPE - 64] = "HEADER_EVENT_TYPE",
	[MT_PERF_RECORD_HEADER_TRACING_DATA - 64] = "HEADER_TRACING_DATA",
	[MT_PERF_RECORD_HEADER_BUILD_ID - 64] = "HEADER_BUILD_ID",
	[MT_PERF_RECORD_FINISHED_ROUND - 64] = "FINISHED_ROUND",
	[MT_PERF_RECORD_ID_INDEX - 64] = "ID_INDEX",
	[MT_PERF_RECORD_AUXTRACE_INFO - 64] = "AUXTRACE_INFO",
	[MT_PERF_RECORD_AUXTRACE - 64] = "AUXTRACE",
	[MT_PERF_RECORD_AUXTRACE_ERROR - 64] = "AUXTRACE_ERROR",
	[MT_PERF_RECORD_THREAD_MAP - 64] = "THREAD_MAP",
	[MT_PERF_RECORD_CPU_MAP - 64] = "CPU_MAP",
	[MT_PERF_RECORD_STAT_CONFIG - 64] = "STAT_CONFIG",
	[MT_PERF_RECORD_STAT - 64] = "STAT",
	[MT_PERF_RECORD_STAT_ROUND - 64] = "STAT_ROUND",
	[MT_PERF_RECORD_EVENT_UPDATE - 64] = "EVENT_UPDATE",
	[MT_PERF_RECORD_TIME_CONV - 64] = "TIME_CONV",
	[MT_PERF_RECORD_HEADER_FEATURE - 64] = "HEADER_FEATURE",
	[MT_PERF_RECORD_COMPRESSED - 64] = "COMPRESSED",
	[MT_PERF_RECORD_FINISHED_INIT - 64] = "FINISHED_INIT",
	[MT_PERF_RECORD_COMPRESSED2 - 64] = "COMPRESSED2",
};

const char *mt_perf_record_name(uint32_t type)
{
	static char unknown[24];
	const char *name = NULL;

	if (type < sizeof(kernel_names) / sizeof(kernel_names[0]))
		name = kernel_names[type];
	else if (type >= 64 && type - 64 < sizeof(user_names) / sizeof(user_names[0]))
		name = user_names[type - 64];
	if (name)
		return name;
	snprintf(unknown, sizeof(unknown), "type %u", type);
	return unknown;
}

void mt_perf__why(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;

	if (!why || !whylen)
		return;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
}
