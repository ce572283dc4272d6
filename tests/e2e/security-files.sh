#!/bin/bash
# Files mt reads back and files it writes (docs/SECURITY.md):
# - a debug-cache copy another user planted is not used (a shared cache
#   directory), and a copy made from another file than the debug file found
#   now is not used either: its source's identity and content are checked;
# - every tool's -o output is created 0600, and an existing symbolic link
#   in a sticky directory others can write is refused.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
UNW=$MT_BUILD/bin/mt-unwind
chmod 755 "$T"

"$CAP" -o "$T/a.data" -- "$MT_FIXTURES/capture_alloc" 1 200 >/dev/null 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
libc=$(awk '/libc\.so/ { print $NF; exit }' /proc/self/maps)
id=$(readelf -n "$libc" 2>/dev/null | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
dbg=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
[ -r "$dbg" ] || { echo "no debug file for the libc ($dbg): install libc6-dbg"; exit 77; }
readelf -S "$dbg" | grep -q ' C ' || readelf -S -W "$dbg" | grep -q 'C.*debug_info' ||
	{ echo "the libc's debug file has no compressed section: nothing is cached"; exit 77; }
names() { "$UNW" -q "$@" "$T/a.data" | awk -F'\t' '$1 == "alloc" { sub(/ .*/, "", $6); print $6 }' |
	tr ';' '\n' | sort -u; }
names --no-debug-cache >"$T/want"
grep -qx start_thread "$T/want" || fail "no start_thread frame to check: $(cat "$T/want")"

# A copy another user planted in a shared (1777) cache directory.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	S=$T/shared
	mkdir -m 1777 "$S"
	"$UNW" -q --debug-cache "$T/mine" -o /dev/null "$T/a.data" || fail "mt-unwind, own cache"
	[ -s "$T/mine/$id.debug" ] || fail "no copy made in the cache: $(ls "$T/mine")"
	cp "$T/mine/$id.debug" "$T/src.dbg"
	chmod 644 "$T/src.dbg"
	su -s /bin/sh nobody -c "perl -0777 -pe 's/\\0start_thread\\0/\\0EVIL_thread_\\0/g' $T/src.dbg >$S/$id.debug"
	"$UNW" --debug-cache "$S" -o "$T/u" "$T/a.data" 2>"$T/uerr" || fail "mt-unwind, shared cache: $(cat "$T/uerr")"
	! grep -q EVIL "$T/u" || fail "another user's cache file was used: $(grep -m1 EVIL "$T/u")"
	grep -qxF "mt-unwind: warning: debug cache: 1 copies not used: another user's, or writable by others" "$T/uerr" ||
		fail "the refused copy was not reported: $(grep 'debug cache' "$T/uerr")"
	names --debug-cache "$S" | cmp -s - "$T/want" || fail "names differ with a shared cache"
else
	echo "not root: the planted-file case is skipped"
fi

# A copy made from another file with the same build-id (a debug file edited,
# or found elsewhere): it serves that file only.
fake=$T/fake/.build-id/${id:0:2}
mkdir -p "$fake"
perl -0777 -pe 's/\0start_thread\0/\0EVIL_thread_\0/g' "$dbg" >"$fake/${id:2}.debug"
C=$T/cache
names --debug-cache "$C" --debuginfo-path "$T/fake" | grep -qx EVIL_thread_ ||
	fail "the edited debug file was not read: the test proves nothing"
"$UNW" --debug-cache "$C" -o "$T/u" "$T/a.data" 2>"$T/uerr" || fail "mt-unwind: $(cat "$T/uerr")"
! grep -q EVIL "$T/u" || fail "a copy of another file was used: $(grep -m1 EVIL "$T/u")"
grep -q "debug cache: 0 inflated copies used, 1 written, 1 unsound ones ignored" "$T/uerr" ||
	fail "the stale copy was not counted and replaced: $(grep 'debug cache' "$T/uerr")"
names --debug-cache "$C" | cmp -s - "$T/want" || fail "names differ after the copy was made again"
# The same content under another identity (a copy of the file) is the same.
mkdir -p "$T/same/.build-id/${id:0:2}"
cp "$dbg" "$T/same/.build-id/${id:0:2}/${id:2}.debug"
"$UNW" --debug-cache "$C" --debuginfo-path "$T/same" -o /dev/null "$T/a.data" 2>"$T/uerr" ||
	fail "mt-unwind, copied debug file: $(cat "$T/uerr")"
grep -q "debug cache: 1 inflated copies used, 0 written, 0 unsound" "$T/uerr" ||
	fail "a copy of the same content was not served: $(grep 'debug cache' "$T/uerr")"

# Outputs: 0600 when created.
mode() { stat -c %a "$1"; }
"$CAP" -o "$T/o.data" -- true 2>/dev/null || fail "mt-capture -o"
"$MT_BUILD/bin/mt-encode" -q -o "$T/o.mtz" "$T/o.data" || fail "mt-encode -o"
"$UNW" -q -o "$T/o.txt" "$T/o.mtz" || fail "mt-unwind -o"
printf 'a;b 3\n' | "$MT_SRC/scripts/mt-flamegraph" -o "$T/o.svg" || fail "mt-flamegraph -o"
for f in o.data o.mtz o.txt o.svg; do
	[ "$(mode "$T/$f")" = 600 ] || fail "$f created mode $(mode "$T/$f"), not 600"
done
# A symbolic link in a sticky directory others can write is refused (the
# kernel's protected_symlinks lets its owner's links through, root's too).
W=$T/sticky
mkdir -m 1777 "$W"
ln -s "$T/victim" "$W/out"
check_refused() {	# TOOL STATUS ARGS...
	local tool=$1 want=$2 rc=0
	shift 2
	"$@" 2>"$T/err" || rc=$?
	[ "$rc" = "$want" ] || fail "$tool: exit $rc, not $want, for a planted link: $(cat "$T/err")"
	grep -qxF "$tool: cannot create '$W/out': a symbolic link in a directory others can write (refused)" "$T/err" ||
		fail "$tool: $(cat "$T/err")"
	[ ! -e "$T/victim" ] || fail "$tool wrote through the link"
}
check_refused mt-capture 125 "$CAP" -o "$W/out" -- true
check_refused mt-encode 3 "$MT_BUILD/bin/mt-encode" -o "$W/out" "$T/o.data"
check_refused mt-unwind 3 "$UNW" -o "$W/out" "$T/o.mtz"
check_refused mt-flamegraph 3 "$MT_SRC/scripts/mt-flamegraph" -o "$W/out" /dev/null
# Elsewhere a link is followed as before.
ln -s "$T/victim2" "$T/link"
"$MT_BUILD/bin/mt-encode" -q -o "$T/link" "$T/o.data" && [ -s "$T/victim2" ] ||
	fail "a link outside a shared directory was not followed"
echo "ok: untrusted or stale cache copies unused; outputs 0600; planted links refused"
