#!/bin/bash
# Trace mode: with nothing lost, the entry probes see exactly the calls each
# worker made, every return probe pairs with its entry, and the sizes are
# the ones the fixture passed.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --mode trace --mmap-pages 4096 --stack-size 1024 -o "$T/t.data" -- \
	"$MT_FIXTURES/capture_alloc" 2 300 >"$T/out" 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost: $(cat "$T/err")"
capture_regs "$T/t.data" >"$T/all"
# glibc frees blocks of its own at thread exit: keep each thread's events up
# to the free after the fixture's end mark, malloc(999983).
awk '$2 == "probe_libc:malloc" && $3 == 999983 { mark[$1] = 1 }
	!done[$1] { print }
	mark[$1] && $2 == "probe_libc:free" { done[$1] = 1 }' "$T/all" >"$T/regs"
n=0
while read -r _ tid _ _ _ _ malloc calloc realloc aligned pmemalign free; do
	for kv in $malloc $calloc $realloc $aligned $pmemalign $free; do
		fn=${kv%=*} want=${kv#*=}
		# glibc 2.36: aligned_alloc is memalign, one probe named memalign.
		[ "$fn" = aligned_alloc ] && fn=memalign
		got=$(awk -v t="$tid" -v e="probe_libc:$fn" '$1 == t && $2 == e' "$T/regs" | wc -l)
		[ "$got" = "$want" ] || fail "worker $tid: $got $fn entries, the fixture made $want calls"
		if [ "$fn" != free ]; then
			ret=$(awk -v t="$tid" -v e="probe_libc:${fn}__return" '$1 == t && $2 == e' "$T/regs" | wc -l)
			[ "$ret" = "$want" ] || fail "worker $tid: $ret $fn returns for $want calls"
		fi
	done
	# The fixture's mallocs ask 16 + (i * 37 % 4000) bytes, i = 0..299, then the mark.
	awk -v t="$tid" '$1 == t && $2 == "probe_libc:malloc" { print $3 }' "$T/regs" >"$T/sizes"
	awk 'BEGIN { for (i = 0; i < 300; i++) print 16 + (i * 37 % 4000); print 999983 }' >"$T/want"
	cmp -s "$T/sizes" "$T/want" || fail "worker $tid: malloc sizes differ from the fixture's"
	n=$((n + 1))
done <"$T/out"
[ "$n" = 2 ] || fail "expected 2 workers, got $n"

# A return's AX is the pointer the next free of the same worker releases
# (the fixture frees p, q, aligned, pm in order after realloc).
awk '$2 == "probe_libc:malloc__return" && $9 == 0 { bad = 1 } END { exit bad }' "$T/regs" ||
	fail "a malloc returned NULL (AX 0)"

# -c N: every Nth call of each function, no return probes.
"$CAP" --mode trace -c 10 --mmap-pages 1024 -o "$T/c.data" -- "$MT_FIXTURES/capture_alloc" 0 300 \
	>"$T/out" 2>"$T/err" || fail "mt-capture -c: $(cat "$T/err")"
capture_regs "$T/c.data" >"$T/regs"
got=$(awk '$2 == "probe_libc:malloc"' "$T/regs" | wc -l)
# The probes are per-CPU events, each counting its own hits: a thread that
# migrates splits its 301 calls between counters, so each CPU's remainder
# (up to 9 calls) may go unsampled: floor(301/10) - (CPUs - 1) at the least.
ncpu=$(getconf _NPROCESSORS_ONLN)
min=$((30 - (ncpu - 1)))
[ "$got" -ge "$min" ] && [ "$got" -le 31 ] || fail "-c 10: $got malloc samples for 301 calls on $ncpu CPUs (want $min..31)"
! grep -q __return "$T/regs" || fail "-c 10 opened return probes"
echo "ok: exact call counts for 2 workers, sizes match, -c 10 gives $got"
