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

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned opt = data[0];
	int fd = mt_fuzz_memfd("fuzz-unwind", data + 1, size - 1);
	if (fd < 0)
		return 0;
	const char *opts[16];
	int n = 0;
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
