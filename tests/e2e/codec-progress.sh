#!/bin/bash
# mt-encode's progress line: drawn on stderr when stderr is a terminal (a
# pseudo-terminal from script(1) here) and the work outlasts the delay
# (MT_PROGRESS_DELAY_MS=0 draws at the first update), erased before the
# summary; never drawn into a file, with -q, or on a run shorter than the
# default 2 s delay.  Encoding, decoding (-d and mt-decode), file and pipe.
. "$(dirname "$0")/codec_lib.sh"
command -v script >/dev/null || { echo "skip: script(1) (bsdutils) not installed"; exit 77; }
codec_skip_unless_perf

# Enough records for several updates (mt-encode updates every 1024 records).
perf record -q -e cpu-clock -c 50000 --call-graph dwarf,1024 -o - -- \
	"${MT_FIXTURES:?}/codec_threads" 4 3000000 > "$T/in.pipe" 2>"$T/rec.err" ||
	fail "perf record: $(cat "$T/rec.err")"
"$ENC" -o "$T/ref.mtz" "$T/in.pipe" 2>"$T/enc.err" || fail "encode: $(cat "$T/enc.err")"
# several frames, decoded one by one
"$ENC" -q -o "$T/multi.mtz" --frame-size 1048576 "$T/in.pipe" || fail "encode, 1 MiB frames"
records=$(sed -n 's/^mt-encode: \([0-9]*\) records.*/\1/p' "$T/enc.err")
[ "${records:-0}" -ge 2048 ] || fail "only ${records:-0} records recorded: $(cat "$T/enc.err")"

# Runs shell command $1 with stderr (and stdout) on a fresh pseudo-terminal,
# stdin from /dev/null (never the caller's terminal); the terminal's bytes go
# to file $2.  Commands take their paths from the environment (ENC, T).
on_tty() {
	ENC=$ENC T=$T SHELL=/bin/sh script -qfec "$1" /dev/null < /dev/null > "$2" ||
		fail "'$1' under a terminal: status $?: $(cat -v "$2")"
}

# Size in the units the progress line uses (1024-based, one decimal).
human() {
	awk -v b="$1" 'BEGIN { split("B KiB MiB GiB TiB", u, " "); i = 1
		while (b >= 1024 && i < 5) { b /= 1024; i++ }
		if (i == 1) printf "%.0f %s", b, u[i]; else printf "%.1f %s", b, u[i] }'
}

# Checks terminal transcript $1 of tool $2 (mt-encode / mt-decode): at least
# one progress line out of $3 total bytes ("" when the total is unknown),
# percentages rising to at most 100, and the line erased before the summary.
check_drawn() {
	local out=$1 tool=$2 total=$3 draws pct last=0
	# each redraw starts with \r and ends clearing the rest of the line
	draws=$(tr '\r' '\n' < "$out" | sed -n 's/\x1b\[K$//p' | grep -a "^$tool: ")
	[ -n "$draws" ] || fail "$tool drew no progress line: $(cat -v "$out")"
	while IFS= read -r line; do
		if [ -n "$total" ]; then
			[[ $line =~ ^$tool:\ [0-9.]+\ [KMG]?i?B\ /\ $(human "$total")\ \(([0-9]+)%\),\ [0-9.]+\ [KMG]?i?B/s,\ ETA\ [0-9]+:[0-9][0-9]$ ]] ||
				fail "$tool progress line without the total $(human "$total"): '$line'"
			pct=${BASH_REMATCH[1]}
			[ "$pct" -ge "$last" ] && [ "$pct" -le 100 ] ||
				fail "$tool progress went from $last% to $pct%: $draws"
			last=$pct
		else
			[[ $line =~ ^$tool:\ [0-9.]+\ [KMG]?i?B,\ [0-9.]+\ [KMG]?i?B/s$ ]] ||
				fail "$tool progress line of an input of unknown size: '$line'"
		fi
	done <<<"$draws"
	# erased (\r ESC[K) right before the summary line, which stays
	grep -aq $'\r\e\\[K'"$tool: $records records" "$out" ||
		fail "$tool progress line not erased before the summary: $(cat -v "$out")"
}

export MT_PROGRESS_DELAY_MS=0
size=$(stat -c %s "$T/in.pipe")
mtz_size=$(stat -c %s "$T/multi.mtz")

# encoding a file, and a file on stdin: the total is known
on_tty '"$ENC" -o "$T/a.mtz" "$T/in.pipe"' "$T/tty1"
check_drawn "$T/tty1" mt-encode "$size"
cmp -s "$T/a.mtz" "$T/ref.mtz" || fail "the .mtz written with a progress line differs"
on_tty '"$ENC" -o "$T/b.mtz" < "$T/in.pipe"' "$T/tty2"
check_drawn "$T/tty2" mt-encode "$size"
# a pipe: no total, no percentage, no ETA
on_tty 'cat "$T/in.pipe" | "$ENC" -o "$T/c.mtz"' "$T/tty3"
check_drawn "$T/tty3" mt-encode ""
cmp -s "$T/c.mtz" "$T/ref.mtz" || fail "the .mtz encoded from a pipe differs"

# decoding: bytes of .mtz read, of the .mtz's size
on_tty '"$ENC" -d -o "$T/d.out" "$T/multi.mtz"' "$T/tty4"
check_drawn "$T/tty4" mt-encode "$mtz_size"
cmp -s "$T/d.out" "$T/in.pipe" || fail "decoding with a progress line differs"
on_tty '"${ENC%/*}/mt-decode" -o "$T/e.out" < "$T/multi.mtz"' "$T/tty5"
check_drawn "$T/tty5" mt-decode "$mtz_size"
cmp -s "$T/e.out" "$T/in.pipe" || fail "mt-decode with a progress line differs"

# -q: nothing at all on the terminal
on_tty '"$ENC" -q -o "$T/f.mtz" "$T/in.pipe"; "$ENC" -d -q -o "$T/f.out" "$T/ref.mtz"' "$T/tty6"
[ ! -s "$T/tty6" ] || fail "-q wrote to the terminal: $(cat -v "$T/tty6")"

# stderr to a file: the summary line only, no \r, no escape sequences
"$ENC" -o "$T/g.mtz" "$T/in.pipe" 2>"$T/file.err" || fail "encode: $(cat "$T/file.err")"
"$ENC" -d -o "$T/g.out" "$T/ref.mtz" 2>>"$T/file.err" || fail "decode: $(cat "$T/file.err")"
[ "$(wc -l < "$T/file.err")" = 2 ] && ! grep -q $'[\r\e]' "$T/file.err" ||
	fail "stderr to a file is not just the two summary lines: $(cat -v "$T/file.err")"

# the default delay (2 s): a run of a few milliseconds draws nothing
unset MT_PROGRESS_DELAY_MS
on_tty '"$ENC" -o "$T/h.mtz" "$T/in.pipe"' "$T/tty7"
! grep -aq $'\e' "$T/tty7" ||
	fail "a short run drew a progress line: $(cat -v "$T/tty7")"
grep -aq "^mt-encode: $records records" "$T/tty7" || fail "no summary line: $(cat -v "$T/tty7")"
echo ok
