/* roundtrip tests: filled in below. */
#include <criterion/criterion.h>
#include "tests/codec/perf_test_util.h"
