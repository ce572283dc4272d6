#!/bin/bash
# The whole pipeline on fixtures of known totals:
#   fold_sites: 1,048,576 x 32 B (alloc_small) and 1,024 x 4 KiB (alloc_big),
#               all kept: at the default rate each site's interval holds its
#               truth (32 MiB, 4 MiB), inuse equals alloc, and the sampler's
#               exact totals lie in the intervals of the estimated totals;
#               with --rate 1 the sums are exact to the byte (16,384 small
#               objects there: every allocation is a 2 KiB stack dump);
#   fold_leak:  leak_keep keeps 4 MiB, churn_free and batch_free free all:
#               inuse_bytes shows leak_keep only.
# Seeds are fixed, so each run samples the same way.
set -euo pipefail
. "$MT_SRC/tests/e2e/fold_lib.sh"
for t in mt-capture mt-unwind mt-fold; do
	if [ ! -x "$MT_BUILD/bin/$t" ]; then
		echo "skip: $MT_BUILD/bin/$t is not built yet"
		exit 77
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
mt-capture -o "$tmp/trial.perf" -- true 2>"$tmp/trial.err" || rc=$?
if [ "$rc" -eq 125 ]; then
	echo "skip: mt-capture cannot open perf events (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)): $(tail -n 1 "$tmp/trial.err")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/trial.err"; exit 1; }

capture() {	# capture OUT.txt MT-CAPTURE-ARGS... -- FIXTURE ARGS...
	out=$1
	shift
	mt-capture "$@" >"$tmp/c.perf" 2>"$tmp/c.err" || { cat "$tmp/c.err"; return 1; }
	cat "$tmp/c.err"
	if ! grep -q ' 0 lost' "$tmp/c.err"; then
		echo "the capture lost samples: exact figures cannot be checked"
		return 1
	fi
	mt-unwind -q "$tmp/c.perf" >"$out"
}

# --- default rate -----------------------------------------------------------
capture "$tmp/s.txt" --seed 1 -- "$MT_FIXTURES/fold_sites"
mt-fold --json --top 0 "$tmp/s.txt" >"$tmp/s.json"
for site in alloc_small:33554432 alloc_big:4194304; do
	name=${site%%:*} truth=${site#*:}
	if ! grep -qF "{\"name\": \"$name\"," "$tmp/s.json"; then
		echo "no site $name in the profile; the folded stacks are:"
		mt-fold "$tmp/s.txt" | head -n 5
		exit 1
	fi
	lo=$(json_site "$tmp/s.json" "$name" lo)
	hi=$(json_site "$tmp/s.json" "$name" hi)
	echo "$name: truth $truth, interval [$lo, $hi], n $(json_site "$tmp/s.json" "$name" n)"
	within "$lo" "$truth" "$hi"
done
# The sampler's exact totals (at least the fixture's own allocations) and the
# verdicts next to the estimated totals.
exact=$(grep -A3 '"all": {' "$tmp/s.json" | sed -n 's/.*"exact": {"alloc_bytes": \([0-9]*\), "allocs": \([0-9]*\).*/\1 \2/p')
echo "exact totals: $exact"
[ "${exact% *}" -ge 37748736 ] && [ "${exact#* }" -ge 1049600 ]
grep -A6 '"all": {' "$tmp/s.json" | grep '"alloc_bytes": {"value"' | grep -q '"in_interval": true'
mt-fold --report "$tmp/s.txt"
# Everything is kept: inuse equals alloc.
mt-fold --metric alloc_bytes "$tmp/s.txt" | grep -E ';alloc_(small|big);' >"$tmp/alloc"
mt-fold --metric inuse_bytes "$tmp/s.txt" | grep -E ';alloc_(small|big);' >"$tmp/inuse"
[ "$(wc -l <"$tmp/alloc")" -ge 2 ]
cmp "$tmp/alloc" "$tmp/inuse"

# --- --rate 1: every allocation recorded, sums exact ------------------------
# 16,384 small objects: every one is a 2 KiB dump, and the reader must keep
# up even in the sanitizer build on a loaded machine (a lost sample would make
# the exact sums uncheckable).
capture "$tmp/e.txt" --rate 1 --stack-size 2048 --mmap-pages 16384 --seed 1 -- \
	"$MT_FIXTURES/fold_sites" 16384 1024
sum_site() {	# sum_site METRIC SITE: the folded total of SITE's stacks
	mt-fold --metric "$1" "$tmp/e.txt" | awk -v s=";$2;" 'index($0, s) { t += $NF } END { print t + 0 }'
}
[ "$(sum_site alloc_bytes alloc_small)" -eq $((16384 * 32)) ]
[ "$(sum_site alloc_bytes alloc_big)" -eq $((1024 * 4096)) ]
[ "$(sum_site alloc_objects alloc_small)" -eq 16384 ]
[ "$(sum_site inuse_bytes alloc_big)" -eq $((1024 * 4096)) ]
mt-fold --json "$tmp/e.txt" | grep -q '"total": {"value": [0-9]*, "n": 0, "exact": true'

# --- a leak --------------------------------------------------------------------
capture "$tmp/l.txt" --seed 3 -- "$MT_FIXTURES/fold_leak"
mt-fold --metric alloc_bytes "$tmp/l.txt" >"$tmp/l.alloc"
mt-fold --metric inuse_bytes "$tmp/l.txt" >"$tmp/l.inuse"
cat "$tmp/l.inuse"
for f in leak_keep churn_free batch_free; do grep -q ";$f;" "$tmp/l.alloc"; done
grep -q ';leak_keep;' "$tmp/l.inuse"
! grep -qE ';(churn_free|batch_free);' "$tmp/l.inuse"
mt-fold --json --top 0 --metric inuse_bytes "$tmp/l.txt" >"$tmp/l.json"
within "$(json_site "$tmp/l.json" leak_keep lo)" 4194304 "$(json_site "$tmp/l.json" leak_keep hi)"
echo "fold-pipeline: ok"
