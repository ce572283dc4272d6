#!/bin/bash
# Children and exec are followed in sample mode: the parent, the forked
# child before its exec and the exec'd program each report exact totals.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --rate 65536 --mmap-pages 1024 -o "$T/f.data" -- "$MT_FIXTURES/capture_forkexec" \
	"$MT_FIXTURES/capture_alloc" 1 100 >"$T/out" 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost"
capture_regs "$T/f.data" | awk '$2 == "mt:totals" && $3 == 2 { print $10, $5, $4 }' >"$T/procs"
# pid allocs bytes; capture_forkexec: parent 1000 x 1000 B + 1000 x 3000 B;
# child before exec 100 x 2000 B (its counters restart at fork).
grep -qx "[0-9]* 2000 4000000" "$T/procs" || fail "parent totals: $(cat "$T/procs")"
grep -qx "[0-9]* 100 200000" "$T/procs" || fail "forked child's totals before exec: $(cat "$T/procs")"
read -r _ tid allocs bytes _ <"$T/out"
capture_regs "$T/f.data" | awk -v t=$tid -v a=${allocs#allocs=} -v b=${bytes#alloc_bytes=} \
	'$2 == "mt:totals" && $3 == 1 && $10 == t && $5 == a && $4 == b { ok = 1 } END { exit !ok }' ||
	fail "exec'd capture_alloc worker $tid: totals differ from $allocs $bytes"
[ "$(wc -l <"$T/procs")" = 3 ] || fail "expected 3 process reports: $(cat "$T/procs")"
echo "ok: parent, forked child and exec'd program followed"
