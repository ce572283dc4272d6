#!/bin/bash
# Intact frames out of sequence: the reader checks each frame's number and
# original offset against the frames before it.  A frame removed, repeated
# or swapped with its neighbour, and bytes after the end marker, are
# reported with their .mtz offset and exit 1, from mt-encode -d and
# mt-unwind alike; every intact frame is used, a swapped one in its place.
. "$(dirname "$0")/codec_lib.sh"
CAP=${MT_BUILD}/bin/mt-capture
UNW=${MT_BUILD}/bin/mt-unwind
[ -x "$CAP" ] && [ -x "$UNW" ] || { echo "skip: mt-capture or mt-unwind not built yet"; exit 77; }
codec_skip_unless_perf

"$CAP" --mode trace -c 1 --stack-size 1024 -o "$T/in" -- "${MT_FIXTURES:?}/codec_malloc_loop" 200 \
	>/dev/null 2>"$T/cap.err" || fail "mt-capture: $(cat "$T/cap.err")"
"$ENC" -q --frame-size 16384 -o "$T/ok.mtz" "$T/in" || fail "encode"
mtz_frames "$T/ok.mtz" > "$T/frames"
n=$(wc -l < "$T/frames")
[ "$n" -ge 8 ] || fail "only $n frames"
"$UNW" -q -o "$T/ok.txt" "$T/ok.mtz" || fail "mt-unwind of the intact file"
allocs=$(grep -c '^alloc' "$T/ok.txt")
[ "$allocs" -ge 200 ] || fail "only $allocs allocations in the intact file"

# frame k's fields: offset comp out_offset out_size
frame() { sed -n "$(($1 + 1))p" "$T/frames"; }
# Rewrites ok.mtz with its frames in the order given (frame numbers; frame
# 0 with its copy), then the end marker, into $1.
reorder() {
	local out=$1
	shift
	python3 - "$T/ok.mtz" "$out" "$@" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
off, fr = 16, []
while d[off:off + 4] == b'MTZF':
    cs = struct.unpack_from('<I', d, off + 8)[0]
    if len(fr) == 1 and d[off:off + 48 + cs] == fr[0]:
        fr[0] += d[off:off + 48 + cs]	# frame 0's copy goes with it
    else:
        fr.append(d[off:off + 48 + cs])
    off += 48 + cs
open(sys.argv[2], 'wb').write(d[:16] + b''.join(fr[int(k)] for k in sys.argv[3:]) + d[off:])
PY
}
# Decodes $1: exit 1, the message $2 (a fixed string) on stderr.
decode_expect() {
	local rc=0
	"$ENC" -d -o "$T/out" "$1" 2> "$T/err" || rc=$?
	[ "$rc" = 1 ] || fail "$1: mt-encode -d exit $rc, want 1 ($(cat "$T/err"))"
	grep -qF -- "$2" "$T/err" || fail "$1: no '$2' in: $(cat "$T/err")"
}
# mt-unwind of $1: exit 1, the message $2, and $3 allocations.
unwind_expect() {
	local rc=0
	"$UNW" -q -o "$T/u.txt" "$1" 2> "$T/uerr" || rc=$?
	[ "$rc" = 1 ] || fail "$1: mt-unwind exit $rc, want 1 ($(cat "$T/uerr"))"
	grep -qF -- "$2" "$T/uerr" || fail "$1: mt-unwind: no '$2' in: $(cat "$T/uerr")"
	local got
	got=$(grep -c '^alloc' "$T/u.txt")
	[ "$got" = "$3" ] || fail "$1: mt-unwind: $got allocations, want $3"
}
seq_but() { local a=$1 b=$2; seq 0 $((n - 1)) | awk -v a="$a" -v b="$b" '$1 != a && $1 != b'; }

read -r off3 comp3 o3 osz3 < <(frame 3)
read -r off4 comp4 o4 osz4 < <(frame 4)

# dropped: frame 4 reports frame 3 missing and its original bytes lost
# shellcheck disable=SC2046
reorder "$T/drop.mtz" $(seq_but 3 -1)
decode_expect "$T/drop.mtz" \
	"'$T/drop.mtz': frame 4 at offset $off3: frame 3 expected, original offset $o3: 1 frame missing (original bytes $o3..$o4 lost)"
grep -qF "1 frame lost" "$T/err" || fail "drop: no count: $(cat "$T/err")"
{ head -c "$o3" "$T/in"; tail -c +$((o4 + 1)) "$T/in"; } > "$T/want"
cmp -s "$T/out" "$T/want" || fail "drop: output is not the input less bytes $o3..$o4"
rc=0; "$UNW" -q -o "$T/u.txt" "$T/drop.mtz" 2> "$T/uerr" || rc=$?
[ "$rc" = 1 ] && grep -qF "frame 4 at offset $off3: frame 3 expected" "$T/uerr" ||
	fail "drop: mt-unwind exit $rc: $(cat "$T/uerr")"
[ "$(grep -c '^alloc' "$T/u.txt")" -lt "$allocs" ] || fail "drop: mt-unwind lost no allocation"

# duplicated: the repeat is skipped, the output is the input exactly
# shellcheck disable=SC2046
reorder "$T/dup.mtz" $(seq 0 4) $(seq 4 $((n - 1)))
read -r doff _ < <(mtz_frames "$T/dup.mtz" | sed -n 6p)
decode_expect "$T/dup.mtz" \
	"'$T/dup.mtz': frame 4 at offset $doff: frame 5 expected, original offset $((o4 + osz4)): repeated or out of order (original bytes $o4..$((o4 + osz4)), read or reported lost already); frame skipped"
grep -qF "0 frames lost, 1 skipped as repeated or out of order ($((48 + comp4)) bytes of .mtz skipped)" "$T/err" ||
	fail "dup: no count: $(cat "$T/err")"
cmp -s "$T/out" "$T/in" || fail "dup: output differs from the input"
unwind_expect "$T/dup.mtz" "frame 4 at offset $doff: frame 5 expected" "$allocs"
cmp -s <(grep '^alloc' "$T/u.txt") <(grep '^alloc' "$T/ok.txt") || fail "dup: other allocations"

# swapped with its neighbour: read in order, nothing lost
# shellcheck disable=SC2046
reorder "$T/swap.mtz" $(seq 0 2) 4 3 $(seq 5 $((n - 1)))
decode_expect "$T/swap.mtz" \
	"'$T/swap.mtz': frame 4 at offset $off3: out of order, frame 3 follows it at offset $((off3 + 48 + comp4)): read after that one"
cmp -s "$T/out" "$T/in" || fail "swap: output differs from the input"
grep -q "frames\? lost" "$T/err" && fail "swap: frames said lost: $(cat "$T/err")"
unwind_expect "$T/swap.mtz" "frame 4 at offset $off3: out of order" "$allocs"
cmp -s <(grep '^alloc' "$T/u.txt") <(grep '^alloc' "$T/ok.txt") || fail "swap: other allocations"

# moved further: frame 3 after frame 5 is missing where it belonged and
# skipped where it is
# shellcheck disable=SC2046
reorder "$T/move.mtz" $(seq 0 2) 4 5 3 $(seq 6 $((n - 1)))
decode_expect "$T/move.mtz" "frame 4 at offset $off3: frame 3 expected, original offset $o3: 1 frame missing"
grep -qF "frame 3 at offset" "$T/err" && grep -qF "frame 6 expected" "$T/err" &&
	grep -qF "1 frame lost, 1 skipped as repeated or out of order" "$T/err" || fail "move: $(cat "$T/err")"
cmp -s "$T/out" "$T/want" || fail "move: output is not the input less bytes $o3..$o4"

# trailing data after the end marker: reported with its offsets, ignored
size=$(stat -c %s "$T/ok.mtz")
{ cat "$T/ok.mtz"; head -c 1000 "$T/ok.mtz"; } > "$T/trail.mtz"
decode_expect "$T/trail.mtz" \
	"'$T/trail.mtz': end marker at offset $((size - 48)): followed by 1000 bytes of trailing data (offsets $size..$((size + 1000))), ignored"
cmp -s "$T/out" "$T/in" || fail "trailing: output differs from the input"
unwind_expect "$T/trail.mtz" "followed by 1000 bytes of trailing data" "$allocs"
# the same through a pipe
rc=0; "$ENC" -d < "$T/trail.mtz" > "$T/out" 2> "$T/err" || rc=$?
[ "$rc" = 1 ] && grep -qF "followed by 1000 bytes of trailing data" "$T/err" || fail "trailing, pipe: exit $rc $(cat "$T/err")"

# frame 0 damaged: its copy is read, mt-unwind uses every frame (exit 1,
# the damage reported); both copies damaged: mt-unwind says the stream's
# start is lost, which no later frame can be parsed without
read -r off0 comp0 _ < <(frame 0)
cp "$T/ok.mtz" "$T/f0.mtz"
flip_byte "$T/f0.mtz" $((off0 + 48 + comp0 / 2))
unwind_expect "$T/f0.mtz" "'$T/f0.mtz': frame 0 at offset $off0: checksum mismatch; frame skipped, its copy is read instead" "$allocs"
cmp -s <(grep '^alloc' "$T/u.txt") <(grep '^alloc' "$T/ok.txt") || fail "frame 0: other allocations"
decode_expect "$T/f0.mtz" "its copy is read instead"
cmp -s "$T/out" "$T/in" || fail "frame 0: output differs from the input"
flip_byte "$T/f0.mtz" $((off0 + 48 + comp0 + 48 + comp0 / 2))
unwind_expect "$T/f0.mtz" "'$T/f0.mtz': frame 0 (its copy) at offset $((off0 + 48 + comp0)): checksum mismatch; frame skipped (original bytes 0..$(frame 0 | cut -d' ' -f4) lost)" 0
grep -qxF "mt-unwind: '$T/f0.mtz': the start of the perf stream (frame 0: its header and attrs) is lost, as reported above: the frames after it cannot be parsed without it" "$T/uerr" ||
	fail "frame 0 and its copy: $(cat "$T/uerr")"

# the intact file: no report at all
"$ENC" -d -q -o "$T/out" "$T/ok.mtz" 2> "$T/err" || fail "intact: exit $?"
[ ! -s "$T/err" ] || fail "intact: $(cat "$T/err")"
echo ok
