#!/bin/bash
# Sample mode: workers that make the same allocations sample them
# independently, whether they are threads, forked children, exec'd or
# posix_spawn'ed programs, with and without --seed; a seeded run samples
# the same allocations again.  (A forked child that kept its parent's
# generator sampled exactly what the parent and its siblings sampled: n
# workers gave one worker's sample n times, and intervals too narrow.)
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

N=4
COUNT=5000	# sizes 1000..5999, each once per worker: ~270 points at --rate 65536

# "TID SIZE" of each sampled allocation of the workers (sizes 1000..5999).
sampled() {
	capture_regs "$1" | awk '$2 == "mt:alloc" && $3 >= 1000 && $3 < 6000 { print $1, $3 }'
}

# Each worker's sampled sizes, one line per worker, in tid order.
by_worker() {
	sampled "$1" | sort -n -k1,1 -k2,2 | awk '
		$1 != t { if (t != "") print s; t = $1; s = "" }
		{ s = s " " $2 }
		END { if (t != "") print s }'
}

for mode in thread fork exec spawn; do
	for seed in "" "--seed 9"; do
		what="$mode${seed:+, $seed}"
		"$CAP" --rate 65536 --stack-size 64 $seed -o "$T/c.data" -- \
			"$MT_FIXTURES/capture_clones" $mode $N $COUNT 2>"$T/err" ||
			fail "$what: mt-capture: $(cat "$T/err")"
		[ "$(capture_lost "$T/err")" = 0 ] || fail "$what: samples lost"
		by_worker "$T/c.data" >"$T/w"
		[ "$(wc -l <"$T/w")" = $N ] || fail "$what: expected $N workers: $(cut -c1-80 "$T/w")"
		# Independent workers share about 6% of their sampled
		# allocations (sum of p^2 over sizes / sum of p); one generator
		# shared by all gives 100%.
		awk -v what="$what" '
			{ n[NR] = split($0, f, " "); for (i = 1; i <= n[NR]; i++) has[NR, f[i]] = 1; line[NR] = $0 }
			END {
				for (a = 1; a <= NR; a++) {
					if (n[a] < 150) { printf "FAIL: %s: worker %d sampled %d allocations, expected ~270\n", what, a, n[a]; bad = 1 }
					for (b = a + 1; b <= NR; b++) {
						k = split(line[b], f, " "); common = 0
						for (i = 1; i <= k; i++) common += (a, f[i]) in has
						if (common > 0.3 * (n[a] < k ? n[a] : k)) {
							printf "FAIL: %s: workers %d and %d share %d of %d and %d sampled allocations\n", what, a, b, common, n[a], k; bad = 1
						}
					}
				}
				exit bad
			}' "$T/w" >&2 || exit 1
		cp "$T/w" "$T/w.$mode${seed:+.seeded}"
	done
done

# The same seed, the same samples (thread: which thread draws first is a
# race; spawn: posix_spawn'ed programs mix in their pid).
for mode in fork exec; do
	"$CAP" --rate 65536 --stack-size 64 --seed 9 -o "$T/again.data" -- \
		"$MT_FIXTURES/capture_clones" $mode $N $COUNT 2>"$T/err" || fail "$mode again: $(cat "$T/err")"
	by_worker "$T/again.data" >"$T/w"
	cmp -s "$T/w" "$T/w.$mode.seeded" || fail "$mode: --seed 9 twice sampled different allocations"
done
echo "ok: threads, forked, exec'd and spawned workers sample independently; --seed repeats"
