# capture: mt-capture and the preload sampler libmt-sampler.so (see GNUmakefile).

# ---- libmt-sampler.so: runs inside profiled programs, so it never takes the
# sanitizers (SANITIZE=1 included): PIC, -O2, exports only the interposed
# functions and the markers.
SAMPLER_SRCS := \
	capture/sampler.c \
	capture/sampler_rand.c \
	capture/sampler_ring.c \
	capture/sample_ring.c \
	capture/sampler_table.c
SAMPLER_ASM := \
	capture/sampler_x86_64.S
SAMPLER_CFLAGS := -std=gnu11 -O2 -g $(WARN) -fPIC -fvisibility=hidden \
	-ftls-model=initial-exec -fno-plt
SAMPLER_OBJS := $(patsubst %.c,$(B)/obj-sampler/%.o,$(SAMPLER_SRCS)) \
	$(patsubst %.S,$(B)/obj-sampler/%.o,$(SAMPLER_ASM))

$(B)/obj-sampler/%.o: %.c | deps-ok
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(SAMPLER_CFLAGS) -MMD -MP -c $< -o $@

$(B)/obj-sampler/%.o: %.S | deps-ok
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -fPIC -c $< -o $@

$(B)/libmt-sampler.so: $(SAMPLER_OBJS)
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-z,now -o $@ $^ -ldl -lm -pthread

LIBS += $(B)/libmt-sampler.so

-include $(wildcard $(B)/obj-sampler/capture/*.d)

# ---- mt-capture
CAPTURE_OBJS := \
	$(B)/obj/capture/mt_capture.o \
	$(B)/obj/capture/capture_opts.o \
	$(B)/obj/capture/capture_run.o \
	$(B)/obj/capture/capture_events.o \
	$(B)/obj/capture/capture_elf.o \
	$(B)/obj/capture/capture_err.o \
	$(B)/obj/capture/capture_files.o \
	$(B)/obj/capture/capture_proc.o \
	$(B)/obj/capture/capture_ring.o \
	$(B)/obj/capture/capture_keep.o \
	$(B)/obj/capture/capture_user.o \
	$(B)/obj/capture/sample_ring.o

$(CAPTURE_OBJS): CPPFLAGS += $(LIBPERF_CFLAGS)
$(CAPTURE_OBJS): | $(LIBPERF_DEP)

$(B)/bin/mt-capture: $(CAPTURE_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a $(LIBPERF_DEP)
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CAPTURE_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a $(LIBPERF_LIBS) -ldw -lelf $(LDLIBS)

BINS += $(B)/bin/mt-capture

# ---- tests
FIXTURE_NAMES += capture_alloc capture_forkexec capture_bench capture_rate capture_signal capture_semantics \
	capture_odd \
	capture_stacks capture_scribble capture_clones capture_timeline
E2E_TESTS += \
	tests/e2e/capture-sample-totals.sh \
	tests/e2e/capture-sample-rate.sh \
	tests/e2e/capture-independent.sh \
	tests/e2e/capture-keep.sh \
	tests/e2e/security-capture.sh \
	tests/e2e/security-files.sh \
	tests/e2e/capture-killed.sh \
	tests/e2e/fold-coverage.sh \
	tests/e2e/fold-forked.sh \
	tests/e2e/capture-trace.sh \
	tests/e2e/capture-trace-failed.sh \
	tests/e2e/capture-perf-script.sh \
	tests/e2e/capture-sigint.sh \
	tests/e2e/capture-second-signal.sh \
	tests/e2e/capture-pid.sh \
	tests/e2e/capture-forkexec.sh \
	tests/e2e/capture-cli.sh \
	tests/e2e/capture-exit.sh \
	tests/e2e/capture-signal.sh \
	tests/e2e/capture-sampler-semantics.sh \
	tests/e2e/capture-ring.sh \
	tests/e2e/capture-unseen.sh \
	tests/e2e/capture-ring-stacks.sh \
	tests/e2e/capture-ring-python.sh \
	tests/e2e/capture-ring-loss.sh \
	tests/e2e/capture-ring-outlive.sh \
	tests/e2e/capture-ring-hostile.sh \
	tests/e2e/capture-exec-totals.sh \
	tests/e2e/capture-tracepoint.sh \
	tests/e2e/capture-no-point.sh \
	tests/e2e/capture-no-ring.sh \
	tests/e2e/capture-timeline.sh

CAPTURE_TEST_OBJS := \
	$(B)/obj/tests/capture/sampler_rand_test.o \
	$(B)/obj/tests/capture/sampler_markers_test.o \
	$(B)/obj/tests/capture/sample_ring_test.o \
	$(B)/obj/tests/capture/capture_ring_test.o \
	$(B)/obj/tests/capture/capture_err_test.o \
	$(B)/obj/tests/capture/capture_files_test.o \
	$(B)/obj/tests/capture/capture_opts_test.o \
	$(B)/obj/capture/capture_opts.o \
	$(B)/obj/capture/capture_ring.o \
	$(B)/obj/capture/sample_ring.o \
	$(B)/obj/capture/sampler_rand.o \
	$(B)/obj/capture/capture_elf.o \
	$(B)/obj/capture/capture_err.o \
	$(B)/obj/capture/capture_files.o

# The markers test reads the built sampler.
$(B)/tests/capture-tests: $(CAPTURE_TEST_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a | $(B)/libmt-sampler.so
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CAPTURE_TEST_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a -lcriterion -lelf -lm \
		-pthread $(LDLIBS)
UNIT_TESTS += $(B)/tests/capture-tests
BENCHES += bench/capture.sh
BENCHES += bench/stack-size.sh
MANPAGES += docs/man/mt-capture.1
