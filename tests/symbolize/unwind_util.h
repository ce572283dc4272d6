/* Helpers shared by the symbolize unit tests. */
#ifndef UNWIND_TEST_UTIL_H
#define UNWIND_TEST_UTIL_H

#include <stdint.h>

#include "symbolize/module.h"

/* Path of a built fixture: $MT_FIXTURES/name (default build/fixtures). */
const char *ut_fixture(const char *name);

/* The address of the best symbol called name in m, 0 when absent. */
uint64_t ut_symbol(struct mt_unwind_module *m, const char *name);

/* Address and size of section name in the ELF file path; 0 when absent. */
uint64_t ut_section(const char *path, const char *name, uint64_t *size);

#endif
