#!/bin/bash
# A recording's MMAP2 names any path.  mt-unwind opens only regular files:
# a fifo (whose writer, blocked in open(), must stay blocked), a directory,
# a character device and /proc/self/mem are refused without being opened;
# a file that is not ELF and a deleted program cannot be used either.  Each
# gets one warning naming the file and the reason, the summary counts
# them, frames there are unknown-module, and the exit status is 0.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

cp "$MT_FIXTURES/capture_alloc" "$T/prog"
"$CAP" -o "$T/a.data" -- "$T/prog" 0 200 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
mt-unwind -o "$T/a.txt" "$T/a.data" 2>"$T/a.uw" || fail "mt-unwind: $(cat "$T/a.uw")"
if grep -q "cannot use" "$T/a.uw"; then fail "a warning for a usable file: $(cat "$T/a.uw")"; fi
grep -q "^mt-unwind: [0-9]* modules, 0 build-id mismatches, 0 files that cannot be used;" "$T/a.uw" ||
	fail "no count of unusable files: $(cat "$T/a.uw")"
grep -q ";main;.* end=complete$" <(cut -f6 "$T/a.txt") ||
	fail "prog's frames are not symbolised: $(head -3 "$T/a.txt")"

# check NAME PATH REASON: prog's mapping renamed PATH, one warning REASON
check() {
	local name=$1 path=$2 why=$3
	n=$(python3 "$MT_SRC/tests/e2e/remap_mmap.py" "$T/a.data" "$T/$name.data" "$T/prog" "$path") ||
		fail "remap_mmap.py"
	[ "$n" -ge 1 ] || fail "$name: no MMAP2 record of $T/prog"
	mt-unwind -o "$T/$name.txt" "$T/$name.data" 2>"$T/$name.uw" ||
		fail "$name: mt-unwind exit $?: $(cat "$T/$name.uw")"
	want="mt-unwind: warning: cannot use '$path': $why: its frames are not symbolised"
	[ "$(grep -c "cannot use" "$T/$name.uw")" = 1 ] ||
		fail "$name: not one warning: $(cat "$T/$name.uw")"
	grep -qxF "$want" "$T/$name.uw" || fail "$name: want '$want', got: $(cat "$T/$name.uw")"
	grep -q "^mt-unwind: [0-9]* modules, 0 build-id mismatches, 1 files that cannot be used;" \
		"$T/$name.uw" || fail "$name: not counted: $(cat "$T/$name.uw")"
	grep -q "end=unknown-module" "$T/$name.txt" || fail "$name: no unknown-module stacks"
}

mkfifo "$T/fifo"
# a writer blocked in open() until a reader opens the fifo
timeout 20 sh -c "exec 3>'$T/fifo'; echo released >'$T/writer'" &
writer=$!
check fifo "$T/fifo" "not a regular file (fifo)"
sleep 0.2
[ ! -e "$T/writer" ] || fail "mt-unwind opened the fifo: its writer was released"
kill -0 "$writer" 2>/dev/null || fail "the fifo's writer is gone"
exec 4<>"$T/fifo"	# release it ourselves
wait "$writer" || fail "the writer failed"
exec 4>&-

mkdir "$T/dir"
check dir "$T/dir" "not a regular file (directory)"
check dev /dev/null "not a regular file (character device)"
check procmem /proc/self/mem "not a regular file (a file of /proc)"
echo "not an ELF file" >"$T/text"
check text "$T/text" "not an ELF file"
if [ -r /etc/shadow ]; then
	check shadow /etc/shadow "not an ELF file"
else
	check shadow /etc/shadow "Permission denied"
fi
rm "$T/prog"
cp "$T/a.data" "$T/gone.data"
mt-unwind -o "$T/gone.txt" "$T/gone.data" 2>"$T/gone.uw" || fail "gone: mt-unwind: $(cat "$T/gone.uw")"
grep -qxF "mt-unwind: warning: cannot use '$T/prog': No such file or directory: its frames are not symbolised" \
	"$T/gone.uw" || fail "deleted program: $(cat "$T/gone.uw")"
grep -q "1 files that cannot be used;" "$T/gone.uw" || fail "deleted program not counted"
echo ok
