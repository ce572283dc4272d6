#!/bin/bash
# mt-encode against zstd on the same raw perf streams, in one run:
#   malloc   uprobe on libc malloc, DWARF stacks: a tight malloc loop
#   threads  the same probe on 4 threads allocating under recursion
#   python   cpu-clock profile of python3 (a real program), DWARF stacks
# For each stream: size and time of mt-encode (default level, and with
# 32-bit stack hashes) and of zstd -1 and -19 on the raw stream, decode time
# of mt-encode -d and zstd -d, and the size of `perf record -z` (perf's own
# zstd, a second recording of the same workload: compared per sample).
# Times are the best of MT_BENCH_RUNS (default 3) by wall clock; every round
# trip is checked with cmp.
# Prints the tables of docs/BENCHMARKS.md, "## mt-encode", then the python
# stream compressed in two parts by bench/codec_bound.py.
set -eu
: "${MT_BUILD:?}" "${MT_FIXTURES:?}"
ENC=$MT_BUILD/bin/mt-encode
RUNS=${MT_BENCH_RUNS:-3}
T=$(mktemp -d)
LIBC=$(ldd "$MT_FIXTURES/codec_malloc_loop" | awk '/libc.so/ { print $3 }')
EV=mtbench_malloc_$$
cleanup() {
	perf probe -q -d "probe_libc:$EV" >/dev/null 2>&1 || true
	# MT_BENCH_KEEP=DIR keeps the recorded streams for a closer look
	[ -z "${MT_BENCH_KEEP:-}" ] || cp "$T"/*.data "$MT_BENCH_KEEP"/ 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT

[ "$(id -u)" = 0 ] || { echo "bench/codec.sh: needs root (perf probe)" >&2; exit 3; }
perf probe -q -x "$LIBC" -a "$EV=malloc" >/dev/null 2>"$T/probe.err" ||
	{ echo "bench/codec.sh: perf probe failed: $(cat "$T/probe.err")" >&2; exit 3; }

# best wall and its user+sys seconds of RUNS runs: best_of OUT CMD...
# Timed by perf stat, to the millisecond (/usr/bin/time's 10 ms steps were
# as coarse as a whole decode of the python stream); the shell truncates the
# output file (the run before's) before the clock starts.
best_of() {
	local out=$1 best= w u s
	shift
	for _ in $(seq "$RUNS"); do
		perf stat -o "$T/time" -- "$@" > "$out" 2>>"$T/log" ||
			{ echo "bench: '$*' failed" >&2; tail -5 "$T/log" >&2; exit 1; }
		read -r w u s < <(awk '/seconds time elapsed/ { w = $1 } /seconds user/ { u = $1 }
			/seconds sys/ { s = $1 } END { printf "%.3f %s %s\n", w, u, s }' "$T/time")
		if [ -z "$best" ] || awk -v a="$w" -v b="${best%% *}" 'BEGIN { exit !(a < b) }'; then
			best="$w $(awk -v u="$u" -v s="$s" 'BEGIN { printf "%.2f", u + s }')"
		fi
	done
	echo "$best"
}

record() {	# NAME PERF-ARGS... -- COMMAND: NAME.data and NAME-z.data
	local name=$1
	shift
	perf record -q --call-graph dwarf -o "$T/$name.data" "$@" >/dev/null 2>>"$T/log"
	perf record -q -z --call-graph dwarf -o "$T/$name-z.data" "$@" >/dev/null 2>>"$T/log"
}

PY='import json
d = [{"k%d" % i: [i, str(i), {"x": i * 0.5}]} for i in range(2000)]
for _ in range(300):
    s = json.dumps(d)
    d = json.loads(s)
    sorted(d, key=lambda e: list(e)[0])'
record malloc -e "probe_libc:$EV" -- "$MT_FIXTURES/codec_malloc_loop" 20000
record threads -e "probe_libc:$EV" -- "$MT_FIXTURES/codec_threads" 4 20000
record python -e cpu-clock -F 4000 -- /usr/bin/python3 -c "$PY"

samples() { perf script -i "$1" -F tid 2>/dev/null | wc -l; }
mb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e6 }'; }

echo "streams: perf record --call-graph dwarf (8 KiB stacks); best of $RUNS runs; $(nproc) cores"
printf '\n| stream | samples | raw MB | tool | size MB | ratio | B/sample | enc s (cpu) | dec s (cpu) | dec us/record |\n'
printf '|---|---|---|---|---|---|---|---|---|---|\n'
for s in malloc threads python; do
	in=$T/$s.data
	n=$(samples "$in")
	nz=$(samples "$T/$s-z.data")
	recs=$("$ENC" --stats -q "$in" 2>&1 >/dev/null | awk '/^mt-encode: input/ { print $6 }')
	raw=$(stat -c %s "$in")
	row() {	# tool size enc dec
		local ratio bps us
		ratio=$(awk -v a="$raw" -v b="$2" 'BEGIN { printf "%.0fx", a / b }')
		bps=$(awk -v a="$2" -v n="$n" 'BEGIN { printf "%.1f", a / n }')
		us=$(awk -v d="${4%% *}" -v r="$recs" 'BEGIN { if (d == "-") print "-"; else printf "%.2f", d * 1e6 / r }')
		printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$s" "$n" "$(mb "$raw")" \
			"$1" "$(mb "$2")" "$ratio" "$bps" "${3% *} (${3#* })" "${4% *} (${4#* })" "$us"
	}
	for opt in "" "--hash-bits 32"; do
		e=$(best_of "$T/x.mtz" "$ENC" -q $opt "$in")
		d=$(best_of "$T/x.out" "$ENC" -d -q "$T/x.mtz")
		cmp -s "$in" "$T/x.out" ||
			{ echo "bench: mt-encode $opt round trip of $s differs" >&2; exit 1; }
		row "mt-encode${opt:+ $opt}" "$(stat -c %s "$T/x.mtz")" "$e" "$d"
	done
	e=$(best_of "$T/x.mtz" "$ENC" -q --raw "$in")
	row "mt-encode --raw" "$(stat -c %s "$T/x.mtz")" "$e" "- -"
	for l in 1 19; do
		if [ "$l" = 19 ]; then
			e=$(RUNS=1 best_of "$T/x.zst" zstd -q -19 -c "$in")
		else
			e=$(best_of "$T/x.zst" zstd -q -$l -c "$in")
		fi
		d=$(best_of "$T/x.out" zstd -q -d -c "$T/x.zst")
		cmp -s "$in" "$T/x.out" || { echo "bench: zstd round trip of $s differs" >&2; exit 1; }
		row "zstd -$l" "$(stat -c %s "$T/x.zst")" "$e" "$d"
		if [ "$s$l" = python19 ]; then	# for the comparison after the table
			py_n=$n py_z19=$(stat -c %s "$T/x.zst")
		fi
	done
	z=$(stat -c %s "$T/$s-z.data")
	printf '| %s | %s | %s | perf record -z | %s | - | %s | - | - | - |\n' "$s" "$nz" \
		"$(mb "$(stat -c %s "$T/$s-z.data")")" "$(mb "$z")" \
		"$(awk -v a="$z" -v n="$nz" 'BEGIN { printf "%.1f", a / n }')"
done

# What general-purpose compressors reach on the python stream's samples with
# their fields and stacks compressed apart: the size target (half of zstd
# -19 on the whole stream) against the best of them.
half=$(awk -v z="$py_z19" -v n="$py_n" 'BEGIN { printf "%.1f", z / n / 2 }')
printf '\npython, B/sample: the target (half of zstd -19) %s; fields and stacks compressed apart (bench/codec_bound.py):\n' "$half"
/usr/bin/python3 "$(dirname "$0")/codec_bound.py" "$T/python.data"
