#!/bin/bash
# A recording of two events (perf record -e cpu-clock,page-faults): their
# periods (nanoseconds, faults) do not add up.  mt-fold refuses to fold them
# together (exit 2, both named), also when the file reaches mt-unwind
# through a pipe, and with --event folds one of them, whose total is that
# event's sum of periods as perf script shows it.
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
unwind_need_perf

seq 1 200000 | awk '{print ($1 * 7919) % 100003, $1}' >"$tmp/big.txt"
perf record -q -e cpu-clock/freq=2000/ -e page-faults/period=1/ --call-graph dwarf -o "$tmp/two.data" \
	-- sort "$tmp/big.txt" -o "$tmp/sorted.txt" >"$tmp/rec.log" 2>&1 ||
	{ echo "FAIL perf record"; cat "$tmp/rec.log"; exit 1; }
mt-unwind -q "$tmp/two.data" >"$tmp/two.uw" || { echo "FAIL mt-unwind"; exit 1; }
fail=0

rc=0
mt-fold "$tmp/two.uw" >"$tmp/both.folded" 2>"$tmp/both.err" || rc=$?
if [ "$rc" -ne 2 ] || ! grep -q 'cpu-clock/freq=2000/: [0-9]* samples' "$tmp/both.err" ||
	! grep -q 'page-faults/period=1/: [0-9]* samples' "$tmp/both.err" || [ -s "$tmp/both.folded" ]; then
	echo "FAIL: two events folded together (exit $rc):"; cat "$tmp/both.err"; fail=1
fi

# Read from a pipe, a perf.data file names no event (the names come after
# the data): mt-unwind names them from their attrs, never both alike.
rc=0
cat "$tmp/two.data" | mt-unwind -q - | mt-fold >/dev/null 2>"$tmp/pipe.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q 'cpu-clock: [0-9]* samples' "$tmp/pipe.err" &&
	grep -q 'page-faults: [0-9]* samples' "$tmp/pipe.err" ||
	{ echo "FAIL: through a pipe, two events folded together (exit $rc):"; cat "$tmp/pipe.err"; fail=1; }

for ev in page-faults/period=1/ cpu-clock/freq=2000/; do	# perf's names
	want=$(perf script -i "$tmp/two.data" -F event,period 2>/dev/null |
		awk -v e="$ev:" '$1 == e || $2 == e { s += ($1 == e ? $2 : $1) } END { print s + 0 }')
	got=$(mt-fold --event "$ev" "$tmp/two.uw" | awk '{ s += $NF } END { print s + 0 }')
	if [ "$want" -gt 0 ] && [ "$got" = "$want" ]; then
		echo "ok $ev: period $got, as perf script"
	else
		echo "FAIL $ev: mt-fold --event gives $got, perf script $want"; fail=1
	fi
done

rc=0
mt-fold --event cycles "$tmp/two.uw" >/dev/null 2>"$tmp/none.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "no sample of event 'cycles'" "$tmp/none.err" ||
	{ echo "FAIL: an event no sample has (exit $rc):"; cat "$tmp/none.err"; fail=1; }
# An input that cannot be read keeps its own exit code (3), --event or not.
rc=0
mt-fold --event cycles "$tmp/no-such-file" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 3 ] || { echo "FAIL: a missing input with --event: exit $rc, want 3"; fail=1; }
exit $fail
