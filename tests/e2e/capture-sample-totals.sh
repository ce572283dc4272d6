#!/bin/bash
# Sample mode: the sampler's exact totals equal what the fixture's workers
# asked for, per thread (tid in R10) and summed per process.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --mmap-pages 1024 -o "$T/s.data" -- "$MT_FIXTURES/capture_alloc" 3 4000 >"$T/out" 2>"$T/err" ||
	fail "mt-capture exited $?: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost: $(cat "$T/err")"
capture_regs "$T/s.data" >"$T/regs"
grep -q ' mt:alloc ' "$T/regs" || fail "no mt:alloc samples"

# worker TID allocs=A alloc_bytes=B frees=F ...
n=0
while read -r _ tid allocs bytes frees _; do
	allocs=${allocs#allocs=} bytes=${bytes#alloc_bytes=} frees=${frees#frees=}
	# scope(DI)=1, alloc_bytes SI, allocs DX, frees CX, freed R8, peak R9, tid R10, usable R11
	line=$(awk -v t="$tid" '$2 == "mt:totals" && $3 == 1 && $10 == t' "$T/regs")
	[ -n "$line" ] || fail "no thread totals for worker $tid"
	set -- $line
	[ "$4" = "$bytes" ] || fail "worker $tid: alloc_bytes $4, fixture asked for $bytes"
	[ "$5" = "$allocs" ] || fail "worker $tid: allocs $5, fixture made $allocs"
	[ "$6" = "$frees" ] || fail "worker $tid: frees $6, fixture made $frees"
	[ "$7" = "${11}" ] || fail "worker $tid freed everything: freed_bytes $7 != usable allocated ${11}"
	# Peak: the worker ends with its only live block, malloc(999983), whose
	# block size is the request + 8 rounded up to at most a page; a loop
	# iteration has less than 16 KiB live at once.
	[ "$8" -ge $((999983 + 8)) ] && [ "$8" -le $((999983 + 8 + 4096 + 16)) ] ||
		fail "worker $tid: peak_bytes $8, expected the end block's size (999991..1004103)"
	n=$((n + 1))
done <"$T/out"
[ "$n" = 3 ] || fail "expected 3 workers, fixture printed $n"

# The process report sums every thread's report (workers and main thread).
proc=$(awk '$2 == "mt:totals" && $3 == 2' "$T/regs")
[ "$(echo "$proc" | wc -l)" = 1 ] || fail "expected one process report: $proc"
set -- $proc
sum=$(awk '$2 == "mt:totals" && $3 == 1 { a += $5; b += $4; f += $6 } END { print a, b, f }' "$T/regs")
[ "$5 $4 $6" = "$sum" ] || fail "process totals '$5 $4 $6' != sum of thread totals '$sum'"
[ "$9" -gt 0 ] || fail "process peak_error is 0"
echo "ok: 3 workers exact, process = sum of threads ($5 allocs)"
