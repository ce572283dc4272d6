/* A progress line on stderr for long runs: bytes done / total, rate, ETA.
 *
 * Shown only when stderr is a terminal, the caller did not ask for quiet,
 * and the work has already taken MT_PROGRESS_DELAY_MS: short runs stay
 * silent.  The environment variable of the same name (milliseconds) overrides
 * the delay, e.g. 0 in tests.  Redrawn at most every MT_PROGRESS_PERIOD_MS, erased at the end.
 * Like everything in common/ it never exits; it prints only to the terminal
 * it was asked to draw on.
 */
#ifndef MT_PROGRESS_H
#define MT_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#define MT_PROGRESS_DELAY_MS 2000
#define MT_PROGRESS_PERIOD_MS 250

struct mt_progress {
	FILE *tty;		/* NULL: disabled */
	const char *label;	/* e.g. "mt-encode" */
	uint64_t total;		/* 0 when unknown (a pipe) */
	uint64_t start_ns, next_ns;
	int shown;
};

/* Starts the clock.  label must outlive p; total is the input size in bytes
 * or 0 if unknown; quiet (or stderr not a terminal) disables drawing.
 * Reads the environment's MT_PROGRESS_DELAY_MS (see above) when drawing. */
void mt_progress_init(struct mt_progress *p, const char *label, uint64_t total, int quiet);

/* Reports done bytes; cheap enough to call per record (one clock read
 * every 4096 calls at most would be cheaper still, so callers may batch). */
void mt_progress_update(struct mt_progress *p, uint64_t done);

/* Erases the line if one was drawn. */
void mt_progress_release(struct mt_progress *p);

/* @return : the size of the regular file at fd, or 0 (pipe, error). */
uint64_t mt_progress_input_size(int fd);

#endif
