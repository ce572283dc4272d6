#!/bin/bash
# mt-fold --report/--json/--diff on a generated sample-mode capture whose
# exact totals are known: the table and JSON name the same figures, the
# exact totals lie in their intervals, diffs flag only real changes.
set -euo pipefail
. "$MT_SRC/tests/e2e/fold_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sites="small:16777216:32 page:8388608:4096 tiny:262144:64"
gen_sample 5 $sites >"$tmp/s.txt"
# The sampler's exact totals for what the generator allocated.
printf 'totals\t1/1\t99999\tgen\tscope=thread alloc_bytes=%d allocs=%d frees=0 freed_bytes=0 peak_bytes=%d\t end=none\n' \
	25427968 $((524288 + 2048 + 4096)) 25427968 >>"$tmp/s.txt"
# --wide: every row and sentence on one line, as grep reads them
mt-fold --report --wide "$tmp/s.txt" >"$tmp/r.txt"
mt-fold --json "$tmp/s.txt" >"$tmp/r.json"
cat "$tmp/r.txt"
# Not wide: every line within the width ($COLUMNS, else 80), the same rows.
for w in 70 80 100; do
	COLUMNS=$w mt-fold --report "$tmp/s.txt" >"$tmp/r$w.txt"
	awk -v w=$w 'length($0) > w { print "wider than " w ": " $0; bad = 1 } END { exit bad }' \
		"$tmp/r$w.txt"
	grep -q '^all  .* in$' "$tmp/r$w.txt"
done

# Header: the thread's exact bytes and allocations, with their verdicts.
grep -E '^1/1 +gen +25427968 .* in +530432 .* in ' "$tmp/r.txt"
grep -q '"exact_value": 25427968, "in_interval": true' "$tmp/r.json"
# Rows: small holds 16 MiB; its interval covers the truth in both outputs.
lo=$(json_site "$tmp/r.json" small lo)
hi=$(json_site "$tmp/r.json" small hi)
n=$(json_site "$tmp/r.json" small n)
within "$lo" 16777216 "$hi"
[ "$n" -ge 15 ]
grep -E " $n +.* small\$" "$tmp/r.txt"
# One interval per figure (issue 28): the total's top is cut at the exact
# total, marked '^' with the samples' own top on the same line, which is the
# top of the "all" row (never cut: it is checked against the exact value).
top=$(sed -n 's/^all  [^[]*\[[^,]*, \([^]]*\)\].*/\1/p' "$tmp/r.txt" | head -n 1)
[ -n "$top" ]
grep -E "^total alloc_bytes: .*\]\^, rse .* \(\^: top cut at the sampler's exact total; the samples alone reach $top\)\$" "$tmp/r.txt"
grep -q '"total": {"value": [0-9.e+]*, "n": [0-9]*, "exact": false, "rse": [0-9.e-]*, "lo": [0-9.e+]*, "hi": [0-9.e+]*, "hi_samples": ' "$tmp/r.json"
# tiny has ~0.5 expected samples: flagged as few ('?') or absent.
if grep -q ' tiny$' "$tmp/r.txt"; then grep -E '[0-9]\? .* tiny$' "$tmp/r.txt"; fi
# --min-samples hides it, --top limits the rows.
mt-fold --report --min-samples 5 "$tmp/s.txt" | { ! grep -q ' tiny$'; }
[ "$(mt-fold --json --top 2 "$tmp/s.txt" | grep -c '^  {"name"')" -eq 2 ]
# JSON is well formed where a checker is at hand.
if command -v python3 >/dev/null && python3 -c 'import json' 2>/dev/null; then
	python3 -m json.tool "$tmp/r.json" >/dev/null
elif command -v jq >/dev/null; then
	jq . "$tmp/r.json" >/dev/null
fi

# --diff: a profile against itself changes nothing; page growing from 8 to
# 64 MiB (16 to 128 expected samples: a change of 56 MiB against an error near
# 12 MiB) is a significant change, small (same 16 MiB, fresh seed) is not.
mt-fold --diff "$tmp/s.txt" "$tmp/s.txt" >"$tmp/d0.txt"
cat "$tmp/d0.txt"
! grep -E ' yes +[^ ]+$' "$tmp/d0.txt"
gen_sample 6 small:16777216:32 page:67108864:4096 >"$tmp/s2.txt"
mt-fold --diff "$tmp/s.txt" "$tmp/s2.txt" >"$tmp/d1.txt"
cat "$tmp/d1.txt"
grep -E ' yes +page$' "$tmp/d1.txt"
grep -E ' no +small$' "$tmp/d1.txt"
mt-fold --diff "$tmp/s.txt" --json "$tmp/s2.txt" | grep -q '"name": "page".*' 
echo "fold-report: ok"
