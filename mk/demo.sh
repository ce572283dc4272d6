#!/bin/sh
# `make demo`: profile examples/wordfreq.c through the whole pipeline and
# leave build/demo/{demo.mtz,demo.unwound,demo.folded,demo.svg,demo.html,report.txt,report.json}.
set -eu

bin=build/bin
out=build/demo
prog=build/examples/wordfreq
rate=${MT_DEMO_RATE:-65536}

paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo '?')
if [ "$(id -u)" -ne 0 ] && [ "$paranoid" != '?' ] && [ "$paranoid" -gt 1 ]; then
	cat >&2 <<EOF
mt demo: perf_event_open is restricted here (kernel.perf_event_paranoid = $paranoid).
  Allow user-space profiling of your own processes with
      sudo sysctl kernel.perf_event_paranoid=1
  (or run as root, or give mt-capture CAP_PERFMON), then run 'make demo' again.
EOF
	exit 3
fi

# Outputs hold stack memory and the program's names: 0600, as perf.data.
umask 077
mkdir -p "$out"
rm -f "$out/demo.mtz" "$out/demo.unwound" "$out/demo.folded" "$out/report.txt" \
	"$out/report.json" "$out/demo.svg" "$out/demo.html"
echo "mt demo: capturing $prog at one sample per $rate bytes" >&2
"$bin/mt-capture" --rate "$rate" -o "$out/demo.perf" -- "$prog" 200000 3
"$bin/mt-encode" -o "$out/demo.mtz" "$out/demo.perf"
rm -f "$out/demo.perf"
"$bin/mt-unwind" "$out/demo.mtz" >"$out/demo.unwound"
"$bin/mt-fold" "$out/demo.unwound" >"$out/demo.folded"
# The report names source lines: the sites as mt report shows them.
"$bin/mt-unwind" -q --srcline "$out/demo.mtz" | "$bin/mt-fold" --sites >"$out/report.txt"
"$bin/mt-fold" --json "$out/demo.unwound" >"$out/report.json"
scripts/mt-flamegraph --title "wordfreq: allocated bytes" --countname bytes --colors mem \
	--stats "$out/report.json" "$out/demo.folded" >"$out/demo.svg"
# the HTML report beside it: every metric, memory over time, the tables
"$bin/mt" report --html --no-cache -o "$out/demo.html" "$out/demo.mtz"

cat "$out/report.txt"
cat <<EOF

mt demo: done.
  $out/demo.mtz      the compressed capture (mt-encode -d gives the perf stream back)
  $out/demo.unwound  one line per event with its unwound stack (mt-unwind)
  $out/demo.folded   collapsed stacks (mt-fold)
  $out/report.txt    the report above (mt-fold --sites); $out/report.json the figures as JSON
  $out/demo.svg      the flame graph: open it in a browser
  $out/demo.html     the HTML report (mt report --html): open it in a browser

Your own program, in two commands (build/bin/mt):
  mt record -- ./prog args      # writes mt.prog.PID.mtz
  mt report mt.prog.PID.mtz     # then: mt flame mt.prog.PID.mtz
                                # or:   mt report --html mt.prog.PID.mtz
EOF
