#!/bin/bash
# perf script (Debian's perf 6.1, the compatibility oracle) reads the output
# of each mode and prints every sample under its event name; event mode's
# samples unwind to the fixture's functions.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

check() {	# FILE STDERR EVENT-REGEX
	perf script -i "$1" >"$T/script" 2>"$T/script.err" || fail "perf script failed on $1: $(cat "$T/script.err")"
	local want got
	want=$(capture_samples "$2")
	got=$(grep -cE "$3" "$T/script" || true)
	[ "$got" -gt 0 ] || fail "perf script shows no '$3' sample in $1"
	[ "$got" = "$want" ] || fail "perf script shows $got samples of $1, mt-capture wrote $want"
	! grep -q "unknown attr type" "$T/script" || fail "perf script could not name an event"
}

"$CAP" --rate 65536 -o "$T/s.data" -- "$MT_FIXTURES/capture_alloc" 2 500 >/dev/null 2>"$T/s.err"
check "$T/s.data" "$T/s.err" ' mt:(alloc|free|totals|tick): '

"$CAP" --mode trace --mmap-pages 2048 -o "$T/t.data" -- "$MT_FIXTURES/capture_alloc" 1 50 >/dev/null 2>"$T/t.err"
check "$T/t.data" "$T/t.err" ' probe_libc:[a-z_]+: '

"$CAP" -e cpu-clock -F 2000 -o "$T/e.data" -- "$MT_FIXTURES/capture_alloc" 2 20000 >/dev/null 2>"$T/e.err"
check "$T/e.data" "$T/e.err" ' cpu-clock:'
grep -q 'worker+' "$T/script" || fail "cpu-clock stacks do not reach the fixture's worker()"
grep -q 'start_thread' "$T/script" || fail "cpu-clock stacks do not unwind to start_thread"

# The stream also goes through a pipe, as mt-capture | mt-encode does.
"$CAP" --rate 65536 -- "$MT_FIXTURES/capture_alloc" 1 200 2>"$T/p.err" >"$T/p.data" </dev/null
perf script -i - <"$T/p.data" >/dev/null 2>&1 || fail "perf script cannot read the stdout stream"
echo "ok: sample, trace and event streams read by perf script"
