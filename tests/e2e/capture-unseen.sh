#!/bin/bash
# A capture that cannot see the program says so instead of handing back an
# empty stream in silence: a static program in sample mode (no LD_PRELOAD
# can load the sampler into it), and trace mode when no process of the
# command maps the copy of --lib that mt-capture probes (the command does
# not load it, or preloads it by its path: the loader then takes the
# original file, not the copy put first in LD_LIBRARY_PATH).  An LD_PRELOAD
# of the probed library by its path given to mt-capture itself is pointed
# at the copy, and then every call is seen (before: 0 samples).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
LIBC=$(ldd "$MT_FIXTURES/capture_alloc" | awk '$1 ~ /^libc\.so/ { print $3 }')
[ -f "$LIBC" ] || fail "no libc in: $(ldd "$MT_FIXTURES/capture_alloc")"
unseen='mt-capture: no process of the command'

${CC:-cc} -O2 -static -pthread -o "$T/alloc-static" "$MT_SRC/tests/fixtures/capture_alloc.c" \
	2>"$T/cc.err" || { echo "no static libc here: $(head -2 "$T/cc.err")"; exit 77; }
"$CAP" -o "$T/static.data" -- "$T/alloc-static" 1 100 >/dev/null 2>"$T/static.err" ||
	fail "mt-capture: $(cat "$T/static.err")"
grep -q "$unseen loaded the sampler" "$T/static.err" ||
	fail "static program, sample mode: no warning: $(cat "$T/static.err")"

"$CAP" -o "$T/dyn.data" -- "$MT_FIXTURES/capture_alloc" 1 100 >/dev/null 2>"$T/dyn.err" ||
	fail "mt-capture: $(cat "$T/dyn.err")"
! grep -q "$unseen" "$T/dyn.err" || fail "dynamic program, sample mode: $(cat "$T/dyn.err")"
[ "$(capture_samples "$T/dyn.err")" -gt 0 ] || fail "dynamic program: no samples"

# A shell that runs the static program and the dynamic one: the capture
# has samples, so mt-capture says nothing, but mt-unwind names the image
# that never loaded the sampler (reason=no-sampler) and mt-fold warns.
"$CAP" -o "$T/mixed.data" -- sh -c "'$T/alloc-static' 1 100; '$MT_FIXTURES/capture_alloc' 1 100" \
	>"$T/mixed.out" 2>"$T/mixed.err" || fail "mt-capture: $(cat "$T/mixed.err")"
! grep -q "$unseen" "$T/mixed.err" || fail "mixed: $(cat "$T/mixed.err")"
"$MT_BUILD/bin/mt-unwind" "$T/mixed.data" >"$T/mixed.txt" 2>"$T/mixed.uw" ||
	fail "mt-unwind: $(cat "$T/mixed.uw")"
grep -q ': 1 process images never loaded libmt-sampler.so (alloc-static)' "$T/mixed.uw" ||
	fail "mt-unwind: no word of the static image: $(cat "$T/mixed.uw")"
[ "$(grep -c 'reason=no-sampler' "$T/mixed.txt")" = 1 ] && grep -q $'^lost\t[0-9/]*\t[0-9]*\talloc-static\tcount=1 reason=no-sampler' "$T/mixed.txt" ||
	fail "lost lines: $(grep '^lost' "$T/mixed.txt")"
"$MT_BUILD/bin/mt-fold" --report "$T/mixed.txt" >"$T/mixed.rep" 2>"$T/mixed.fold" ||
	fail "mt-fold: $(cat "$T/mixed.fold")"
grep -q 'warning: 1 process images never ran the sampler' "$T/mixed.rep" ||
	fail "mt-fold report: $(head -5 "$T/mixed.rep")"

# The static program traced (--lib the program): it runs as mt-capture's
# private copy, which is gone afterwards; the stream names the program
# itself, so its stacks are unwound and named.
"$CAP" --mode trace --lib "$T/alloc-static" -o "$T/traced.data" -- "$T/alloc-static" 1 100 \
	>/dev/null 2>"$T/traced.err" || fail "mt-capture: $(cat "$T/traced.err")"
real=$(realpath "$T/alloc-static")
perf script -i "$T/traced.data" --show-mmap-events 2>/dev/null | grep -q "MMAP2 .* r-xp $real\$" ||
	fail "static program, trace mode: the stream does not name $real"
"$MT_BUILD/bin/mt-unwind" -q "$T/traced.data" >"$T/traced.txt" || fail "mt-unwind on the traced static program"
traced=$(grep -c '^alloc' "$T/traced.txt")
to_worker=$(grep '^alloc' "$T/traced.txt" | grep -c ';start_thread;worker;[_a-z]*\(malloc\|calloc\|realloc\|memalign\|aligned_alloc\) end=complete$')
[ "$traced" -ge 100 ] && [ $((to_worker * 100)) -ge $((traced * 95)) ] ||
	fail "static program, trace mode: $to_worker of $traced allocations unwound to start_thread;worker: $(grep '^alloc' "$T/traced.txt" | head -n 2)"

# --lib a library with malloc that the command never loads.
"$CAP" --mode trace --lib "$MT_BUILD/libmt-sampler.so" -o "$T/none.data" -- \
	"$MT_FIXTURES/capture_alloc" 1 100 >/dev/null 2>"$T/none.err" || fail "mt-capture: $(cat "$T/none.err")"
grep -q "$unseen mapped the probed copy of" "$T/none.err" ||
	fail "trace, --lib not loaded: no warning: $(cat "$T/none.err")"

# mt-capture with an LD_PRELOAD of its own: not under AddressSanitizer,
# whose runtime must come first among the libraries.
if [ "${MT_SANITIZE:-}" = 1 ]; then
	echo "ok: warned for a static program (mt-capture alone, or mt-unwind and mt-fold beside a dynamic one) and for a --lib no process maps (LD_PRELOAD given to mt-capture: not under SANITIZE=1)"
	exit 0
fi
"$CAP" --mode trace --mmap-pages 4096 -o "$T/plain.data" -- "$MT_FIXTURES/capture_alloc" 1 100 \
	>/dev/null 2>"$T/plain.err" || fail "mt-capture: $(cat "$T/plain.err")"
calls=$(capture_samples "$T/plain.err")
LD_PRELOAD="$LIBC" "$CAP" --mode trace --mmap-pages 4096 -o "$T/own.data" -- \
	"$MT_FIXTURES/capture_alloc" 1 100 >/dev/null 2>"$T/own.err" || fail "mt-capture: $(cat "$T/own.err")"
! grep -q "$unseen" "$T/own.err" || fail "trace, LD_PRELOAD=$LIBC for mt-capture: $(cat "$T/own.err")"
n=$(capture_samples "$T/own.err")
[ "$calls" -gt 500 ] && [ "$n" -ge $((calls * 9 / 10)) ] ||
	fail "trace, LD_PRELOAD=$LIBC for mt-capture: $n samples, $calls without it"

# jemalloc (a bench package) preloaded by its path in the command.
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
je=skipped
if [ -e "$JE" ]; then
	"$CAP" --mode trace --lib "$JE" -o "$T/je.data" -- env LD_PRELOAD="$JE" \
		"$MT_FIXTURES/capture_alloc" 1 100 >/dev/null 2>"$T/je.err" || fail "mt-capture: $(cat "$T/je.err")"
	grep -q "$unseen mapped the probed copy of $JE" "$T/je.err" ||
		fail "trace, jemalloc preloaded by path in the command: no warning: $(cat "$T/je.err")"
	LD_PRELOAD="$JE" "$CAP" --mode trace --lib "$JE" --mmap-pages 4096 -o "$T/je2.data" -- \
		"$MT_FIXTURES/capture_alloc" 1 100 >"$T/je2.out" 2>"$T/je2.err" ||
		fail "mt-capture: $(cat "$T/je2.err")"
	# at least one sample per call the worker made
	made=$(sed -n 's/.*calls: //p' "$T/je2.out" | tr ' ' '\n' | awk -F= '{ s += $2 } END { print s + 0 }')
	[ "$made" -gt 500 ] && [ "$(capture_samples "$T/je2.err")" -ge "$made" ] ||
		fail "trace, LD_PRELOAD=$JE for mt-capture: $made calls; $(cat "$T/je2.err")"
	je=ok
fi
echo "ok: warned for a static program (mt-capture alone, or mt-unwind and mt-fold beside a dynamic one) and for a --lib no process maps (jemalloc by path: $je); the static program traced: $to_worker of $traced stacks to its worker; $n samples with LD_PRELOAD=$LIBC given to mt-capture, $calls without"
