#!/bin/bash
# `perf record -g` (the kernel's frame-pointer callchains, no stack dumps):
# mt-unwind symbolises the callchain's user part.  The -fp fixtures, recorded
# both ways on a uprobe at unwind_mark, must give the same stacks from main
# down (inline frames included): glibc has no frame pointers, so the
# callchain stops at its first frame above main, where DWARF goes on to _start.
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
unwind_need_perf

fail=0
for v in unwind_recursion-fp unwind_inline-fp unwind_cxx-fp; do
	perf probe -q -d "$probe_group:*" >/dev/null 2>&1
	unwind_probe "$MT_FIXTURES/$v" m
	for how in fp dwarf; do
		if [ $how = fp ]; then cg=-g; else cg="--call-graph dwarf"; fi
		# shellcheck disable=SC2086
		perf record -q -e "$probe_group:m" $cg -o "$tmp/$v.$how.data" -- "$MT_FIXTURES/$v" 4 \
			>"$tmp/rec.log" 2>&1 || { echo "FAIL $v: perf record $cg"; cat "$tmp/rec.log"; fail=1; continue 2; }
		mt-unwind --no-debug-cache "$tmp/$v.$how.data" 2>"$tmp/$v.$how.err" | grep '^sample' |
			cut -f6 >"$tmp/$v.$how.all"
		# from main down
		sed -n 's/^\(.*;\)\{0,1\}\(main;.*\)$/\2/p' "$tmp/$v.$how.all" >"$tmp/$v.$how.txt"
	done
	perf probe -q -d "$probe_group:*" >/dev/null 2>&1
	n=$(wc -l <"$tmp/$v.fp.all")
	if [ "$n" -eq 0 ] || [ "$(wc -l <"$tmp/$v.fp.txt")" -ne "$n" ]; then
		echo "FAIL $v: $n callchain samples, not all through main:"; head -3 "$tmp/$v.fp.all"; fail=1
	elif ! grep -q "samples had no stack dump: their frames are the kernel's frame-pointer callchains" "$tmp/$v.fp.err"; then
		echo "FAIL $v: summary does not count the callchain samples"; cat "$tmp/$v.fp.err"; fail=1
	elif ! cmp -s "$tmp/$v.fp.txt" "$tmp/$v.dwarf.txt"; then
		echo "FAIL $v: callchain stacks differ from DWARF ones:"
		diff "$tmp/$v.fp.txt" "$tmp/$v.dwarf.txt" | head -6; fail=1
	elif grep -v -q 'end=complete$' "$tmp/$v.fp.txt"; then
		echo "FAIL $v: callchain stacks not complete"; head -3 "$tmp/$v.fp.txt"; fail=1
	else
		echo "ok $v: $n samples, callchain stacks equal DWARF ones from main down ($(head -n 1 "$tmp/$v.fp.txt" | cut -c1-60)...)"
	fi
done
grep -q '_\[i\]' "$tmp/unwind_inline-fp.fp.txt" 2>/dev/null ||
	{ echo "FAIL no inline frames expanded from callchain pcs"; fail=1; }
exit $fail
