#!/bin/bash
# The memory views on a fixture whose figures are known (issue 27):
# build/fixtures/fold_phases has three phases (churn: 100,000 x 344 B freed
# at once; build_peak: 6,000 x 4,088 B live together, then freed;
# keep_forever: 750 x 4,088 B live at exit) and writes what each site did.
#  - 20 seeded captures at the default rate: alloc_bytes names churn first,
#    peak_bytes build_peak, inuse_bytes keep_forever, temp_bytes churn, in
#    every run; the 95% intervals of 12 (metric, site) pairs hold the
#    fixture's figures in at least 90% of the (pair, seed) cases;
#  - --rate 1: every one of those figures exactly;
#  - the exact live curve (tick lines) at each level the fixture holds: the
#    start-up level plus its blocks in block size (request + 8), and at most
#    32 bytes a block more (the tags of sampled blocks); RSS above it; the
#    process peak within its error of the peak level.
set -euo pipefail
for t in mt-capture mt-unwind mt-fold; do
	if [ ! -x "$MT_BUILD/bin/$t" ]; then
		echo "skip: $MT_BUILD/bin/$t is not built yet"
		exit 77
	fi
done
fx=$MT_FIXTURES/fold_phases
if [ ! -x "$fx" ]; then
	echo "skip: $fx is not built yet"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

rc=0
mt-capture -o "$tmp/trial.perf" -- true 2>"$tmp/trial.err" || rc=$?
if [ "$rc" -eq 125 ]; then
	echo "skip: mt-capture cannot open perf events: $(tail -n 1 "$tmp/trial.err")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/trial.err"; exit 1; }

METRICS="alloc_bytes alloc_objects peak_bytes peak_objects inuse_bytes inuse_objects temp_bytes temp_objects"

# run NAME [mt-capture options]: capture, unwind, and one JSON per metric.
run() {
	local name=$1
	shift
	mt-capture "$@" -o "$tmp/$name.perf" -- "$fx" >/dev/null 2>"$tmp/$name.err" ||
		{ cat "$tmp/$name.err"; fail "$name: capture"; }
	grep -E '^(level|site) ' "$tmp/$name.err" >"$tmp/$name.truth"
	mt-unwind -q "$tmp/$name.perf" >"$tmp/$name.txt" || fail "$name: mt-unwind"
	rm -f "$tmp/$name.perf"
	for m in $METRICS; do
		mt-fold --json --top 0 --metric "$m" "$tmp/$name.txt" >"$tmp/$name.$m.json" \
			2>"$tmp/$name.$m.err" || { cat "$tmp/$name.$m.err"; fail "$name: mt-fold --metric $m"; }
	done
}

for seed in $(seq 1 20); do
	run "s$seed" --seed "$seed"
done
run exact --rate 1 --seed 1

python3 - "$tmp" <<'EOF'
import json, sys
tmp = sys.argv[1]
metrics = ["alloc_bytes", "alloc_objects", "peak_bytes", "peak_objects",
           "inuse_bytes", "inuse_objects", "temp_bytes", "temp_objects"]
first = {"alloc_bytes": "churn", "peak_bytes": "build_peak",
         "inuse_bytes": "keep_forever", "temp_bytes": "churn"}

def truth(name):
    sites, levels = {}, []
    for line in open(f"{tmp}/{name}.truth"):
        w = line.split()
        if w[0] == "site":
            n, b, peak, inuse, tn, tb = map(int, w[2:8])
            sites[w[1]] = {"alloc_objects": n, "alloc_bytes": b, "peak_bytes": peak,
                           "peak_objects": peak // (b // n) if n else 0,
                           "inuse_bytes": inuse, "inuse_objects": inuse // (b // n) if n else 0,
                           "temp_objects": tn, "temp_bytes": tb}
        else:
            levels.append((w[1], int(w[2]), int(w[3]), int(w[4]), int(w[5])))
    return sites, levels

def sites_of(name, m):
    d = json.load(open(f"{tmp}/{name}.{m}.json"))
    return d, {s["site"]: s for s in d["allocation_sites"]}

# the pairs checked: each metric's own site, and allocation by every site
pairs = [(m, s) for m in ("alloc_bytes", "alloc_objects")
         for s in ("churn", "build_peak", "keep_forever")]
pairs += [("peak_bytes", "build_peak"), ("peak_objects", "build_peak"),
          ("inuse_bytes", "keep_forever"), ("inuse_objects", "keep_forever"),
          ("temp_bytes", "churn"), ("temp_objects", "churn")]
held = cases = 0
misses = []
for seed in range(1, 21):
    name = f"s{seed}"
    exact, _ = truth(name)
    for m, want in first.items():
        d, _ = sites_of(name, m)
        top = d["allocation_sites"][0]["site"] if d["allocation_sites"] else None
        if top != want:
            sys.exit(f"FAIL: seed {seed}: {m} puts {top} first, not {want}")
    for m, s in pairs:
        _, by = sites_of(name, m)
        if s not in by:
            sys.exit(f"FAIL: seed {seed}: {m}: no site {s}")
        lo, hi = by[s]["interval"]
        cases += 1
        if lo <= exact[s][m] <= hi:
            held += 1
        else:
            misses.append(f"seed {seed} {m} {s}: {exact[s][m]} not in [{lo:.0f}, {hi:.0f}]")
print(f"intervals held the fixture's figures in {held} of {cases} cases")
for x in misses:
    print("  miss:", x)
if held * 10 < cases * 9:
    sys.exit(f"FAIL: {held} of {cases} is below 90%")

# --rate 1: exact
exact, levels = truth("exact")
for m, s in pairs:
    _, by = sites_of("exact", m)
    got = by.get(s, {}).get("estimate")
    if got != exact[s][m]:
        sys.exit(f"FAIL: --rate 1: {m} of {s} is {got}, the fixture says {exact[s][m]}")
for s in ("churn", "build_peak"):
    _, by = sites_of("exact", "temp_objects")
    if by.get(s, {}).get("estimate") != exact[s]["temp_objects"]:
        sys.exit(f"FAIL: --rate 1: temp_objects of {s}: {by.get(s)}")
print("--rate 1 gives every figure exactly")

# the live curve against the levels (the default-rate runs and the exact one)
for name in [f"s{i}" for i in range(1, 21)] + ["exact"]:
    _, levels = truth(name)
    ticks = []
    for line in open(f"{tmp}/{name}.txt"):
        f = line.rstrip("\n").split("\t")
        if f[0] != "tick":
            continue
        w = dict(kv.split("=", 1) for kv in f[4].split())
        ticks.append((int(f[2]), w))
    if len(ticks) < 2:
        sys.exit(f"FAIL: {name}: {len(ticks)} tick lines")
    base = None
    for lname, start, end, req, blocks in levels:
        # ticks well inside the level: 5 ms in from each end
        inside = [w for t, w in ticks if start + 5_000_000 <= t <= end - 5_000_000]
        if not inside:
            sys.exit(f"FAIL: {name}: no tick inside level {lname} ({start}..{end})")
        for w in inside:
            live, rss = int(w["live"]), int(w.get("rss", -1))
            if base is None:
                base = live
            want = base + req + 8 * blocks
            if not (want <= live <= want + 32 * blocks):
                sys.exit(f"FAIL: {name}: level {lname}: live {live}, expected {want}"
                         f" .. {want + 32 * blocks}")
            if rss <= live:
                sys.exit(f"FAIL: {name}: level {lname}: rss {rss} not above live {live}")
    peak = max(int(w["peak"]) for _, w in ticks)
    err = max(int(w["peak_error"]) for _, w in ticks)
    pk = [l for l in levels if l[0] == "peak"][0]
    want = base + pk[3] + 8 * pk[4]
    if not (want - err <= peak <= want + 32 * pk[4] + err):
        sys.exit(f"FAIL: {name}: peak {peak} +- {err}, the peak level is {want}")
print("the live curve holds every level; RSS above it; the peak within its error")
EOF
