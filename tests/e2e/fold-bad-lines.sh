#!/bin/bash
# Bad input: every bad line is reported with its file and line number, the
# good ones are still folded, and the exit status says data was rejected.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/in.txt" <<'T'
# mt-unwind 1
alloc	1/1	1	p	size=10 every=1	main;f end=complete
alloc	1/1	2	p	size=10	main;f end=complete
this is not an event
alloc	1/1	3	p	size=ten every=1	main;f end=complete

alloc	1/1	4	p	size=5 every=1	main;g end=complete
lost	1/1	5	p	count=3 reason=ring	 end=none
T
rc=0
mt-fold "$tmp/in.txt" >"$tmp/out" 2>"$tmp/err" || rc=$?
cat "$tmp/err"
[ "$rc" -eq 1 ]
printf 'main;f 10\nmain;g 5\n' | cmp - "$tmp/out"
grep -q "in.txt:3: missing weight 'points'" "$tmp/err"
grep -q "in.txt:4: expected 6 TAB-separated fields" "$tmp/err"
grep -q "in.txt:5: bad weight value 'size'" "$tmp/err"
grep -q "in.txt:6: expected 6 TAB-separated fields" "$tmp/err"
grep -q "4 bad lines skipped" "$tmp/err"
grep -q "lost 3 events" "$tmp/err"

# Lost events alone are a warning, not an error.
grep -v -e 'not an event' -e 'size=ten' -e '^$' -e 'size=10	main' "$tmp/in.txt" >"$tmp/ok.txt"
mt-fold "$tmp/ok.txt" >/dev/null 2>"$tmp/err"
grep -q "lost 3 events" "$tmp/err"

# A later format version is refused rather than misread.
printf '# mt-unwind 2\nalloc\t1/1\t1\tp\tsize=1 every=1\tf end=complete\n' >"$tmp/v2.txt"
rc=0
mt-fold "$tmp/v2.txt" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 1 ] && [ ! -s "$tmp/out" ]
grep -q "v2.txt:1: unsupported mt-unwind format version" "$tmp/err"

# Missing file: named in the message, exit 3 (as every tool); usage errors exit 2.
rc=0
mt-fold "$tmp/nope.txt" 2>"$tmp/err" || rc=$?
[ "$rc" -eq 3 ]
grep -q "mt-fold: cannot open '$tmp/nope.txt': No such file or directory" "$tmp/err"
rc=0
mt-fold --metric bogus "$tmp/ok.txt" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ]
rc=0
mt-fold --report --json "$tmp/ok.txt" 2>/dev/null || rc=$?
[ "$rc" -eq 2 ]
mt-fold --help | grep -q 'exit status'
# Binary garbage: rejected line by line, never a crash.
head -c 20000 /dev/urandom >"$tmp/junk"
rc=0
mt-fold "$tmp/junk" >/dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ]
# Nothing to fold: said so (every figure would read 0, "exact"), exit 0.
mt-fold --report </dev/null >/dev/null 2>"$tmp/empty.err" || { echo "empty input: exit $?"; exit 1; }
grep -q 'warning: the input holds no events' "$tmp/empty.err" ||
	{ echo "empty input, no warning: $(cat "$tmp/empty.err")"; exit 1; }
! mt-fold --report "$tmp/ok.txt" 2>&1 >/dev/null | grep -q 'holds no events' ||
	{ echo "warned of no events on a real input"; exit 1; }
echo "fold-bad-lines: ok"
