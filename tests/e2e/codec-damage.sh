#!/bin/bash
# A damaged frame loses that frame only: the decoder names its offset and
# number, gives every other frame back intact and exits 1.  Truncated files
# and a missing end marker are reported the same way.
. "$(dirname "$0")/codec_lib.sh"
codec_skip_unless_perf

perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o - -- \
	"${MT_FIXTURES:?}/codec_threads" 2 5000000 > "$T/in" 2>"$T/rec.err" || fail "perf record: $(cat "$T/rec.err")"
"$ENC" -q --frame-size 65536 -o "$T/ok.mtz" "$T/in" || fail "encode"
mtz_frames "$T/ok.mtz" > "$T/frames"
n=$(wc -l < "$T/frames")
[ "$n" -ge 6 ] || fail "only $n frames"
insize=$(stat -c %s "$T/in")

# Decodes $1 and checks exit 1 and that the output is the input without
# original bytes [$2, $3).
expect_loss() {
	local rc=0
	"$ENC" -d < "$1" > "$T/out" 2> "$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "$4: exit $rc, want 1 ($(cat "$T/err"))"
	{ head -c "$2" "$T/in"; tail -c +$(($3 + 1)) "$T/in"; } > "$T/want"
	cmp -s "$T/out" "$T/want" || fail "$4: output is not the input less bytes $2..$3"
	# the decoder allocates a file's blocks ahead of its writes: what it
	# allocated for the lost bytes is released at the end
	local size used
	read -r size used < <(stat -c '%s %b*%B' "$T/out")
	[ $((used)) -le $((size + 65536)) ] || fail "$4: $((used)) bytes allocated for $size"
}

# frame 0, the stream's header part, is there twice: damage to the first
# copy loses nothing, and is reported (exit 1)
read -r off comp o osz < <(sed -n 1p "$T/frames")
cp "$T/ok.mtz" "$T/bad.mtz"
flip_byte "$T/bad.mtz" $((off + 48 + comp / 2))
expect_loss "$T/bad.mtz" 0 0 "payload of frame 0"
grep -qx "mt-encode: '<stdin>': frame 0 at offset $off: checksum mismatch; frame skipped, its copy is read instead" "$T/err" ||
	fail "message: $(cat "$T/err")"
grep -q "frames\? lost" "$T/err" && fail "frame 0: frames said lost: $(cat "$T/err")"
# and to both: frame 0 is lost
flip_byte "$T/bad.mtz" $((off + 48 + comp + 48 + comp / 2))
expect_loss "$T/bad.mtz" "$o" $((o + osz)) "payload of frame 0 and its copy"
grep -q "frame 0 (its copy) at offset $((off + 48 + comp)): checksum mismatch" "$T/err" || fail "message: $(cat "$T/err")"
grep -q "1 frame lost" "$T/err" || fail "no count of lost frames: $(cat "$T/err")"

for k in 1 2 $((n - 1)); do
	read -r off comp o osz < <(sed -n "$((k + 1))p" "$T/frames")
	# a byte in the middle of frame k's payload
	cp "$T/ok.mtz" "$T/bad.mtz"
	flip_byte "$T/bad.mtz" $((off + 48 + comp / 2))
	expect_loss "$T/bad.mtz" "$o" $((o + osz)) "payload of frame $k"
	grep -q "frame $k at offset $off: checksum mismatch" "$T/err" || fail "message: $(cat "$T/err")"
	grep -q "1 frame lost" "$T/err" || fail "no count of lost frames: $(cat "$T/err")"
	# a byte in frame k's header (its compressed size)
	cp "$T/ok.mtz" "$T/bad.mtz"
	flip_byte "$T/bad.mtz" $((off + 9))
	expect_loss "$T/bad.mtz" "$o" $((o + osz)) "header of frame $k"
	grep -q "frame $k at offset $off: damaged header" "$T/err" || fail "message: $(cat "$T/err")"
done

# truncated inside the last frame: the frames before it come back whole
read -r off comp o osz < <(tail -n 1 "$T/frames")
head -c $((off + 48 + comp / 2)) "$T/ok.mtz" > "$T/cut.mtz"
expect_loss "$T/cut.mtz" "$o" "$insize" "truncated last frame"
grep -q "frame $((n - 1)) at offset $off: truncated" "$T/err" || fail "message: $(cat "$T/err")"
# only the end marker missing: all data is there, still exit 1
head -c $(($(stat -c %s "$T/ok.mtz") - 48)) "$T/ok.mtz" > "$T/cut.mtz"
expect_loss "$T/cut.mtz" "$insize" "$insize" "missing end marker"
grep -q "no end marker" "$T/err" || fail "message: $(cat "$T/err")"
# A damaged recording is encoded whole: the records up to the damage are
# coded, the rest kept as it is, and decoding gives the input back byte for
# byte (exit 1, the offset named).  Two cases: the input ends inside a
# record; a record's size is 0, which breaks the framing.
python3 - "$T/in" > "$T/rec_off" <<'PY'
import struct, sys
b = open(sys.argv[1], 'rb').read()
off, n = struct.unpack_from('<Q', b, 8)[0], 0
while off + 8 <= len(b) and n < 300:
    size = struct.unpack_from('<H', b, off + 6)[0]
    off, n = off + size, n + 1
print(off)
PY
roff=$(cat "$T/rec_off")
[ "$roff" -gt 0 ] && [ "$roff" -lt "$insize" ] || fail "no 300th record ($roff)"
head -c $((roff + 20)) "$T/in" > "$T/cut.perf"
{ head -c $((roff + 6)) "$T/in"; printf '\0\0'; tail -c +$((roff + 9)) "$T/in"; } > "$T/zero.perf"
# the record made an AUXTRACE (type 71) whose payload (the u64 after the
# header) runs past the end: refused before the record is taken
{ head -c "$roff" "$T/in"; printf 'G\0\0\0'; tail -c +$((roff + 5)) "$T/in" | head -c 4
  printf '\0\0\0\0\0\0\0\200'; tail -c +$((roff + 17)) "$T/in"; } > "$T/payload.perf"
for c in cut zero payload; do
	rc=0; "$ENC" -o "$T/$c.mtz" "$T/$c.perf" 2>"$T/err" || rc=$?
	# (the payload one: in a pipe stream nothing bounds a payload, which
	# then takes the rest of the input, kept as it is from its end)
	at=$roff; [ $c = payload ] && at='[0-9]*'
	[ "$rc" = 1 ] && grep -q "the input from offset $at on, after the error above, is kept as it is" "$T/err" ||
		fail "$c recording: exit $rc, $(cat "$T/err")"
	"$ENC" -d "$T/$c.mtz" > "$T/back" || fail "$c recording: decoding"
	cmp -s "$T/back" "$T/$c.perf" || fail "$c recording: decoding does not give it back"
done
# An input refused at once creates no output file, and leaves an existing
# one as it was.
head -c 100 /dev/urandom > "$T/noise"
rc=0; "$ENC" -o "$T/noise.mtz" "$T/noise" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && [ ! -e "$T/noise.mtz" ] ||
	fail "refused input: exit $rc, output $(ls -l "$T/noise.mtz" 2>&1), $(cat "$T/err")"
cp "$T/ok.mtz" "$T/prev.mtz"
rc=0; "$ENC" -d -o "$T/prev.mtz" "$T/noise" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && cmp -s "$T/ok.mtz" "$T/prev.mtz" || fail "refused input: an existing output changed"

# garbage: not an .mtz
rc=0; head -c 100 /dev/urandom | "$ENC" -d > /dev/null 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "not an .mtz file" "$T/err" || fail "garbage: $rc $(cat "$T/err")"
echo ok
