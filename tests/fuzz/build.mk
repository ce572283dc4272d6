# tests/fuzz: fuzz targets (tests/fuzz/fuzz.h).  `make check` replays the
# inputs saved in tests/fuzz/corpus/TARGET through each target, built like
# the other tests (so `make SANITIZE=1 check` runs them under ASan and
# UBSan).  `make fuzz` builds the targets with libFuzzer (clang, from
# `mk/deps.sh fuzz`) into build/fuzz; `make fuzz-run FUZZ_SECONDS=N` runs
# each for N seconds (default 60) from a copy of its corpus, and saves what
# breaks a target in build/fuzz/TARGET-crashes.
FUZZ_TARGETS := mtz_frame perf_encode fold_text unwind_stream sample_ring elf_module
FUZZ_LINK_mtz_frame := $(B)/libmtcodec.a $(B)/libmtcommon.a -lzstd
FUZZ_LINK_perf_encode := $(B)/libmtcodec.a $(B)/libmtcommon.a -lzstd
FUZZ_LINK_fold_text := $(B)/libmtfold.a $(B)/libmtcommon.a -lm
FUZZ_LINK_sample_ring := $(B)/obj/capture/sample_ring.o
FUZZ_LINK_unwind_stream := $(B)/obj/tests/fuzz/unwind_run.o $(B)/obj/tests/fuzz/mt_unwind_main.o \
	$(B)/obj/symbolize/debuginfod_gate.o $(B)/libmtunwind.a $(B)/libmtcodec.a $(B)/libmtcommon.a \
	$(CODEC_LDLIBS) $(UNWIND_LDLIBS)
FUZZ_LINK_elf_module := $(FUZZ_LINK_unwind_stream)

# mt-unwind's main() under another name, for unwind_run.c.
$(B)/obj/tests/fuzz/mt_unwind_main.o: symbolize/mt_unwind.c | deps-ok
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) -Dmain=mt_unwind_main -MMD -MP -c $< -o $@

# The replay programs, one per target.
$(B)/tests/fuzz-%: $(B)/obj/tests/fuzz/%.o $(B)/obj/tests/fuzz/replay.o \
		$(B)/obj/tests/fuzz/input.o $(B)/libmtcodec.a $(B)/libmtfold.a $(B)/libmtcommon.a \
		$(B)/libmtunwind.a $(B)/obj/tests/fuzz/mt_unwind_main.o $(B)/obj/tests/fuzz/unwind_run.o \
		$(B)/obj/symbolize/debuginfod_gate.o $(B)/obj/capture/sample_ring.o
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $(B)/obj/tests/fuzz/$*.o $(B)/obj/tests/fuzz/replay.o \
		$(B)/obj/tests/fuzz/input.o $(FUZZ_LINK_$*) $(LDLIBS)
E2E_DEPS += $(foreach t,$(FUZZ_TARGETS),$(B)/tests/fuzz-$(t))
E2E_TESTS += tests/e2e/fuzz-replay.sh

# The libFuzzer builds: every library source again, with clang, coverage
# and the sanitizers, and with the stack hash checks of .mtz entries off
# (codec/mtz_delta.h), so that the fuzzer gets past them.
FUZZ_DIR := build/fuzz
FUZZ_CC := clang
FUZZ_FLAGS := -std=gnu11 -O1 -g $(WARN) -D_GNU_SOURCE -I. \
	-DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fno-omit-frame-pointer \
	-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
FUZZ_LIB_OBJS := $(patsubst $(B)/obj/%,$(FUZZ_DIR)/obj/%,$(CODEC_OBJS) $(FOLD_OBJS) \
	$(COMMON_OBJS) $(UNWIND_OBJS) $(B)/obj/symbolize/debuginfod_gate.o $(B)/obj/capture/sample_ring.o) \
	$(FUZZ_DIR)/obj/mt_unwind_main.o $(FUZZ_DIR)/obj/tests/fuzz/unwind_run.o
FUZZ_BINS := $(foreach t,$(FUZZ_TARGETS),$(FUZZ_DIR)/$(t))
FUZZ_SECONDS ?= 60

$(FUZZ_DIR)/obj/%.o: %.c | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -MMD -MP -c $< -o $@

$(FUZZ_DIR)/obj/mt_unwind_main.o: symbolize/mt_unwind.c | fuzz-deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_FLAGS) -Dmain=mt_unwind_main -MMD -MP -c $< -o $@

$(FUZZ_BINS): $(FUZZ_DIR)/%: $(FUZZ_DIR)/obj/tests/fuzz/%.o $(FUZZ_DIR)/obj/tests/fuzz/input.o \
		$(FUZZ_LIB_OBJS)
	$(FUZZ_CC) -fsanitize=fuzzer,address,undefined -o $@ $^ -lzstd -lm $(UNWIND_LDLIBS)

fuzz-deps:
	@sh mk/deps.sh --check fuzz || sh mk/deps.sh fuzz

fuzz: $(FUZZ_BINS)

fuzz-run: fuzz
	@set -e; for t in $(FUZZ_TARGETS); do \
		mkdir -p $(FUZZ_DIR)/$$t-corpus $(FUZZ_DIR)/$$t-crashes; \
		cp -n tests/fuzz/corpus/$$t/* $(FUZZ_DIR)/$$t-corpus/ 2>/dev/null || true; \
		echo "== $$t, $(FUZZ_SECONDS) s"; \
		case $$t in unwind_stream) len=-max_len=8192;; *) len=;; esac; \
		LSAN_OPTIONS=suppressions=$(abspath tests/fuzz/lsan.supp) \
		$(FUZZ_DIR)/$$t $$len -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=4096 \
			-close_fd_mask=1 \
			-artifact_prefix=$(FUZZ_DIR)/$$t-crashes/ -print_final_stats=1 \
			$(FUZZ_DIR)/$$t-corpus; \
	done

.PHONY: fuzz fuzz-run fuzz-deps
-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
