#!/bin/bash
# mt-unwind against perf script on the same perf.data, in one run: a python3
# workload recorded by `perf record -e cpu-clock --call-graph dwarf` (8 KiB
# stack dumps).  Reports events/s of
#   perf script             (Debian's perf: DWARF unwinding with libdw, symbols)
#   mt-unwind               (unwinding, symbols, inline frames, text out),
#                           without and with its debug cache (inflated copies
#                           of compressed debug files, see docs/unwind.md)
#   mt-unwind --addrs --no-inline   (unwinding only)
#   mt-unwind --decode-only (reading and parsing the file, nothing else)
# and the two target ratios: mt-unwind >= 20x perf script, mt-unwind <= 3x
# decode-only.  Best of 3 wall-clock runs each (the machine is shared).
# Env: MT_BENCH_ITERS (python loop count, default 20: ~35k samples, ~280 MB;
# 8 gives the ~14k samples of the first figures).  More events weigh
# mt-unwind's fixed start-up (debug info decompression) less against perf
# script's constant per-sample cost; much larger files no longer stay in
# the page cache of the test machine, and then every row measures the disk.
set -eu
command -v perf >/dev/null || { echo "bench/unwind.sh: perf not installed: skipped"; exit 0; }
B=${MT_BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=$(command -v /usr/bin/python3 || command -v python3)
cat >"$tmp/work.py" <<'PY'
import json, re, sys
for k in range(int(sys.argv[1])):
    d = {str(i): [i, i * 2, str(i)] for i in range(200000)}
    s = json.dumps(d)
    x = len(re.findall(r'"\d+"', s))
PY
perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$tmp/p.data" -- \
	"$py" "$tmp/work.py" "${MT_BENCH_ITERS:-20}" >/dev/null 2>"$tmp/rec.log" ||
	{ echo "bench/unwind.sh: perf record failed: $(tail -n 1 "$tmp/rec.log")"; exit 1; }
events=$("$B/bin/mt-unwind" -q "$tmp/p.data" | grep -c -v '^#')
size=$(du -m "$tmp/p.data" | cut -f1)

best() {	# best NAME RUNS CMD...: best wall time in seconds over RUNS runs
	name=$1 runs=$2
	shift 2
	b=
	for _ in $(seq "$runs"); do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s%N)
		t=$(( (t1 - t0) / 1000 ))
		if [ -z "$b" ] || [ "$t" -lt "$b" ]; then b=$t; fi
	done
	echo "$b"
}
perf_us=$(best perf 3 perf script -i "$tmp/p.data")
# Without the debug cache every run inflates libc's compressed debug info;
# with it (after one run has written the copy) none does.
cold_us=$(best cold 3 "$B/bin/mt-unwind" -q --no-debug-cache "$tmp/p.data")
"$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$tmp/p.data" >/dev/null
full_us=$(best full 3 "$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$tmp/p.data")
addr_us=$(best addrs 3 "$B/bin/mt-unwind" -q --addrs --no-inline "$tmp/p.data")
dec_us=$(best decode 3 "$B/bin/mt-unwind" -q --decode-only "$tmp/p.data")
# The pipeline's own input: the same recording as .mtz (decoding included).
"$B/bin/mt-encode" -q -o "$tmp/p.mtz" "$tmp/p.data"
mtz_us=$(best mtz 3 "$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$tmp/p.mtz")

row() { awk -v n="$2" -v us="$3" -v e="$events" 'BEGIN { printf "%-34s %8.3f s  %9.0f events/s\n", n, us / 1e6, e / (us / 1e6) }'; }
echo "file: ${size} MB perf.data, $events events (python3 json/re workload, cpu-clock 4 kHz, --call-graph dwarf)"
row perf "perf script" "$perf_us"
row cold "mt-unwind --no-debug-cache" "$cold_us"
row full "mt-unwind (debug cache filled)" "$full_us"
row addrs "mt-unwind --addrs --no-inline" "$addr_us"
row dec "mt-unwind --decode-only" "$dec_us"
row mtz "mt-unwind on its .mtz ($(du -k "$tmp/p.mtz" | cut -f1) KB)" "$mtz_us"
awk -v p="$perf_us" -v f="$full_us" -v c="$cold_us" -v d="$dec_us" 'BEGIN {
	r1 = p / f; r2 = f / d
	printf "mt-unwind vs perf script: %.1fx the events/s (target >= 20x: %s); without the debug cache %.1fx\n", r1, (r1 >= 20 ? "met" : "NOT met"), p / c
	printf "mt-unwind vs decode-only: %.2fx the time (target <= 3x: %s); without the debug cache %.2fx\n", r2, (r2 <= 3 ? "met" : "NOT met"), c / d
}'
