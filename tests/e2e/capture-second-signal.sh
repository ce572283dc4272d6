#!/bin/bash
# A second SIGINT/SIGTERM ends the capture at once even when the command
# ignores both: the stream is complete (mt-unwind and perf script read it),
# mt-capture exits 128 + N, then kills the command (SIGKILL) and says so.
# With -p the first signal ends the capture and the process is left running
# and named.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
UNW=$MT_BUILD/bin/mt-unwind

running() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:[[:space:]]*Z' /proc/"$1"/status 2>/dev/null; }

for sig in INT TERM; do
	rm -f "$T/s.data"
	# SIG_IGN survives exec: capture_alloc (runs until killed) ignores both.
	"$CAP" -o "$T/s.data" -- sh -c 'trap "" INT TERM; exec "$0" 2 0' \
		"$MT_FIXTURES/capture_alloc" >/dev/null 2>"$T/err" &
	cap=$!
	for _ in $(seq 100); do [ "$(stat -c %s "$T/s.data" 2>/dev/null || echo 0)" -gt 100000 ] && break; sleep 0.1; done
	cmd=$(pgrep -P $cap -x capture_alloc) || fail "SIG$sig: the command is not running: $(cat "$T/err")"
	kill -$sig $cap
	sleep 1
	running $cap || fail "SIG$sig: the first signal ended the capture of a command that ignores it"
	kill -$sig $cap
	t0=$(date +%s%N)
	for _ in $(seq 50); do running $cap || break; sleep 0.1; done
	if running $cap; then
		kill -KILL $cmd $cap
		fail "SIG$sig: mt-capture still running 5 s after the second signal"
	fi
	rc=0
	wait $cap || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	want=$((128 + $(kill -l $sig)))
	[ "$rc" = "$want" ] || fail "SIG$sig: mt-capture exited $rc, want $want: $(cat "$T/err")"
	# The end line, then what became of the command.
	sed '$d' "$T/err" | grep -q '^mt-capture: [0-9]* samples, [0-9]* lost, [0-9]* bytes' ||
		fail "SIG$sig: no end line before the last: $(cat "$T/err")"
	[ "$(tail -n 1 "$T/err")" = "mt-capture: second signal: capture ended; killed 'sh' (pid $cmd)" ] ||
		fail "SIG$sig: last line '$(tail -n 1 "$T/err")', want the command (pid $cmd) killed"
	for _ in $(seq 20); do running $cmd || break; sleep 0.1; done
	! running $cmd || { kill -KILL $cmd; fail "SIG$sig: the command (pid $cmd) is still running"; }
	"$UNW" -q -o "$T/s.unw" "$T/s.data" 2>"$T/uerr" || fail "SIG$sig: mt-unwind exited $?: $(cat "$T/uerr")"
	grep -q '^alloc' "$T/s.unw" || fail "SIG$sig: no allocations in the stream"
	perf script -i "$T/s.data" -F event >/dev/null 2>&1 || fail "SIG$sig: perf script cannot read the stream"
	echo "SIG$sig: ended ${ms} ms after the second signal, exit $rc"
done

# -p: the first signal detaches; the process runs on.
"$MT_FIXTURES/capture_alloc" 0 0 >/dev/null &
fix=$!
for _ in $(seq 100); do
	case $(readlink /proc/$fix/exe) in *capture_alloc) break ;; esac
	sleep 0.05
done
"$CAP" -p $fix -o "$T/p.data" 2>"$T/err" &
cap=$!
for _ in $(seq 300); do [ "$(stat -c %s "$T/p.data" 2>/dev/null || echo 0)" -gt 100000 ] && break; sleep 0.1; done
kill -INT $cap
rc=0
wait $cap || rc=$?
running $fix || fail "-p: the process did not survive the capture"
kill -KILL $fix
wait $fix 2>/dev/null || true
[ "$rc" = 0 ] || fail "-p: mt-capture exited $rc: $(cat "$T/err")"
[ "$(tail -n 1 "$T/err")" = "mt-capture: SIGINT: capture ended; process $fix left running" ] ||
	fail "-p: last line '$(tail -n 1 "$T/err")'"
"$UNW" -q -o "$T/p.unw" "$T/p.data" 2>"$T/uerr" || fail "-p: mt-unwind exited $?: $(cat "$T/uerr")"
echo "ok: a second SIGINT or SIGTERM ends the capture of a command that ignores them; -p leaves the process running"
