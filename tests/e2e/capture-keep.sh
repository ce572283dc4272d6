#!/bin/bash
# mt-capture keeps a copy of the sampler it preloads, by build-id, in the
# cache directory, and mt-unwind reads a capture's stacks through it after
# the sampler file was replaced by another build (mt rebuilt or upgraded);
# without the copy, that capture has no stack left.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

# A sampler build of its own: build/libmt-sampler.so with another build-id
# (the bytes of its id replaced in the file), so that no file mt-unwind
# finds by name has the recorded one.
mkdir "$T/lib"
lib=$T/lib/libmt-sampler.so
cp "$MT_BUILD/libmt-sampler.so" "$lib"
id=$(readelf -n "$lib" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
[ ${#id} = 40 ] || fail "no 20-byte build-id in the sampler: '$id'"
new=a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5
perl -0777 -pi -e 'BEGIN { $o = pack("H*", shift); $n = pack("H*", shift) } s/\Q$o\E/$n/g' \
	"$id" "$new" "$lib"
readelf -n "$lib" | grep -q "Build ID: $new" || fail "could not give the copy build-id $new"

XDG_CACHE_HOME=$T/cache MT_SAMPLER=$lib "$CAP" --rate 4096 -o "$T/s.data" -- \
	"$MT_FIXTURES/capture_alloc" 1 100 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
! grep -q 'cannot keep' "$T/err" || fail "no copy kept: $(cat "$T/err")"
cmp -s "$lib" "$T/cache/mt/build-id/$new/libmt-sampler.so" ||
	fail "no copy at cache/mt/build-id/$new: $(find "$T/cache" | head)"
# A second capture of the same build leaves the copy as it is.
touch -d @0 "$T/cache/mt/build-id/$new/libmt-sampler.so"
XDG_CACHE_HOME=$T/cache MT_SAMPLER=$lib "$CAP" --rate 4096 -o /dev/null -- true 2>"$T/err" ||
	fail "mt-capture again: $(cat "$T/err")"
[ "$(stat -c %Y "$T/cache/mt/build-id/$new/libmt-sampler.so")" = 0 ] || fail "the copy was made again"
# A copy that lost its content (a crash while it was written) is made again.
: >"$T/cache/mt/build-id/$new/libmt-sampler.so"
XDG_CACHE_HOME=$T/cache MT_SAMPLER=$lib "$CAP" --rate 4096 -o /dev/null -- true 2>"$T/err" ||
	fail "mt-capture, third: $(cat "$T/err")"
cmp -s "$lib" "$T/cache/mt/build-id/$new/libmt-sampler.so" || fail "an empty copy was not made again"

cp "$MT_BUILD/libmt-sampler.so" "$lib"	# the next build
ends() { sed -n 's/^mt-unwind: stack ends: //p' "$1"; }
XDG_CACHE_HOME=$T/cache "$MT_BUILD/bin/mt-unwind" "$T/s.data" >"$T/u" 2>"$T/uerr" ||
	fail "mt-unwind: $(cat "$T/uerr")"
! grep -q "build-id mismatch (" "$T/uerr" || fail "the kept copy was not used: $(cat "$T/uerr")"
awk '$1 == "alloc" { n++; if ($NF != "end=complete") bad++ } END { exit !(n >= 50 && !bad) }' "$T/u" ||
	fail "alloc stacks not all complete with the kept copy: $(ends "$T/uerr")"
grep '^alloc' "$T/u" | grep -q 'start_thread;worker;' || fail "no alloc stack through the fixture's worker"

XDG_CACHE_HOME=$T/empty "$MT_BUILD/bin/mt-unwind" "$T/s.data" >"$T/u2" 2>"$T/uerr2" || true
grep -q "build-id mismatch (recorded $new" "$T/uerr2" ||
	fail "without the copy: no mismatch reported: $(cat "$T/uerr2")"
! grep '^alloc' "$T/u2" | grep -q 'end=complete' || fail "without the copy, stacks complete all the same"
echo "ok: the kept sampler copy serves a capture after the sampler file changed"
