# Fixtures: small programs the tests profile.  A stage lists names in
# FIXTURE_NAMES (tests/fixtures/NAME.c or NAME.cc); each is built -O2 -g twice:
# build/fixtures/NAME without and build/fixtures/NAME-fp with frame pointers.
# Names also in LLD_FIXTURE_NAMES get a third build, build/fixtures/NAME-lld,
# linked by lld (whose executable segment shares a file page with the
# read-only one).  They never take the sanitizers: they are the programs
# being profiled.
FIXTURE_FLAGS := -O2 -g $(WARN) -pthread
FIXTURES += $(foreach n,$(FIXTURE_NAMES),build/fixtures/$(n) build/fixtures/$(n)-fp)
FIXTURES += $(foreach n,$(LLD_FIXTURE_NAMES),build/fixtures/$(n)-lld)

build/fixtures/%-lld: tests/fixtures/%.c | deps-ok
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(FIXTURE_FLAGS) -fomit-frame-pointer -fuse-ld=lld -MMD -MP -o $@ $< -ldl

build/fixtures/%-lld: tests/fixtures/%.cc | deps-ok
	@mkdir -p $(@D)
	$(CXX) -std=gnu++17 $(FIXTURE_FLAGS) -fomit-frame-pointer -fuse-ld=lld -MMD -MP -o $@ $< -ldl

build/fixtures/%-fp: tests/fixtures/%.c | deps-ok
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(FIXTURE_FLAGS) -fno-omit-frame-pointer -MMD -MP -o $@ $< -ldl

build/fixtures/%: tests/fixtures/%.c | deps-ok
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(FIXTURE_FLAGS) -fomit-frame-pointer -MMD -MP -o $@ $< -ldl

build/fixtures/%-fp: tests/fixtures/%.cc | deps-ok
	@mkdir -p $(@D)
	$(CXX) -std=gnu++17 $(FIXTURE_FLAGS) -fno-omit-frame-pointer -MMD -MP -o $@ $< -ldl

build/fixtures/%: tests/fixtures/%.cc | deps-ok
	@mkdir -p $(@D)
	$(CXX) -std=gnu++17 $(FIXTURE_FLAGS) -fomit-frame-pointer -MMD -MP -o $@ $< -ldl

# Fuzz targets, replayed by make check (after the stages' libraries).
include tests/fuzz/build.mk

# Whole-project end-to-end tests.
E2E_TESTS += tests/e2e/install.sh
# Every tool's usage and environment errors, as golden files (tests/cli/).
E2E_TESTS += tests/e2e/cli-golden.sh
