#!/bin/bash
# Hostile values in a real recording's header and samples: an attr section
# at offset 2^63 is a data problem (exit 1, the offset named), not a read
# failure (3); feature bits no perf defines are warned about; a stream whose
# every sample is bad names the first 10 and counts the rest.
. "$(dirname "$0")/codec_lib.sh"
CAP=${MT_BUILD}/bin/mt-capture
UNW=${MT_BUILD}/bin/mt-unwind
[ -x "$CAP" ] && [ -x "$UNW" ] || { echo "skip: mt-capture or mt-unwind not built yet"; exit 77; }
codec_skip_unless_perf

perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$T/p.data" -- \
	"${MT_FIXTURES:?}/codec_threads" 2 2000000 > /dev/null 2>"$T/rec.err" || fail "perf record: $(cat "$T/rec.err")"
[ "$(u64 "$T/p.data" 8)" = 104 ] || fail "perf record did not write a perf.data file"
# the copies: attrs.offset (header +24) 2^63; every feature bit (+72, 32 bytes) set
python3 - "$T/p.data" "$T/off.data" "$T/feat.data" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
e = bytearray(d); struct.pack_into('<Q', e, 24, 1 << 63); open(sys.argv[2], 'wb').write(e)
f = bytearray(d); f[72:104] = b'\xff' * 32; open(sys.argv[3], 'wb').write(f)
PY
msg="'$T/off.data': attr at offset 9223372036854775808 (136 bytes) lies past the end of the file"
# (the attr's size is perf's: read it from the header, attr_size at +16)
msg=${msg/136/$(u64 "$T/p.data" 16)}
rc=0; "$ENC" -o "$T/off.mtz" "$T/off.data" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && [ "$(cat "$T/err")" = "mt-encode: $msg" ] || fail "attrs.offset 2^63: mt-encode exit $rc: $(cat "$T/err")"
[ ! -e "$T/off.mtz" ] || fail "attrs.offset 2^63: an output was created"
rc=0; "$UNW" -q -o "$T/u.txt" "$T/off.data" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -qxF "mt-unwind: $msg" "$T/err" || fail "attrs.offset 2^63: mt-unwind exit $rc: $(cat "$T/err")"

warn="'$T/feat.data': file header at offset 72: 225 feature bits unknown to this build set (0, 32..255): ignored, and the feature sections (event names) may be misread"
rc=0; "$ENC" -q -o "$T/feat.mtz" "$T/feat.data" 2> "$T/err" || rc=$?
[ "$rc" = 0 ] && [ "$(cat "$T/err")" = "mt-encode: warning: $warn" ] || fail "feature bits: mt-encode exit $rc: $(cat "$T/err")"
"$ENC" -d -q "$T/feat.mtz" | cmp -s - "$T/feat.data" || fail "feature bits: the file does not round-trip"
rc=0; "$UNW" -q -o "$T/u.txt" "$T/feat.data" 2> "$T/err" || rc=$?
grep -qxF "mt-unwind: warning: $warn" "$T/err" || fail "feature bits: mt-unwind (exit $rc): $(cat "$T/err")"
# the intact file: no warning
"$ENC" -q -o "$T/p.mtz" "$T/p.data" 2> "$T/err" && [ ! -s "$T/err" ] || fail "intact file: $(cat "$T/err")"

# dyn_size 2^63 in every sample of a capture that has a stack dump (its
# samples end with STACK_USER: u64 size 1024, the dump, u64 dyn_size)
"$CAP" --mode trace -c 1 --stack-size 1024 -o "$T/in" -- "$MT_FIXTURES/codec_malloc_loop" 100 \
	>/dev/null 2>"$T/cap.err" || fail "mt-capture: $(cat "$T/cap.err")"
nbad=$(python3 - "$T/in" "$T/dyn.perf" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, n = struct.unpack_from('<Q', d, 8)[0], 0
while off + 8 <= len(d):
    t, _, size = struct.unpack_from('<IHH', d, off)
    if t == 9 and size > 1040 and struct.unpack_from('<Q', d, off + size - 1040)[0] == 1024:
        struct.pack_into('<Q', d, off + size - 8, 1 << 63)
        n += 1
    off += size
open(sys.argv[2], 'wb').write(d)
print(n)
PY
)
[ "$nbad" -ge 100 ] || fail "only $nbad samples with a stack dump"
rc=0; "$ENC" -q -o "$T/dyn.mtz" "$T/dyn.perf" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] || fail "dyn_size 2^63: exit $rc"
named=$(grep -c "(SAMPLE): stack dyn_size 9223372036854775808 exceeds its size 1024: kept as it is$" "$T/err")
[ "$named" = 10 ] || fail "dyn_size 2^63: $named records named, want 10: $(head -n 20 "$T/err")"
grep -qxF "mt-encode: '$T/dyn.perf': $nbad records could not be parsed and are kept as they are (not delta-coded); the first 10 are named above" "$T/err" ||
	fail "dyn_size 2^63: no count of $nbad: $(tail -n 3 "$T/err")"
[ "$(wc -l < "$T/err")" = 11 ] || fail "dyn_size 2^63: $(wc -l < "$T/err") lines"
"$ENC" -d -q "$T/dyn.mtz" | cmp -s - "$T/dyn.perf" || fail "dyn_size 2^63: the stream does not round-trip"
echo ok
