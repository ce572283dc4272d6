#!/bin/bash
# mt-capture run as root beside another user (docs/SECURITY.md):
# - a TMPDIR that user can change gets no private copy: a swapped copy
#   directory would have root's command map that user's libc;
# - a cache under that user's HOME is not written: a planted symbolic link
#   would have root create files where that user says;
# - under sudo the command runs as the user who ran sudo, with the sample
#   ring and trace mode's copies still working; --as-root and --user say
#   otherwise.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
[ "$(id -u)" = 0 ] || { echo "needs root (runs commands as another user)"; exit 77; }
id nobody >/dev/null 2>&1 || { echo "no user 'nobody'"; exit 77; }
as_nobody() { su -s /bin/sh nobody -c "$1"; }
chmod 755 "$T"

# 1. TMPDIR owned by nobody: passed over, said once; the copies go to /tmp.
U=$T/nob
mkdir "$U"
chown nobody "$U"
for mode in "--mode trace" "--no-ring"; do
	TMPDIR=$U "$CAP" $mode -o "$T/t.data" -- sh -c 'grep -m1 "mt-capture\." /proc/self/maps' \
		>"$T/maps" 2>"$T/err" || fail "$mode: mt-capture: $(cat "$T/err")"
	want="mt-capture: warning: TMPDIR '$U' is not safe for private copies ('$U' is owned by uid 65534): using /tmp"
	[ "$(grep -c 'not safe for private copies' "$T/err")" = 1 ] && grep -qxF "$want" "$T/err" ||
		fail "$mode: no warning, or not once: $(cat "$T/err")"
	grep -q ' /tmp/mt-capture\.[A-Za-z0-9]*/' "$T/maps" ||
		fail "$mode: the command does not map a copy in /tmp: $(cat "$T/maps")"
	[ -z "$(ls -A "$U")" ] || fail "$mode: something was made in nobody's TMPDIR: $(ls -A "$U")"
done
# A TMPDIR of root's own is used as it was.
mkdir -m 700 "$T/own"
TMPDIR=$T/own "$CAP" --mode trace -o "$T/t.data" -- sh -c 'grep -m1 "mt-capture\." /proc/self/maps' \
	>"$T/maps" 2>"$T/err" || fail "own TMPDIR: $(cat "$T/err")"
grep -qF " $T/own/mt-capture." "$T/maps" || fail "a safe TMPDIR was not used: $(cat "$T/maps")"
! grep -q 'not safe' "$T/err" || fail "a safe TMPDIR was warned about: $(cat "$T/err")"

# 2. HOME owned by nobody, a symbolic link planted at the sampler's cache
# entry: nothing is made behind it, one warning says why.
H=$T/home
R=$T/rootonly
mkdir "$H" "$R"
chown nobody "$H"
hex=$(readelf -n "$MT_BUILD/libmt-sampler.so" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
as_nobody "mkdir -p $H/.cache/mt/build-id && ln -s $R $H/.cache/mt/build-id/$hex"
env -u XDG_CACHE_HOME HOME=$H "$CAP" -o "$T/s.data" -- true 2>"$T/err" ||
	fail "mt-capture with nobody's HOME: $(cat "$T/err")"
[ -z "$(ls -A "$R")" ] || fail "root wrote behind nobody's symbolic link: $(ls -l "$R")"
grep -qF "mt-capture: warning: cannot keep a copy of '$(realpath "$MT_BUILD/libmt-sampler.so")' in the cache ('$H' is owned by uid 65534)" "$T/err" ||
	fail "no warning about the untrusted cache: $(cat "$T/err")"
# mt-unwind does not read copies kept there either.
env -u XDG_CACHE_HOME HOME=$H "$MT_BUILD/bin/mt-unwind" -o /dev/null "$T/s.data" 2>"$T/uerr" ||
	fail "mt-unwind with nobody's HOME: $(cat "$T/uerr")"
grep -qF "mt-unwind: warning: not using the kept copies of the sampler in '$H/.cache/mt/build-id': '$H' is owned by uid 65534" "$T/uerr" ||
	fail "mt-unwind read nobody's cache silently: $(cat "$T/uerr")"

# 5. Under sudo: the command runs as SUDO_UID with its groups; the capture
# still sees its allocations (the ring is held by a process of nobody's).
cp "$MT_FIXTURES/capture_alloc" "$T/alloc"
chmod 755 "$T/alloc"
SUDO_UID=65534 SUDO_GID=65534 SUDO_USER=nobody "$CAP" --rate 1 -o "$T/s.data" -- \
	sh -c 'id -u >&2; id -g >&2; echo "$HOME" >&2; exec '"$T/alloc"' 1 100' >/dev/null 2>"$T/err" ||
	fail "sudo capture: $(cat "$T/err")"
[ "$(sed -n 2,4p "$T/err" | tr '\n' ' ')" = "65534 65534 /nonexistent " ] ||
	fail "the command did not run as nobody: $(cat "$T/err")"
grep -qxF "mt-capture: running the command as nobody (uid 65534), who ran sudo (--as-root keeps root)" "$T/err" ||
	fail "no line says whom the command runs as: $(cat "$T/err")"
! grep -q 'libmt-sampler:' "$T/err" || fail "the sampler could not open the ring: $(cat "$T/err")"
"$MT_BUILD/bin/mt-unwind" "$T/s.data" 2>/dev/null | awk '$1 == "alloc"' >"$T/allocs"
[ "$(wc -l <"$T/allocs")" -ge 100 ] || fail "as nobody, $(wc -l <"$T/allocs") allocations recorded (want >= 100)"
[ "$(stat -c %U "$T/s.data")" = root ] || fail "the output is not root's"
# The sampler where nobody cannot reach it (a build tree under root's 0700
# directory, as a CI clone in mktemp -d): the command maps a private copy.
mkdir -m 700 "$T/rootonly-lib"
cp "$MT_BUILD/libmt-sampler.so" "$T/rootonly-lib/"
MT_SAMPLER=$T/rootonly-lib/libmt-sampler.so SUDO_UID=65534 SUDO_GID=65534 "$CAP" --rate 1 \
	-o "$T/c.data" -- "$T/alloc" 1 100 >/dev/null 2>"$T/err" || fail "sudo, sampler out of reach: $(cat "$T/err")"
! grep -q 'cannot be preloaded\|no process of the command loaded' "$T/err" ||
	fail "the sampler out of nobody's reach was not copied: $(cat "$T/err")"
n=$("$MT_BUILD/bin/mt-unwind" "$T/c.data" 2>/dev/null | awk '$1 == "alloc"' | wc -l)
[ "$n" -ge 100 ] || fail "sampler out of reach: $n allocations (want >= 100)"
# Trace mode's private copy is readable by the command run as nobody.
SUDO_UID=65534 SUDO_GID=65534 "$CAP" --mode trace -o "$T/t.data" -- "$T/alloc" 1 100 >/dev/null 2>"$T/err" ||
	fail "sudo trace capture: $(cat "$T/err")"
n=$("$MT_BUILD/bin/mt-unwind" "$T/t.data" 2>/dev/null | awk '$1 == "alloc"' | wc -l)
[ "$n" -ge 100 ] || fail "trace mode as nobody: $n allocations (want >= 100): $(cat "$T/err")"
# --as-root keeps root; --user names the user without sudo.
[ "$(SUDO_UID=65534 "$CAP" --as-root -o /dev/null -- id -u 2>/dev/null)" = 0 ] || fail "--as-root did not keep root"
[ "$("$CAP" --user nobody -o /dev/null -- id -u 2>/dev/null)" = 65534 ] || fail "--user nobody did not run as nobody"
[ "$("$CAP" --user 65534 -o /dev/null -- id -u 2>/dev/null)" = 65534 ] || fail "--user 65534 did not run as nobody"
rc=0; "$CAP" --user no-such-user-mt -o /dev/null -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -qxF "mt-capture: cannot run the command as 'no-such-user-mt': no such user" "$T/err" ||
	fail "--user of no user: exit $rc, $(cat "$T/err")"
rc=0; "$CAP" --user nobody --as-root -o /dev/null -- true 2>"$T/err" || rc=$?
[ "$rc" = 125 ] && grep -qF "mt-capture: --user and --as-root exclude each other" "$T/err" ||
	fail "--user with --as-root: exit $rc, $(cat "$T/err")"
echo "ok: no private copy or cache write where another user can reach; sudo runs the command as its user"
