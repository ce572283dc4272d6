#!/bin/bash
# mt-unwind advises a larger stack dump only for the stacks it would help.
# capture_stacks allocates 40 times in a signal handler on an alternate
# signal stack (sigaltstack): those stacks end where the dump ends past the
# signal frame, the interrupted stack never copied, whatever the dump size.
# With --stack-size 65528 (the largest) nothing may advise --stack-size
# 65528; at 8192 the advice counts only the other stacks, and the
# alternate-stack ones are given their own reason.  Through the sample ring
# and through the uprobes (the kernel's dumps).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

alt="mt-unwind: 40 of [0-9]* stacks end where their stack dump ends past a signal frame: the handler ran on an alternate signal stack (sigaltstack) and the interrupted stack was not copied; a larger dump would not reach it"
for how in ring-64k no-ring-64k ring; do
	opt=; case $how in no-ring*) opt=--no-ring;; esac
	case $how in *64k) opt="$opt --stack-size 65528 --mmap-pages 4096";; *) opt="$opt --stack-size 8192";; esac
	"$CAP" $opt --rate 1 --seed 7 -o "$T/$how.data" -- "$MT_FIXTURES/capture_stacks" \
		>"$T/$how.out" 2>"$T/$how.err" || fail "mt-capture $opt: $(cat "$T/$how.err")"
	mt-unwind -o "$T/$how.txt" "$T/$how.data" 2>"$T/$how.uw" || fail "mt-unwind: $(cat "$T/$how.uw")"
	# the handler's allocations: through __restore_rt, ending in the dump
	n=$(grep -c '__restore_rt;allocate_here;malloc end=end-of-dump$' "$T/$how.txt" || true)
	[ "$n" = 40 ] || fail "$how: $n handler stacks end in the dump, want 40: $(grep allocate_here "$T/$how.txt" | head -3)"
	grep -qx "$alt" "$T/$how.uw" || fail "$how: no alternate-stack reason: $(cat "$T/$how.uw")"
	case $how in
	*64k)
		if grep -q -- "--stack-size" "$T/$how.uw"; then
			fail "$how: a larger dump advised at the largest: $(cat "$T/$how.uw")"
		fi ;;
	*)
		# the advice counts the stacks ending in the dump less the 40
		dumped=$(grep -c 'end=end-of-dump$' "$T/$how.txt")
		want=$((dumped - 40))
		grep -q "^mt-unwind: $want of [0-9]* stacks end where their stack dump ends: their outer callers are missing; record with a larger dump" "$T/$how.uw" ||
			fail "$how: advice not for the $want other stacks: $(cat "$T/$how.uw")" ;;
	esac
done
echo ok
