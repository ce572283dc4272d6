# fold: mt-fold, folding mt-unwind output into collapsed stacks and reports.
FOLD_OBJS := \
	$(B)/obj/fold/diff.o \
	$(B)/obj/fold/est.o \
	$(B)/obj/fold/gamma.o \
	$(B)/obj/fold/hist.o \
	$(B)/obj/fold/line.o \
	$(B)/obj/fold/live.o \
	$(B)/obj/fold/locs.o \
	$(B)/obj/fold/memjson.o \
	$(B)/obj/fold/memory.o \
	$(B)/obj/fold/memtext.o \
	$(B)/obj/fold/profile.o \
	$(B)/obj/fold/render.o \
	$(B)/obj/fold/sites.o \
	$(B)/obj/fold/sitestext.o \
	$(B)/obj/fold/snapshot.o \
	$(B)/obj/fold/strtab.o \
	$(B)/obj/fold/table.o \
	$(B)/obj/fold/timeline.o \
	$(B)/obj/fold/width.o

# --pprof: the encoder protoc-c generates from fold/profile.proto into
# $(B)/gen at build time (Debian's protobuf-c-compiler), protobuf-c's
# runtime and zlib.  Kept out of FOLD_OBJS, which the fuzz build compiles
# again from the sources.
FOLD_PPROF_OBJS := $(B)/obj/fold/pprof.o $(B)/obj/gen/fold/profile.pb-c.o
FOLD_LDLIBS := -lprotobuf-c -lz -lm

$(B)/gen/fold/profile.pb-c.c $(B)/gen/fold/profile.pb-c.h &: fold/profile.proto | deps-ok
	@mkdir -p $(B)/gen
	protoc-c --c_out=$(B)/gen fold/profile.proto
$(B)/obj/gen/fold/profile.pb-c.o: $(B)/gen/fold/profile.pb-c.c
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -I$(B)/gen $(CFLAGS) -MMD -MP -c $< -o $@
$(B)/obj/fold/pprof.o $(B)/obj/tests/fold/pprof_test.o: CPPFLAGS += -I$(B)/gen
$(B)/obj/fold/pprof.o $(B)/obj/tests/fold/pprof_test.o: $(B)/gen/fold/profile.pb-c.h

$(B)/libmtfold.a: $(FOLD_OBJS) $(FOLD_PPROF_OBJS)

$(B)/bin/mt-fold: $(B)/obj/fold/main.o $(B)/libmtfold.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ $(FOLD_LDLIBS)

BINS += $(B)/bin/mt-fold
LIBS += $(B)/libmtfold.a

# Unit tests (Criterion).
FOLD_TEST_SRCS := \
	tests/fold/gamma_test.c \
	tests/fold/line_test.c \
	tests/fold/profile_test.c \
	tests/fold/coverage_test.c \
	tests/fold/render_test.c \
	tests/fold/diff_test.c \
	tests/fold/sites_test.c \
	tests/fold/width_test.c \
	tests/fold/sim.c \
	tests/fold/json_min.c \
	tests/fold/pprof_test.c \
	tests/fold/memory_test.c \
	tests/fold/live_test.c

$(B)/tests/fold-tests: $(patsubst %.c,$(B)/obj/%.o,$(FOLD_TEST_SRCS)) $(B)/libmtfold.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion $(FOLD_LDLIBS)

UNIT_TESTS += $(B)/tests/fold-tests

E2E_TESTS += \
	tests/e2e/fold-collapsed.sh \
	tests/e2e/fold-report.sh \
	tests/e2e/fold-bad-lines.sh \
	tests/e2e/fold-pipeline.sh \
	tests/e2e/fold-events.sh \
	tests/e2e/fold-limits.sh \
	tests/e2e/fold-ring-loss.sh \
	tests/e2e/fold-sites.sh \
	tests/e2e/fold-pprof.sh \
	tests/e2e/fold-diff-calibration.sh \
	tests/e2e/fold-timeline.sh

FIXTURE_NAMES += fold_sites fold_leak fold_sites_cxx fold_inline fold_diff
E2E_TESTS += tests/e2e/fold-views.sh tests/e2e/fold-views-heaptrack.sh
FIXTURE_NAMES += fold_phases
BENCHES += bench/fold.sh
MANPAGES += docs/man/mt-fold.1
