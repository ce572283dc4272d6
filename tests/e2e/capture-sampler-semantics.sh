#!/bin/bash
# The sampler keeps the allocator's contract: capture_semantics checks it
# from inside the program (alignment, usable size, calloc's zeroes, realloc
# contents, posix_memalign's EINVAL, ...) with every allocation sampled
# (--rate 1: with glibc's allocator each one is then a tagged block), at a
# sparse rate, and with jemalloc underneath (sampled blocks in the table).
# Under mt-capture --rate 1, every free of a sampled block reaches mt:free
# with the pointer mt:alloc reported, and no marker event is missing.
. "$(dirname "$0")/capture-lib.sh"
FIX=$MT_FIXTURES/capture_semantics
SAMPLER=$MT_BUILD/libmt-sampler.so

"$FIX" 300 >"$T/plain" || fail "uninstrumented: $(cat "$T/plain")"
for rate in 1 4096 524288; do
	LD_PRELOAD=$SAMPLER MT_SAMPLER_RATE=$rate "$FIX" 300 >"$T/out" ||
		fail "sampler at rate $rate: $(cat "$T/out")"
	cmp -s "$T/plain" "$T/out" || fail "rate $rate: '$(cat "$T/out")', uninstrumented '$(cat "$T/plain")'"
done
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
je=skipped
if [ -e "$JE" ]; then
	LD_PRELOAD="$SAMPLER $JE" MT_SAMPLER_RATE=1 "$FIX" 300 >"$T/out" ||
		fail "sampler over jemalloc: $(cat "$T/out")"
	cmp -s "$T/plain" "$T/out" || fail "over jemalloc: '$(cat "$T/out")'"
	je=ok
fi

capture_skip_unless_perf
"$CAP" --rate 1 --stack-size 512 --mmap-pages 4096 -o "$T/s.data" -- "$FIX" 100 >"$T/out" 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost: $(cat "$T/err")"
"$MT_BUILD/bin/mt-unwind" "$T/s.data" >"$T/u" 2>"$T/uerr" || fail "mt-unwind: $(cat "$T/uerr")"
! grep -q '^lost' "$T/u" || fail "marker events missing: $(grep '^lost' "$T/u" | head -3)"
# Each free names a block an alloc line reported and nothing freed since.
awk -F'\t' '
	function ptr(s) { match(s, /ptr=0x[0-9a-f]+/); return substr(s, RSTART + 4, RLENGTH - 4) }
	$1 == "alloc" { live[ptr($5)] = 1; a++ }
	$1 == "free" { p = ptr($5); f++; if (!(p in live)) { print "free of " p " not live"; bad = 1 } delete live[p] }
	END { if (a < 1000 || f < 1000) { print "too few events: " a " allocs, " f " frees"; bad = 1 }
	      printf "%d allocs %d frees\n", a, f > "/dev/stderr"; exit bad }' "$T/u" 2>"$T/counts" >"$T/bad" ||
	fail "$(head -3 "$T/bad")"
echo "ok: contract kept at rates 1, 4096, 524288, over jemalloc $je; $(cat "$T/counts") paired under capture"

# At --rate 1 every byte is a sample point: each call that succeeded is one
# alloc line with points = its size, in the program's order, and none for
# the calls that failed.  capture_odd makes calls at the edges of the
# contract (refused alignments, sizes that cannot be allocated, and
# aligned_alloc(3, 512), which glibc before 2.38 takes) and lists those
# that succeeded.
"$CAP" --rate 1 -o "$T/odd.data" -- "$MT_FIXTURES/capture_odd" 20 >"$T/odd.out" 2>"$T/err" ||
	fail "mt-capture capture_odd: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "capture_odd: samples lost: $(cat "$T/err")"
tail -n 1 "$T/odd.out" | grep -q '^ok [0-9]* succeeded 100 failed$' ||
	fail "capture_odd: $(tail -n 1 "$T/odd.out")"
"$MT_BUILD/bin/mt-unwind" "$T/odd.data" >"$T/odd.u" 2>"$T/uerr" || fail "mt-unwind: $(cat "$T/uerr")"
sed '$d' "$T/odd.out" >"$T/odd.want"
awk -F'\t' '$1 == "alloc" && $6 ~ /(^|;)main(;|$)/ {
	split($5, kv, " "); delete f
	for (i in kv) { eq = index(kv[i], "="); f[substr(kv[i], 1, eq - 1)] = substr(kv[i], eq + 1) }
	if (f["points"] != f["size"]) print "points=" f["points"] " for " f["fn"] " " f["size"] > "/dev/stderr"
	print f["fn"], f["size"] }' "$T/odd.u" >"$T/odd.got" 2>"$T/odd.bad"
[ ! -s "$T/odd.bad" ] || fail "capture_odd at --rate 1: $(head -3 "$T/odd.bad")"
cmp -s "$T/odd.want" "$T/odd.got" ||
	fail "capture_odd: the calls recorded differ from those that succeeded: $(diff "$T/odd.want" "$T/odd.got" | head -5)"
# Nothing credited elsewhere: the points of all samples are the bytes asked.
awk -F'\t' '$1 == "alloc" { match($5, /points=[0-9]+/); pts += substr($5, RSTART + 7, RLENGTH - 7) }
	$1 == "totals" && $5 ~ /scope=process/ { match($5, /alloc_bytes=[0-9]+/); tot = substr($5, RSTART + 12, RLENGTH - 12) }
	END { if (pts != tot) { print pts " points, " tot " bytes allocated"; exit 1 } }' "$T/odd.u" >"$T/odd.sum" ||
	fail "capture_odd at --rate 1: $(cat "$T/odd.sum")"
echo "ok: capture_odd at --rate 1: $(wc -l <"$T/odd.want") calls that succeeded, each with its own points"
