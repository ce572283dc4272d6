#!/usr/bin/env bash
# mt-flamegraph rejects what is not collapsed stacks: each bad line is reported with
# its line number and reason, the count of rejected lines is given, the exit code is 1
# and the valid lines are still drawn (and only they).  Empty input gives a valid
# SVG saying there is no data; usage errors exit 2; an unreadable file exits 1.
set -euo pipefail
fg="$MT_SRC/scripts/mt-flamegraph"
check="$MT_SRC/tests/e2e/flamegraph_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_rc() {  # expect_rc WANT CMD...: run CMD, stdout to $tmp/out, stderr to $tmp/err
	local want=$1 rc=0
	shift
	"$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -ne "$want" ]; then
		echo "exit $rc, expected $want: $*"; cat "$tmp/err"; exit 1
	fi
}
expect_err() {  # expect_err TEXT: stderr has TEXT (a fixed string)
	grep -qF -- "$1" "$tmp/err" || { echo "stderr lacks '$1':"; cat "$tmp/err"; exit 1; }
}

printf '%s\n' \
	'main;parse;malloc 300' \
	'main;parse;malloc' \
	'' \
	'main;grow;realloc 12x' \
	'main;emit -5' \
	'main;;malloc 7' \
	'main;build 100 200' \
	'main;build 700' \
	'nospace' \
	'main;parse;malloc 1.5' >"$tmp/bad.folded"
expect_rc 1 "$fg" "$tmp/bad.folded"
expect_err "'$tmp/bad.folded': line 2: no space before the count"
expect_err "line 4: count is not a non-negative integer: '12x'"
expect_err "line 5: negative count '-5'"
expect_err "line 6: empty frame name"
expect_err "line 7: two counts (differential collapsed format is not supported)"
expect_err "line 9: no space before the count"
expect_err "line 10: count is not a non-negative integer: '1.5'"
expect_err "7 of 9 lines rejected; drawing the other 2"
# The blank line 3 is neither counted nor reported.
if grep -q 'line 3:' "$tmp/err"; then echo "blank line reported"; exit 1; fi
# What is drawn is exactly the two good lines.
grep -e '^main;parse;malloc 300$' -e '^main;build 700$' "$tmp/bad.folded" >"$tmp/good.folded"
cp "$tmp/out" "$tmp/bad.svg"
python3 "$check" layout "$tmp/good.folded" "$tmp/bad.svg"
grep -q '7 bad input lines skipped' "$tmp/bad.svg" || { echo "SVG does not say lines were skipped"; exit 1; }

# Many bad lines: the first 10 are listed, then how many more.
for i in $(seq 1 25); do echo "junk$i"; done >"$tmp/many.folded"
echo 'main 1' >>"$tmp/many.folded"
expect_rc 1 "$fg" "$tmp/many.folded"
expect_err "line 10: no space before the count"
expect_err "... and 15 more bad lines"
expect_err "25 of 26 lines rejected; drawing the other 1"
if grep -q 'line 11:' "$tmp/err"; then echo "more than 10 bad lines listed"; exit 1; fi

# Invalid UTF-8 and control characters become U+FFFD: the SVG stays valid XML.
printf 'main;bad\xff\x01name 5\n' | expect_rc 0 "$fg"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/out"
grep -q $'bad\xef\xbf\xbd\xef\xbf\xbdname' "$tmp/out" || { echo "bad bytes not replaced"; exit 1; }

# Empty input (nothing, or blank lines only): a valid SVG that says so, exit 0.
for input in /dev/null "$tmp/blank"; do
	printf '\n\n' >"$tmp/blank"
	expect_rc 0 "$fg" "$input"
	expect_err "no stacks in the input; writing an SVG that says so"
	python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$tmp/out"
	grep -q 'no data: the input holds no stacks' "$tmp/out" || { echo "no 'no data'"; exit 1; }
done
echo 'main;f 0' | expect_rc 0 "$fg"
grep -q 'no data: every stack has a count of 0' "$tmp/out" || { echo "zero total not said"; exit 1; }

# Unreadable input, bad options, --help.
expect_rc 3 "$fg" "$tmp/missing.folded"
expect_err "mt-flamegraph: cannot read '$tmp/missing.folded': No such file or directory"
expect_rc 2 "$fg" --colors purple "$tmp/good.folded"
expect_rc 2 "$fg" --width 0 "$tmp/good.folded"
expect_rc 2 "$fg" --width 20 "$tmp/good.folded"
expect_rc 2 "$fg" --minwidth -1 "$tmp/good.folded"
expect_rc 2 "$fg" --no-such-option
expect_rc 0 "$fg" --help
grep -q '^exit codes:' "$tmp/out" || { echo "--help lacks exit codes"; exit 1; }
for o in --title --subtitle --countname --colors --width --minwidth --reverse --inverted --stats; do
	grep -q -- "$o" "$tmp/out" || { echo "--help lacks $o"; exit 1; }
done

# A stats file that is missing (exit 3) or not JSON (exit 1): reported, graph drawn without it.
expect_rc 3 "$fg" --stats "$tmp/missing.json" "$tmp/good.folded"
expect_err "cannot read '$tmp/missing.json': No such file or directory; drawing without stats"
python3 "$check" layout "$tmp/good.folded" "$tmp/out"
echo '{"stacks": [' >"$tmp/broken.json"
expect_rc 1 "$fg" --stats "$tmp/broken.json" "$tmp/good.folded"
expect_err "'$tmp/broken.json' is not JSON"
echo "flamegraph bad input: ok"
