#!/bin/bash
# mt-unwind's symbol table (.syms) and CFI row (.rules) files in the debug
# cache (issue 30): on real recordings of many short processes (a `make -j2`
# of 40 compiles, by mt-capture's sample mode and by perf record) and of
# threads, the output with the cache filled is byte for byte the output
# without any cache, with every text option and with -j 2; a second
# recording of the build, read with the rows the first one saved, too.
# The second run reads every table and compiles no row.  Damaged files and
# another user's are counted as unsound, not used (the same output), and
# replaced.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
export XDG_CACHE_HOME=$T/xdg
F=$MT_FIXTURES
C=$T/cache

rec() {	# rec NAME MT-CAPTURE-ARGS...: record $T/NAME.data
	name=$1
	shift
	"$CAP" -o "$T/$name.data" "$@" >/dev/null 2>"$T/$name.cap" ||
		fail "mt-capture $name: $(tail -n 3 "$T/$name.cap")"
}
mkdir "$T/b"
for i in $(seq 40); do
	printf 'int f%d(int x) { return x * %d; }\nint main(void) { return f%d(3) == 0; }\n' \
		"$i" "$i" "$i" >"$T/b/p$i.c"
done
printf 'all: $(patsubst %%.c,%%,$(wildcard p*.c))\n%%: %%.c\n\tgcc -O2 -g -o $@ $<\n' >"$T/b/Makefile"
rec make -- make -s -C "$T/b" -j2
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$T/perf-make.data" -- \
	make -s -B -C "$T/b" -j2 >/dev/null 2>"$T/perf.err" || fail "perf record: $(cat "$T/perf.err")"
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$T/perf-make2.data" -- \
	make -s -B -C "$T/b" -j2 >/dev/null 2>"$T/perf.err" || fail "perf record: $(cat "$T/perf.err")"
rec threads --rate 8192 -- "$F/codec_threads" 4 20000

# stat N KIND: the count before KIND in the summary's symbol table line
# ("tables read", "built", "saved", "unsound files ignored")
syms() { sed -n "s/^mt-unwind: symbol table cache: .*\<\([0-9]*\) $2.*/\1/p" "$1"; }
# the CFI row cache line: "rules from", "files read", "rows compiled", ...
rows() { sed -n "s/^mt-unwind: CFI row cache: .*\<\([0-9]*\) $2.*/\1/p" "$1"; }

for name in make perf-make threads; do
	data=$T/$name.data
	rm -rf "$C"
	for opt in "" --srcline --pprof-info --addrs; do
		mt-unwind -q --no-debug-cache $opt -o "$T/want.txt" "$data" || fail "$name $opt: no cache"
		for run in fill filled j2; do
			j=1
			[ $run = j2 ] && j=2
			mt-unwind -j $j --debug-cache "$C" $opt -o "$T/got.txt" "$data" 2>"$T/got.err" ||
				fail "$name $opt $run: exit $?: $(cat "$T/got.err")"
			cmp "$T/want.txt" "$T/got.txt" ||
				fail "$name $opt $run: differs from --no-debug-cache: $(diff "$T/want.txt" "$T/got.txt" | head -4)"
			if [ "$opt$run" = filled ] || [ "$opt$run" = --addrsfilled ]; then
				[ "$(syms "$T/got.err" built)" = 0 ] && [ "$(syms "$T/got.err" 'tables read')" -gt 0 ] ||
					[ "$opt" = --addrs ] || fail "$name $run: tables built again: $(grep '^mt-unwind: symbol table cache' "$T/got.err")"
				[ "$(rows "$T/got.err" 'rows compiled')" = 0 ] && [ "$(rows "$T/got.err" 'rules from')" -gt 0 ] ||
					fail "$name $opt $run: rows compiled again: $(grep '^mt-unwind: CFI row cache' "$T/got.err")"
			fi
		done
	done
	echo "$name: the same output with the cache filled; $(grep '^mt-unwind: CFI row cache' "$T/got.err")"
done

# Another recording of the build, with the rows of the first: the same
# output as without a cache, and most rules from the file.
rm -rf "$C"
mt-unwind -q --debug-cache "$C" -o /dev/null "$T/perf-make.data"
mt-unwind -q --no-debug-cache -o "$T/want.txt" "$T/perf-make2.data"
mt-unwind --debug-cache "$C" -o "$T/got.txt" "$T/perf-make2.data" 2>"$T/got.err"
cmp "$T/want.txt" "$T/got.txt" || fail "another recording: differs: $(diff "$T/want.txt" "$T/got.txt" | head -4)"
hit=$(rows "$T/got.err" 'rules from') new=$(rows "$T/got.err" 'rows compiled')
[ "$hit" -gt "$new" ] || fail "another recording: $hit rules from the file, $new compiled"
echo "another recording: $hit rules from the file, $new rows compiled"

# Damaged (truncated, a byte flipped) and another user's files: counted as
# unsound, not used, replaced.
rm -rf "$C"
mt-unwind -q --debug-cache "$C" -o /dev/null "$T/perf-make.data"
mt-unwind -q --no-debug-cache -o "$T/want.txt" "$T/perf-make.data"
nsyms=$(ls "$C"/*.syms | wc -l) nrules=$(ls "$C"/*.rules | wc -l)
for how in truncate flip owner; do
	for f in "$C"/*.syms "$C"/*.rules; do
		case $how in
		truncate) truncate -s -8 "$f" ;;
		flip) printf '\377' | dd of="$f" bs=1 seek=200 conv=notrunc 2>/dev/null ;;
		owner) if [ "$(id -u)" = 0 ]; then chown 65534 "$f"; else chmod 666 "$f"; fi ;;
		esac
	done
	mt-unwind --debug-cache "$C" -o "$T/got.txt" "$T/perf-make.data" 2>"$T/got.err" ||
		fail "$how: exit $?: $(cat "$T/got.err")"
	cmp "$T/want.txt" "$T/got.txt" || fail "$how: differs: $(diff "$T/want.txt" "$T/got.txt" | head -4)"
	[ "$(syms "$T/got.err" 'unsound files ignored')" = "$nsyms" ] && [ "$(syms "$T/got.err" 'tables read')" = 0 ] ||
		fail "$how: $nsyms .syms files: $(grep '^mt-unwind: symbol table cache' "$T/got.err")"
	[ "$(rows "$T/got.err" 'unsound files ignored')" = "$nrules" ] && [ "$(rows "$T/got.err" 'files read')" = 0 ] ||
		fail "$how: $nrules .rules files: $(grep '^mt-unwind: CFI row cache' "$T/got.err")"
	mt-unwind --debug-cache "$C" -o "$T/got.txt" "$T/perf-make.data" 2>"$T/got.err"
	[ "$(syms "$T/got.err" 'unsound files ignored')" = 0 ] && [ "$(rows "$T/got.err" 'unsound files ignored')" = 0 ] ||
		fail "$how: not replaced: $(grep 'cache' "$T/got.err")"
	echo "$how: $nsyms .syms and $nrules .rules files unsound, not used, replaced"
done
# a relative --debug-cache is a directory under the current one (it wrote
# nothing before: the trust checks walk absolute paths)
(cd "$T" && mt-unwind --debug-cache rel -o /dev/null "$T/threads.data" 2>"$T/rel.err") ||
	fail "relative --debug-cache: $(cat "$T/rel.err")"
ls "$T"/rel/*.syms >/dev/null 2>&1 ||
	fail "relative --debug-cache: nothing written: $(grep cache "$T/rel.err")"
echo "ok"
