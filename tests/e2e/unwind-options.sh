#!/bin/bash
# mt-unwind's options and exit codes on one recording of unwind_threads and
# unwind_cxx (uprobe on unwind_mark, perf record --call-graph dwarf).
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
fail=0
check() {	# check DESCRIPTION COMMAND...: the command must succeed
	desc=$1
	shift
	if "$@"; then echo "ok $desc"; else echo "FAIL $desc"; fail=1; fi
}

# Exit codes that need no perf.
mt-unwind --help | grep -q -- '--max-depth' || { echo "FAIL --help"; fail=1; }
mt-unwind >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL no input: want exit 2"; fail=1; }
mt-unwind --max-depth 0 x >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL --max-depth 0: want exit 2"; fail=1; }
mt-unwind --pid 1,x x >/dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL --pid 1,x: want exit 2"; fail=1; }
mt-unwind "$tmp/missing.data" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] && grep -q "cannot open '$tmp/missing.data'" "$tmp/err" ||
	{ echo "FAIL missing input: exit $rc, $(cat "$tmp/err")"; fail=1; }
printf 'not a perf stream at all' >"$tmp/junk"
mt-unwind "$tmp/junk" >/dev/null 2>&1; [ $? -eq 1 ] || { echo "FAIL junk input: want exit 1"; fail=1; }

unwind_need_perf
unwind_record_mark "$MT_FIXTURES/unwind_threads" "$tmp/t.data" 5 || exit 1
unwind_record_mark "$MT_FIXTURES/unwind_cxx" "$tmp/c.data" 3 || exit 1

mt-unwind -q "$tmp/t.data" >"$tmp/all.txt"
check "10 samples" test "$(grep -c '^sample' "$tmp/all.txt")" -eq 10

# --max-depth N: N physical frames, end=depth, the leaf side kept.
mt-unwind -q --max-depth 2 "$tmp/t.data" | grep '^sample' | cut -f6 >"$tmp/d.txt"
check "--max-depth 2" test "$(grep -Ecv '^(red|blue)_work;unwind_mark end=depth$' "$tmp/d.txt")" -eq 0

# --tid: only that thread's samples, all of them.
tid=$(grep '^sample' "$tmp/all.txt" | grep 'thread_red' | head -n 1 | cut -f2 | cut -d/ -f2)
mt-unwind -q --tid "$tid" "$tmp/t.data" | grep '^sample' >"$tmp/tid.txt"
check "--tid" test "$(grep -c "	[0-9]*/$tid	" "$tmp/tid.txt")" -eq 5 -a "$(wc -l <"$tmp/tid.txt")" -eq 5
mt-unwind -q --pid 1 "$tmp/t.data" | grep -c '^sample' >"$tmp/n" ; check "--pid of another process" test "$(cat "$tmp/n")" -eq 0
# each left-out sample counted once (samples are unwound on arrival too)
mt-unwind --pid 1 "$tmp/t.data" 2>"$tmp/err" >/dev/null
check "--pid: 10 samples filtered out" grep -q ', 10 filtered out' "$tmp/err"

# --no-demangle keeps the mangled C++ name; default demangles it.
check "demangled" grep -q ';shapes::Stack<int>::push;unwind_mark end=complete$' <(mt-unwind -q "$tmp/c.data")
check "--no-demangle" grep -q ';_ZN6shapes5StackIiE4pushEi;unwind_mark end=complete$' <(mt-unwind -q --no-demangle "$tmp/c.data")

# -o FILE writes the same as stdout; pipe input reads the same as the file.
mt-unwind -q -o "$tmp/o.txt" "$tmp/t.data"
check "-o FILE" cmp -s "$tmp/o.txt" "$tmp/all.txt"
mt-unwind -q - <"$tmp/t.data" | grep -v '^# input' >"$tmp/p.txt"
check "stdin" cmp -s "$tmp/p.txt" <(grep -v '^# input' "$tmp/all.txt")

# A truncated file: what can be read is written, exit 1 with the offset.
size=$(stat -c %s "$tmp/t.data")
head -c $((size * 2 / 3)) "$tmp/t.data" >"$tmp/trunc.data"
mt-unwind -q "$tmp/trunc.data" >"$tmp/tr.txt" 2>"$tmp/err"; rc=$?
check "truncated: exit 1" test $rc -eq 1
check "truncated: message names the offset" grep -q 'offset [0-9]' "$tmp/err"
exit $fail
