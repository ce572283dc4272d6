#!/bin/bash
# mt-capture's streams in every mode come back byte for byte through
# mt-encode | mt-encode -d.
. "$(dirname "$0")/codec_lib.sh"
CAP=${MT_BUILD}/bin/mt-capture
[ -x "$CAP" ] || { echo "skip: $CAP not built yet"; exit 77; }
codec_skip_unless_perf

FIX=${MT_FIXTURES:?}
run_capture() {
	local name=$1
	shift
	"$CAP" "$@" -o "$T/$name" -- "$FIX/codec_threads" 4 20000 >/dev/null 2>"$T/cap.err" ||
		fail "mt-capture $*: $(cat "$T/cap.err")"
}
run_capture sample.perf --mode sample --rate 8192 --seed 1
run_capture trace.perf --mode trace -c 5
run_capture event.perf --mode event -e cpu-clock -F 4000
run_capture big.perf --mode trace -c 50 --stack-size 32768
for f in sample.perf trace.perf event.perf big.perf; do
	[ "$(stat -c %s "$T/$f")" -gt 10000 ] || fail "$f: capture too small to test"
	roundtrip "$T/$f"
	roundtrip "$T/$f" --raw
	"$ENC" "$T/$f" 2>&1 >/dev/null | grep -q " 0 fallbacks" || fail "$f: fallbacks"
done
# On allocation stacks (each close to the thread's previous one) the delta
# coding takes well under what zstd alone makes of the stream (about half
# when this was written).
"$ENC" -q "$T/trace.perf" > "$T/d.mtz"
"$ENC" -q --raw "$T/trace.perf" > "$T/r.mtz"
d=$(stat -c %s "$T/d.mtz"); r=$(stat -c %s "$T/r.mtz")
[ $((d * 10)) -lt $((r * 7)) ] || fail "trace stream: delta $d bytes, zstd alone $r bytes"

echo ok
