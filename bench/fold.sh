#!/bin/bash
# mt-fold throughput: events folded per second, against `sort | uniq -c` (the
# plain way to count stacks) over the same frame lines, in the same run.
# Input: N sample-mode alloc lines (default 1,000,000) as mt-unwind writes
# them, 2000 distinct 9-frame stacks on 4 threads, from a seeded generator.
# Prints one line per contender (best of 5 wall-clock runs) and the ratio.
# make bench runs scripts with sh: this one needs bash (time, pipefail).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
n=${MT_BENCH_FOLD_EVENTS:-1000000}
bin=${MT_BUILD:-build}/bin/mt-fold
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

awk -v n="$n" 'BEGIN {
	srand(3); print "# mt-unwind 1"
	for (i = 0; i < n; i++) {
		s = int(rand() * rand() * 2000)
		printf "alloc\t100/%d\t%d\tbench\tsize=%d ptr=0x%x fn=malloc points=1 rate=524288\t_start;__libc_start_main;main;run_server;handle_request;parse_%d;build_node_%d;xmalloc;malloc end=complete\n", 100 + s % 4, i, 16 + s, 4096 + i * 16, s % 50, s
	}
}' >"$tmp/events.txt"
# The peer gets only the frames: no parsing of the other fields.
cut -f6 "$tmp/events.txt" | sed -n 's/ end=[a-z-]*$//p' >"$tmp/frames.txt"

# best COMMAND...: the shortest wall-clock time of five runs and the CPU time
# (user + sys, all processes of the run) of that run, in seconds: "WALL CPU".
best() {
	b=
	for _ in 1 2 3 4 5; do
		r=$( { TIMEFORMAT='%R %U %S'; time "$@" >/dev/null; } 2>&1 | tail -n 1)
		w=${r%% *}
		if [ -z "$b" ] || awk -v t="$w" -v b="${b%% *}" 'BEGIN { exit !(t < b) }'; then
			b=$(echo "$r" | awk '{ printf "%.3f %.3f", $1, $2 + $3 }')
		fi
	done
	echo "$b"
}
peer() { LC_ALL=C sort "$tmp/frames.txt" | uniq -c; }

# Both count the same stacks: mt-fold --metric samples against uniq -c.
"$bin" --metric samples "$tmp/events.txt" | awk '{ c = $NF; $NF = ""; sub(/ $/, ""); print c, $0 }' | sort >"$tmp/a"
peer | awk '{ c = $1; $1 = ""; sub(/^ /, ""); print c, $0 }' | sort >"$tmp/b"
cmp -s "$tmp/a" "$tmp/b" || { echo "bench/fold.sh: mt-fold and sort|uniq -c disagree" >&2; exit 1; }

tf=$(best "$bin" "$tmp/events.txt")
tr=$(best "$bin" --report "$tmp/events.txt")
ti=$(best "$bin" --metric inuse_bytes "$tmp/events.txt")
tp=$(best peer)
line() {	# line LABEL "WALL CPU" [NOTE]
	echo "$2" | awk -v l="$1" -v n="$n" -v note="${3:-}" '{
		printf "%-29s %6.3f s wall %6.3f s cpu  %5.2f M events/s (wall)  %5.2f M events/cpu-s %s\n",
			l, $1, $2, n / $1 / 1e6, n / $2 / 1e6, note }'
}
echo "events: $n ($(du -h "$tmp/events.txt" | cut -f1) of mt-unwind text), $(nproc) cores"
line "mt-fold (collapsed)" "$tf"
line "mt-fold --report" "$tr"
line "mt-fold --metric inuse_bytes" "$ti"
line "LC_ALL=C sort | uniq -c" "$tp" "(frame lines only)"
awk -v p="$tp" -v f="$tf" 'BEGIN { split(p, a, " "); split(f, b, " ")
	printf "ratio mt-fold / sort|uniq -c: %.2fx the events/s (wall), %.2fx per cpu-second\n", a[1] / b[1], a[2] / b[2] }'
