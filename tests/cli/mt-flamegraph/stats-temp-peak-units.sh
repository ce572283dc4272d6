# the units of issue 27's metrics come from their names: temp_objects
# counts objects, peak_bytes bytes (the title and the counts' unit)
in="$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
for m in temp_objects peak_bytes; do
	mt-fold --json --top 0 --metric $m "$in" >$m.json
	mt-fold --metric $m "$in" >$m.txt
	mt-flamegraph --stats $m.json $m.txt -o - | grep -o "$m ([a-z]*)" | head -n 1
done
