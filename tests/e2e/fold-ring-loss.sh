#!/bin/bash
# A real --no-wait capture whose sample ring overflows: mt-unwind writes the
# loss twice over, as the kernel's LOST records (reason=kernel, no thread
# named) and as each thread's marker calls the stream lacks (reason=unseen,
# from the sampler's own counts).  mt-fold counts each lost event once: its
# figure is mt-capture's, in the warning, the report and the JSON.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
PATH=$MT_BUILD/bin:$PATH

# As tests/e2e/capture-ring-loss.sh: 60,000 marker events in a few ms into
# the smallest ring.
"$CAP" --no-wait --mmap-pages 1 --rate 1 -o "$T/l.data" -- "$MT_FIXTURES/capture_alloc" 2 3000 \
	>"$T/out" 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
lost=$(capture_lost "$T/err")
[ "$lost" -gt 0 ] || fail "nothing lost: the ring held the burst? $(cat "$T/err")"
mt-unwind -o "$T/l.txt" "$T/l.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
kernel=$(awk -F'\t' '$1 == "lost" && $5 ~ /reason=kernel/ { sub(/.*count=/, "", $5); sub(/ .*/, "", $5); n += $5; r++ }
	END { print n + 0, r + 0 }' "$T/l.txt")
unseen=$(awk -F'\t' '$1 == "lost" && $5 ~ /reason=unseen/ { sub(/.*count=/, "", $5); sub(/ .*/, "", $5); n += $5 }
	END { print n + 0 }' "$T/l.txt")
[ "${kernel% *}" = "$lost" ] || fail "the LOST records count ${kernel% *}, mt-capture $lost"
# The double count needs both: the test would pass vacuously without it.
[ "$unseen" -gt 0 ] || fail "no reason=unseen line: nothing counted twice to begin with"

mt-fold "$T/l.txt" >/dev/null 2>"$T/fold.err" || fail "mt-fold: $(cat "$T/fold.err")"
grep -qx "mt-fold: warning: the capture lost $lost events (${kernel#* } lost records)" "$T/fold.err" ||
	fail "mt-fold's count is not mt-capture's $lost (unseen $unseen): $(cat "$T/fold.err")"
mt-fold --report --wide "$T/l.txt" >"$T/report" 2>/dev/null || fail "mt-fold --report"
grep -q "^warning: the capture lost $lost events (${kernel#* } lost records)" "$T/report" ||
	fail "report: $(grep lost "$T/report")"
grep -q "^total alloc_bytes: .* (exact over the events captured; $lost events lost: at least this)" "$T/report" ||
	fail "report total: $(grep '^total' "$T/report")"
mt-fold --json "$T/l.txt" >"$T/json" 2>/dev/null || fail "mt-fold --json"
grep -q "\"lost_events\": $lost," "$T/json" || fail "json: $(grep lost_events "$T/json")"
echo "ok: mt-capture and mt-fold both count $lost lost events (LOST records $lost, unseen marker calls $unseen)"
