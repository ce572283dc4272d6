#!/bin/bash
# Every unwind_* fixture, with and without frame pointers and linked by lld
# (code in the read-only data's last file page), recorded by perf
# (a uprobe on unwind_mark, DWARF call graphs): each sample must show the call
# path the fixture's source gives, reach the outermost frame, and agree with
# perf script's frames.  When mt-capture is built, the same fixtures go
# through it (sample mode with every allocation sampled, and trace mode): each
# allocation made by unwind_mark must show the path followed by
# unwind_mark;malloc, once per call, with its pointer, which is freed.
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
unwind_need_perf

fail=0
capture=
if [ -x "$MT_BUILD/bin/mt-capture" ]; then
	capture=1
else
	echo "note: mt-capture not built: the capture half is skipped"
fi

# Record everything first, all at once: perf record and mt-capture spend
# most of their time waiting (perf about 2 s per run), not computing.
variants=
for n in recursion inline tailcall dlopen threads cxx signal; do
	variants="$variants unwind_$n unwind_$n-fp unwind_$n-lld"
done
perf probe -q -d "$probe_group:*" >/dev/null 2>&1
i=0
for v in $variants; do
	unwind_probe "$MT_FIXTURES/$v" "m$i"
	i=$((i + 1))
done
i=0
for v in $variants; do
	perf record -q -e "$probe_group:m$i" --call-graph dwarf -o "$tmp/$v.data" -- \
		"$MT_FIXTURES/$v" 6 >"$tmp/$v.rec.log" 2>&1 &
	i=$((i + 1))
done
wait
perf probe -q -d "$probe_group:*" >/dev/null 2>&1
if [ -n "$capture" ]; then
	for v in $variants; do
		mt-capture --rate 1 --seed 1 -o "$tmp/$v.cap" -- "$MT_FIXTURES/$v" 6 >"$tmp/$v.cap.log" 2>&1 &
	done
	# Every allocator entry point, realloc included (its stacks once ended
	# in the sampler's internal body, reached by a tail call).
	mt-capture --rate 1 --seed 1 -o "$tmp/alloc.cap" -- "$MT_FIXTURES/capture_alloc" 0 30 \
		>"$tmp/alloc.cap.log" 2>&1 &
	wait
	# Trace mode: uprobes on (a private copy of) libc's allocator itself.
	for v in $variants; do
		{ mt-capture --mode trace -o "$tmp/$v.trace" -- "$MT_FIXTURES/$v" 6 >"$tmp/$v.trace.log" 2>&1 ||
			echo "exit $?" >>"$tmp/$v.trace.log"; } &
	done
	wait
fi

# check NAME REGEX [REGEX2]: every sample line's stack ends with one of the
# patterns (root side free: libc's start frames), and each pattern is seen.
check() {
	name=$1
	shift
	for variant in "$name" "$name-fp" "$name-lld"; do
		[ -s "$tmp/$variant.data" ] || { echo "FAIL $variant: perf record:"; cat "$tmp/$variant.rec.log"; fail=1; continue; }
		mt-unwind -q "$tmp/$variant.data" >"$tmp/$variant.txt" || { echo "FAIL $variant: mt-unwind exit $?"; fail=1; continue; }
		n=$(grep -c '^sample' "$tmp/$variant.txt")
		[ "$n" -ge 6 ] || { echo "FAIL $variant: $n samples, expected at least 6"; fail=1; }
		all=$(printf '%s|' "$@")
		all=${all%|}
		bad=$(grep '^sample' "$tmp/$variant.txt" | cut -f6 | grep -Evc "(^|;)($all) end=complete\$")
		if [ "$bad" -ne 0 ]; then
			echo "FAIL $variant: $bad of $n stacks do not match ($all) end=complete:"
			grep '^sample' "$tmp/$variant.txt" | cut -f6 | grep -Ev "(^|;)($all) end=complete\$" | head -n 2
			fail=1
		fi
		for re in "$@"; do
			grep '^sample' "$tmp/$variant.txt" | cut -f6 | grep -Eq "(^|;)$re end=complete\$" ||
				{ echo "FAIL $variant: no sample shows $re"; fail=1; }
		done
		if ! unwind_agree "$tmp/$variant.data" 99 >"$tmp/agree.log"; then
			echo "FAIL $variant: disagrees with perf script:"
			cat "$tmp/agree.log"
			fail=1
		fi
		echo "ok $variant ($n samples)"
		[ -n "$capture" ] || continue
		# From capture through mt-unwind: unwind_mark's own malloc.
		for mode in cap trace; do
			if [ ! -s "$tmp/$variant.$mode" ] || grep -q '^exit' "$tmp/$variant.$mode.log"; then
				echo "FAIL $variant: mt-capture ($mode): $(tail -n 1 "$tmp/$variant.$mode.log")"; fail=1; continue
			fi
			mt-unwind -q "$tmp/$variant.$mode" >"$tmp/$variant.$mode.txt"
			grep '^alloc' "$tmp/$variant.$mode.txt" | cut -f6 | grep ';unwind_mark;malloc end=' >"$tmp/$variant.allocs"
			# One allocation per marker call: as many as perf saw calls.
			k=$(wc -l <"$tmp/$variant.allocs")
			[ "$k" -eq "$n" ] || { echo "FAIL $variant ($mode): $k allocations in unwind_mark, expected $n"; fail=1; }
			bad=$(grep -Evc "(^|;)($all);malloc end=complete\$" "$tmp/$variant.allocs")
			if [ "$bad" -ne 0 ]; then
				echo "FAIL $variant ($mode): $bad of $k stacks do not match ($all);malloc end=complete:"
				grep -Ev "(^|;)($all);malloc end=complete\$" "$tmp/$variant.allocs" | head -n 2
				fail=1
			fi
			# Every pointer allocated in unwind_mark is freed.
			a=$(grep '^alloc' "$tmp/$variant.$mode.txt" | grep ';unwind_mark;malloc end=' | grep -o 'ptr=0x[0-9a-f]*' | sort -u)
			[ -n "$a" ] && ! echo "$a" | grep -qx 'ptr=0x0' ||
				{ echo "FAIL $variant ($mode): allocations without pointers"; fail=1; }
			for p in $a; do
				grep -q "^free.*	$p " "$tmp/$variant.$mode.txt" || { echo "FAIL $variant ($mode): $p never freed"; fail=1; break; }
			done
			# The same frames as perf script's (which prints them once the
			# uprobe PMU's events are declared software ones).
			if ! unwind_agree_capture "$tmp/$variant.$mode" 99 >"$tmp/agree.log"; then
				echo "FAIL $variant ($mode): disagrees with perf script:"
				cat "$tmp/agree.log"
				fail=1
			fi
		done
		echo "ok $variant via mt-capture, sample and trace modes ($n allocations each, as perf script unwinds them)"
	done
}

check unwind_recursion 'main;run;(recurse;){41}unwind_mark'
check unwind_inline 'main;outer;helper_always_\[i\];helper_static_\[i\];unwind_mark'
# caller's frame is gone: it jumped to callee (see the fixture).
check unwind_tailcall 'main;callee;unwind_mark'
check unwind_dlopen 'main;call_library;dl_entry;dl_inner;unwind_mark'
check unwind_threads 'start_thread;thread_red;red_work;unwind_mark' \
	'start_thread;thread_blue;blue_work;unwind_mark'
check unwind_cxx 'main;shapes::run;shapes::Stack<int>::push;unwind_mark' \
	'main;shapes::run;shapes::detail::visit<double>;unwind_mark'
# raise() runs the handler on return from the kernel: libc frames, the
# signal trampoline, then the handler.
check unwind_signal 'main;trigger;[^;]+(;[^;]+)*;on_signal;unwind_mark'

# The handler's own allocation, seen by the sampler inside the handler.
if [ -n "$capture" ]; then
	for v in unwind_signal unwind_signal-fp; do
		n=$(grep '^alloc' "$tmp/$v.cap.txt" | cut -f6 |
			grep -Ec '(^|;)main;trigger;[^;]+(;[^;]+)*;on_signal;malloc end=complete$')
		[ "$n" -ge 6 ] || { echo "FAIL $v (mt-capture): $n allocations in on_signal with the full path, expected 6"; fail=1; }
	done
fi

# Sampled allocations end in the entry point the program called (fn=),
# with the sampler's own frames trimmed: capture_alloc's worker calls
# malloc (through fixture_alloc_site, and once directly for the end mark),
# calloc, realloc, aligned_alloc and posix_memalign.
if [ -n "$capture" ]; then
	if [ ! -s "$tmp/alloc.cap" ]; then
		echo "FAIL capture_alloc: mt-capture: $(tail -n 1 "$tmp/alloc.cap.log")"; fail=1
	else
		mt-unwind -q "$tmp/alloc.cap" | grep '^alloc' | grep 'end=complete$' >"$tmp/alloc.txt"
		was=$fail
		for fn in malloc calloc realloc aligned_alloc posix_memalign; do
			site='worker;'
			[ $fn = malloc ] && site='worker;(fixture_alloc_site;)?'
			n=$(grep -c " fn=$fn " "$tmp/alloc.txt")
			k=$(grep " fn=$fn " "$tmp/alloc.txt" | cut -f6 | grep -Ec ";main;$site$fn end=complete\$")
			# Every call is sampled at --rate 1; a few stacks may be cut short.
			if [ "$n" -lt 25 ] || [ "$k" -ne "$n" ]; then
				echo "FAIL capture_alloc: $k of $n complete $fn stacks end ;main;$site$fn (30 calls):"
				grep " fn=$fn " "$tmp/alloc.txt" | cut -f6 | grep -v ";$fn end=" | head -n 2
				fail=1
			fi
		done
		[ "$fail" != "$was" ] || echo "ok capture_alloc via mt-capture: stacks end in the entry point called"
	fi
fi

# --srcline on the inline chain: each frame shows where it calls the next,
# the leaf frame the line of its pc.
src="$MT_SRC/tests/fixtures/unwind_inline.c"
l_outer=$(grep -n 'int r = helper_always(x);' "$src" | cut -d: -f1)
l_always=$(grep -n 'int r = helper_static(x + 1);' "$src" | cut -d: -f1)
l_static=$(grep -n 'return unwind_mark(x \* 3) + 7;' "$src" | cut -d: -f1)
mt-unwind -q --srcline "$tmp/unwind_inline.data" | grep '^sample' | cut -f6 | head -n 1 >"$tmp/srcline.txt"
want="outer (unwind_inline.c:$l_outer);helper_always_[i] (unwind_inline.c:$l_always);helper_static_[i] (unwind_inline.c:$l_static);unwind_mark (unwind_common.h:"
grep -qF "$want" "$tmp/srcline.txt" || { echo "FAIL srcline: want '$want' in:"; cat "$tmp/srcline.txt"; fail=1; }
# --no-inline drops exactly the inline frames.
mt-unwind -q --no-inline "$tmp/unwind_inline.data" | grep '^sample' | cut -f6 | head -n 1 | grep -q ';main;outer;unwind_mark end=complete$' ||
	{ echo "FAIL --no-inline"; fail=1; }
exit $fail
