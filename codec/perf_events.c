/* perf's names of the generic software and hardware events; see perf_stream.h. */
#include "codec/perf_stream.h"

#include <string.h>

static const struct {
	const char *name;
	uint32_t type;
	uint64_t config;
} generic[] = {
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
};

#define NR_GENERIC (sizeof(generic) / sizeof(generic[0]))

int mt_perf_event_by_name(const char *name, uint32_t *type, uint64_t *config)
{
	for (size_t i = 0; i < NR_GENERIC; i++)
		if (!strcmp(generic[i].name, name)) {
			*type = generic[i].type;
			*config = generic[i].config;
			return 1;
		}
	return 0;
}

const char *mt_perf_event_name(uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < NR_GENERIC; i++)
		if (generic[i].type == type && generic[i].config == config)
			return generic[i].name;
	return NULL;
}

const char *mt_perf_event_nth(size_t i)
{
	return i < NR_GENERIC ? generic[i].name : NULL;
}
