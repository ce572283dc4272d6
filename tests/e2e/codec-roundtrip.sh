#!/bin/bash
# mt-encode | mt-encode -d gives back perf record's streams byte for byte
# (pipe and perf.data, a fixture and a real program, delta and --raw), and
# the delta coding does its job on them.
. "$(dirname "$0")/codec_lib.sh"
codec_skip_unless_perf

FIX=${MT_FIXTURES:?}
# perf's own pipe stream and file, with DWARF stacks, of a threaded fixture
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o - -- \
	"$FIX/codec_threads" 4 3000000 > "$T/threads.pipe" 2>"$T/rec.err" || fail "perf record: $(cat "$T/rec.err")"
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$T/threads.data" -- \
	"$FIX/codec_threads" 4 3000000 >/dev/null 2>"$T/rec.err" || fail "perf record: $(cat "$T/rec.err")"
# a real program: gzip of a binary, 16 KiB stacks
perf record -q -e cpu-clock -F 4000 --call-graph dwarf,16384 -o "$T/gzip.data" -- \
	sh -c 'gzip -9 < "$1" > /dev/null' sh "$(command -v perf)" 2>"$T/rec.err" ||
	fail "perf record gzip: $(cat "$T/rec.err")"

for f in threads.pipe threads.data gzip.data; do
	roundtrip "$T/$f"
	roundtrip "$T/$f" --raw
	roundtrip "$T/$f" --level 1 --frame-size 65536
done

# The summary line counts what perf script sees, and stacks were coded.
"$ENC" "$T/threads.data" > "$T/t.mtz" 2> "$T/enc.err" || fail "encode: $(cat "$T/enc.err")"
line=$(tail -n 1 "$T/enc.err")
samples=$(perf script -i "$T/threads.data" -F tid 2>/dev/null | wc -l)
[ "$samples" -gt 100 ] || fail "only $samples samples recorded"
"$ENC" --stats -q "$T/threads.data" 2> "$T/stats.err" > /dev/null
grep -q "^mt-encode: input .* $samples samples\$" "$T/stats.err" ||
	fail "--stats disagrees with perf script's $samples samples: $(cat "$T/stats.err")"
grep -q "^mt-encode: coded        $samples samples" "$T/stats.err" ||
	fail "not every sample was coded: $(cat "$T/stats.err")"
grep -q " 0 fallbacks" <<<"$line" || fail "fallbacks: $line"
d=$(stat -c %s "$T/t.mtz"); in=$(stat -c %s "$T/threads.data")
[ $((d * 20)) -lt "$in" ] || fail "$d bytes from $in: under 20x"

# A perf.data file's bytes after its data section (feature sections) start a
# frame of their own: the frame headers (docs/formats/mtz.md) must hold one
# whose out_offset is data offset + data size (perf.data header bytes 40-55).
python3 - "$T/threads.data" "$T/t.mtz" <<'PY' || fail "the feature sections do not start a frame"
import struct, sys
data = open(sys.argv[1], 'rb').read(56)
offset, size = struct.unpack_from('<QQ', data, 40)
z = open(sys.argv[2], 'rb').read()
pos, starts = 16, []
while pos + 48 <= len(z) and z[pos:pos + 4] == b'MTZF':
    comp, out_offset = struct.unpack_from('<I', z, pos + 8)[0], struct.unpack_from('<Q', z, pos + 24)[0]
    starts.append(out_offset)
    pos += 48 + comp
sys.exit(0 if offset + size in starts and len(starts) >= 2 else 1)
PY

# 32-bit stack hashes: the same round trips; the HASH32 flag (file header
# bytes 10-11, bit 1) set; at least 2 of the 4 bytes saved per sample (the
# hash is random); and mt-unwind reads the file as it reads perf's.
for f in threads.pipe threads.data gzip.data; do
	roundtrip "$T/$f" --hash-bits 32
done
"$ENC" -q --hash-bits 32 -o "$T/t32.mtz" "$T/threads.data" || fail "--hash-bits 32 failed"
[ $(($(od -An -tu2 -j 10 -N2 "$T/t32.mtz") & 2)) = 2 ] || fail "--hash-bits 32: no HASH32 flag"
[ $(($(od -An -tu2 -j 10 -N2 "$T/t.mtz") & 2)) = 0 ] || fail "default: HASH32 flag set"
d32=$(stat -c %s "$T/t32.mtz")
[ $((d32 + 2 * samples)) -le "$d" ] ||
	fail "--hash-bits 32: $d32 bytes against $d for $samples samples"
"$MT_BUILD/bin/mt-unwind" -q "$T/threads.data" > "$T/uw.data" 2>"$T/uw.err" ||
	fail "mt-unwind perf.data: $(cat "$T/uw.err")"
"$MT_BUILD/bin/mt-unwind" -q "$T/t32.mtz" > "$T/uw.mtz" 2>"$T/uw.err" ||
	fail "mt-unwind --hash-bits 32 .mtz: $(cat "$T/uw.err")"
# (all but the line naming the input)
grep -q '^# input: ' "$T/uw.data" && [ "$(wc -l < "$T/uw.data")" -gt 100 ] ||
	fail "mt-unwind printed: $(head -3 "$T/uw.data")"
diff <(grep -v '^# input: ' "$T/uw.data") <(grep -v '^# input: ' "$T/uw.mtz") > "$T/uw.diff" ||
	fail "mt-unwind reads the 32-bit .mtz differently: $(head -5 "$T/uw.diff")"

# mt-decode is mt-encode -d
"${MT_BUILD}/bin/mt-decode" -q < "$T/t.mtz" | cmp -s - "$T/threads.data" || fail "mt-decode differs"
# usage, environment and data errors
rc=0; "$ENC" --level 99 -o "$T/x" "$T/threads.data" 2>/dev/null || rc=$?
[ "$rc" = 2 ] || fail "--level 99: status $rc, want 2"
rc=0; "$ENC" -o "$T/x" "$T/no-such-file" 2>"$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q "cannot open '$T/no-such-file'" "$T/err" || fail "missing input: $rc $(cat "$T/err")"
rc=0; "$ENC" -d -o "$T/x" "$T/threads.data" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "not an .mtz file" "$T/err" || fail "decoding perf data: $rc $(cat "$T/err")"
rc=0; head -c 1000 "$T/threads.data" | "$ENC" -o "$T/x" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] || fail "truncated perf input: status $rc, $(cat "$T/err")"
"$ENC" --help | grep -q -- '--raw' || fail "--help lacks options"
"$ENC" --help | grep -q 'exit status' || fail "--help lacks the exit codes"
echo ok
