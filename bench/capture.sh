#!/bin/bash
# mt-capture cost, in one run, as ratios to the same workload uninstrumented:
#  - sample mode at the default rate (512 KiB), through the sample ring and
#    through uprobes (--no-ring), vs jemalloc's sampled profiler
#    (prof:true, lg_prof_sample:19 = 512 KiB) and heaptrack, on capture_bench
#    with 4 threads: "tight" = 32M small allocations and nothing else (about
#    30 ns of CPU each), "mixed" = 16M allocations with 2 hashing passes over
#    each block (about 100 ns each): runs of about a second, timed to the
#    millisecond by bash's time (time(1)'s 10 ms steps were 1% of a ratio);
#  - trace mode: the malloc+free rate at which it starts to lose samples,
#    with the default ring (512 pages per CPU) and a large one (8192).
# Prints a Markdown table (docs/BENCHMARKS.md, "## mt-capture").
set -eu
: "${MT_BUILD:?}" "${MT_FIXTURES:?}"
CAP=$MT_BUILD/bin/mt-capture
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
RUNS=${MT_BENCH_RUNS:-7}
# MT_BENCH_CAPTURE_ARGS: more mt-capture options for the sample-mode
# captures (e.g. --stack-size 8192, against a changed default).
CAP_ARGS=${MT_BENCH_CAPTURE_ARGS:-}

TIMEFORMAT='%3R %3U %3S'
secs() {	# COMMAND...: "wall cpu" seconds of one run (cpu: user + system of
	# the whole process tree, mt-capture included; less sensitive than wall
	# to other load on a shared machine)
	{ time "$@" >/dev/null 2>"$T/last.err"; } 2>"$T/time" ||
		{ echo "bench: '$*' failed" >&2; tail -5 "$T/last.err" >&2; exit 1; }
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$T/time"
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# median of the wall (1) or cpu (2) column of FILE
med() { awk -v c="$2" '{ print $c }' "$1" | median; }


# MT_BENCH_PART=trace runs the trace part only, MT_BENCH_PART=sample the
# sample-mode part only.
echo "tree at $(git -C "${MT_SRC:-.}" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg)${CAP_ARGS:+, mt-capture $CAP_ARGS}"
for workload in "tight 4 8000000 0" "mixed 4 4000000 2"; do
[ "${MT_BENCH_PART:-all}" = trace ] && break
set -- $workload
name=$1
shift
W_ARGS="$*"
W="$MT_FIXTURES/capture_bench $W_ARGS"
# Interleaved runs, so that load from other processes hits all alike.
rm -f "$T/base" "$T/sample" "$T/inner" "$T/noring" "$T/preload" "$T/je" "$T/jeprof"
for i in $(seq "$RUNS"); do
	secs $W >>"$T/base"
	secs env LD_PRELOAD="$MT_BUILD/libmt-sampler.so" $W >>"$T/preload"
	# The program's own wall time under the capture (from its start to its
	# end, measured inside), apart from mt-capture's start-up and teardown.
	# A new output file each time: closing a file that O_TRUNC emptied makes
	# ext4 write it out at once (auto_da_alloc), 20 ms for 70 MB here.
	rm -f "$T/s.data"
	secs "$CAP" $CAP_ARGS -o "$T/s.data" -- bash -c 'TIMEFORMAT=%3R; { time "$@" 2>&3; } 3>&2 2>"$0"' "$T/in" $W >>"$T/sample"
	cp "$T/last.err" "$T/s.err"
	cat "$T/in" >>"$T/inner"
	rm -f "$T/s.data"
	secs "$CAP" $CAP_ARGS --no-ring -o "$T/s.data" -- $W >>"$T/noring"
	# mt-capture exits at once and a background process closes its uprobes
	# (~80 ms per uprobe and CPU on 6.18); the next capture would wait for it.
	sleep 2
	secs env LD_PRELOAD=$JE $W >>"$T/je"
	secs env LD_PRELOAD=$JE MALLOC_CONF=prof:true,lg_prof_sample:19,prof_prefix:$T/jeprof $W >>"$T/jeprof"
done
b=$(med "$T/base" 1) bc=$(med "$T/base" 2)
s=$(med "$T/sample" 1) sc=$(med "$T/sample" 2)
si=$(med "$T/inner" 1)
nr=$(med "$T/noring" 1) nrc=$(med "$T/noring" 2)
p=$(med "$T/preload" 1) pc=$(med "$T/preload" 2)
j=$(med "$T/je" 1) jc=$(med "$T/je" 2)
jp=$(med "$T/jeprof" 1) jpc=$(med "$T/jeprof" 2)
secs heaptrack -o "$T/ht" $W >"$T/heaptrack"
h=$(med "$T/heaptrack" 1) hc=$(med "$T/heaptrack" 2)
# jemalloc really profiles: prof is compiled in and turned on.
jeprof_on=$(env LD_PRELOAD=$JE MALLOC_CONF=prof:true,stats_print:true "$MT_FIXTURES/capture_bench" 1 1 2>&1 |
	grep -c 'opt.prof: true' || true)
# Start-up and end of a capture on its own (no teardown pending).
sleep 4
rm -f "$T/s.data"
secs "$CAP" -o "$T/s.data" -- true >"$T/true"
startup=$(med "$T/true" 1)
samples=$(sed -n 's/^mt-capture: \([0-9]*\) samples, \([0-9]*\) lost.*/\1 samples, \2 lost/p' "$T/s.err")

echo
echo "workload $name: capture_bench $W_ARGS (threads, allocations each of 16..527 B, hashing passes), $(nproc) CPUs, median of $RUNS runs"
echo
echo "| run | wall s | wall vs uninstrumented | cpu s | cpu vs uninstrumented |"
echo "|---|---|---|---|---|"
awk -v b="$b" -v s="$s" -v p="$p" -v j="$j" -v jp="$jp" -v h="$h" -v bc="$bc" -v sc="$sc" \
    -v pc="$pc" -v jc="$jc" -v jpc="$jpc" -v hc="$hc" -v n="$samples" -v on="$jeprof_on" -v si="$si" \
    -v nr="$nr" -v nrc="$nrc" '
function row(name, w, c) { printf "| %s | %.3f | %.2fx | %.3f | %.2fx |\n", name, w, w / b, c, c / bc }
BEGIN {
	row("uninstrumented (glibc malloc)", b, bc)
	row("mt-capture sample mode, --rate 524288 (" n ")", s, sc)
	printf "| the program itself under that capture (wall from inside; cpu: whole capture) | %.3f | %.2fx | %.3f | %.2fx |\n", si, si / b, sc, sc / bc
	row("the same with --no-ring (the markers uprobed, as before the sample ring)", nr, nrc)
	row("libmt-sampler.so preloaded, no capture (counters, sampling decisions)", p, pc)
	row("jemalloc, no profiling", j, jc)
	row("jemalloc prof:true,lg_prof_sample:19" (on ? "" : " (NOT ACTIVE)") sprintf(" (wall %.2fx of plain jemalloc)", jp / j), jp, jpc)
	row("heaptrack (1 run)", h, hc)
}'
echo "(mt-capture -- true, alone: $startup s wall)"

done

[ "${MT_BENCH_PART:-all}" = sample ] && exit 0

# Trace mode: the first malloc+free rate with lost samples (3 samples per pair:
# malloc entry with an 8 KiB stack, its return, free).
echo
echo "| trace mode ring | highest achieved pairs/s without loss | first loss: asked pairs/s, achieved, lost of sent |"
echo "|---|---|---|"
for pages in 512 8192; do
	ok=- first=-
	for rate in 5000 10000 20000 50000 100000 200000 500000; do
		count=$((rate / 2 < 5000 ? 5000 : rate / 2))
		sleep 4	# the previous capture's uprobe teardown (see above)
		# The probes slow the program down: what counts is the rate it
		# achieved, from its own run time.
		"$CAP" --mode trace --mmap-pages $pages -o "$T/t.data" -- /usr/bin/time -f %e -o "$T/ft" \
			"$MT_FIXTURES/capture_rate" $rate $count 2>"$T/t.err" >/dev/null
		lost=$(sed -n 's/^mt-capture: [0-9]* samples, \([0-9]*\) lost.*/\1/p' "$T/t.err")
		got=$(awk -v n=$count '{ printf "%d", ($1 > 0 ? n / $1 : 0) }' "$T/ft")
		if [ "$lost" = 0 ]; then
			ok=$got
		else
			first="$rate asked, $got achieved, $lost of $((3 * count))"
			break
		fi
	done
	echo "| $pages pages/CPU ($((pages * 4 / 1024)) MiB) | $ok | $first |"
done
