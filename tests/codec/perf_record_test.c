/* record tests: filled in below. */
#include <criterion/criterion.h>
#include "tests/codec/perf_test_util.h"

#include <stdio.h>

Test(perf_record, pipe_mode_opens)
{
	char dir[256], path[300];
	struct mt_perf_reader *r;
	size_t n;

	pt_tmpdir(dir, sizeof(dir));
	pt_perf_record(dir, "-e cpu-clock", 1, "p.data");
	snprintf(path, sizeof(path), "%s/p.data", dir);
	cr_assert_eq(mt_perf_reader_open(&r, path), 0, "%s", mt_perf_reader_error(NULL));
	cr_assert_eq(mt_perf_reader_format(r), MT_PERF_PIPE);
	cr_assert_eq(pt_drain(r, SIZE_MAX, &n), 0, "%s", mt_perf_reader_error(r));
	cr_assert_gt(n, 10);
	mt_perf_reader_free(r);
	pt_tmpdir_remove(dir);
}
