/* The markers of the built libmt-sampler.so start with an instruction the
 * kernel's uprobe code emulates (push %rbp, 0x55), not single-steps, and
 * mt-capture finds them through their ELF file offsets. */
#include "capture/capture_elf.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void first_bytes(const char *fn, unsigned char *b, size_t n)
{
	const char *build = getenv("MT_BUILD");
	char so[4096], msg[MT_CAPTURE_MSGLEN];
	struct mt_capture_err err = { 0 };
	uint64_t off;
	snprintf(so, sizeof(so), "%s/libmt-sampler.so", build ? build : "build");
	cr_assert_eq(mt_capture_elf_func_offset(so, fn, &off, &err), 0, "%s: %s", fn,
		     mt_capture_err_message(&err, msg, sizeof(msg)));
	int fd = open(so, O_RDONLY);
	cr_assert_geq(fd, 0, "cannot open %s", so);
	cr_assert_eq(pread(fd, b, n, (off_t)off), (ssize_t)n);
	close(fd);
}

Test(sampler_markers, start_with_an_emulated_push_rbp)
{
	static const char *const markers[] = {
		"mt_sampler_mark_alloc", "mt_sampler_mark_free", "mt_sampler_mark_totals",
		"mt_sampler_mark_tick",
	};
	for (size_t i = 0; i < sizeof(markers) / sizeof(markers[0]); i++) {
		unsigned char b[4];
		first_bytes(markers[i], b, sizeof(b));
		/* push %rbp; pop %rbp; cmpl $0, mt_sampler_ring_on(%rip) */
		cr_expect(b[0] == 0x55 && b[1] == 0x5d && b[2] == 0x83 && b[3] == 0x3d,
			  "%s starts %02x %02x %02x %02x", markers[i], b[0], b[1], b[2], b[3]);
	}
}

Test(sampler_markers, the_interposed_malloc_is_found_and_a_missing_name_is_not)
{
	unsigned char b[1];
	struct mt_capture_err err = { 0 };
	char msg[MT_CAPTURE_MSGLEN];
	uint64_t off;
	first_bytes("malloc", b, 1);
	const char *build = getenv("MT_BUILD");
	char so[4096];
	snprintf(so, sizeof(so), "%s/libmt-sampler.so", build ? build : "build");
	cr_expect_eq(mt_capture_elf_func_offset(so, "no_such_function_here", &off, &err), 1);
	cr_expect_eq(mt_capture_elf_func_offset("/nonexistent.so", "malloc", &off, &err),
		     MT_CAPTURE_EOPEN);
	cr_expect_str_eq(mt_capture_err_message(&err, msg, sizeof(msg)),
			 "cannot open '/nonexistent.so': No such file or directory");
	cr_expect_eq(mt_capture_elf_func_offset("/nonexistent.so", "malloc", &off, NULL),
		     MT_CAPTURE_EOPEN);
}
