/* Fuzz target: mt-unwind, whole, on any input (a perf stream, a perf.data
 * file or an .mtz file).  The program's main() is built under another name
 * (tests/fuzz/build.mk) and run in-process on a memfd holding the input,
 * output to /dev/null.  With seeds recorded from the test fixtures, the
 * MMAP records name real ELF files on this machine: hostile registers and
 * stack dumps are unwound through real CFI and symbolised.
 * Input: byte 0 holds options, the rest is the file.
 *   bit 0: --addrs; bit 1: --no-inline; bit 2: --srcline; bit 3: --decode-only;
 *   bit 4: --max-depth 4; bit 5: --no-demangle; bit 6: --tid 1
 * It must end without a crash, a hang or a sanitizer report (its exit
 * status may say the input was bad).  `make fuzz-run` gives it inputs of
 * 8 KiB at most (a few samples): larger ones ran 10 times slower and
 * reached no further. */
#include "tests/fuzz/fuzz.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The debug cache of this process (see below), removed at its end. */
static char cache[] = "/tmp/mt-fuzz-cache-XXXXXX";
static int have_cache = -1;

static int unlink_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void cache_remove(void)
{
	nftw(cache, unlink_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned opt = data[0];
	int fd = mt_fuzz_memfd("fuzz-unwind", data + 1, size - 1);
	if (fd < 0)
		return 0;
	/* Set up once: libc's debug file (zlib-compressed DWARF in Debian's
	 * packages) is inflated into a debug cache of this process's own on
	 * the first run that needs it, and read from there afterwards;
	 * without, every run inflated it again (about 40 ms: 2 runs a
	 * second on a loaded machine). */
	if (have_cache < 0 && (have_cache = mkdtemp(cache) != NULL))
		atexit(cache_remove);
	const char *opts[16];
	int n = 0;
	if (have_cache) {
		opts[n++] = "--debug-cache";
		opts[n++] = cache;
	}
	static const char *const flags[] = { "--addrs", "--no-inline", "--srcline",
					     "--decode-only" };
	for (unsigned i = 0; i < 4; i++)
		if (opt & 1u << i)
			opts[n++] = flags[i];
	if (opt & 16) {
		opts[n++] = "--max-depth";
		opts[n++] = "4";
	}
	if (opt & 32)
		opts[n++] = "--no-demangle";
	if (opt & 64) {
		opts[n++] = "--tid";
		opts[n++] = "1";
	}
	opts[n] = NULL;
	mt_fuzz_unwind(fd, opts);
	close(fd);
	return 0;
}
