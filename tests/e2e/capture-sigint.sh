#!/bin/bash
# SIGINT mid-run: mt-capture passes it to the command, finishes the stream
# (perf script reads it) and exits with the command's status (128 + 2).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

for sig in INT TERM; do
	rm -f "$T/i.data"
	"$CAP" --rate 65536 -o "$T/i.data" -- "$MT_FIXTURES/capture_alloc" 2 0 >/dev/null 2>"$T/err" &
	cap=$!
	# Wait until samples flow, then stop.
	for _ in $(seq 50); do [ "$(stat -c %s "$T/i.data" 2>/dev/null || echo 0)" -gt 100000 ] && break; sleep 0.1; done
	kill -$sig $cap
	rc=0
	wait $cap || rc=$?
	want=$((128 + $(kill -l $sig)))
	[ "$rc" = "$want" ] || fail "SIG$sig: mt-capture exited $rc, want $want: $(cat "$T/err")"
	grep -q '^mt-capture: [0-9]* samples, [0-9]* lost, [0-9]* bytes' "$T/err" || fail "SIG$sig: no end line"
	perf script -i "$T/i.data" -F event >"$T/script" 2>/dev/null || fail "SIG$sig: perf script cannot read the stream"
	grep -q 'mt:alloc' "$T/script" || fail "SIG$sig: no samples in the stream"
done
echo "ok: SIGINT and SIGTERM leave a readable stream"
