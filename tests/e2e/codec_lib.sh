# Shared by tests/e2e/codec-*.sh: temporaries, failure, perf checks, and a
# walk over an .mtz file's frame headers (layout in docs/formats/mtz.md).
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
ENC=${MT_BUILD:?}/bin/mt-encode

fail() { echo "FAIL: $*" >&2; exit 1; }

# Exit 77 (skip) unless perf can record user stacks here.
codec_skip_unless_perf() {
	command -v perf >/dev/null || { echo "skip: perf not installed"; exit 77; }
	if ! perf record -q -e cpu-clock --call-graph dwarf -o "$T/trial.data" -- true \
		>/dev/null 2>"$T/trial.err"; then
		echo "skip: perf record denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)): $(tail -n 1 "$T/trial.err")"
		exit 77
	fi
}

# u32 / u64 little-endian at byte offset $2 of file $1.
u32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
u64() { od -An -tu8 -j "$2" -N8 "$1" | tr -d ' '; }

# Prints "offset comp_size out_offset out_size" for each frame of $1 (line
# k + 1: frame k), leaving out the copy of frame 0 that follows frame 0
# from version 4 on.
mtz_frames() {
	local f=$1 off=16 size k=0
	size=$(stat -c %s "$f")
	while [ $((off + 48)) -le "$size" ]; do
		[ "$(dd if="$f" bs=1 skip="$off" count=4 status=none)" = MTZF ] || break
		local comp
		comp=$(u32 "$f" $((off + 8)))
		[ "$k" = 1 ] && [ "$(u32 "$f" $((off + 4)))" = 0 ] ||
			echo "$off $comp $(u64 "$f" $((off + 24))) $(u32 "$f" $((off + 16)))"
		off=$((off + 48 + comp))
		k=$((k + 1))
	done
}

# Flips one byte of file $1 at offset $2.
flip_byte() {
	local b
	b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
	printf "$(printf '\\%03o' $((b ^ 0x20)))" |
		dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# Round trip of perf stream $1 through mt-encode (extra options: $2...),
# as a pipe and as files; fails unless both give the input back exactly.
roundtrip() {
	local in=$1
	shift
	"$ENC" -q "$@" < "$in" | "$ENC" -d -q > "$T/rt.out" || fail "pipe round trip of $in failed"
	cmp -s "$in" "$T/rt.out" || fail "pipe round trip of $in differs"
	"$ENC" -q "$@" -o "$T/rt.mtz" "$in" || fail "encoding $in to a file failed"
	"$ENC" -d -q -o "$T/rt.out" "$T/rt.mtz" || fail "decoding $in from a file failed"
	cmp -s "$in" "$T/rt.out" || fail "file round trip of $in differs"
}
