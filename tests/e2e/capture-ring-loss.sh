#!/bin/bash
# A sample ring too small for a burst.  By default the program waits for
# mt-capture to make room: nothing is lost, every marker call is an event.
# With --no-wait it loses samples, never silently and never the totals:
# mt-capture's lost count, the LOST records in the stream and the marker
# calls the sampler counted agree, and every thread's exact totals still
# arrive (they may use the ring's last sixteenth, and wait for room).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

# 60,000 marker events in a few ms into the smallest ring (512 KiB).  16
# pages, not 1: the sample ring is the same, but the kernel's one-page
# buffers for the side-band records (MMAP, COMM) lost some in 3 runs of 10.
"$CAP" --mmap-pages 16 --rate 1 -o "$T/w.data" -- "$MT_FIXTURES/capture_alloc" 2 3000 \
	>"$T/out" 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "lost while waiting was on: $(cat "$T/err")"
mt-unwind -o "$T/w.txt" "$T/w.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
if grep -q "marker events\|recording lost" "$T/uw"; then fail "events missing: $(cat "$T/uw")"; fi
grep -q "^mt-unwind: [0-9]* events (alloc 30004," "$T/uw" ||
	fail "not every allocation is an event: $(head -1 "$T/uw")"
grep -q "^mt-capture: the program.s threads waited [0-9]* ms in all" "$T/err" || fail "no word of the wait: $(cat "$T/err")"
waited=$(capture_samples "$T/err")

"$CAP" --no-wait --mmap-pages 1 --rate 1 -o "$T/l.data" -- "$MT_FIXTURES/capture_alloc" 2 3000 \
	>"$T/out" 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
lost=$(capture_lost "$T/err")
[ "$lost" -gt 0 ] || fail "nothing lost: the ring held the burst? $(cat "$T/err")"
mt-unwind -o "$T/l.txt" "$T/l.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
grep -q "^mt-unwind: the recording lost $lost events" "$T/uw" ||
	fail "LOST records do not add up to mt-capture's $lost: $(cat "$T/uw")"
# The threads' own counts miss all but the frees made after a thread's
# counters retired (its TLS destructors: counted for the process only).
missing=$(sed -n 's/^mt-unwind: \([0-9]*\) marker events the sampler made are missing.*/\1/p' "$T/uw")
[ -n "$missing" ] && [ "$missing" -le "$lost" ] && [ "$missing" -ge $((lost - 100)) ] ||
	fail "the sampler's marker counts (${missing:-none} missing) do not match the loss of $lost: $(cat "$T/uw")"
if grep -q 'reason=dropped' "$T/l.txt"; then fail "a loss without a LOST record before it"; fi
# Two workers, the main thread, the process: all four totals, exact.
capture_regs "$T/l.data" >"$T/regs"
[ "$(awk '$2 == "mt:totals"' "$T/regs" | wc -l)" = 4 ] || fail "totals missing: $(grep totals "$T/regs")"
while read -r _ tid allocs _ frees _; do
	awk -v t="$tid" -v a="${allocs#allocs=}" -v f="${frees#frees=}" \
		'$2 == "mt:totals" && $3 == 1 && $10 == t && $5 == a && $6 == f { ok = 1 } END { exit !ok }' \
		"$T/regs" || fail "worker $tid: totals differ from the fixture's $allocs $frees"
done <"$T/out"
echo "ok: waiting, $waited samples and none lost; --no-wait, $lost of $((lost + $(capture_samples "$T/err"))) lost, all accounted for, totals exact"
