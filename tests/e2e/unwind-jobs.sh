#!/bin/bash
# mt-unwind -j N (issue 30): the output of -j 2 and -j 3 is byte for byte
# that of -j 1, with --srcline, --pprof-info and --addrs, on real
# recordings: sample mode with threads and with fork + exec, event mode,
# trace mode, and the many short processes of a `make -j2` of 40 compiles
# (mt-capture's sample mode and perf record); capture_stacks' stacks
# (threads, an alternate signal stack, a coroutine) and a deep recursion.  The summary's counts are the
# same but the time and the cache hit rates; -j N > 1 says how many stacks
# its threads walked, which must be some on every recording read by name,
# and none on a pipe (whose samples are walked at their turn, on one
# thread).  A bad -j is a usage error.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
export XDG_CACHE_HOME=$T/cache
F=$MT_FIXTURES

rec() {	# rec NAME MT-CAPTURE-ARGS...: record $T/NAME.data
	name=$1
	shift
	"$CAP" -o "$T/$name.data" "$@" >/dev/null 2>"$T/$name.cap" ||
		fail "mt-capture $name: $(tail -n 3 "$T/$name.cap")"
}
rec threads --rate 8192 -- "$F/codec_threads" 4 20000
rec stacks --rate 1 -- "$F/capture_stacks" 200
rec recursion --rate 1 -- "$F/unwind_recursion" 20000
rec forkexec --rate 8192 -- "$F/capture_forkexec" "$F/capture_alloc" 2 2000
rec event -e cpu-clock -F 4000 -- "$F/codec_threads" 4 1000000
rec trace --mode trace --mmap-pages 2048 -- "$F/capture_alloc" 2 200

mkdir "$T/b"
for i in $(seq 40); do
	printf 'int f%d(int x) { return x * %d; }\nint main(void) { return f%d(3) == 0; }\n' \
		"$i" "$i" "$i" >"$T/b/p$i.c"
done
printf 'all: $(patsubst %%.c,%%,$(wildcard p*.c))\n%%: %%.c\n\tgcc -O2 -g -o $@ $<\n' >"$T/b/Makefile"
rec make -- make -s -C "$T/b" -j2
make -s -C "$T/b" clean >/dev/null 2>&1 || rm -f $(ls "$T"/b/p* | grep -v '\.c$')
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$T/perf-make.data" -- \
	make -s -B -C "$T/b" -j2 >/dev/null 2>"$T/perf.err" || fail "perf record: $(cat "$T/perf.err")"

# The summary without what depends on the threads: the time, the hit rates
# and the -j line; and the debug cache's copies used, which is 2 or 3 from
# one -j 1 run to the next on capture_stacks (the modules' loader threads
# finish in any order: not -j's doing).
counts() {
	grep -v '^mt-unwind: -j \|^mt-unwind: debug cache: ' "$1" |
		sed -e 's/ in [0-9.]* s: [0-9]* events\/s$//' -e 's/; cache hit rate: .*//'
}

for name in threads stacks recursion forkexec event trace make perf-make; do
	data=$T/$name.data
	events=$(mt-unwind -q -j 1 "$data" | grep -c -v '^#') || fail "$name: no events"
	[ "$events" -gt 20 ] || fail "$name: only $events events"
	for opt in "" --srcline --pprof-info --addrs; do
		mt-unwind -j 1 $opt -o "$T/j1.txt" "$data" 2>"$T/j1.err" ||
			fail "$name $opt -j 1: exit $?: $(cat "$T/j1.err")"
		! grep -q '^mt-unwind: -j ' "$T/j1.err" || fail "$name: -j 1 names a pool"
		for j in 2 3; do
			mt-unwind -j $j $opt -o "$T/j$j.txt" "$data" 2>"$T/j$j.err" ||
				fail "$name $opt -j $j: exit $?: $(cat "$T/j$j.err")"
			cmp "$T/j1.txt" "$T/j$j.txt" ||
				fail "$name $opt: -j $j differs from -j 1: $(diff "$T/j1.txt" "$T/j$j.txt" | head -6)"
			[ "$(counts "$T/j1.err")" = "$(counts "$T/j$j.err")" ] ||
				fail "$name $opt: -j $j's summary differs: $(diff <(counts "$T/j1.err") <(counts "$T/j$j.err"))"
			walked=$(sed -n "s/^mt-unwind: -j $j: \([0-9]*\) stacks walked on arrival by $j threads, the others at their turn on one$/\1/p" "$T/j$j.err")
			[ -n "$walked" ] || fail "$name $opt: no -j line: $(cat "$T/j$j.err")"
			# Walked on arrival: dumps of 512 bytes or more, of a process
			# whose mappings are known by then (sample mode's dumps of
			# codec_threads and capture_alloc are shorter: none).
			case $name in
			recursion|event|trace|make|perf-make)
				[ "$walked" -gt 0 ] || fail "$name $opt -j $j: no stack walked by the pool";;
			esac
		done
	done
	echo "$name: $events events, $walked walked by the pool; -j 2 = -j 3 = -j 1"
done

# Walks cut by --max-depth are the same; above 1024 frames the pool is not
# used (each walk it takes holds room for --max-depth frames until its round
# is released).
for d in 8 1025; do
	mt-unwind -j 1 --max-depth $d -o "$T/d1.txt" "$T/perf-make.data" 2>/dev/null
	mt-unwind -j 2 --max-depth $d -o "$T/d2.txt" "$T/perf-make.data" 2>"$T/d2.err"
	cmp "$T/d1.txt" "$T/d2.txt" || fail "--max-depth $d: -j 2 differs"
	if [ $d = 8 ]; then
		grep -q ' end=depth$' "$T/d1.txt" || fail "--max-depth 8: no stack cut"
		grep -q '^mt-unwind: -j 2: [1-9][0-9]* stacks walked' "$T/d2.err" ||
			fail "--max-depth 8: no pool: $(cat "$T/d2.err")"
	else
		! grep -q '^mt-unwind: -j ' "$T/d2.err" || fail "--max-depth 1025 got a pool"
	fi
done

# A pipe: nothing is walked on arrival, so no pool; the same output.
mt-unwind -j 1 -o "$T/p1.txt" "$T/make.data" 2>/dev/null
mt-unwind -j 2 -o "$T/p2.txt" - <"$T/make.data" 2>"$T/p2.err" || fail "-j 2 from a redirect"
cat "$T/make.data" | mt-unwind -j 2 -o "$T/p3.txt" - 2>"$T/p3.err" || fail "-j 2 from a pipe: $(cat "$T/p3.err")"
! grep -q '^mt-unwind: -j ' "$T/p3.err" || fail "a pipe got a pool: $(cat "$T/p3.err")"
grep -v '^# input' "$T/p1.txt" >"$T/p1.body"
grep -v '^# input' "$T/p3.txt" >"$T/p3.body"
cmp "$T/p1.body" "$T/p3.body" || fail "-j 2 on a pipe differs"

# Usage errors.
for bad in 0 -1 x 1025 ''; do
	if mt-unwind -j "$bad" "$T/make.data" >/dev/null 2>"$T/bad.err"; then rc=0; else rc=$?; fi
	[ "$rc" = 2 ] || fail "-j '$bad': exit $rc"
	grep -qxF "mt-unwind: -j: '$bad' is not a number in 1..1024" "$T/bad.err" ||
		fail "-j '$bad': $(cat "$T/bad.err")"
done
echo "ok"
