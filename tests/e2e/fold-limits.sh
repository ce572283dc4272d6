#!/bin/bash
# mt-fold at the edges of what it can hold: a line larger than memory allows
# (out of memory, exit 3, never read as the end of the input), sums past
# 2^64 (carried in 128 bits: exact, never wrapped; a collapsed count that
# does not fit 64 bits is reported and left out) and a NUL byte in a line
# (a bad line, not a name cut short).
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
L='alloc\t1/1\t1\tp\tsize=10 every=1\tmain;f end=complete\n'

# 1. Out of memory in the middle of the input.  ulimit -v: not under
# AddressSanitizer, which reserves terabytes of shadow at start.
if [ "${MT_SANITIZE:-}" != 1 ]; then
	rc=0
	( ulimit -v 100000
	  { printf "# mt-unwind 1\n$L"; head -c 200000000 /dev/zero; printf "\n$L"; } |
		mt-fold --report ) >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 3 ] || fail "a line too long to buffer: exit $rc, not 3: $(cat "$tmp/err")"
	[ "$(cat "$tmp/err")" = "mt-fold: cannot read '<stdin>': line 3: out of memory" ] ||
		fail "message: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "a report of part of the input: $(head -3 "$tmp/out")"
	# An input with no end: the same, not a hang and not an empty profile.
	rc=0
	( ulimit -v 100000; timeout 60 mt-fold /dev/zero ) >"$tmp/out" 2>"$tmp/err" || rc=$?
	[ "$rc" = 3 ] && [ "$(cat "$tmp/err")" = "mt-fold: cannot read '/dev/zero': line 1: out of memory" ] ||
		fail "/dev/zero: exit $rc: $(cat "$tmp/err")"
	[ ! -s "$tmp/out" ] || fail "/dev/zero: output written"
else
	echo "out of memory: not checked under SANITIZE=1 (ulimit -v)"
fi

# 2. Sums past 2^64: three allocations of 2^63 - 1 bytes are 24 EiB, exact.
B='alloc\t1/1\t%d\tp\tsize=9223372036854775807 ptr=0x%x fn=malloc every=1\tmain;f;malloc end=complete\n'
T='totals\t1/1\t9\tp\tscope=thread alloc_bytes=18446744073709551615 allocs=3 frees=0 freed_bytes=0 peak_bytes=18446744073709551615\t end=none\n'
{ printf '# mt-unwind 1\n'; for i in 1 2 3; do printf "$B" "$i" $((i * 16)); done; printf "$T$T"; } >"$tmp/big.txt"
rc=0
mt-fold --report "$tmp/big.txt" >"$tmp/report" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "--report: exit $rc: $(cat "$tmp/err")"
grep -qx 'total alloc_bytes: 24.0 EiB (exact)' "$tmp/report" ||
	fail "total: $(grep '^total' "$tmp/report")"
# the sampler's totals of two lines: 2 (2^64 - 1), not 2^64 - 2
grep -q '^1/1 .* 36893488147419103230 ' "$tmp/report" ||
	fail "exact totals wrapped: $(grep '^1/1' "$tmp/report")"
mt-fold --json "$tmp/big.txt" >"$tmp/json" 2>/dev/null
grep -q '"exact": {"alloc_bytes": 36893488147419103230, "allocs": 6,' "$tmp/json" ||
	fail "json exact: $(grep '"exact": {' "$tmp/json" | head -1)"
grep -q '"exact_value": 36893488147419103230' "$tmp/json" || fail "json exact_value"
rc=0
mt-fold "$tmp/big.txt" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "collapsed, a count past 2^64: exit $rc, not 1"
[ "$(cat "$tmp/err")" = "mt-fold: stack 'main;f;malloc': alloc_bytes 27670116110564327421 does not fit a collapsed count (at most 18446744073709551615): left out
mt-fold: 1 stacks left out of the collapsed output: their alloc_bytes does not fit a 64-bit count; --report shows them" ] ||
	fail "collapsed: $(cat "$tmp/err")"
[ ! -s "$tmp/out" ] || fail "a wrapped count written: $(cat "$tmp/out")"
# Counts from 2^63 up are written digit for digit (they printed as
# 9223372036854775808, llround's overflow).
printf '# mt-unwind 1\nalloc\t1/1\t1\tp\tsize=9223372036854775809 every=1\tmain;g end=complete\n' >"$tmp/g.txt"
[ "$(mt-fold "$tmp/g.txt")" = "main;g 9223372036854775809" ] || fail "2^63 + 1: $(mt-fold "$tmp/g.txt")"

# 3. A NUL byte: the line is bad, its name never reaches the output cut.
printf "# mt-unwind 1\n${L}alloc\t1/1\t2\tp\tsize=7 every=1\tmain;g\000h end=complete\n" >"$tmp/nul.txt"
rc=0
mt-fold --json "$tmp/nul.txt" >"$tmp/json" 2>"$tmp/err" || rc=$?
[ "$rc" = 1 ] || fail "NUL: exit $rc, not 1"
[ "$(cat "$tmp/err")" = "mt-fold: $tmp/nul.txt:3: a NUL byte in the line
mt-fold: 1 bad lines skipped, not folded" ] || fail "NUL: $(cat "$tmp/err")"
grep -q '"bad_lines": 1,' "$tmp/json" || fail "NUL: bad_lines"
if grep -q '"main;g' "$tmp/json"; then fail "NUL: the cut name is in the JSON"; fi
grep -q '{"stack": "main;f", "value": 10,' "$tmp/json" || fail "NUL: the good line lost"
echo "fold-limits: ok"
