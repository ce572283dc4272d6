#!/bin/bash
# mt-encode's command line and its documentation: every option of --help is
# in the man page and docs/encode.md and the other way round, the man page
# formats without warnings, option values are checked at both ends of their
# ranges, usage errors name the program and the option (exit 2), output to
# a terminal is refused without -f.  No perf needed: the input is a perf pipe
# stream header with no records, which round-trips.
. "$(dirname "$0")/codec_lib.sh"
SRC=${MT_SRC:?}
MAN=$SRC/docs/man/mt-encode.1
DEC=${ENC%/*}/mt-decode

# --help's long options, the man page's option tags (.TP then .B/.BR/.BI
# lines, \- unescaped) and docs/encode.md's option headings, each sorted.
"$ENC" --help | grep -o -- '--[a-z][a-z-]*' | sort -u > "$T/help"
sed 's/\\%//g; s/\\-/-/g' "$MAN" | awk '/^\.SH OPTIONS/ { on = 1; next } /^\.S[HS]/ { on = 0 }
	on && prev == ".TP" { print } { prev = $0 }' | grep -o -- '--[a-z][a-z-]*' | sort -u > "$T/man"
awk '/^## OPTIONS/ { on = 1; next } /^## / { on = 0 } on && /^`-/' "$SRC/docs/encode.md" |
	grep -o -- '--[a-z][a-z-]*' | sort -u > "$T/md"
[ "$(wc -l < "$T/help")" -ge 10 ] || fail "--help lists only: $(cat "$T/help")"
cmp -s "$T/help" "$T/man" || fail "--help and the man page's OPTIONS differ: $(diff "$T/help" "$T/man")"
cmp -s "$T/help" "$T/md" || fail "--help and docs/encode.md's OPTIONS differ: $(diff "$T/help" "$T/md")"
if command -v groff >/dev/null; then
	groff -man -Tutf8 -ww "$MAN" > "$T/man.txt" 2> "$T/groff.err" || fail "groff failed"
	[ ! -s "$T/groff.err" ] || fail "groff warns: $(cat "$T/groff.err")"
	grep -q "mt-decode" "$T/man.txt" || fail "the man page does not render mt-decode"
else
	echo "note: groff not installed, the man page was not formatted"
fi

# an empty perf pipe stream: magic and a 16-byte header
printf 'PERFILE2\020\0\0\0\0\0\0\0' > "$T/empty.pipe"
ok() {	# ok OPTIONS...: encodes with them, the round trip gives the input back
	"$ENC" -q "$@" -o "$T/ok.mtz" "$T/empty.pipe" || fail "mt-encode $* refused: status $?"
	"$DEC" -q -o "$T/ok.out" "$T/ok.mtz" && cmp -s "$T/ok.out" "$T/empty.pipe" ||
		fail "mt-encode $*: the round trip differs"
}
usage_error() {	# usage_error MESSAGE ARGS...: status 2 and MESSAGE on stderr
	local want=$1 rc=0
	shift
	"$ENC" "$@" -o "$T/x" "$T/empty.pipe" > /dev/null 2> "$T/err" || rc=$?
	[ "$rc" = 2 ] || fail "mt-encode $*: status $rc, want 2"
	head -n 1 "$T/err" | grep -qF -- "$want" || fail "mt-encode $*: '$(head -n 1 "$T/err")', want '$want'"
}
ok -l 1; ok --level 19; ok --frame-size 4096; ok --frame-size 67108864
ok -T 0; ok --threads 8; ok --raw; ok --hash-bits 32; ok --hash-bits 64
usage_error "mt-encode: --level wants 1..19, not '0'" -l 0
usage_error "mt-encode: --level wants 1..19, not '20'" --level 20
usage_error "mt-encode: --frame-size wants 4096..67108864, not '4095'" --frame-size 4095
usage_error "mt-encode: --frame-size wants 4096..67108864, not '67108865'" --frame-size 67108865
usage_error "mt-encode: --threads wants 0..8, not '9'" -T 9
usage_error "mt-encode: --threads wants 0..8, not '1x'" -T 1x
usage_error "mt-encode: --hash-bits wants 32 or 64, not '48'" --hash-bits 48
usage_error "mt-encode: --hash-bits wants 32 or 64, not '16'" --hash-bits 16
usage_error "mt-encode: unrecognized option '--bogus'" --bogus
usage_error "mt-encode: invalid option -- 'z'" -qz
usage_error "mt-encode: more than one input given" "$T/empty.pipe"
rc=0; "$ENC" --level 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "^mt-encode: option '--level' requires an argument" "$T/err" ||
	fail "--level without a value: $rc $(cat "$T/err")"
rc=0; "$DEC" --bogus 2>"$T/err" || rc=$?
[ "$rc" = 2 ] && grep -q "^mt-decode: unrecognized option '--bogus'" "$T/err" ||
	fail "mt-decode --bogus: $rc $(cat "$T/err")"
# environment (3) and data (1) errors
rc=0; "$ENC" -q -o "$T/no/such/dir" "$T/empty.pipe" 2>"$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q "^mt-encode: cannot create '$T/no/such/dir'" "$T/err" ||
	fail "unwritable output: $rc $(cat "$T/err")"
rc=0; "$DEC" -q -o "$T/x" "$T/none.mtz" 2>"$T/err" || rc=$?
[ "$rc" = 3 ] && grep -q "^mt-decode: cannot open '$T/none.mtz'" "$T/err" ||
	fail "missing .mtz: $rc $(cat "$T/err")"
rc=0; "$DEC" -q -o "$T/x" < "$T/empty.pipe" 2>"$T/err" || rc=$?
[ "$rc" = 1 ] && grep -q "not an .mtz file" "$T/err" || fail "decoding a perf stream: $rc $(cat "$T/err")"

# binary output to a terminal: refused (2) unless -f
if command -v script >/dev/null; then
	ENC=$ENC T=$T SHELL=/bin/sh script -qfec '"$ENC" -q "$T/empty.pipe"; echo "status $?"' \
		/dev/null < /dev/null > "$T/tty1"
	grep -aq "refusing to write binary data to a terminal" "$T/tty1" && grep -aq "status 2" "$T/tty1" ||
		fail "output to a terminal was not refused: $(cat -v "$T/tty1")"
	ENC=$ENC T=$T SHELL=/bin/sh script -qfec '"$ENC" -q -f "$T/empty.pipe"; echo "status $?"' \
		/dev/null < /dev/null > "$T/tty2"
	grep -aq "MTZ" "$T/tty2" && grep -aq "status 0" "$T/tty2" ||
		fail "-f did not write to the terminal: $(cat -v "$T/tty2")"
else
	echo "note: script(1) not installed, terminal output not tried"
fi
echo ok
