#!/bin/bash
# Sample mode: the number of sample points is Poisson(bytes / rate): within
# 5 standard deviations at several rates; --rate 1 gives one point per byte;
# the same --seed gives the same samples.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

for rate in 4096 65536 1048576; do
	"$CAP" --rate $rate --stack-size 256 --mmap-pages 2048 -o "$T/r.data" -- \
		"$MT_FIXTURES/capture_alloc" 2 2000 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
	[ "$(capture_lost "$T/err")" = 0 ] || fail "rate $rate: samples lost: $(cat "$T/err")"
	capture_regs "$T/r.data" >"$T/regs"
	awk -v rate=$rate '
		$2 == "mt:alloc" { pts += $5; if ($6 != rate) bad = "rate register " $6 }
		$2 == "mt:totals" && $3 == 2 { bytes = $4 }
		END {
			if (bad) { print "FAIL: " bad; exit 1 }
			lambda = bytes / rate; sd = sqrt(lambda); z = (pts - lambda) / sd
			printf "rate %d: %d points, expected %.1f +- %.1f (z %.2f)\n", rate, pts, lambda, sd, z
			if (bytes == 0 || z > 5 || z < -5) { print "FAIL: outside 5 sd"; exit 1 }
		}' "$T/regs" || exit 1
done

# --rate 1: every byte is a point, so points add up to the bytes exactly.
"$CAP" --rate 1 --stack-size 64 --mmap-pages 2048 -o "$T/r1.data" -- "$MT_FIXTURES/capture_alloc" 1 100 \
	>/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "rate 1: samples lost"
capture_regs "$T/r1.data" | awk '
	$2 == "mt:alloc" { pts += $5; n++; if ($5 != $3) bad = 1 }
	$2 == "mt:totals" && $3 == 2 { bytes = $4; allocs = $5 }
	END {
		printf "rate 1: %d samples, %d points; process: %d allocs, %d bytes\n", n, pts, allocs, bytes
		if (bad || pts != bytes || n != allocs) { print "FAIL: rate 1 must sample every byte"; exit 1 }
	}' || exit 1

# Same seed, same samples (one worker thread: thread order is fixed).
for i in 1 2; do
	"$CAP" --seed 42 --rate 16384 --stack-size 64 --mmap-pages 1024 -o "$T/seed$i.data" -- \
		"$MT_FIXTURES/capture_alloc" 1 500 >/dev/null 2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
	capture_regs "$T/seed$i.data" | awk '$2 == "mt:alloc" { print $3, $5 }' >"$T/seed$i"
done
[ -s "$T/seed1" ] || fail "no samples with --seed"
cmp -s "$T/seed1" "$T/seed2" || fail "--seed 42 twice gave different samples"
"$CAP" --seed 43 --rate 16384 --stack-size 64 --mmap-pages 1024 -o "$T/seed3.data" -- \
	"$MT_FIXTURES/capture_alloc" 1 500 >/dev/null 2>"$T/err"
capture_regs "$T/seed3.data" | awk '$2 == "mt:alloc" { print $3, $5 }' >"$T/seed3"
! cmp -s "$T/seed1" "$T/seed3" || fail "--seed 43 gave the samples of --seed 42"
echo "ok"
