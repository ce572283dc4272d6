#!/bin/bash
# Event mode with a tracepoint: -e syscalls:sys_enter_write records every
# write(2) of the command (no -F nor -c: every hit, as perf does), each with
# its user stack, under the tracepoint's name; dd with bs=1 count=300 makes
# 300 writes of one byte, plus its statistics on stderr.  Bad tracepoint
# names are refused before anything runs (exit 125), and a raw hardware event
# (rHEX) is opened or refused with the reason.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
PATH=$MT_BUILD/bin:$PATH
tp=syscalls:sys_enter_write
[ -r "/sys/kernel/tracing/events/syscalls/sys_enter_write/id" ] ||
	[ -r "/sys/kernel/debug/tracing/events/syscalls/sys_enter_write/id" ] ||
	{ echo "skip: no readable tracefs with syscall tracepoints"; exit 77; }

"$CAP" -e $tp --mmap-pages 4096 -o "$T/w.data" -- dd if=/dev/zero of=/dev/null bs=1 count=300 \
	2>"$T/err" || fail "capture: $(cat "$T/err")"
grep -q ' 0 lost' "$T/err" || { echo "skip: the capture lost samples: $(tail -n 1 "$T/err")"; exit 77; }
mt-unwind -q "$T/w.data" >"$T/w.uw" || fail "mt-unwind"
n=$(grep -c "^sample.*	dd	event=$tp period=1	.*;write end=complete\$" "$T/w.uw" || true)
all=$(grep -c '^sample' "$T/w.uw" || true)
# 300 data writes; dd's statistics take one to three more (their stacks
# may be cut at the end of the dump).
[ "$n" -ge 300 ] && [ "$all" -le 305 ] ||
	fail "$n complete write stacks of $all samples, want 300 of 300-305: $(head -n 3 "$T/w.uw")"
p=$(perf script -i "$T/w.data" -F event 2>/dev/null | grep -c "$tp" || true)
[ "$p" = "$all" ] || fail "perf script reads $p samples, mt-unwind $all"

for bad in syscalls:no_such_tracepoint ../../x:y 'a:b:c' ':write'; do
	rc=0; "$CAP" -e "$bad" -o "$T/x.data" -- true 2>"$T/err" || rc=$?
	[ "$rc" = 125 ] && grep -Eq "unknown tracepoint|not a tracepoint name" "$T/err" ||
		fail "-e $bad: status $rc, $(cat "$T/err")"
done
rc=0; "$CAP" -e r00c0 -o "$T/x.data" -- true 2>"$T/err" || rc=$?
[ "$rc" = 0 ] || grep -q "cannot open event 'r00c0': .*(no hardware counter for it here" "$T/err" ||
	fail "-e r00c0: $rc $(cat "$T/err")"
echo "ok: $n writes recorded with their stacks; bad names refused"
