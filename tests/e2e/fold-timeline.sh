#!/bin/bash
# mt-fold's peak, temp and inuse metrics on a simulated three-phase program
# (tests/fold/gen_phases.py: tick lines and seq= as mt-unwind writes them for
# issue 27): each site's 95% interval holds its exact figure in at least 18
# of 20 seeds, the right site tops each metric, --rate 1 gives the exact
# figures, and the timeline's peak is the generator's.
set -euo pipefail
. "$MT_SRC/tests/e2e/fold_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen="$MT_SRC/tests/fold/gen_phases.py"

temp="make_temp (phases.c:12)" peak="build_peak (phases.c:20)" keep="keep_forever (phases.c:30)"
# metric site exact-figure
checks=(
	"peak_bytes|$peak|1638400" "peak_objects|$peak|400"
	"temp_bytes|$temp|256000" "temp_objects|$temp|4000"
	"inuse_bytes|$keep|102400" "inuse_objects|$keep|100"
)
declare -A hits
for seed in $(seq 1 20); do
	python3 "$gen" --seed "$seed" --exact "$tmp/exact" >"$tmp/in.txt"
	for c in "${checks[@]}"; do
		IFS='|' read -r metric site exact <<<"$c"
		mt-fold --json --top 0 --metric "$metric" "$tmp/in.txt" >"$tmp/r.json"
		lo=$(json_site "$tmp/r.json" "$site" lo)
		hi=$(json_site "$tmp/r.json" "$site" hi)
		[ -n "$lo" ] || { echo "seed $seed: no $metric row for $site"; exit 1; }
		if within "$lo" "$exact" "$hi"; then
			hits[$metric]=$(( ${hits[$metric]:-0} + 1 ))
		else
			echo "seed $seed: $metric of $site: $exact not in [$lo, $hi]"
		fi
	done
	# the stack on top of each metric in the collapsed output
	for m in "peak_bytes|$peak" "temp_bytes|$temp" "inuse_bytes|$keep"; do
		IFS='|' read -r metric site <<<"$m"
		top=$(mt-fold --metric "$metric" "$tmp/in.txt" | awk '{ print $NF "\t" $0 }' |
		      sort -n -r | head -n 1)
		case "$top" in *"${site%% *}"*) ;; *) echo "seed $seed: $metric tops '$top'"; exit 1;; esac
	done
	# the timeline's exact peak and its moment are the generator's
	pb=$(sed -n 's/^peak_block=//p' "$tmp/exact") pt=$(sed -n 's/^peak_time=//p' "$tmp/exact")
	grep -q "\"peak\": {\"bytes\": $pb, \"error\": 0, \"time\": $((pt - 1000000000))}}\]" "$tmp/r.json"
done
for c in "${checks[@]}"; do
	metric=${c%%|*}
	echo "$metric: interval held the exact figure in ${hits[$metric]:-0} of 20 seeds"
	[ "${hits[$metric]:-0}" -ge 18 ]
done

# --rate 1: every figure exact and equal to the generator's
python3 "$gen" --rate 1 --exact "$tmp/exact" >"$tmp/in1.txt"
for c in "${checks[@]}"; do
	IFS='|' read -r metric site exact <<<"$c"
	mt-fold --json --top 0 --metric "$metric" "$tmp/in1.txt" >"$tmp/r1.json"
	[ "$(json_site "$tmp/r1.json" "$site" value)" = "$exact" ]
	[ "$(json_site "$tmp/r1.json" "$site" exact)" = true ]
done
# the last block of the peak is freed before the next allocation: temporary
mt-fold --json --top 0 --metric temp_bytes "$tmp/in1.txt" >"$tmp/r1.json"
[ "$(json_site "$tmp/r1.json" "$peak" value)" = 4096 ]
# the reconciliation at the peak: exact requested at --rate 1, block and RSS
grep -q '"reconciliation": {"peak": {"time": 210000000, "requested": {"value": 1638400, "n": 0, "exact": true' "$tmp/r1.json"
# old inputs: the metrics need what they lack (exit 1, named)
python3 "$gen" --no-ticks --no-seq >"$tmp/old.txt"
if mt-fold --metric peak_bytes "$tmp/old.txt" 2>"$tmp/err"; then exit 1; else [ $? = 1 ]; fi
grep -q 'no tick lines in the input' "$tmp/err"
if mt-fold --metric temp_bytes "$tmp/old.txt" 2>"$tmp/err"; then exit 1; else [ $? = 1 ]; fi
grep -q 'no seq= on the alloc lines' "$tmp/err"
# and nothing new in their JSON
mt-fold --json "$tmp/old.txt" >"$tmp/old.json"
! grep -q '"timeline"\|"temporary"\|"sizes"' "$tmp/old.json"
