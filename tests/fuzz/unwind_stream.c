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
 * status may say the input was bad). */
#include "tests/fuzz/fuzz.h"

#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

int mt_unwind_main(int argc, char **argv);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned opt = data[0];
	int fd = mt_fuzz_memfd("fuzz-unwind", data + 1, size - 1);
	if (fd < 0)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	char *argv[32] = { "mt-unwind", "-q", "--no-debug-cache", "-o", "/dev/null" };
	int argc = 5;
	static const char *const flags[] = { "--addrs", "--no-inline", "--srcline",
					     "--decode-only" };
	for (unsigned i = 0; i < 4; i++)
		if (opt & 1u << i)
			argv[argc++] = (char *)flags[i];
	if (opt & 16) {
		argv[argc++] = "--max-depth";
		argv[argc++] = "4";
	}
	if (opt & 32)
		argv[argc++] = "--no-demangle";
	if (opt & 64) {
		argv[argc++] = "--tid";
		argv[argc++] = "1";
	}
	argv[argc++] = path;
	argv[argc] = NULL;
	optind = 0;	/* getopt_long starts afresh */
	mt_unwind_main(argc, argv);
	close(fd);
	return 0;
}
