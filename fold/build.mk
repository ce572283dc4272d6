# fold: mt-fold, folding mt-unwind output into collapsed stacks and reports.
FOLD_OBJS := \
	$(B)/obj/fold/diff.o \
	$(B)/obj/fold/est.o \
	$(B)/obj/fold/gamma.o \
	$(B)/obj/fold/line.o \
	$(B)/obj/fold/profile.o \
	$(B)/obj/fold/render.o \
	$(B)/obj/fold/sites.o \
	$(B)/obj/fold/sitestext.o \
	$(B)/obj/fold/snapshot.o \
	$(B)/obj/fold/strtab.o \
	$(B)/obj/fold/width.o

$(B)/libmtfold.a: $(FOLD_OBJS)

$(B)/bin/mt-fold: $(B)/obj/fold/main.o $(B)/libmtfold.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lm

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
	tests/fold/json_min.c

$(B)/tests/fold-tests: $(patsubst %.c,$(B)/obj/%.o,$(FOLD_TEST_SRCS)) $(B)/libmtfold.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $^ -lcriterion -lm

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
	tests/e2e/fold-diff-calibration.sh

FIXTURE_NAMES += fold_sites fold_leak fold_sites_cxx fold_diff
BENCHES += bench/fold.sh
MANPAGES += docs/man/mt-fold.1
