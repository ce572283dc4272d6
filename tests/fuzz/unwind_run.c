/* mt-unwind run in-process for the targets that feed it (unwind_stream,
 * elf_module): its main() is built under another name (build.mk). */
#include "tests/fuzz/fuzz.h"

#include <getopt.h>
#include <stdio.h>

int mt_unwind_main(int argc, char **argv);

void mt_fuzz_unwind(int fd, const char *const *opts)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	char *argv[32] = { "mt-unwind", "-q", "--no-debug-cache", "-o", "/dev/null" };
	int argc = 5;
	while (*opts && argc < 30)
		argv[argc++] = (char *)*opts++;
	argv[argc++] = path;
	argv[argc] = NULL;
	optind = 0;	/* getopt_long starts afresh */
	mt_unwind_main(argc, argv);
}
