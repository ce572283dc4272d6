#!/bin/bash
# A command that outlives its capture: mt-capture marks the sample ring
# closed when it stops reading, so the processes left behind neither fill
# it nor wait for room for their exit totals (up to a second each on a full
# ring that nobody reads).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

# The shell exits once capture_alloc has mapped the ring, leaving it waiting
# for its go file. After the capture, 64 threads sample every allocation
# into the smallest ring (64 KiB with 8-byte stacks) and leave 66 totals,
# of which the 4 KiB kept for totals hold 16: the others would wait a
# second, twice in a row (threads, then the process), on an open ring.
"$CAP" --rate 1 --stack-size 8 --mmap-pages 1 -o "$T/o.data" -- sh -c \
	"'$MT_FIXTURES/capture_alloc' 64 2000 '$T/go' >'$T/out' 2>&1 & echo \$! >'$T/pid'
	 until grep -q mt-sample-ring /proc/\$!/maps; do sleep 0.01; done" \
	2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
pid=$(cat "$T/pid")
start=$(date +%s%N)
touch "$T/go"
# Running until it is gone or a zombie (its reaper, not its parent, is slow).
running() { [ -e "/proc/$pid/stat" ] && [ "$(cut -d')' -f2 "/proc/$pid/stat" | cut -d' ' -f2)" != Z ]; }
for i in $(seq 1000); do running || break; sleep 0.01; done
ms=$((($(date +%s%N) - start) / 1000000))
running && { kill "$pid"; fail "the program left behind still runs after 10 s"; }
[ "$(grep -c '^worker' "$T/out")" = 64 ] || fail "the program left behind: $(tail -3 "$T/out")"
[ "$ms" -lt 1500 ] || fail "the program left behind took $ms ms: it waited for room in a ring nobody reads"
echo "ok: the program left behind ran $ms ms after the capture"
