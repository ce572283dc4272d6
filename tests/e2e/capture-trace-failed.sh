#!/bin/bash
# Trace mode: a call that failed is no allocation.  capture_odd makes calls
# that fail (calloc and reallocarray whose size product does not fit,
# malloc(SIZE_MAX), posix_memalign with alignment 3) and calls that succeed,
# and lists the latter.  With return probes (the default) exactly those are
# alloc lines and each failed call is counted in mt-unwind's summary; with
# -c N (entry probes only) no sampled call whose arguments cannot be
# satisfied becomes an allocation (before: calloc(2^33, 2^33) was written as
# size=0, calloc(SIZE_MAX, 2) as size=2^64-2).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
UNW=$MT_BUILD/bin/mt-unwind
FOLD=$MT_BUILD/bin/mt-fold
FIX=$MT_FIXTURES/capture_odd

"$CAP" --mode trace --mmap-pages 4096 -o "$T/t.data" -- "$FIX" 20 >"$T/out" 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || { echo "samples lost (busy machine?): $(cat "$T/err")"; exit 77; }
tail -n 1 "$T/out" | grep -q '^ok 80 succeeded 100 failed$' || fail "capture_odd: $(tail -n 1 "$T/out")"
"$UNW" "$T/t.data" >"$T/t.unw" 2>"$T/unw.err" || fail "mt-unwind: $(cat "$T/unw.err")"
grep -qx 'mt-unwind: 100 allocator calls failed (they returned NULL or an error, or asked for a size or alignment none is given for): no allocation written' "$T/unw.err" ||
	fail "mt-unwind does not count the 100 failed calls: $(cat "$T/unw.err")"
grep -q '^mt-unwind: 160 events (alloc 80, free 80,' "$T/unw.err" ||
	fail "event counts: $(head -n 1 "$T/unw.err")"
# The sizes of the alloc lines are those of the calls that succeeded (glibc
# 2.36 names aligned_alloc memalign: one function, one probe).
sed '$d' "$T/out" | awk '{ print $2 }' | sort -n >"$T/want"
awk -F'\t' '$1 == "alloc" { split($5, kv, " "); print substr(kv[1], 6) }' "$T/t.unw" | sort -n >"$T/got"
cmp -s "$T/want" "$T/got" || fail "alloc sizes differ from the calls that succeeded: $(diff "$T/want" "$T/got" | head -5)"
"$FOLD" --report --metric alloc_objects "$T/t.unw" >"$T/report" 2>&1 || fail "mt-fold: $(cat "$T/report")"
grep -qx 'total alloc_objects: 80 (exact)' "$T/report" || fail "mt-fold: $(grep total "$T/report")"

# -c 10: every 10th call of each function, no return probes.
"$CAP" --mode trace -c 10 --mmap-pages 4096 -o "$T/c.data" -- "$FIX" 100 >"$T/out" 2>"$T/err" ||
	fail "mt-capture -c 10: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || { echo "samples lost (busy machine?): $(cat "$T/err")"; exit 77; }
"$UNW" "$T/c.data" >"$T/c.unw" 2>"$T/unw.err" || fail "mt-unwind -c 10: $(cat "$T/unw.err")"
! grep -P '^alloc\t.*fn=(calloc|reallocarray|posix_memalign) ' "$T/c.unw" >"$T/bad" ||
	fail "-c 10: failed calls written as allocations: $(head -n 3 "$T/bad")"
awk -F'\t' '$1 == "alloc" { split($5, kv, " "); if (length(substr(kv[1], 6)) > 18) print }' "$T/c.unw" >"$T/bad"
[ ! -s "$T/bad" ] || fail "-c 10: impossible sizes written: $(head -n 3 "$T/bad")"
# Every sampled entry of a call that cannot succeed is counted, no more:
# those of calloc, reallocarray, posix_memalign, and malloc(SIZE_MAX), as
# perf script decodes them.
want=$(capture_regs "$T/c.data" | awk '$2 == "probe_libc:calloc" || $2 == "probe_libc:reallocarray" ||
	$2 == "probe_libc:posix_memalign" || ($2 == "probe_libc:malloc" && $3 == "18446744073709551615") { n++ }
	END { print n + 0 }')
[ "$want" -ge 40 ] || fail "-c 10: only $want such samples"
grep -qx "mt-unwind: $want allocator calls failed (they returned NULL or an error, or asked for a size or alignment none is given for): no allocation written" "$T/unw.err" ||
	fail "-c 10: want $want failed calls counted: $(grep failed "$T/unw.err" || echo none)"
echo "ok: 80 allocations and 100 failed calls counted apart; -c 10: $want sampled failed calls, none an allocation"
