/* Fuzz targets: each file in tests/fuzz defines the libFuzzer entry point
 * below.  `make fuzz` links them with libFuzzer (clang); `make check` links
 * them with replay.c, which runs the saved inputs of tests/fuzz/corpus
 * through them, so every input that once broke a reader stays a test.
 * A target returns 0, and aborts (__builtin_trap) when an invariant fails:
 * the fuzzer and the replay both report that as a crash. */
#ifndef MT_FUZZ_H
#define MT_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant of a target: a crash when it fails. */
#define MT_FUZZ_CHECK(cond)              \
	do {                             \
		if (!(cond))             \
			__builtin_trap(); \
	} while (0)

/* A file descriptor holding a copy of data (a memfd, at offset 0), or -1. */
int mt_fuzz_memfd(const char *name, const void *data, size_t size);

/* Bytes read from memory, at most max at a call when max is not 0 (short
 * reads, as from a pipe): an mt_perf_read_fn, ctx a struct mt_fuzz_source. */
struct mt_fuzz_source {
	const uint8_t *p;
	size_t len, pos, max;
};
ssize_t mt_fuzz_read(void *ctx, void *buf, size_t len);

/* mt-unwind on the file fd holds, output to /dev/null, with the options
 * opts (NULL-terminated) besides -q and --no-debug-cache (unwind_run.c). */
void mt_fuzz_unwind(int fd, const char *const *opts);

#endif
