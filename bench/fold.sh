#!/bin/bash
# mt-fold throughput: events folded per second, against `sort | uniq -c` (the
# plain way to count stacks) over the same frame lines, in the same run.
# Input: N sample-mode alloc lines (default 1,000,000) as mt-unwind writes
# them, 2000 distinct 9-frame stacks on 4 threads, from a seeded generator.
# Prints one line per contender (best of 3 wall-clock runs) and the ratio.
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

now() { date +%s.%N; }
best() {	# best COMMAND...: the shortest of three wall-clock runs, seconds
	b=
	for _ in 1 2 3; do
		t0=$(now)
		"$@" >/dev/null
		t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.6f", b - a }')
		if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN { exit !(t < b) }'; then b=$t; fi
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
rate() { awk -v n="$n" -v t="$1" 'BEGIN { printf "%.2f M events/s", n / t / 1e6 }'; }
echo "events: $n ($(du -h "$tmp/events.txt" | cut -f1) of mt-unwind text), $(nproc) cores"
printf 'mt-fold (collapsed)        %6.3f s  %s\n' "$tf" "$(rate "$tf")"
printf 'mt-fold --report           %6.3f s  %s\n' "$tr" "$(rate "$tr")"
printf 'mt-fold --metric inuse     %6.3f s  %s\n' "$ti" "$(rate "$ti")"
printf 'LC_ALL=C sort | uniq -c    %6.3f s  %s  (frame lines only)\n' "$tp" "$(rate "$tp")"
awk -v p="$tp" -v f="$tf" 'BEGIN { printf "ratio: mt-fold folds %.1fx as many events/s as sort|uniq -c\n", p / f }'
