#!/bin/bash
# Separate debug info: a fixture recorded, then stripped (same build-id); its
# symbols and inline frames must come back from --debuginfo-path DIR, where
# the debug part sits under DIR/.build-id/xx/yyyy.debug.  A different file at
# the recorded path (another build-id) must be reported, not symbolised.
set -u
. "$MT_SRC/tests/e2e/unwind_lib.sh"
unwind_need_perf
unset DEBUGINFOD_URLS
fail=0
mkdir -p "$tmp/bin" "$tmp/dbg"
cp "$MT_FIXTURES/unwind_inline" "$tmp/bin/unwind_inline"
unwind_record_mark "$tmp/bin/unwind_inline" "$tmp/i.data" 3 || exit 1

id=$(readelf -n "$tmp/bin/unwind_inline" | awk '/Build ID/ { print $3 }')
mkdir -p "$tmp/dbg/.build-id/${id:0:2}"
objcopy --only-keep-debug "$tmp/bin/unwind_inline" "$tmp/dbg/.build-id/${id:0:2}/${id:2}.debug"
strip --strip-all "$tmp/bin/unwind_inline"
cp "$tmp/bin/unwind_inline" "$tmp/bin/unwind_inline.stripped"
[ "$(readelf -n "$tmp/bin/unwind_inline" | awk '/Build ID/ { print $3 }')" = "$id" ] ||
	{ echo "FAIL strip changed the build-id"; exit 1; }

want='main;outer;helper_always_\[i\];helper_static_\[i\];unwind_mark end=complete$'
mt-unwind -q "$tmp/i.data" | grep '^sample' | cut -f6 >"$tmp/plain.txt"
if grep -Eq "$want" "$tmp/plain.txt"; then
	echo "FAIL stripped binary symbolised without its debug info?"; fail=1
fi
# Unwinding still works from .eh_frame: complete stacks, unnamed frames.
[ "$(grep -c 'end=complete$' "$tmp/plain.txt")" -eq 3 ] || { echo "FAIL stripped: stacks not complete"; cat "$tmp/plain.txt"; fail=1; }
grep -q '\[unwind_inline+0x' "$tmp/plain.txt" || { echo "FAIL stripped: expected [unwind_inline+0x...] frames"; fail=1; }

mt-unwind -q --debuginfo-path "$tmp/dbg" "$tmp/i.data" | grep '^sample' | cut -f6 >"$tmp/dbg.txt"
n=$(grep -Ec "(^|;)$want" "$tmp/dbg.txt")
[ "$n" -eq 3 ] && echo "ok --debuginfo-path: 3 stacks with names and inline frames" ||
	{ echo "FAIL --debuginfo-path: $n of 3 stacks symbolised:"; cat "$tmp/dbg.txt"; fail=1; }

# Compressed debug sections (as distributions ship them): the same frames,
# and an inflated copy is kept in the debug cache and used by the next run.
# An unsound copy (truncated) is counted, ignored and replaced.
objcopy --compress-debug-sections=zlib "$tmp/dbg/.build-id/${id:0:2}/${id:2}.debug" "$tmp/z.debug"
mv "$tmp/z.debug" "$tmp/dbg/.build-id/${id:0:2}/${id:2}.debug"
readelf -S -W "$tmp/dbg/.build-id/${id:0:2}/${id:2}.debug" 2>/dev/null | grep -q '\.debug_info .* C ' ||
	{ echo "FAIL objcopy did not compress .debug_info"; exit 1; }
cache_run() {	# cache_run NAME: frames to $tmp/NAME.txt, summary to $tmp/NAME.err
	mt-unwind --debuginfo-path "$tmp/dbg" --debug-cache "$tmp/cache" "$tmp/i.data" \
		2>"$tmp/$1.err" | grep '^sample' | cut -f6 >"$tmp/$1.txt"
}
mt-unwind -q --no-debug-cache --debuginfo-path "$tmp/dbg" "$tmp/i.data" | grep '^sample' |
	cut -f6 >"$tmp/z.txt"
cmp -s "$tmp/z.txt" "$tmp/dbg.txt" || { echo "FAIL compressed debug info: other frames:"; cat "$tmp/z.txt"; fail=1; }
cache_run c1
copy=$tmp/cache/$id.debug
# (counts include libc's debug file when its package is installed: compressed too)
grep -Eq 'debug cache: 0 inflated copies used, [12] written, 0 unsound ones ignored, 0 could not' "$tmp/c1.err" ||
	{ echo "FAIL first run did not write the copy:"; cat "$tmp/c1.err"; fail=1; }
[ -f "$copy" ] && ! readelf -S -W "$copy" 2>/dev/null | grep -q '\.debug_.* C ' ||
	{ echo "FAIL no inflated copy at $copy"; fail=1; }
[ "$(readelf -n "$copy" 2>/dev/null | awk '/Build ID/ { print $3 }')" = "$id" ] ||
	{ echo "FAIL the copy lost its build-id"; fail=1; }
cache_run c2
grep -Eq 'debug cache: [12] inflated copies used, 0 written, 0 unsound' "$tmp/c2.err" ||
	{ echo "FAIL second run did not use the copy:"; cat "$tmp/c2.err"; fail=1; }
truncate -s $(( $(stat -c %s "$copy") / 2 )) "$copy"
cache_run c3
grep -Eq 'debug cache: [01] inflated copies used, 1 written, 1 unsound ones ignored' "$tmp/c3.err" ||
	{ echo "FAIL truncated copy not replaced:"; cat "$tmp/c3.err"; fail=1; }
for r in c1 c2 c3; do
	cmp -s "$tmp/$r.txt" "$tmp/dbg.txt" || { echo "FAIL debug cache run $r: other frames:"; cat "$tmp/$r.txt"; fail=1; }
done
[ $fail -eq 0 ] && echo "ok compressed debug info: same frames; inflated copy written, used, replaced when unsound"

# Scope indexes (symbolize/scopes_file.h) beside the copy: saved by the first
# run that builds them, read by the next (none built again); a damaged file
# is counted, ignored and replaced.  The frames never change.
scopes=$tmp/cache/$id.scopes
rm -f "$tmp"/cache/*.scopes
cache_run s1
[ -s "$scopes" ] || { echo "FAIL no scope index file $scopes"; fail=1; }
grep -Eq 'scope index cache: 0 indexes read, [1-9][0-9]* built, [1-9][0-9]* saved, 0 unsound' "$tmp/s1.err" ||
	{ echo "FAIL first run did not save its scope indexes:"; cat "$tmp/s1.err"; fail=1; }
cache_run s2
grep -Eq 'scope index cache: [1-9][0-9]* indexes read, 0 built, 0 saved, 0 unsound' "$tmp/s2.err" ||
	{ echo "FAIL second run did not read the scope indexes:"; cat "$tmp/s2.err"; fail=1; }
truncate -s -8 "$scopes"
cache_run s3
grep -Eq 'scope index cache: [0-9]+ indexes read, [1-9][0-9]* built, [1-9][0-9]* saved, 1 unsound' "$tmp/s3.err" ||
	{ echo "FAIL damaged scope index file not replaced:"; cat "$tmp/s3.err"; fail=1; }
cache_run s4
grep -Eq 'scope index cache: [1-9][0-9]* indexes read, 0 built, 0 saved, 0 unsound' "$tmp/s4.err" ||
	{ echo "FAIL the replaced scope index file was not read:"; cat "$tmp/s4.err"; fail=1; }
for r in s1 s2 s3 s4; do
	cmp -s "$tmp/$r.txt" "$tmp/dbg.txt" || { echo "FAIL scope cache run $r: other frames:"; cat "$tmp/$r.txt"; fail=1; }
done
# A cache directory that cannot be made: counted, nothing else changes.
mt-unwind --debuginfo-path "$tmp/dbg" --debug-cache /dev/null/cache "$tmp/i.data" \
	2>"$tmp/s5.err" | grep '^sample' | cut -f6 >"$tmp/s5.txt"
grep -Eq 'scope index cache: 0 indexes read, [1-9][0-9]* built, 0 saved, 0 unsound files ignored, [1-9][0-9]* files could not be written' "$tmp/s5.err" ||
	{ echo "FAIL unwritable cache not reported as such:"; cat "$tmp/s5.err"; fail=1; }
cmp -s "$tmp/s5.txt" "$tmp/dbg.txt" || { echo "FAIL unwritable cache: other frames"; fail=1; }
[ $fail -eq 0 ] && echo "ok scope indexes: saved, read instead of rebuilt, replaced when damaged, none when the directory cannot be made; same frames"

# Another program in the recorded file's place: a build-id mismatch.
cp "$MT_FIXTURES/unwind_recursion" "$tmp/bin/unwind_inline"
mt-unwind -q "$tmp/i.data" >"$tmp/mis.txt" 2>"$tmp/mis.err"
grep -q "'$tmp/bin/unwind_inline': build-id mismatch (recorded $id" "$tmp/mis.err" ||
	{ echo "FAIL mismatch not reported:"; cat "$tmp/mis.err"; fail=1; }
grep '^sample' "$tmp/mis.txt" | cut -f6 | grep -q '\[unwind_inline+0x[0-9a-f]*\]_\[x\]' ||
	{ echo "FAIL mismatched frames not marked _[x]"; fail=1; }
grep -q 'recurse' "$tmp/mis.txt" && { echo "FAIL symbolised from the wrong file"; fail=1; }
[ $fail -eq 0 ] && echo "ok build-id mismatch reported and marked"

# The stripped binary has no local debug info: libdw asks debuginfod, whose
# client library (and libcurl behind it) is loaded only when a server is
# configured (symbolize/debuginfod_gate.c); the port below refuses at once.
if [ -e /usr/lib/x86_64-linux-gnu/libdebuginfod.so.1 ] || ldconfig -p | grep -q libdebuginfod.so.1; then
	cp "$tmp/bin/unwind_inline.stripped" "$tmp/bin/unwind_inline"
	LD_DEBUG=files mt-unwind -q -o /dev/null "$tmp/i.data" 2>"$tmp/ld0.err"
	DEBUGINFOD_URLS=http://127.0.0.1:9 DEBUGINFOD_CACHE_PATH="$tmp/dcache" \
		LD_DEBUG=files mt-unwind -q -o /dev/null "$tmp/i.data" 2>"$tmp/ld1.err"
	if grep -q 'file=libdebuginfod' "$tmp/ld0.err"; then
		echo "FAIL libdebuginfod loaded with no DEBUGINFOD_URLS"; fail=1
	elif ! grep -q 'file=libdebuginfod' "$tmp/ld1.err"; then
		echo "FAIL libdebuginfod not loaded with DEBUGINFOD_URLS set"; fail=1
	else
		echo "ok libdebuginfod loaded only when DEBUGINFOD_URLS names a server"
	fi
else
	echo "skip debuginfod gate: libdebuginfod.so.1 not installed"
fi
exit $fail
