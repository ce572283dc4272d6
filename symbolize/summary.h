/* mt-unwind's summary on stderr: what was read and written, how stacks
 * ended, the caches, and every kind of loss, each with its count.  The
 * program's own output (through common/cli.h), like its messages. */
#ifndef MT_UNWIND_SUMMARY_H
#define MT_UNWIND_SUMMARY_H

#include "symbolize/emit.h"
#include "symbolize/events.h"
#include "symbolize/module.h"
#include "symbolize/replay.h"
#include "symbolize/rules_file.h"
#include "symbolize/scopes.h"

struct mt_unwind_summary {
	const struct mt_unwind_emit *emit;
	const struct mt_unwind_events_stats *events;
	const struct mt_unwind_replay_stats *replay;
	uint64_t replay_undecodable;
	struct mt_unwind_modules *modules;	/* build-id mismatches are warned of */
	const struct mt_unwind_scopes_stats *scopes;
	const struct mt_unwind_rules_stats *rules;	/* NULL: none */
	int quiet;				/* the warnings only */
};

/* Print the summary of a run that took secs seconds. */
void mt_unwind_summary_print(const struct mt_unwind_summary *s, double secs);

#endif
