#!/bin/bash
# `make install PREFIX=...`: binaries, scripts, the sampler and the man pages
# land under PREFIX, and the installed mt-capture finds the installed sampler
# (and fails clearly without it).
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
p=$tmp/prefix

make -s -C "$MT_SRC" install PREFIX="$p" SANITIZE="${MT_SANITIZE:-}" >"$tmp/make.out" 2>&1 ||
	fail "make install: $(cat "$tmp/make.out")"
for f in bin/mt bin/mt-capture bin/mt-encode bin/mt-decode bin/mt-unwind bin/mt-fold bin/mt-flamegraph bin/mt-html; do
	[ -x "$p/$f" ] || fail "$f is not installed"
done
[ -f "$p/lib/mt/libmt-sampler.so" ] || fail "lib/mt/libmt-sampler.so is not installed"
for t in mt mt-capture mt-encode mt-decode mt-unwind mt-fold mt-flamegraph mt-html; do
	[ -f "$p/share/man/man1/$t.1" ] || fail "man page $t.1 is not installed"
done
"$p/bin/mt-fold" --help >"$tmp/help" && grep -q '^usage: mt-fold' "$tmp/help" || fail "installed mt-fold --help"
if command -v man >/dev/null; then
	MANPATH=$p/share/man man -w mt-capture >"$tmp/man" && grep -q "^$p/" "$tmp/man" ||
		fail "man does not find the installed page"
fi

# The installed mt-capture and its sampler, run from a directory far from the build.
unset MT_SAMPLER
cd "$tmp"
if ! "$p/bin/mt-capture" -e cpu-clock -o probe.data -- true 2>probe.err; then
	cat probe.err
	echo "skip: perf_event_open denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 77
fi
"$p/bin/mt-capture" --rate 4096 --seed 1 -o s.perf -- "$MT_FIXTURES/fold_sites" 2>cap.err ||
	fail "installed mt-capture: $(cat cap.err)"
"$p/bin/mt-unwind" -q s.perf >s.txt || fail "installed mt-unwind failed"
grep -q $'^alloc\t.*;alloc_small;malloc end=complete$' s.txt ||
	fail "no sampled allocation from the installed pipeline"
# the installed mt finds its installed stages (mt-flamegraph in PREFIX/bin)
XDG_CACHE_HOME=$tmp/cache "$p/bin/mt" report s.perf >rep.txt 2>rep.err || fail "installed mt report: $(cat rep.err)"
head -n 1 rep.txt | grep -qx "mt report: fold_sites, 's.perf'" || fail "installed mt report: $(head -n 1 rep.txt)"
XDG_CACHE_HOME=$tmp/cache "$p/bin/mt" flame s.perf 2>fl.err || fail "installed mt flame: $(cat fl.err)"
grep -q 'id="title"[^>]*>fold_sites: alloc_bytes (bytes)<' s.svg || fail "installed mt flame drew no s.svg"
# the installed mt-html carries its page template (embedded at build time)
XDG_CACHE_HOME=$tmp/cache "$p/bin/mt" report --html s.perf 2>ht.err || fail "installed mt report --html: $(cat ht.err)"
grep -q '<title>mt report: fold_sites, .s.perf.</title>' s.html || fail "installed mt report --html wrote no s.html"
rm "$p/lib/mt/libmt-sampler.so"
rc=0
"$p/bin/mt-capture" -o s2.perf -- true 2>cap2.err || rc=$?
[ "$rc" = 125 ] && grep -q 'libmt-sampler.so' cap2.err ||
	fail "without its sampler the installed mt-capture should say so and exit 125 (got $rc: $(cat cap2.err))"
echo "ok: installed under $p; mt-capture found lib/mt/libmt-sampler.so"
