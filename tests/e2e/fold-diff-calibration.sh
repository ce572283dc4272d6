#!/bin/bash
# mt-fold --diff on real captures (issue 28): 20 pairs of seeded captures of
# build/fixtures/fold_diff (grow_site 64 MiB, steady_site 32 MiB, small_site
# 1 MiB, in 256 and 64 B blocks; at --rate 65536: 1024, 512 and 16 expected
# sample points) must show no significant site and no total change in at
# least 19 of 20 pairs; with grow_site allocating 30% more (`fold_diff 130`:
# 1331 expected points) it is found in at least 18 of 20 pairs and
# steady_site, unchanged beside it, marked in at most 1.  The sampler's exact
# totals are compared exactly: change 0 between equal runs, and exactly the
# 20132608 bytes the fixture adds (340787 - 262144 blocks of 256 B).
set -euo pipefail
for t in mt-capture mt-unwind mt-fold; do
	if [ ! -x "$MT_BUILD/bin/$t" ]; then
		echo "skip: $MT_BUILD/bin/$t is not built yet"
		exit 77
	fi
done
if [ ! -x "$MT_FIXTURES/fold_diff" ]; then
	echo "skip: $MT_FIXTURES/fold_diff is not built yet"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
mt-capture -o "$tmp/trial.perf" -- true 2>"$tmp/trial.err" || rc=$?
if [ "$rc" -eq 125 ]; then
	echo "skip: mt-capture cannot open perf events: $(tail -n 1 "$tmp/trial.err")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/trial.err"; exit 1; }

capture() {	# capture NAME SEED PCT
	mt-capture --rate 65536 --seed "$2" -o "$tmp/$1.perf" -- "$MT_FIXTURES/fold_diff" "$3" \
		>/dev/null 2>"$tmp/$1.err" || { cat "$tmp/$1.err"; return 1; }
	mt-unwind -q "$tmp/$1.perf" >"$tmp/$1.txt"
	rm -f "$tmp/$1.perf"
}

null_alarms=0 found=0 neighbour=0
for i in $(seq 1 20); do
	capture "a$i" $((1000 + i)) 100
	capture "b$i" $((2000 + i)) 100
	capture "g$i" $((3000 + i)) 130
	# null pair
	mt-fold --diff "$tmp/a$i.txt" "$tmp/b$i.txt" >"$tmp/n$i.out"
	mt-fold --diff "$tmp/a$i.txt" --json "$tmp/b$i.txt" >"$tmp/n$i.json"
	grep -q '"total": {"name": "(all)", "loc": "", "base": {"value": 101711872, "n": 0, "exact": true' "$tmp/n$i.json"
	grep -q '"change": 0, "change_pct": 0, "test": "exact", "p": null' "$tmp/n$i.json"
	grep -Eq '^ +97.0 MiB +0 +97.0 MiB +0 +0 B +\+0.0% +exact +exact +\(all\)$' "$tmp/n$i.out"
	for s in grow_site steady_site small_site; do
		grep -Eq " (yes|no|-) +$s( \(|\$)" "$tmp/n$i.out" || { cat "$tmp/n$i.out"; exit 1; }
	done
	if ! grep -q '^significant: 0;' "$tmp/n$i.out"; then
		null_alarms=$((null_alarms + 1))
		cat "$tmp/n$i.out"
	fi
	# planted change
	mt-fold --diff "$tmp/a$i.txt" "$tmp/g$i.txt" >"$tmp/p$i.out"
	mt-fold --diff "$tmp/a$i.txt" --json "$tmp/g$i.txt" >"$tmp/p$i.json"
	grep -q '"change": 20132608, "change_pct": 19.79[0-9]*, "test": "exact"' "$tmp/p$i.json"
	if grep -Eq ' yes +grow_site( \(|$)' "$tmp/p$i.out"; then
		found=$((found + 1))
	else
		cat "$tmp/p$i.out"
	fi
	if grep -Eq ' yes +steady_site( \(|$)' "$tmp/p$i.out"; then
		neighbour=$((neighbour + 1))
		cat "$tmp/p$i.out"
	fi
done
cat "$tmp/n1.out" "$tmp/p1.out"
echo "null pairs with an alarm: $null_alarms of 20; planted change found: $found of 20;" \
	"unchanged neighbour marked: $neighbour of 20"
[ "$null_alarms" -le 1 ]
[ "$found" -ge 18 ]
[ "$neighbour" -le 1 ]
echo "fold-diff-calibration: ok"
