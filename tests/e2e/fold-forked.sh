#!/bin/bash
# Forked children that free their parent's blocks: the sampler counts those
# frees, so a child's allocs - frees is not what its own allocations leave
# live, which is what inuse estimates, only a lower bound of it.  mt-unwind
# marks the totals of forked images (forked=1) and mt-fold checks live
# objects against them one way only (it said OUT for an exact --rate 1
# capture of any shell).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
PATH=$MT_BUILD/bin:$PATH

# The parent keeps 300 blocks; 2 children free them and keep 300 of their own.
"$CAP" --rate 1 -o "$T/f.data" -- "$MT_FIXTURES/capture_clones" inherit 2 300 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
mt-unwind -q "$T/f.data" >"$T/u" || fail "mt-unwind"
[ "$(grep -c '^totals.*scope=process.* forked=1' "$T/u")" = 2 ] ||
	fail "expected the 2 children's process totals marked forked=1: $(grep '^totals' "$T/u")"
[ "$(grep '^totals' "$T/u" | grep -vc ' forked=1')" = 2 ] ||
	fail "the parent's totals (thread and process) must not be marked"
mt-fold --report "$T/u" >"$T/report" || fail "mt-fold --report"
! grep -q OUT "$T/report" || fail "OUT in an exact capture: $(cat "$T/report")"
grep -q '^all (at end) .* fork *$' "$T/report" || fail "no fork marker: $(cat "$T/report")"
[ "$(mt-fold --metric inuse_objects "$T/u" | awk '{ n += $NF } END { print n }')" = 600 ] ||
	fail "live at the end: the children's own 600 blocks expected"
mt-fold --json "$T/u" >"$T/j" || fail "mt-fold --json"
python3 - "$T/j" <<'PY' || fail "JSON checks: $(head -c 3000 "$T/j")"
import json, sys
d = json.load(open(sys.argv[1]))
procs = d["processes"]
assert len(procs) == 3, procs
for p in procs:
    ck = p["estimates"]["inuse_objects"]
    forked = p["exact"]["forked_lines"] > 0
    assert ck["in_interval"] is (None if forked else True), p
    assert p["estimates"]["alloc_objects"]["in_interval"] is True, p
assert sum(p["exact"]["forked_lines"] > 0 for p in procs) == 2
assert d["all"]["estimates"]["inuse_objects"]["in_interval"] is None
assert d["all"]["exact"]["forked_lines"] == 2
PY
echo "ok: forked children's totals marked, their live objects checked one way"
