#!/bin/bash
# mt-unwind's progress line: drawn on a terminal (here a pseudo-terminal made
# by script(1)), never when stderr is a file, never with -q.  The usual 2 s
# delay is set to 0 through MT_PROGRESS_DELAY_MS so a small input shows it.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
command -v script >/dev/null || { echo "script(1) not installed (bsdutils)"; exit 77; }

"$CAP" --rate 4096 --seed 1 -o "$T/s.perf" -- "$MT_FIXTURES/fold_sites" 2>"$T/cap.err" ||
	fail "mt-capture: $(cat "$T/cap.err")"
size=$(stat -c %s "$T/s.perf")
export MT_PROGRESS_DELAY_MS=0

on_tty() {	# on_tty ARGS: mt-unwind's terminal output with ARGS, CRs as newlines
	script -qfec "$MT_BUILD/bin/mt-unwind $* '$T/s.perf' >/dev/null" /dev/null | tr '\r' '\n'
}
on_tty >"$T/tty"
grep -aqE "^mt-unwind: [0-9.]+ (B|KiB|MiB) / [0-9.]+ (KiB|MiB) \([0-9]+%\), .*/s" "$T/tty" ||
	fail "no progress line on a terminal for a $size-byte input: $(cat -v "$T/tty")"
grep -aq "events/s" "$T/tty" || fail "the summary is missing after the progress line"

on_tty -q >"$T/tty-q"
! grep -aq "/s" "$T/tty-q" || fail "-q still draws: $(cat -v "$T/tty-q")"

"$MT_BUILD/bin/mt-unwind" "$T/s.perf" >/dev/null 2>"$T/file"
! grep -aq $'\r' "$T/file" || fail "progress drawn into a file: $(cat -v "$T/file")"
echo "ok: progress on a terminal, none in a file or with -q"
