#!/bin/sh
# mt-capture cost, in one run, as ratios to the same workload uninstrumented:
#  - sample mode at the default rate (512 KiB) vs jemalloc's sampled profiler
#    (prof:true, lg_prof_sample:19 = 512 KiB) and heaptrack, on capture_bench
#    with 4 threads: "tight" = 8M small allocations and nothing else (about
#    30 ns of CPU each), "mixed" = 4M allocations with 2 hashing passes over
#    each block (about 100 ns each);
#  - trace mode: the malloc+free rate at which it starts to lose samples,
#    with the default ring (512 pages per CPU) and a large one (8192).
# Prints a Markdown table (docs/BENCHMARKS.md, "## mt-capture").
set -eu
: "${MT_BUILD:?}" "${MT_FIXTURES:?}"
CAP=$MT_BUILD/bin/mt-capture
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
RUNS=${MT_BENCH_RUNS:-5}

secs() {	# COMMAND...: wall seconds of one run
	s=$(date +%s%N)
	"$@" >/dev/null 2>>"$T/log" || { echo "bench: '$*' failed" >&2; tail -5 "$T/log" >&2; exit 1; }
	e=$(date +%s%N)
	echo $(((e - s) / 1000)) | awk '{ printf "%.4f\n", $1 / 1e6 }'
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

base() { $W; }
sample() { "$CAP" -o "$T/s.data" -- $W 2>"$T/s.err"; }
preload() { env LD_PRELOAD="$MT_BUILD/libmt-sampler.so" $W; }
je() { env LD_PRELOAD=$JE $W; }
jeprof() { env LD_PRELOAD=$JE MALLOC_CONF=prof:true,lg_prof_sample:19,prof_prefix:$T/jeprof $W; }

for workload in "tight 4 2000000 0" "mixed 4 1000000 2"; do
set -- $workload
name=$1
shift
W_ARGS="$*"
W="$MT_FIXTURES/capture_bench $W_ARGS"
# Interleaved runs, so that load from other processes hits all alike.
rm -f "$T/base" "$T/sample" "$T/preload" "$T/je" "$T/jeprof"
for i in $(seq "$RUNS"); do
	secs base >>"$T/base"
	secs preload >>"$T/preload"
	secs sample >>"$T/sample"
	secs je >>"$T/je"
	secs jeprof >>"$T/jeprof"
done
b=$(median <"$T/base")
s=$(median <"$T/sample")
p=$(median <"$T/preload")
j=$(median <"$T/je")
jp=$(median <"$T/jeprof")
h=$(secs heaptrack -o "$T/ht" $W)
# jemalloc really profiles: prof is compiled in and turned on.
jeprof_on=$(env LD_PRELOAD=$JE MALLOC_CONF=prof:true,stats_print:true "$MT_FIXTURES/capture_bench" 1 1 2>&1 |
	grep -c 'opt.prof: true' || true)
samples=$(sed -n 's/^mt-capture: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 samples, \2 lost/p' "$T/s.err")

echo
echo "workload $name: capture_bench $W_ARGS (threads, allocations each of 16..527 B, hashing passes), $(nproc) CPUs, median of $RUNS runs"
echo
echo "| run | wall s | vs uninstrumented |"
echo "|---|---|---|"
awk -v b="$b" -v s="$s" -v p="$p" -v j="$j" -v jp="$jp" -v h="$h" -v n="$samples" -v on="$jeprof_on" 'BEGIN {
	printf "| uninstrumented (glibc malloc) | %.3f | 1.00x |\n", b
	printf "| mt-capture sample mode, --rate 524288 (%s) | %.3f | %.2fx |\n", n, s, s / b
	printf "| libmt-sampler.so preloaded, no capture (counters and sampling decisions only) | %.3f | %.2fx |\n", p, p / b
	printf "| jemalloc, no profiling | %.3f | %.2fx |\n", j, j / b
	printf "| jemalloc prof:true,lg_prof_sample:19%s | %.3f | %.2fx (%.2fx of plain jemalloc) |\n", on ? "" : " (NOT ACTIVE)", jp, jp / b, jp / j
	printf "| heaptrack (1 run) | %.3f | %.2fx |\n", h, h / b
}'

done

# Trace mode: the first malloc+free rate with lost samples (3 samples per pair:
# malloc entry with an 8 KiB stack, its return, free).
echo
echo "| trace mode ring | pairs/s recorded without loss | first rate with loss (lost of sent) |"
echo "|---|---|---|"
for pages in 512 8192; do
	ok=- first=-
	for rate in 5000 10000 20000 50000 100000 200000 500000; do
		count=$((rate / 2 < 5000 ? 5000 : rate / 2))
		"$CAP" --mode trace --mmap-pages $pages -o "$T/t.data" -- \
			"$MT_FIXTURES/capture_rate" $rate $count 2>"$T/t.err" >/dev/null
		lost=$(sed -n 's/^mt-capture: [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$T/t.err")
		if [ "$lost" = 0 ]; then
			ok=$rate
		else
			first="$rate ($lost of $((3 * count)))"
			break
		fi
	done
	echo "| $pages pages/CPU ($((pages * 4 / 1024)) MiB) | $ok | $first |"
done
