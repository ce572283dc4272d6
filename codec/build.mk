# codec: sources, binaries and tests of this stage (see GNUmakefile).

# ---- perf stream library (perf_*.c) --------------------------------------
CODEC_OBJS += $(B)/obj/codec/perf_error.o
CODEC_OBJS += $(B)/obj/codec/perf_reader.o
CODEC_OBJS += $(B)/obj/codec/perf_sample.o
CODEC_OBJS += $(B)/obj/codec/perf_writer.o
CODEC_OBJS += $(B)/obj/codec/perf_unpack.o
CODEC_OBJS += $(B)/obj/codec/perf_events.o
CODEC_OBJS += $(B)/obj/codec/perf_features.o
CODEC_OBJS += $(B)/obj/codec/input.o

FIXTURE_NAMES += perf_small

CODEC_PERF_TEST_OBJS := \
	$(B)/obj/tests/codec/perf_test_util.o \
	$(B)/obj/tests/codec/perf_test_build.o \
	$(B)/obj/tests/codec/perf_hostile_test.o \
	$(B)/obj/tests/codec/perf_roundtrip_test.o \
	$(B)/obj/tests/codec/perf_record_test.o \
	$(B)/obj/tests/codec/perf_unpack_test.o

# The tests run perf on build/fixtures/perf_small.
$(B)/tests/codec-perf-tests: $(CODEC_PERF_TEST_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a | build/fixtures/perf_small
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CODEC_PERF_TEST_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a -lcriterion $(CODEC_LDLIBS) $(LDLIBS)
UNIT_TESTS += $(B)/tests/codec-perf-tests
# ---- end of perf stream library ------------------------------------------

# ---- .mtz codec and mt-encode (mtz_*.c, mt_encode.c) ---------------------
CODEC_OBJS += $(B)/obj/codec/mtz_common.o
CODEC_OBJS += $(B)/obj/codec/mtz_delta.o
CODEC_OBJS += $(B)/obj/codec/mtz_frame.o
CODEC_OBJS += $(B)/obj/codec/mtz_headcols.o
CODEC_OBJS += $(B)/obj/codec/mtz_reader.o
CODEC_OBJS += $(B)/obj/codec/mtz_writer.o

FIXTURE_NAMES += codec_malloc_loop
FIXTURE_NAMES += codec_threads

# Programs that use the .mtz reader or writer add this after libmtcodec.a.
CODEC_LDLIBS := -lzstd

$(B)/bin/mt-encode: $(B)/obj/codec/mt_encode.o $(B)/libmtcodec.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(B)/libmtcodec.a $(B)/libmtcommon.a $(CODEC_LDLIBS) $(LDLIBS)

# mt-decode is mt-encode -d under another name.
$(B)/bin/mt-decode: $(B)/bin/mt-encode
	ln -sf mt-encode $@

BINS += $(B)/bin/mt-encode
BINS += $(B)/bin/mt-decode

CODEC_MTZ_TEST_OBJS := \
	$(B)/obj/tests/codec/mtz_delta_test.o \
	$(B)/obj/tests/codec/mtz_container_test.o \
	$(B)/obj/tests/codec/mtz_headcols_test.o

$(B)/tests/codec-mtz-tests: $(CODEC_MTZ_TEST_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(CODEC_MTZ_TEST_OBJS) $(B)/libmtcodec.a $(B)/libmtcommon.a -lcriterion $(CODEC_LDLIBS) $(LDLIBS)
UNIT_TESTS += $(B)/tests/codec-mtz-tests

BENCHES += bench/codec.sh
E2E_TESTS += tests/e2e/codec-roundtrip.sh
E2E_TESTS += tests/e2e/codec-damage.sh
E2E_TESTS += tests/e2e/codec-capture.sh
E2E_TESTS += tests/e2e/codec-progress.sh
E2E_TESTS += tests/e2e/codec-cli.sh
E2E_TESTS += tests/e2e/codec-versions.sh
E2E_TESTS += tests/e2e/fuzz-smoke.sh
MANPAGES += docs/man/mt-encode.1
# `man mt-decode`: a .so link to the same page
MANPAGES += docs/man/mt-decode.1

# ---- end of .mtz codec ---------------------------------------------------

# The library: keep this after every CODEC_OBJS += (prerequisites expand when read).
$(B)/libmtcodec.a: $(CODEC_OBJS)
LIBS += $(B)/libmtcodec.a
