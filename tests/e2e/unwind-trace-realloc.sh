#!/bin/bash
# Trace mode and realloc: a block resized in place is freed and allocated
# again by the same call.  mt-unwind writes the free of the old pointer just
# before the new allocation, both with the entry's time, so mt-fold (which
# orders a pointer's events by time) pairs every allocation with its free:
# unwind_realloc N makes 9N allocations (malloc + 8 reallocs) and 9N frees
# (free + the 8 reallocs' old blocks), and nothing stays live.
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
unwind_need_perf
n=60
unwind_trace_capture "$tmp/t.perf" "$MT_FIXTURES/unwind_realloc" $n
mt-unwind -q "$tmp/t.perf" >"$tmp/t.unw" || { echo "FAIL mt-unwind"; exit 1; }
fail=0
allocs=$(grep -c "^alloc.*unwind_realloc.*fn=realloc" "$tmp/t.unw")
[ "$allocs" -eq $((8 * n)) ] || { echo "FAIL $allocs realloc lines, want $((8 * n))"; fail=1; }
# How many were in place (old pointer = new one): the case this is about.
inplace=$(awk -F'\t' '$4 == "unwind_realloc" && $1 == "free" { split($5, a, " "); f = a[1] }
	$4 == "unwind_realloc" && $1 == "alloc" && $5 ~ /fn=realloc/ { split($5, a, " ");
	if ("ptr=" substr(a[2], 5) == f) k++ } END { print k + 0 }' "$tmp/t.unw")
[ "$inplace" -gt 0 ] || { echo "FAIL no realloc in place: the test proves nothing"; fail=1; }
mt-fold --report "$tmp/t.unw" >"$tmp/r.txt" || { echo "FAIL mt-fold"; exit 1; }
grep -q '^frees: 0 unmatched, 0 implicit' "$tmp/r.txt" ||
	{ echo "FAIL frees do not pair:"; grep '^frees' "$tmp/r.txt"; fail=1; }
mt-fold --metric inuse_objects "$tmp/t.unw" | grep unwind_realloc >"$tmp/live.txt"
[ ! -s "$tmp/live.txt" ] || { echo "FAIL blocks left live:"; head -3 "$tmp/live.txt"; fail=1; }
[ $fail -eq 0 ] && echo "ok $allocs reallocs ($inplace in place), every block paired with its free, none live"
exit $fail
