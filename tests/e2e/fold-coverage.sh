#!/bin/bash
# The whole pipeline keeps mt-fold's promise: 95% intervals cover the true
# bytes of a site in at least 95% of captures.  capture_clones runs 4
# workers (forked processes, or threads) that allocate known bytes at two
# sites; RUNS seeded sample-mode captures per kind go through mt-unwind and
# mt-fold, and each site's interval is checked against its true total.
# Garwood's interval covers >= 95% (tests/fold/coverage_test.c); workers
# that sampled the same allocations (a forked child that kept its parent's
# draws) made the sum's interval half as wide as its error: ~67%.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }
PATH=$MT_BUILD/bin:$PATH
RUNS=${MT_COVERAGE_RUNS:-50}
N=4
COUNT=5000

for mode in fork thread; do
	for seed in $(seq 1 "$RUNS"); do
		"$CAP" --rate 262144 --stack-size 2048 --seed "$seed" -o "$T/c.data" -- \
			"$MT_FIXTURES/capture_clones" $mode $N $COUNT 2>"$T/err" ||
			fail "$mode, seed $seed: mt-capture: $(cat "$T/err")"
		mt-unwind -q "$T/c.data" | mt-fold --json --top 0 >"$T/$mode.$seed.json" 2>"$T/ferr" ||
			fail "$mode, seed $seed: mt-fold: $(cat "$T/ferr")"
	done
done

python3 - "$T" "$RUNS" $N $COUNT <<'PY' || fail "coverage below what the intervals promise"
import json, sys
tmp, runs, n, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
size = lambda i: 1000 + i * 37 % 5000
truth = {"site_even": n * sum(size(i) for i in range(0, count, 2)),
         "site_odd": n * sum(size(i) for i in range(1, count, 2))}
checks = covered = 0
worst = 1.0
widths = []
for mode in ("fork", "thread"):
    got = 0
    for seed in range(1, runs + 1):
        doc = json.load(open(f"{tmp}/{mode}.{seed}.json"))
        exact = doc["all"]["exact"]
        if not exact or doc["all"].get("exact_partial"):
            sys.exit(f"{mode}, seed {seed}: no complete exact totals")
        rows = {r["name"]: r["total"] for r in doc["sites"]["rows"]}
        for site, t in truth.items():
            v = rows.get(site)
            if v is None:
                sys.exit(f"{mode}, seed {seed}: no row for {site}")
            checks += 1
            ok = v["lo"] <= t <= v["hi"]
            widths.append((v["hi"] - v["lo"]) / t)
            covered += ok
            got += ok
    print(f"{mode}: {got} of {2 * runs} intervals cover the truth")
    worst = min(worst, got / (2 * runs))
share = covered / checks
widths.sort()
median = widths[len(widths) // 2]
print(f"all: {covered} of {checks} ({100 * share:.1f}%), median width {median:.3f} of the truth")
# At a true 95% (Garwood's is at least that), fewer than 90% of 200 checks,
# or 87% of one kind's 100, has a chance of about 1e-3.  Intervals that
# cover by being too wide fail too: ~135 points a site give a width of
# 2 x 1.96 / sqrt(135) = 0.34 of the truth.
sys.exit(0 if share >= 0.90 and worst >= 0.87 and median < 0.45 else 1)
PY
echo "ok: site intervals cover the true bytes (fork and thread workers, $RUNS seeds each)"
