#!/bin/bash
# Symbol archives (issue 30): `mt archive FILE -o DIR` copies every module
# the capture's stacks touched into DIR's build-id tree, with the separate
# debug files; after the program is moved away, `mt-unwind --symfs DIR`
# gives byte for byte the output of the unwinding with the program in
# place, and without --symfs it does not.  libc and its debug file come
# from the archive too (the module list says which file was read).  A file
# of the wrong build-id in the archive is not used.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
export XDG_CACHE_HOME=$T/cache

mkdir "$T/bin"
cp "$MT_FIXTURES/capture_alloc" "$T/bin/prog"
"$CAP" -o "$T/a.data" -- "$T/bin/prog" 0 200 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
mt-unwind --srcline -o "$T/ref.txt" "$T/a.data" 2>"$T/ref.uw" || fail "mt-unwind: $(cat "$T/ref.uw")"
mt-unwind --pprof-info -o "$T/ref.pp" "$T/a.data" 2>/dev/null || fail "mt-unwind --pprof-info"
grep -q "main (capture_alloc.c:[0-9]*);worker (capture_alloc.c:" "$T/ref.txt" ||
	fail "the reference has no source lines: $(sed -n 3p "$T/ref.txt")"

buildid() { readelf -n "$1" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p'; }
prog_id=$(buildid "$T/bin/prog")
libc=$(sed -n 's/.*: r-xp \(\/.*libc\.so\.6\)$/\1/p' <(perf script -i "$T/a.data" --show-mmap-events 2>/dev/null) | head -1)
[ -n "$libc" ] || fail "no mapping of libc in the capture"
libc_id=$(buildid "$libc")
[ -n "$prog_id" ] && [ -n "$libc_id" ] || fail "no build-ids: prog '$prog_id' libc '$libc_id'"

mt archive "$T/a.data" -o "$T/arch" 2>"$T/ar.err" || fail "mt archive exit $?: $(cat "$T/ar.err")"
grep -q "^mt: '$T/arch': [0-9]* modules of '$T/a.data': copied [0-9]* ELF files (.* MiB), [0-9]* debug files (.* MiB), 0 there already; the archive holds [0-9]* files, .* MiB$" \
	"$T/ar.err" || fail "no summary: $(cat "$T/ar.err")"
prog_copy=$T/arch/.build-id/${prog_id:0:2}/${prog_id:2}
libc_copy=$T/arch/.build-id/${libc_id:0:2}/${libc_id:2}
cmp -s "$prog_copy" "$T/bin/prog" || fail "prog is not in the archive as $prog_copy"
cmp -s "$libc_copy" "$libc" || fail "libc is not in the archive as $libc_copy"
grep -qxF "$(printf '%s\telf\t%s\t%s' "$prog_id" "$(stat -c %s "$T/bin/prog")" "$T/bin/prog")" \
	"$T/arch/index" || fail "prog not in the index: $(cat "$T/arch/index")"
libc_debug=/usr/lib/debug/.build-id/${libc_id:0:2}/${libc_id:2}.debug
if [ -f "$libc_debug" ]; then
	cmp -s "$libc_copy.debug" "$libc_debug" || fail "libc's debug file is not in the archive"
	grep -qxF "$(printf '%s\tdebug\t%s\t%s' "$libc_id" "$(stat -c %s "$libc_debug")" "$libc_debug")" \
		"$T/arch/index" || fail "libc's debug file not in the index: $(cat "$T/arch/index")"
fi
[ "$(stat -c %a "$T/arch" "$T/arch/.build-id")" = "$(printf '700\n700')" ] || fail "directories not 0700"
[ "$(stat -c %a "$prog_copy")" = 600 ] || fail "copies not 0600"
[ -z "$(find "$T/arch" -name '*.tmp')" ] || fail "temporary files left: $(find "$T/arch" -name '*.tmp')"

# The program moved away: the archive stands in for it.
mv "$T/bin/prog" "$T/bin/prog.moved"
mt-unwind --srcline --symfs "$T/arch" --list-modules "$T/mods" -o "$T/sym.txt" "$T/a.data" \
	2>"$T/sym.uw" || fail "mt-unwind --symfs exit $?: $(cat "$T/sym.uw")"
cmp "$T/ref.txt" "$T/sym.txt" || fail "--symfs output differs: $(diff "$T/ref.txt" "$T/sym.txt" | head -5)"
if grep -q "cannot use\|mismatch (" "$T/sym.uw"; then fail "--symfs: $(cat "$T/sym.uw")"; fi
mt-unwind --pprof-info --symfs "$T/arch" -o "$T/sym.pp" "$T/a.data" 2>/dev/null ||
	fail "mt-unwind --pprof-info --symfs"
cmp "$T/ref.pp" "$T/sym.pp" || fail "--pprof-info --symfs output differs"
# which files were read: the archive's, for libc's debug info too
grep -q "^$prog_id	ok	[0-9]*	[0-9]*	$T/bin/prog	$prog_copy	" "$T/mods" ||
	fail "prog not read from the archive: $(cat "$T/mods")"
grep -q "^$libc_id	ok	[0-9]*	[0-9]*	$libc	$libc_copy	" "$T/mods" ||
	fail "libc not read from the archive: $(cat "$T/mods")"
if [ -f "$libc_debug" ]; then
	grep -q "^$libc_id	ok	.*	$libc_copy.debug	" "$T/mods" ||
		fail "libc's debug file not read from the archive: $(cat "$T/mods")"
fi

# Without the archive: prog's frames are lost (the test can fail).
mt-unwind --srcline -o "$T/none.txt" "$T/a.data" 2>"$T/none.uw" || fail "mt-unwind exit $?"
if cmp -s "$T/ref.txt" "$T/none.txt"; then fail "the same output without the program"; fi
grep -qxF "mt-unwind: warning: cannot use '$T/bin/prog': No such file or directory: its frames are not symbolised" \
	"$T/none.uw" || fail "no warning for the moved program: $(cat "$T/none.uw")"

# Archiving again without the program: it is named, the index keeps it.
mt archive "$T/a.data" -o "$T/arch" 2>"$T/ar2.err" || fail "mt archive again exit $?: $(cat "$T/ar2.err")"
grep -qxF "mt: warning: '$T/bin/prog' not archived: mt-unwind cannot use it (missing)" "$T/ar2.err" ||
	fail "the missing program is not named: $(cat "$T/ar2.err")"
grep -q "copied 0 ELF files (0.0 MiB), 0 debug files (0.0 MiB), [1-9][0-9]* there already" "$T/ar2.err" ||
	fail "files copied again: $(cat "$T/ar2.err")"
grep -q "^$prog_id	elf	" "$T/arch/index" || fail "the index lost prog: $(cat "$T/arch/index")"

# A file of another build-id in prog's place in the archive is not used.
cp "$libc" "$prog_copy"
mt-unwind --srcline --symfs "$T/arch" -o "$T/bad.txt" "$T/a.data" 2>"$T/bad.uw" || fail "exit $?"
grep -qxF "mt-unwind: warning: cannot use '$T/bin/prog': No such file or directory: its frames are not symbolised" \
	"$T/bad.uw" || fail "a wrong copy in the archive: $(cat "$T/bad.uw")"

# Usage errors.
set +e
mt archive "$T/a.data" 2>"$T/u.err"; rc=$?
set -e
[ $rc = 2 ] || fail "no -o: exit $rc"
grep -qxF "mt: no archive directory given (-o DIR)" "$T/u.err" || fail "no -o: $(cat "$T/u.err")"
set +e
mt-unwind --symfs "$T/nope" -o "$T/nope.txt" "$T/a.data" 2>"$T/n.err"; rc=$?
set -e
[ $rc = 3 ] || fail "--symfs of no directory: exit $rc"
grep -qxF "mt-unwind: cannot use --symfs '$T/nope': No such file or directory" "$T/n.err" ||
	fail "--symfs of no directory: $(cat "$T/n.err")"
echo ok
