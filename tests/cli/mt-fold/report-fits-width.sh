# every line of --report within the width: --width and $COLUMNS at 70, 80,
# 100, 120 and 140, each input here, three metrics, with the histograms
set -u
bad=0
for w in 70 80 100 120 140; do
	for in in "$MT_SRC"/tests/cli/mt-fold/*-input.txt; do
		for m in alloc_bytes alloc_objects inuse_bytes; do
			for how in "--width $w" "COLUMNS"; do
				if [ "$how" = COLUMNS ]; then
					COLUMNS=$w mt-fold --report --metric $m --sizes --lifetimes "$in"
				else
					mt-fold --report --metric $m --sizes --lifetimes $how "$in"
				fi 2>/dev/null | awk -v w="$w" -v what="${in##*/} $m $how" \
					'length($0) > w { print what ": " length($0) ": " $0; bad = 1 }
					 END { exit bad }' || bad=1
			done
		done
	done
done
exit $bad
