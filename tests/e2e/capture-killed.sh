#!/bin/bash
# mt-capture killed (SIGKILL) in the middle of a capture: the stream it
# leaves ends inside or after any record.  Each reader says where it ends,
# keeps everything before, and exits 1; mt-encode keeps the cut tail as it
# is, so decoding gives the file back byte for byte.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
"$CAP" --rate 4096 -o "$T/k.data" -- "$MT_FIXTURES/capture_alloc" 1 0 >/dev/null 2>"$T/err" &
cap=$!
for _ in $(seq 100); do [ -s "$T/k.data" ] && [ "$(stat -c %s "$T/k.data")" -gt 1000000 ] && break; sleep 0.05; done
{ kill -KILL $cap; wait $cap; } 2>/dev/null || true
pkill -KILL -f "$MT_FIXTURES/capture_alloc 1 0" || true
size=$(stat -c %s "$T/k.data")
[ "$size" -gt 1000000 ] || fail "the capture wrote only $size bytes"
# Cut it inside a record too (SIGKILL may land between two).
head -c $((size - 7)) "$T/k.data" >"$T/cut.data"
for f in k cut; do
	rc=0; "$MT_BUILD/bin/mt-unwind" -o "$T/$f.txt" "$T/$f.data" 2>"$T/uerr" || rc=$?
	n=$(grep -c '^alloc' "$T/$f.txt" || true)
	[ "$n" -gt 100 ] || fail "$f: only $n allocations kept"
	if [ "$f" = k ] && [ "$rc" = 0 ]; then
		continue	# killed between two records
	fi
	[ "$rc" = 1 ] || fail "$f: mt-unwind exit $rc: $(head -3 "$T/uerr")"
	grep -qE "^mt-unwind: '$T/$f.data': record at offset [0-9]+( \([A-Z_0-9]+\))?: truncated, the input ends (after [0-9]+ of [0-9]+ bytes|inside the record header)$" "$T/uerr" ||
		fail "$f: no message naming where the stream ends: $(head -3 "$T/uerr")"
	rc=0; "$MT_BUILD/bin/mt-encode" -q -o "$T/$f.mtz" "$T/$f.data" 2>"$T/eerr" || rc=$?
	[ "$rc" = 1 ] || fail "$f: mt-encode exit $rc: $(cat "$T/eerr")"
	"$MT_BUILD/bin/mt-encode" -d -q -o "$T/$f.back" "$T/$f.mtz" || fail "$f: decode"
	cmp -s "$T/$f.data" "$T/$f.back" || fail "$f: decoding does not give the cut stream back"
done
echo "ok: a killed capture's stream is read up to where it ends, reported, and kept whole by mt-encode"
