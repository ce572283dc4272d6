#!/bin/bash
# mt report --html and mt diff --html on real captures of build/fixtures/fold_sites
# (rate 4096, seeds 1 and 2): the page is one file with no URL to fetch, mode
# 0600, named after the capture; it carries mt-fold's documents for the four
# allocation metrics (the peak and temporary ones only when mt-fold's JSON has
# "peak" and "temporary"), mt-fold's "live_over_time" (whose last moment
# is the inuse_bytes document's total, stack by stack), and the sites mt
# report names; stacks below the stated share are pruned and counted; -o -
# writes to stdout; the diff page carries mt-fold --diff's rows; a missing
# capture and an event capture's allocation metric are refused.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
B=${MT_BUILD:?}/bin
FX=${MT_FIXTURES:?}
M=$B/mt
if ! "$B/mt-capture" -e cpu-clock -o "$T/probe.perf" -- true 2>"$T/probe.err"; then
	cat "$T/probe.err"
	echo "skip: perf_event_open denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 77
fi
export XDG_CACHE_HOME=$T/cache
cd "$T"
"$M" record --rate 4096 --seed 1 -o a.mtz -- "$FX/fold_sites" >/dev/null 2>&1 || fail "mt record a"
"$M" record --rate 4096 --seed 2 -o b.mtz -- "$FX/fold_sites" >/dev/null 2>&1 || fail "mt record b"

# the page's data: the JSON inside <script id="data">, as the page reads it
data() {
	python3 - "$1" <<'PY'
import json, sys
t = open(sys.argv[1], encoding="utf-8").read()
a = t.index('<script type="application/json" id="data">') + len('<script type="application/json" id="data">')
b = t.index("</script>", a)
print(json.dumps(json.loads(t[a:b].replace("<\\/", "</"))))
PY
}

"$M" report --html a.mtz >out.txt 2>err.txt || fail "mt report --html: $(cat err.txt)"
[ -f a.html ] || fail "no a.html: $(ls)"
[ ! -s out.txt ] || fail "mt report --html wrote to stdout"
grep -qx "mt: report page: a.html (alloc_bytes of fold_sites; 8 metrics)" err.txt || fail "message: $(cat err.txt)"
[ "$(stat -c %a a.html)" = 600 ] || fail "a.html has mode $(stat -c %a a.html)"
grep -Eiq '(src|href)[[:space:]]*=[[:space:]]*["'"'"']?(https?:|//)' a.html && fail "a.html names a URL to fetch"
grep -q "default-src 'none'" a.html || fail "a.html has no content security policy"
data a.html >a.json
python3 - a.json "$B/mt-fold" <<'PY' || fail "a.html's data"
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
ms = [m["metric"] for m in d["metrics"]]
assert ms[:4] == ["alloc_bytes", "alloc_objects", "inuse_bytes", "inuse_objects"], ms
# the peak and temporary metrics exactly when mt-fold's JSON announces them
first = d["metrics"][0]["doc"]
want = 4 + 2 * isinstance(d.get("peak"), dict) + 2 * isinstance(d.get("temporary"), dict)
assert want == 8, "a capture of today's mt-capture has ticks and seq="
assert len(ms) == want, (ms, want)
sites = [s["site"] for s in first["allocation_sites"]]
assert "alloc_small" in sites and "alloc_big" in sites, sites
# the stacks kept add up to the metric's total (pruned ones into [pruned] frames)
for m in d["metrics"]:
    tot = sum(s[1] for s in m["stacks"])
    assert abs(tot - m["prune"]["total"]) <= 1e-6 * max(1, tot), (m["metric"], tot, m["prune"])
    assert m["prune"]["share"] == 0.001
    assert abs(m["prune"]["total"] - m["doc"]["total"]["value"]) <= 1e-6 * max(1, tot), m["metric"]
# the live view, from mt-fold's "live_over_time": per pruned stack the change
# points of what was live and what each bucket allocated; its allocations
# are the capture's (alloc lines with a pointer)
lv = d["live"]
assert lv["buckets"] == 300 and lv["rows"], lv.keys()
inp = first["input"]
assert lv["allocations"] == inp["alloc"] - inp["allocs_without_ptr"], (lv["allocations"], inp)
for r in lv["rows"]:
    for pts in (r[1], r[2]):
        bs = [x[0] for x in pts]
        assert bs == sorted(set(bs)) and all(0 <= b < 300 for b in bs), bs
# at the last moment what is live is inuse: mt-fold's inuse_bytes, stack by stack
def at(r, b):
    v = 0
    for x in r[1]:
        if x[0] > b:
            break
        v = x[1]
    return v
inuse = [m for m in d["metrics"] if m["metric"] == "inuse_bytes"][0]
end = sum(at(r, 299) for r in lv["rows"])
want = inuse["doc"]["total"]["value"]
assert abs(end - want) <= 0.001 * len(lv["rows"]) + 1e-9 * want, (end, want)
assert want > 0, want
# its frames are named as mt-fold names them: mt report's text carries
# --pprof-info suffixes (" {FILE:START}", " @N+0xADDR"), taken off like mt-fold does
names = d["names"]
live_names = {names[i] for st in lv["stacks"] for i in st}
fold_names = {names[i] for st in d["metrics"][0]["stacks"] for i in st[0]}
assert live_names <= fold_names, sorted(live_names - fold_names)[:5]
assert any(" (fold_sites.c:" in n for n in live_names), sorted(live_names)[:5]
print("metrics", ms, "live stacks", len(lv["rows"]), "live at the end", end, "inuse", want)
PY

# -o and -o -
"$M" report --html -o page.html a.mtz 2>err.txt || fail "-o: $(cat err.txt)"
"$M" report --html -o - a.mtz >stdout.html 2>err.txt || fail "-o -: $(cat err.txt)"
[ ! -s err.txt ] || fail "-o - said: $(cat err.txt)"
cmp -s page.html stdout.html || fail "-o - differs from -o FILE"
cmp -s page.html a.html || fail "the page is not deterministic"
# a metric asked: it comes first, the others follow
"$M" report --html --metric inuse_bytes -o inuse.html a.mtz 2>/dev/null || fail "--metric"
data inuse.html | python3 -c 'import json,sys; d=json.load(sys.stdin); m=[x["metric"] for x in d["metrics"]]; assert m[0]=="inuse_bytes" and len(m)>=4, m' ||
	fail "--metric inuse_bytes is not the page's first metric"
# a filter applies to every document
"$M" report --html --pid 1 -o none.html a.mtz 2>/dev/null || true
[ -f none.html ] && { data none.html | python3 -c 'import json,sys; d=json.load(sys.stdin); assert all(m["doc"]["input"]["filtered_out"]>0 for m in d["metrics"][:1]), "not filtered"' ||
	fail "--pid is not applied to the page's folds"; }

# pruning: --prune 0.2 keeps only frames with 20% of the total, counted
"$B/mt-unwind" -q a.mtz >a.unwound 2>/dev/null
"$B/mt-fold" --json a.unwound >m.json
"$B/mt-html" --prune 0.2 -o p.html m.json || fail "mt-html --prune"
data p.html | python3 -c '
import json, sys
d = json.load(sys.stdin); m = d["metrics"][0]; p = m["prune"]
names = d["names"]
# fold_sites: alloc_small has about 11% of the bytes, under 20%: cut
assert p["share"] == 0.2 and p["stacks_pruned"] == 1 and p["value_pruned"] > 0, p
assert any(names[s[0][-1]] == "[pruned]" for s in m["stacks"]), "no [pruned] frame"
tot = sum(s[1] for s in m["stacks"]); assert abs(tot - p["total"]) < 1e-6 * tot, (tot, p)
' || fail "--prune 0.2 did not cut and count"
"$B/mt-html" --prune 1.5 m.json >/dev/null 2>err.txt && fail "--prune 1.5 accepted"
grep -qx "mt-html: --prune wants a share from 0 to 1, not 1.5" err.txt || fail "--prune 1.5: $(cat err.txt)"
printf '{"format": "mt-fold-diff"}' >bad.json
set +e
"$B/mt-html" bad.json >/dev/null 2>err.txt; rc=$?
set -e
[ $rc -eq 1 ] || fail "a diff document taken as a report: exit $rc"
grep -qx "mt-html: 'bad.json' is not mt-fold --json output (format 'mt-fold-diff')" err.txt || fail "bad input: $(cat err.txt)"
printf '{"format": "mt-fold-report", "stacks": {"a": 1}}' >bad2.json
set +e
"$B/mt-html" bad2.json >/dev/null 2>err.txt; rc=$?
set -e
[ $rc -eq 1 ] || fail "stacks not a list: exit $rc"
grep -qx "mt-html: 'bad2.json': \"stacks\" is not a list of objects" err.txt || fail "stacks not a list: $(cat err.txt)"
set +e
"$B/mt-html" -o "$T/no/such/dir/p.html" m.json 2>err.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "unwritable page: exit $rc"
grep -qx "mt-html: cannot write '$T/no/such/dir/p.html': No such file or directory" err.txt || fail "unwritable: $(cat err.txt)"

# mt diff --html
"$M" diff --html a.mtz b.mtz 2>err.txt || fail "mt diff --html: $(cat err.txt)"
grep -qx "mt: diff page: b.diff.html (alloc_bytes change, 'a.mtz' -> 'b.mtz')" err.txt || fail "diff message: $(cat err.txt)"
data b.diff.html | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["diff"]["format"] == "mt-fold-diff" and d["diff"]["rows"], d["diff"].keys()
assert {r["name"] for r in d["diff"]["rows"]} >= {"alloc_small", "alloc_big"}
assert d["sides"]["base"]["stacks"] and d["sides"]["new"]["stacks"]
' || fail "diff page data"

# refusals
set +e
"$M" report --html missing.mtz 2>err.txt; rc=$?
set -e
[ $rc -eq 3 ] || fail "missing capture: exit $rc"
grep -qx "mt: cannot open 'missing.mtz': No such file or directory" err.txt || fail "missing: $(cat err.txt)"
[ ! -e missing.html ] || fail "a page for a missing capture"
"$M" record -e cpu-clock -o cpu.mtz -- "$FX/fold_sites" >/dev/null 2>&1 || fail "cpu record"
set +e
"$M" report --html --metric alloc_bytes cpu.mtz 2>err.txt; rc=$?
set -e
[ $rc -eq 1 ] || fail "alloc metric of a cpu capture: exit $rc"
grep -q "is a capture of cpu-clock samples, not of allocations" err.txt || fail "cpu refusal: $(cat err.txt)"
# an event capture: the CPU flame graph
"$M" report --html cpu.mtz 2>err.txt || fail "cpu page: $(cat err.txt)"
data cpu.html | python3 -c '
import json, sys
d = json.load(sys.stdin); m = [x["metric"] for x in d["metrics"]]
assert m == ["period", "samples"], m
' || fail "cpu page metrics"
echo ok
