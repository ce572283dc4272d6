#!/bin/bash
# The sample ring gives the samples the uprobes gave: the same allocations
# (one --seed), with the same frames, on every kind of stack the sampler's
# copy must bound itself on (capture_stacks: the main thread's, another
# thread's, an alternate signal stack, a coroutine's mmap'd stack; 40
# allocations each, more than the 16 mapping lookups a thread makes before
# it copies foreign stacks with process_vm_readv).  On a thread's own stack
# the ring's copy stops where the frames end (below the thread's descriptor;
# just above the main thread's __libc_stack_end), with the same frames.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

for how in ring no-ring ring-64k no-ring-64k; do
	opt=; case $how in no-ring*) opt=--no-ring;; esac
	case $how in *64k) opt="$opt --stack-size 65528 --mmap-pages 4096";; esac
	"$CAP" $opt --rate 1 --seed 7 -o "$T/$how.data" -- "$MT_FIXTURES/capture_stacks" \
		>"$T/$how.out" 2>"$T/$how.err" || fail "mt-capture $opt: $(cat "$T/$how.err")"
	[ "$(capture_lost "$T/$how.err")" = 0 ] || fail "$how: samples lost: $(cat "$T/$how.err")"
	mt-unwind -o "$T/$how.txt" "$T/$how.data" 2>"$T/$how.uw" || fail "mt-unwind: $(cat "$T/$how.uw")"
	# kind, comm, fields without the pointer (ASLR), frames, end: per line, sorted
	grep '^alloc' "$T/$how.txt" | cut -f1,4- | sed 's/ptr=0x[0-9a-f]* //; s/ seq=[0-9]*//' | sort >"$T/$how.cmp"
done
cmp -s "$T/ring.cmp" "$T/no-ring.cmp" ||
	fail "ring and uprobe samples differ: $(diff "$T/ring.cmp" "$T/no-ring.cmp" | head -5)"
# The largest dump: the kernel shrinks it to fit the record's 16-bit size,
# and so does mt-capture: the same frames.  The kernel's records are all of
# that size (stale bytes after where its copy stopped); the ring's hold the
# bytes copied and are never larger.
cmp -s "$T/ring-64k.cmp" "$T/no-ring-64k.cmp" ||
	fail "ring and uprobe samples differ at --stack-size 65528: $(diff "$T/ring-64k.cmp" "$T/no-ring-64k.cmp" | head -5)"
for how in ring no-ring; do
	perf script -i "$T/$how-64k.data" -D 2>/dev/null | grep 'PERF_RECORD_SAMPLE' | grep -o '\[0x[0-9a-f]*\]' |
		tr -d '[]' | while read -r x; do echo $((x)); done | sort -n | tail -n 1 >"$T/$how.max"
done
[ "$(cat "$T/ring.max")" -le "$(cat "$T/no-ring.max")" ] && [ "$(cat "$T/no-ring.max")" = $((0xfff8)) ] ||
	fail "largest records at --stack-size 65528: ring $(cat "$T/ring.max"), uprobes $(cat "$T/no-ring.max")"
for site in 'main;on_main_stack;allocate_here;malloc end=complete' \
	'start_thread;on_thread_stack;allocate_here;malloc end=complete' \
	'__restore_rt;allocate_here;malloc' '__start_context;allocate_here;malloc'; do
	n=$(grep -cF -- "$site" "$T/ring.cmp" || true)
	[ "$n" = 40 ] || fail "$n samples, not 40, end in '$site'"
done
# Where the ring's dumps end: SP + dump size against the frames' end (with
# the sampler's 64-byte margin above __libc_stack_end), per mt:alloc sample
# on the main stack or the thread's stack block.
desc=$(awk '$1 == "thread-descriptor" { print $2 }' "$T/ring.out")
send=$(awk '$1 == "main-stack-end" { print $2 }' "$T/ring.out")
[ -n "$desc" ] && [ -n "$send" ] || fail "capture_stacks printed no stack ends: $(cat "$T/ring.out")"
perf script -i "$T/ring.data" -D 2>/dev/null | awk '
	/PERF_RECORD_SAMPLE/ { sp = "" }
	$2 == "SP" { sp = $3 }
	/ustack: size/ && sp != "" { sub(",", "", $4); print sp, $4 }' >"$T/dumps"
main=0 thread=0
while read -r sp size; do
	if (( sp < send && send - sp < 65536 )); then
		(( sp + size <= send + 64 )) || fail "main stack: dump of $size bytes at sp $sp passes $send + 64"
		main=$((main + 1))
	elif (( sp < desc && desc - sp < 65536 )); then
		(( sp + size <= desc )) || fail "thread stack: dump of $size bytes at sp $sp passes the descriptor $desc"
		thread=$((thread + 1))
	fi
done <"$T/dumps"
[ "$main" -ge 40 ] && [ "$thread" = 40 ] || fail "$main main-stack and $thread thread-stack dumps, not 40+ and 40"
echo "ok: $(wc -l <"$T/ring.cmp") mt:alloc samples, identical through the ring and the uprobes;" \
	"$main main-stack and $thread thread-stack dumps end with the frames"
