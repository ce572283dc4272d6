#!/bin/bash
# Trace mode and posix_memalign: at its return the new block's address is in
# memory, at memptr, not in a register.  mt-capture copies 1 KiB of stack with
# that return (MT_CAPTURE_MEMPTR_DUMP) and mt-unwind reads *memptr there.
# capture_semantics N makes N posix_memalign calls that succeed (every block
# freed later) and N that are refused (alignment 24: EINVAL, nothing
# allocated): N alloc lines with the real pointers, each freed, none for the
# refused calls.
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
unwind_need_perf
n=40
unwind_trace_capture "$tmp/t.perf" "$MT_FIXTURES/capture_semantics" $n
mt-unwind "$tmp/t.perf" >"$tmp/t.unw" 2>"$tmp/unw.err" || { echo "FAIL mt-unwind"; cat "$tmp/unw.err"; exit 1; }
fail=0
grep -P '^alloc\t.*fn=posix_memalign ' "$tmp/t.unw" >"$tmp/pm.txt"
lines=$(wc -l <"$tmp/pm.txt")
[ "$lines" -eq $n ] || { echo "FAIL $lines posix_memalign alloc lines, want $n (refused calls allocate nothing)"; fail=1; }
zero=$(grep -c ' ptr=0x0 ' "$tmp/pm.txt")
[ "$zero" -eq 0 ] || { echo "FAIL $zero posix_memalign lines without their pointer"; fail=1; }
! grep -q 'posix_memalign calls written with ptr=0x0' "$tmp/unw.err" ||
	{ echo "FAIL mt-unwind reports unknown pointers:"; cat "$tmp/unw.err"; fail=1; }
# Each block is freed later by the program (the same thread, single-threaded).
left=$(awk -F'\t' '$1 == "alloc" && $5 ~ /fn=posix_memalign / { match($5, /ptr=0x[0-9a-f]+/)
		live[substr($5, RSTART + 4, RLENGTH - 4)] = 1 }
	$1 == "free" { match($5, /ptr=0x[0-9a-f]+/); delete live[substr($5, RSTART + 4, RLENGTH - 4)] }
	END { k = 0; for (p in live) k++; print k }' "$tmp/t.unw")
[ "$left" -eq 0 ] || { echo "FAIL $left posix_memalign blocks never freed: wrong pointers?"; fail=1; }
[ $fail -eq 0 ] && echo "ok $n posix_memalign allocations with their pointers, all freed; $n refused calls not counted"
exit $fail
