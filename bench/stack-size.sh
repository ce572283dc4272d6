#!/bin/bash
# What --stack-size costs and what it buys, on real programs (issue 26):
#  - sample mode: the share of stacks mt-unwind walks to their end
#    ("stack ends: complete") at 8192, 16384, 32768 and 65528 bytes, on
#    sqlite3 (200k inserts, 2 indexes, in memory), cc1 (gcc -O2 -g on 5 of
#    mt's own sources) and `git log -p` (400 commits of this tree); and the
#    program's own wall and CPU time (measured inside the capture) at 8192
#    and at 65528 against the program alone, also for bench/capture.sh's
#    capture_bench workloads: interleaved runs, medians;
#  - trace mode (sqlite3, 2000 inserts; sort of 200k lines) and event mode
#    (-e cpu-clock -F 999 on cc1): perf copies the whole size for every
#    sample, so per size the samples lost (LOST records, mt-capture's end
#    line), the stream's size and the stacks complete.
# Prints Markdown tables (docs/BENCHMARKS.md, "### Stack size").
# MT_BENCH_RUNS (5) rounds of the cost part; MT_BENCH_SIZES the sizes;
# MT_BENCH_PART=ends, cost or modes one part; MT_BENCH_COST="tight mixed"
# some programs of the cost part.
set -eu
: "${MT_BUILD:?}"
SRC=${MT_SRC:-$(cd "$(dirname "$0")/.." && pwd)}
CAP=$MT_BUILD/bin/mt-capture
UNW=$MT_BUILD/bin/mt-unwind
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
RUNS=${MT_BENCH_RUNS:-5}
SIZES=${MT_BENCH_SIZES:-"8192 16384 32768 65528"}
for tool in sqlite3 gcc sort; do
	command -v $tool >/dev/null || { echo "bench/stack-size.sh: needs $tool" >&2; exit 1; }
done

# The workloads' inputs (the same every run: a fixed seed).
python3 - "$T" <<'EOF'
import random, sys
d = sys.argv[1]
r = random.Random(26)
def sql(name, n):
    with open(f"{d}/{name}", "w") as f:
        f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v INTEGER, w REAL);\nBEGIN;\n")
        for _ in range(n):
            f.write("INSERT INTO t(name, v, w) VALUES('%s', %d, %f);\n" % (
                "".join(r.choice("abcdefghij") for _ in range(12)), r.randrange(10**9), r.random()))
        f.write("COMMIT;\nCREATE INDEX tn ON t(name);\nCREATE INDEX tv ON t(v, w);\n")
sql("big.sql", 200000)
sql("small.sql", 2000)
with open(f"{d}/sort.txt", "w") as f:
    for _ in range(200000):
        f.write("%08x %s\n" % (r.getrandbits(32), r.random()))
EOF
CC1_FILES="$SRC/symbolize/events.c $SRC/symbolize/module.c $SRC/codec/mtz_delta.c $SRC/codec/perf_reader.c $SRC/codec/mtz_reader.c"
W_sqlite3="sqlite3 :memory: .read\ $T/big.sql"
W_cc1="gcc -std=gnu11 -D_GNU_SOURCE -O2 -g -I$SRC -c $CC1_FILES"
W_git="git -C $SRC log -p -n 400"
W_tsqlite3="sqlite3 :memory: .read\ $T/small.sql"
W_sort="sort -S 64M $T/sort.txt"
names="sqlite3 cc1"
git -C "$SRC" rev-parse HEAD >/dev/null 2>&1 && names="$names git"
argv() {	# NAME: its command line into the array A
	local v=W_$1
	eval "A=(${!v})"
}

# "complete% cut%" of FILE's stacks: complete, and ending where the dump
# ends, as shares of the stacks walked (all but "none").
ends() {
	"$UNW" -o /dev/null "$1" 2>"$T/u.err" || true
	awk '/stack ends:/ {
		for (i = 4; i < NF; i += 2) { n[$i] = $(i + 1); if ($i != "none") w += $(i + 1) }
		printf "%.1f %.1f\n", w ? 100 * n["complete"] / w : 0, w ? 100 * n["end-of-dump"] / w : 0
	}' "$T/u.err"
}
# "samples lost bytes" of mt-capture's end line in FILE
capline() { sed -n 's/^mt-capture: \([0-9]*\) samples, \([0-9]*\) lost, \([0-9]*\) bytes.*/\1 \2 \3/p' "$1" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

echo "tree at $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo '?'), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(cut -d' ' -f1-3 /proc/loadavg), $RUNS runs"
part() { [ "${MT_BENCH_PART:-$1}" = "$1" ]; }
cd "$T"
if part ends; then
echo
echo "Sample mode (default --rate), stacks complete (cut where the dump ends):"
echo
printf '| program |'; for s in $SIZES; do printf ' %s |' "$s"; done; echo
printf '|---|'; for s in $SIZES; do printf -- '---|'; done; echo
for n in $names; do
	printf '| %s |' "$n"
	for s in $SIZES; do
		rm -f "$T/s.data"
		argv "$n"
		"$CAP" --mode sample --stack-size "$s" -o "$T/s.data" -- "${A[@]}" >/dev/null 2>"$T/c.err" ||
			{ echo "bench: capture of $n failed: $(tail -3 "$T/c.err")" >&2; exit 1; }
		set -- $(ends "$T/s.data") ? ?
		printf ' %s%% (%s%%) |' "$1" "$2"
	done
	echo
done
fi

# The program's own time: inside the capture (bash's time around it), and
# alone, in turns; also capture_bench's "tight" and "mixed" workloads
# (bench/capture.sh), whose threads hold 32 KiB of frames: a 65528 dump
# copies 4 times 8192's.
if part cost; then
cost_names=$names
if [ -n "${MT_FIXTURES:-}" ] && [ -x "$MT_FIXTURES/capture_bench" ]; then
	W_tight="$MT_FIXTURES/capture_bench 4 8000000 0"
	W_mixed="$MT_FIXTURES/capture_bench 4 4000000 2"
	cost_names="$cost_names tight mixed"
fi
# MT_BENCH_COST="NAME ...": those programs only
cost_names=${MT_BENCH_COST:-$cost_names}
echo
echo "Sample mode cost: the program's own wall and CPU time (user + system) inside the capture, median of $RUNS, and ratios to the program alone:"
echo
echo "| program | alone: wall, cpu | --stack-size 8192: wall, cpu | --stack-size 65528: wall, cpu |"
echo "|---|---|---|---|"
TIMEFORMAT='%3R %3U %3S'
for n in $cost_names; do
	rm -f "$T/t.base" "$T/t.8192" "$T/t.65528"
	argv "$n"
	for i in $(seq "$RUNS"); do
		{ time "${A[@]}" >/dev/null 2>&1; } 2>>"$T/t.base"
		for s in 8192 65528; do
			# A new output file each time (bench/capture.sh says why).
			rm -f "$T/s.data"
			"$CAP" --stack-size "$s" -o "$T/s.data" -- bash -c \
				'TIMEFORMAT="%3R %3U %3S"; { time "$@" >/dev/null 2>&1; } 2>>"$0"' "$T/t.$s" "${A[@]}" 2>/dev/null
		done
	done
	for f in base 8192 65528; do
		awk '{ print $1 }' "$T/t.$f" | median >"$T/w.$f"
		awk '{ print $2 + $3 }' "$T/t.$f" | median >"$T/c.$f"
	done
	awk -v n="$n" 'FNR == 1 { v[++k] = $1 } END {
		printf "| %s | %.3f s, %.3f s | %.3f s (%.3f), %.3f s (%.3f) | %.3f s (%.3f), %.3f s (%.3f) |\n",
			n, v[1], v[2], v[3], v[3] / v[1], v[4], v[4] / v[2], v[5], v[5] / v[1], v[6], v[6] / v[2] }' \
		"$T/w.base" "$T/c.base" "$T/w.8192" "$T/c.8192" "$T/w.65528" "$T/c.65528"
done
fi

# Trace and event modes: one capture per size.
part modes || exit 0
echo
echo "Trace and event modes (default --mmap-pages 512): samples lost, stream size, stacks complete (cut):"
echo
echo "| mode, program | --stack-size | samples | lost | stream | complete (cut) |"
echo "|---|---|---|---|---|---|"
for m in "trace tsqlite3" "trace sort" "event cc1"; do
	set -- $m
	mode=$1 n=$2
	args="--mode trace"
	[ "$mode" = event ] && args="-e cpu-clock -F 999"
	for s in $SIZES; do
		rm -f "$T/s.data"
		argv "$n"
		"$CAP" $args --stack-size "$s" -o "$T/s.data" -- "${A[@]}" >/dev/null 2>"$T/c.err" || true
		set -- $(capline "$T/c.err") 0 0 0
		smp=$1 lost=$2 bytes=$3
		set -- $(ends "$T/s.data") ? ?
		awk -v m="$mode, ${n#t}" -v s="$s" -v smp="$smp" -v l="$lost" -v b="$bytes" -v c="$1" -v x="$2" 'BEGIN {
			printf "| %s | %s | %d | %d (%.2f%%) | %.1f MB | %s%% (%s%%) |\n",
				m, s, smp, l, smp + l ? 100 * l / (smp + l) : 0, b / 1e6, c, x }'
	done
done
