#!/bin/bash
# A record whose size holds and whose content does not (here a sample whose
# id names no event) is named, counted and stepped over: mt-encode keeps it
# as it is (decoding still gives the input back), mt-unwind writes a `lost
# ... reason=undecodable` line for it and goes on with the records after it.
# Both exit 1.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
ENC=$MT_BUILD/bin/mt-encode
UNW=$MT_BUILD/bin/mt-unwind

"$CAP" --rate 1 --seed 1 -o "$T/ok.data" -- "$MT_FIXTURES/capture_alloc" 0 30 >/dev/null 2>"$T/cap.err" ||
	fail "mt-capture: $(cat "$T/cap.err")"
# The 5th SAMPLE gets an id no attr has (mt-capture's samples start with
# their IDENTIFIER).
off=$(python3 - "$T/ok.data" "$T/bad.data" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], "rb").read())
pos, n = 16, 0
while pos + 8 <= len(d):
    typ, misc, size = struct.unpack_from("<IHH", d, pos)
    if typ == 9:
        n += 1
        if n == 5:
            struct.pack_into("<Q", d, pos + 8, 0x0bad0bad0bad)
            print(pos)
    pos += size
open(sys.argv[2], "wb").write(d)
PY
)
[ -n "$off" ] || fail "no 5th sample in the capture"

rc=0
"$ENC" -o "$T/bad.mtz" "$T/bad.data" 2>"$T/enc.err" || rc=$?
[ $rc -eq 1 ] || fail "mt-encode: exit $rc, want 1: $(cat "$T/enc.err")"
grep -q "record at offset $off (SAMPLE): .*matches no attr: kept as it is" "$T/enc.err" ||
	fail "mt-encode does not name the record: $(cat "$T/enc.err")"
"$ENC" -q -d "$T/bad.mtz" | cmp -s - "$T/bad.data" || fail "mt-encode lost the bad record"

"$UNW" -q "$T/ok.data" >"$T/ok.txt" || fail "mt-unwind on the good capture"
want=$(grep -c '^\(alloc\|free\)' "$T/ok.txt")
for f in bad.data bad.mtz; do
	rc=0
	"$UNW" -q "$T/$f" >"$T/bad.txt" 2>"$T/unw.err" || rc=$?
	[ $rc -eq 1 ] || fail "mt-unwind $f: exit $rc, want 1: $(cat "$T/unw.err")"
	grep -q "record at offset $off (SAMPLE): .*: skipped" "$T/unw.err" ||
		fail "mt-unwind $f does not name the record: $(cat "$T/unw.err")"
	got=$(grep -c '^\(alloc\|free\)' "$T/bad.txt")
	[ "$got" -eq $((want - 1)) ] || fail "mt-unwind $f: $got events, want $((want - 1)) (the rest lost?)"
	[ "$(grep -c $'^lost\t.*reason=undecodable' "$T/bad.txt")" -eq 1 ] ||
		fail "mt-unwind $f: no undecodable line"
	# the events after the bad record are all there
	grep '^\(alloc\|free\)' "$T/ok.txt" | tail -n 5 >"$T/last"
	while read -r line; do
		grep -qxF "$line" "$T/bad.txt" || fail "mt-unwind $f: '$line' missing"
	done <"$T/last"
done
echo "ok: one bad record named and stepped over by mt-encode (kept) and mt-unwind ($want events, 1 undecodable)"
