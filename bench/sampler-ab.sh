#!/bin/bash
# Two builds' samplers on one workload, interleaved: the CPU time (user +
# sys) of the command with each libmt-sampler.so preloaded, and under each
# build's mt-capture, RUNS rounds of old then new; medians and new/old.
# For a change to the sampler that must not cost anything measurable (the
# timeline of issue 27 was measured so, docs/BENCHMARKS.md, mt-capture).
# usage: bench/sampler-ab.sh OLD_BUILD NEW_BUILD RUNS -- COMMAND [ARGS...]
#   e.g. bench/sampler-ab.sh /tmp/base/build build 11 -- build/fixtures/capture_bench 4 4000000 2
#   (capture_bench mixed: the arguments bench/capture.sh gives it)
set -euo pipefail
[ $# -ge 5 ] && [ "$4" = -- ] || { sed -n 's/^# usage: /usage: /p' "$0" >&2; exit 2; }
old=$1 new=$2 runs=$3
shift 4
for b in "$old" "$new"; do
	[ -f "$b/libmt-sampler.so" ] && [ -x "$b/bin/mt-capture" ] ||
		{ echo "sampler-ab: '$b' has no libmt-sampler.so and bin/mt-capture" >&2; exit 2; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
TIMEFORMAT='%3R %3U %3S'
for i in $(seq "$runs"); do
	for v in old new; do
		b=$old
		[ $v = new ] && b=$new
		{ time env LD_PRELOAD="$b/libmt-sampler.so" "$@" >/dev/null 2>&1; } 2>>"$T/pre-$v"
		{ time "$b/bin/mt-capture" -o "$T/s.data" -- "$@" >/dev/null 2>"$T/err"; } 2>>"$T/cap-$v"
		rm -f "$T/s.data"
	done
done
med() { awk '{ print $2 + $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for k in pre cap; do
	o=$(med "$T/$k-old") n=$(med "$T/$k-new")
	what=preloaded
	[ $k = cap ] && what=captured
	echo "$what (cpu s, user+sys, median of $runs): old $o, new $n, new/old $(awk -v o="$o" -v n="$n" 'BEGIN { printf "%.3f", n / o }')"
done
