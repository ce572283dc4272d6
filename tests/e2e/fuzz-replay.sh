#!/bin/bash
# The saved fuzz inputs (tests/fuzz/corpus/TARGET: seeds, and every input
# that once broke a target) through the fuzz targets built without
# libFuzzer (tests/fuzz/replay.c): no crash, no failed invariant, and under
# `make SANITIZE=1 check` no sanitizer report.
set -eu
fail() { echo "FAIL: $*" >&2; exit 1; }
# leaks inside libdw that its callers cannot free (see the file)
export LSAN_OPTIONS=suppressions=$MT_SRC/tests/fuzz/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in mtz_frame perf_encode fold_text unwind_stream sample_ring elf_module; do
	dir=${MT_SRC:?}/tests/fuzz/corpus/$t
	n=$(find "$dir" -type f | wc -l)
	[ "$n" -gt 0 ] || fail "$dir holds no inputs"
	# stderr: what the tools say of bad inputs
	out=$("${MT_BUILD:?}/tests/fuzz-$t" "$dir" 2>"$tmp/err") ||
		fail "$t: exit $?: $out $(tail -n 5 "$tmp/err")"
	[ "$out" = "$n inputs ran" ] || fail "$t: expected '$n inputs ran', got: $out"
done
echo ok
