#!/bin/bash
# Allocations made by signal handlers that interrupt the program (and the
# sampler) mid-update are all counted: the exact totals agree with the
# program's own count.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

# The totals are exact at any rate: a sparse rate keeps the ring from
# overflowing (a lost totals event would leave nothing to compare).
rc=0
"$CAP" --rate 262144 --mmap-pages 2048 -o "$T/g.data" -- "$MT_FIXTURES/capture_signal" 8000000 \
	>"$T/out" 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || fail "mt-capture: exit $rc, the program wrote '$(cat "$T/out")': $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost, the totals may be among them: $(cat "$T/err")"
read -r allocs frees handler <"$T/out"
[ "${handler#handler=}" -gt 10 ] || fail "the timer hardly fired: $handler"
# The main thread's totals, reported at exit (tid = pid): only the loop, the
# handler and nothing else allocate in this program.
capture_regs "$T/g.data" | awk -v a=${allocs#allocs=} -v f=${frees#frees=} '
	$2 == "mt:totals" && $3 == 1 { got_a = $5; got_f = $6 }
	END {
		printf "sampler: %d allocs %d frees; program: %d %d\n", got_a, got_f, a, f
		exit !(got_a == a && got_f == f)
	}' || fail "totals differ from the program's count"
echo "ok: $handler handler calls, totals exact"
