#!/bin/bash
# mt-unwind against perf script on the same perf.data, in one run, for three
# CPU profiles recorded by `perf record -e cpu-clock --call-graph dwarf`
# (8 KiB stack dumps) of a json/re loop, and one of a parallel build:
#   python3-symbols  a copy of Debian's python3.11 without build-id and
#                    debuglink, so that no debug info is found for it:
#                    symbols only (libc's debug info from libc6-dbg)
#   python3          Debian's python3.11 with its separate debug info (which
#                    python3.11-dbg installs): full DWARF, compressed, where
#                    inline expansion and DWARF reading weigh
#   python3d         Debian's debug build (python3.11-dbg): full DWARF in
#                    the binary
#   gcc-build        make -j2 of 40 small C programs: ~200 short processes
#                    (gcc, cc1, as, collect2, ld), few samples each
# For each, events/s of
#   perf script             (Debian's perf: DWARF unwinding with libdw, symbols)
#   mt-unwind               (unwinding, symbols, inline frames, text out),
#                           without and with its debug cache (inflated copies
#                           of compressed debug files and DWARF scope
#                           indexes, see docs/unwind.md)
#   mt-unwind --addrs --no-inline   (unwinding only)
#   mt-unwind --decode-only (reading and parsing the file, nothing else)
# and the two target ratios: mt-unwind >= 20x perf script, mt-unwind <= 3x
# decode-only.  Best wall-clock run: of 3 for perf script, of 7 interleaved
# rounds for mt-unwind's variants (the machine is shared).
# Then mt-unwind -j 1 against -j 2 (docs/unwind.md, Threads) on the python3
# and gcc-build recordings and on two more of the parallel build, recorded
# by mt-capture (sample mode at its default rate, and event mode -F 999):
# medians of 11 interleaved rounds of -j 1, -j 2 and --decode-only, debug
# cache filled, with the decode-only ratio of each.
# Env: MT_BENCH_ITERS (python3 loop count, default 20: ~30k samples, ~250
# MB), MT_BENCH_DBG_ITERS (python3d, default 4: ~30k samples).  More events
# weigh mt-unwind's fixed start-up less against perf script's constant
# per-sample cost; much larger files no longer stay in the page cache of the
# test machine, and then every row measures the disk.  MT_BENCH_JOBS_ONLY=1:
# only the -j rows (python3 and the parallel build recorded, no perf script).
# MT_BENCH_BASE=DIR: in the -j rows, DIR/bin/mt-unwind -j 1 too (an older
# build: before and after in the same interleaved rounds, the same files).
set -eu
command -v perf >/dev/null || { echo "bench/unwind.sh: perf not installed: skipped"; exit 0; }
B=${MT_BUILD:-build}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/work.py" <<'PY'
import json, re, sys
for k in range(int(sys.argv[1])):
    d = {str(i): [i, i * 2, str(i)] for i in range(200000)}
    s = json.dumps(d)
    x = len(re.findall(r'"\d+"', s))
PY

best() {	# best RUNS CMD...: best wall time in microseconds over RUNS runs
	runs=$1
	shift
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

min_us() {	# min_us [B]: the smaller of stdin's number and B
	read -r a
	if [ -z "$1" ] || [ "$a" -lt "$1" ]; then echo "$a"; else echo "$1"; fi
}

workload() {	# workload NAME DESCRIPTION COMMAND...: record COMMAND, then measure
	name=$1 what=$2
	shift 2
	if [ ! -x "$1" ] && ! command -v "$1" >/dev/null; then
		echo "bench/unwind.sh: $1 not installed (make deps: mk/deps.sh bench): $name skipped"
		return 0
	fi
	data=$tmp/$name.data
	if [ "${MT_BENCH_JOBS_ONLY:-}" = 1 ]; then
		perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$data" -- "$@" \
			>/dev/null 2>"$tmp/rec.log" || { echo "bench/unwind.sh: perf record failed"; exit 1; }
		return 0
	fi
	perf record -q -e cpu-clock -F 4000 --call-graph dwarf -o "$data" -- \
		"$@" >/dev/null 2>"$tmp/rec.log" ||
		{ echo "bench/unwind.sh: perf record failed: $(tail -n 1 "$tmp/rec.log")"; exit 1; }
	events=$("$B/bin/mt-unwind" -q "$data" | grep -c -v '^#')
	frames=$("$B/bin/mt-unwind" "$data" 2>&1 >/dev/null |
		sed -n 's/^mt-unwind: \([0-9]*\) frames (\([0-9]*\) inline).*/\1 frames, \2 inline/p')
	size=$(du -m "$data" | cut -f1)
	perf_us=$(best 3 perf script -i "$data")
	# Without the debug cache every run inflates libc's compressed debug
	# info; with it (after one run has written the copy) none does.
	"$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$data" >/dev/null
	# The pipeline's own input: the same recording as .mtz (decoding included).
	"$B/bin/mt-encode" -q -o "$tmp/$name.mtz" "$data"
	# mt-unwind's runs take 20-150 ms, where a burst of other work on the
	# shared machine weighs: 7 rounds, the variants interleaved in each, so
	# that a burst does not hit all the runs of one variant.
	cold_us= full_us= addr_us= dec_us= mtz_us=
	for _ in 1 2 3 4 5 6 7; do
		cold_us=$(best 1 "$B/bin/mt-unwind" -q --no-debug-cache "$data" | min_us "$cold_us")
		full_us=$(best 1 "$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$data" | min_us "$full_us")
		addr_us=$(best 1 "$B/bin/mt-unwind" -q --addrs --no-inline "$data" | min_us "$addr_us")
		dec_us=$(best 1 "$B/bin/mt-unwind" -q --decode-only "$data" | min_us "$dec_us")
		mtz_us=$(best 1 "$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$tmp/$name.mtz" |
			min_us "$mtz_us")
	done

	row() { awk -v n="$2" -v us="$3" -v e="$events" 'BEGIN { printf "%-34s %8.3f s  %9.0f events/s\n", n, us / 1e6, e / (us / 1e6) }'; }
	echo
	echo "$name: ${size} MB perf.data, $events events, $frames ($what, cpu-clock 4 kHz, --call-graph dwarf)"
	row perf "perf script" "$perf_us"
	row cold "mt-unwind --no-debug-cache" "$cold_us"
	row full "mt-unwind (debug cache filled)" "$full_us"
	row addrs "mt-unwind --addrs --no-inline" "$addr_us"
	row dec "mt-unwind --decode-only" "$dec_us"
	row mtz "mt-unwind on its .mtz ($(du -k "$tmp/$name.mtz" | cut -f1) KB)" "$mtz_us"
	awk -v p="$perf_us" -v f="$full_us" -v c="$cold_us" -v d="$dec_us" 'BEGIN {
		r1 = p / f; r2 = f / d
		printf "mt-unwind vs perf script: %.1fx the events/s (target >= 20x: %s); without the debug cache %.1fx\n", r1, (r1 >= 20 ? "met" : "NOT met"), p / c
		printf "mt-unwind vs decode-only: %.2fx the time (target <= 3x: %s); without the debug cache %.2fx\n", r2, (r2 <= 3 ? "met" : "NOT met"), c / d
	}'
}

# The stand-in finds its library by the prefix compiled in (/usr).
cp /usr/bin/python3.11 "$tmp/python3-symbols"
objcopy --remove-section=.note.gnu.build-id --remove-section=.gnu_debuglink "$tmp/python3-symbols"

echo "tree at $(git -C "${MT_SRC:-.}" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)"
workload python3-symbols "python3.11 without debug info" \
	"$tmp/python3-symbols" "$tmp/work.py" "${MT_BENCH_ITERS:-20}"
workload python3 "Debian's python3.11 with its debug info" \
	/usr/bin/python3.11 "$tmp/work.py" "${MT_BENCH_ITERS:-20}"
workload python3d "Debian's python3.11d, full DWARF" \
	/usr/bin/python3.11d "$tmp/work.py" "${MT_BENCH_DBG_ITERS:-4}"

# Many short processes: make -j2 of 40 one-function C programs (gcc, cc1,
# as, collect2, ld each: some 200 processes, a few hundred samples each),
# where what each process and module costs to set up weighs, not the walk.
mkdir "$tmp/build"
for i in $(seq 40); do
	printf 'int f%d(int x) { return x * %d; }\nint main(void) { return f%d(3) == 0; }\n' \
		"$i" "$i" "$i" >"$tmp/build/p$i.c"
done
printf 'all: $(patsubst %%.c,%%,$(wildcard p*.c))\n%%: %%.c\n\tgcc -O2 -g -o $@ $<\n' \
	>"$tmp/build/Makefile"
workload gcc-build "make -j2 of 40 gcc compiles, 200 processes" make -s -C "$tmp/build" -j2

# -j 1 against -j 2: medians of 11 interleaved rounds (the machine is
# shared: a burst of other work then hits every variant alike).
jobs_row() {	# jobs_row NAME FILE
	"$B/bin/mt-unwind" -q --debug-cache "$tmp/cache" "$2" >/dev/null 2>&1
	base=${MT_BENCH_BASE:-}
	for _ in $(seq 11); do
		for v in "-j 1" "-j 2" "--decode-only" ${base:+base}; do
			t0=$(date +%s%N)
			if [ "$v" = base ]; then
				"$base/bin/mt-unwind" -q -j 1 --debug-cache "$tmp/cache" "$2" >/dev/null 2>&1
			else
				# shellcheck disable=SC2086
				"$B/bin/mt-unwind" -q $v --debug-cache "$tmp/cache" "$2" >/dev/null 2>&1
			fi
			t1=$(date +%s%N)
			printf '%s %d\n' "${v// /}" $(( (t1 - t0) / 1000 ))
		done
	done | awk -v n="$1" -v e="$("$B/bin/mt-unwind" -q "$2" | grep -c -v '^#')" '
		{ t[$1, ++c[$1]] = $2 }
		function med(k,   i, j, x, m) {
			m = c[k]
			for (i = 1; i <= m; i++) a[i] = t[k, i]
			for (i = 2; i <= m; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
			return a[int((m + 1) / 2)]
		}
		END {
			j1 = med("-j1"); j2 = med("-j2"); d = med("--decode-only")
			printf "%-30s %7d events  -j 1 %7.3f s  -j 2 %7.3f s  (%.2fx)  decode-only %7.3f s  ratio -j 1 %.2fx, -j 2 %.2fx\n", n, e, j1 / 1e6, j2 / 1e6, j1 / j2, d / 1e6, j1 / d, j2 / d
			if (c["base"]) { b = med("base"); printf "%-30s %7s         base -j 1 %7.3f s  ratio %.2fx\n", "", "", b / 1e6, b / d }
		}'
}
echo
echo "mt-unwind -j 1 against -j 2 ($(nproc) CPUs; medians of 11 interleaved rounds, debug cache filled):"
[ -f "$tmp/python3.data" ] && jobs_row python3 "$tmp/python3.data"
[ -f "$tmp/gcc-build.data" ] && jobs_row "gcc-build (perf record)" "$tmp/gcc-build.data"
for mode in sample event; do
	rm -f "$tmp"/build/p[0-9] "$tmp"/build/p[0-9][0-9]
	if [ $mode = sample ]; then set -- ; else set -- -e cpu-clock -F 999; fi
	"$B/bin/mt-capture" "$@" -o "$tmp/make-$mode.data" -- make -s -C "$tmp/build" -j2 \
		>/dev/null 2>"$tmp/cap.log" || { echo "bench/unwind.sh: mt-capture failed: $(tail -n 1 "$tmp/cap.log")"; continue; }
	jobs_row "gcc-build (mt-capture $mode)" "$tmp/make-$mode.data"
done
