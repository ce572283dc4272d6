/* Helpers for the perf stream tests: temp dirs, perf record runs on the
 * perf_small fixture, reading streams from memory. */
#ifndef PERF_TEST_UTIL_H
#define PERF_TEST_UTIL_H

#include "codec/perf_stream.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A fresh directory under $TMPDIR (removed by pt_tmpdir_remove). */
void pt_tmpdir(char *out, size_t len);
void pt_tmpdir_remove(const char *dir);

/* Run `perf record -q ARGS -o OUT -- perf_small DIR/pid` in dir (OUT "-"
 * writes DIR/NAME through stdout, i.e. pipe mode; else DIR/NAME directly).
 * Skips the test when perf_event_open is denied; fails on other errors.
 * @return : the child's pid, read from the pid file the fixture writes. */
pid_t pt_perf_record(const char *dir, const char *args, int pipe_mode, const char *name);

/* Add a uprobe on libc's malloc as a tracefs event; event gets its name,
 * "mtcodecPID:mallocPID" (unique while this process lives).  Skips when
 * uprobes are unavailable. */
void pt_probe_add(char *event, size_t len);
void pt_probe_del(const char *event);

/* The whole file in a malloc'd buffer. */
uint8_t *pt_slurp(const char *path, size_t *len);

/* The fixture's path as the kernel reports it (realpath). */
void pt_fixture_path(char *out, size_t len);

/* A reader over memory, fed at most chunk bytes per read (0: all). */
struct pt_mem {
	const uint8_t *data;
	size_t len, pos, chunk;
};
ssize_t pt_mem_read(void *ctx, void *buf, size_t len);
int pt_mem_reader(struct mt_perf_reader **r, struct pt_mem *m, const void *data,
		  size_t len, size_t chunk);

/* Read every item until the end or an error, at most max_items.
 * @return : the final next() result (0 at a clean end). */
int pt_drain(struct mt_perf_reader *r, size_t max_items, size_t *items);

#endif
