# symbolize: mt-unwind, its library, tests and fixtures (see GNUmakefile).

UNWIND_SRCS := \
	symbolize/arch_x86_64.c \
	symbolize/batch.c \
	symbolize/cfi.c \
	symbolize/cu.c \
	symbolize/debug_cache.c \
	symbolize/demangle.c \
	symbolize/emit.c \
	symbolize/error.c \
	symbolize/events.c \
	symbolize/hashmap.c \
	symbolize/jobs.c \
	symbolize/maps.c \
	symbolize/module.c \
	symbolize/order.c \
	symbolize/prefault.c \
	symbolize/replay.c \
	symbolize/rule_ranges.c \
	symbolize/rules_file.c \
	symbolize/cache_file.c \
	symbolize/scopes.c \
	symbolize/scopes_file.c \
	symbolize/out.c \
	symbolize/summary.c \
	symbolize/sym.c \
	symbolize/symtab.c \
	symbolize/unwind.c
UNWIND_OBJS := $(patsubst %.c,$(B)/obj/%.o,$(UNWIND_SRCS))
UNWIND_LDLIBS := -ldw -lelf -liberty -lzstd -lstdc++ -lpthread

$(B)/libmtunwind.a: $(UNWIND_OBJS)
LIBS += $(B)/libmtunwind.a

# mt-unwind reads .mtz through the codec's reader (zstd).  debuginfod_gate.o
# defines dlopen for libdw to bind to: an object of its own, not in the library.
UNWIND_MAIN_OBJS := $(B)/obj/symbolize/mt_unwind.o $(B)/obj/symbolize/debuginfod_gate.o
$(B)/bin/mt-unwind: $(UNWIND_MAIN_OBJS) $(B)/libmtunwind.a $(B)/libmtcodec.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(UNWIND_MAIN_OBJS) $(B)/libmtunwind.a \
		$(B)/libmtcodec.a $(B)/libmtcommon.a $(CODEC_LDLIBS) $(UNWIND_LDLIBS) $(LDLIBS)
BINS += $(B)/bin/mt-unwind

# Fixtures with known call paths (tests/e2e/unwind-*.sh check them).
FIXTURE_NAMES += unwind_recursion
FIXTURE_NAMES += unwind_inline
FIXTURE_NAMES += unwind_tailcall
FIXTURE_NAMES += unwind_dlopen
FIXTURE_NAMES += unwind_threads
FIXTURE_NAMES += unwind_cxx
FIXTURE_NAMES += unwind_signal
FIXTURE_NAMES += unwind_realloc
LLD_FIXTURE_NAMES += unwind_recursion unwind_inline unwind_tailcall unwind_dlopen \
	unwind_threads unwind_cxx unwind_signal

# The library unwind_dlopen loads at run time (not linked to it).
build/fixtures/unwind_dlopen_lib.so: tests/fixtures/unwind_dlopen_lib.c | deps-ok
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(FIXTURE_FLAGS) -fPIC -shared -o $@ $<
build/fixtures/unwind_dlopen build/fixtures/unwind_dlopen-fp build/fixtures/unwind_dlopen-lld: \
		build/fixtures/unwind_dlopen_lib.so
FIXTURES += build/fixtures/unwind_dlopen_lib.so

# unwind_inline's DWARF as clang writes it by default (no .debug_aranges),
# and split into a .dwo file (-gsplit-dwarf: build/fixtures/
# unwind_inline-split-unwind_inline.dwo, found through the unit's comp_dir).
build/fixtures/unwind_inline-noaranges: build/fixtures/unwind_inline
	objcopy --remove-section=.debug_aranges $< $@
build/fixtures/unwind_inline-split: tests/fixtures/unwind_inline.c | deps-ok
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(FIXTURE_FLAGS) -fomit-frame-pointer -gsplit-dwarf -o $@ $< -ldl
# and compressed with zstd, which libelf reads only from elfutils 0.189 on.
build/fixtures/unwind_inline-zstd: build/fixtures/unwind_inline
	objcopy --compress-debug-sections=zstd $< $@
# and with a section of 100 MiB of zeros that zstd packs into 3 KiB.
build/fixtures/unwind_inline-bomb: build/fixtures/unwind_inline
	head -c 104857600 /dev/zero >$@.bin
	objcopy --add-section .debug_bomb=$@.bin $< $@.tmp
	objcopy --compress-debug-sections=zstd $@.tmp $@
	rm -f $@.bin $@.tmp
FIXTURES += build/fixtures/unwind_inline-noaranges build/fixtures/unwind_inline-split \
	build/fixtures/unwind_inline-zstd build/fixtures/unwind_inline-bomb

E2E_TESTS += tests/e2e/unwind-paths.sh
E2E_TESTS += tests/e2e/unwind-agree.sh

# Unit tests (Criterion): rule compiler, caches, maps, symbols on real ELF files.
UNWIND_TEST_OBJS := \
	$(B)/obj/tests/symbolize/cache_files_test.o \
	$(B)/obj/tests/symbolize/cfi_test.o \
	$(B)/obj/tests/symbolize/events_test.o \
	$(B)/obj/tests/symbolize/jobs_test.o \
	$(B)/obj/tests/symbolize/maps_test.o \
	$(B)/obj/tests/symbolize/scopes_test.o \
	$(B)/obj/tests/symbolize/sym_test.o \
	$(B)/obj/tests/symbolize/unwind_util.o
UNWIND_TEST_FIXTURES := \
	build/fixtures/unwind_recursion \
	build/fixtures/unwind_recursion-lld \
	build/fixtures/unwind_inline \
	build/fixtures/unwind_inline-fp \
	build/fixtures/unwind_inline-noaranges \
	build/fixtures/unwind_inline-split \
	build/fixtures/unwind_inline-zstd \
	build/fixtures/unwind_inline-bomb \
	build/fixtures/unwind_cxx \
	build/fixtures/unwind_cxx-fp

$(B)/tests/symbolize-tests: $(UNWIND_TEST_OBJS) $(B)/libmtunwind.a $(B)/libmtcodec.a $(B)/libmtcommon.a | $(UNWIND_TEST_FIXTURES)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(UNWIND_TEST_OBJS) $(B)/libmtunwind.a $(B)/libmtcodec.a $(B)/libmtcommon.a -lcriterion \
		$(UNWIND_LDLIBS) $(LDLIBS)
UNIT_TESTS += $(B)/tests/symbolize-tests

BENCHES += bench/unwind.sh
MANPAGES += docs/man/mt-unwind.1
E2E_TESTS += tests/e2e/unwind-options.sh
E2E_TESTS += tests/e2e/unwind-debuginfo.sh
E2E_TESTS += tests/e2e/unwind-progress.sh
E2E_TESTS += tests/e2e/unwind-silent-images.sh
E2E_TESTS += tests/e2e/unwind-dump-advice.sh
E2E_TESTS += tests/e2e/unwind-module-files.sh
E2E_TESTS += tests/e2e/unwind-archive.sh
E2E_TESTS += tests/e2e/unwind-jobs.sh
E2E_TESTS += tests/e2e/unwind-cache-files.sh
E2E_TESTS += tests/e2e/unwind-cut-warning.sh
E2E_TESTS += tests/e2e/bad-records.sh
E2E_TESTS += tests/e2e/unwind-callchain.sh
E2E_TESTS += tests/e2e/unwind-trace-realloc.sh
E2E_TESTS += tests/e2e/unwind-trace-memalign.sh
