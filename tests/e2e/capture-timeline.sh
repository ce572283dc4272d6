#!/bin/bash
# Sample mode's timeline: the sampler's mt:tick lines (a tick at start-up
# with nothing live, one every 10 ms from its ticker thread, one in the
# final report from the same counts as the process totals), per process
# (a forked child has its own), through the ring and --no-ring; none but
# the first and last with --no-timeline; seq= on alloc and free lines (a
# free right after its allocation has its seq); the ticker takes none of
# the program's signals.  Fixture: tests/fixtures/capture_timeline.c.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
UNW=$MT_BUILD/bin/mt-unwind
FX=$MT_FIXTURES/capture_timeline
MiB=1048576

capture() {	# NAME MT-CAPTURE-ARGS... -- COMMAND...: $T/NAME.data, $T/NAME.txt
	local name=$1
	shift
	"$CAP" -o "$T/$name.data" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
		fail "$name: mt-capture exited $?: $(cat "$T/$name.err")"
	[ "$(capture_lost "$T/$name.err")" = 0 ] || fail "$name: samples lost: $(cat "$T/$name.err")"
	"$UNW" "$T/$name.data" >"$T/$name.txt" 2>"$T/$name.uerr" ||
		fail "$name: mt-unwind exited $?: $(cat "$T/$name.uerr")"
	! grep -q '^lost' "$T/$name.txt" || fail "$name: lost lines: $(grep '^lost' "$T/$name.txt")"
}

# Per process of TXT: "pid ticks" lines, after checking what holds for any
# timeline: ticks in time order, the first with nothing live or allocated,
# peak >= every tick's live, the last tick's counts equal to the process
# totals' (alloc_bytes, allocs, frees exactly; live = alloc_block_bytes -
# freed_bytes; peak = peak_bytes within peak_error), rss on every tick and
# above live when RSS_ABOVE is 1.  Also writes $T/gaps: "pid ns" per pair of
# consecutive periodic ticks (the final tick's gap left out: it comes when
# the program ends).
timeline() {	# TXT RSS_ABOVE
	awk -F'\t' -v rss_above="$2" -v gaps="$T/gaps" '
	function kv(s, k) {
		if (match(" " s " ", " " k "=-?[0-9]+ "))
			return substr(" " s " ", RSTART + length(k) + 2, RLENGTH - length(k) - 3) + 0
		return ""
	}
	function bad(m) { print "FAIL: " m ": " $0; err = 1 }
	$1 == "tick" {
		split($2, id, "/")
		p = id[1]
		if (id[2] != p) bad("tick not PID/PID")
		if (n[p] && $3 < t[p]) bad("tick before the previous one")
		live = kv($5, "live")
		if (!n[p] && (live != 0 || kv($5, "allocs") != 0 || kv($5, "alloc_bytes") != 0))
			bad("first tick with something live or allocated")
		if (kv($5, "peak") < live) bad("peak below live")
		if (kv($5, "rss") == "") bad("no rss")
		else if (rss_above && kv($5, "rss") <= live) bad("rss not above live")
		if (kv($5, "period") != 10000000) bad("period not 10 ms")
		if (n[p] >= 2) print p, prev_gap[p] >> gaps
		if (n[p]) prev_gap[p] = $3 - t[p]
		n[p]++
		t[p] = $3
		last[p] = $5
		next
	}
	$1 == "totals" && $5 ~ /^scope=process/ {
		split($2, id, "/")
		tot[id[1]] = $5
	}
	END {
		for (p in n) {
			l = last[p]
			if (!(p in tot)) { print "FAIL: no process totals for " p; err = 1; continue }
			s = tot[p]
			for (k = 1; k <= 3; k++) {
				key = k == 1 ? "alloc_bytes" : k == 2 ? "allocs" : "frees"
				if (kv(l, key) != kv(s, key)) {
					print "FAIL: " p ": last tick " key "=" kv(l, key) ", totals " kv(s, key)
					err = 1
				}
			}
			if (kv(l, "live") != kv(l, "alloc_block_bytes") - kv(s, "freed_bytes")) {
				print "FAIL: " p ": last tick live " kv(l, "live") " != alloc_block_bytes " \
					kv(l, "alloc_block_bytes") " - freed_bytes " kv(s, "freed_bytes"); err = 1
			}
			d = kv(l, "peak") - kv(s, "peak_bytes")
			if (d < 0) d = -d
			if (d > kv(s, "peak_error")) {
				print "FAIL: " p ": last tick peak " kv(l, "peak") ", totals peak_bytes " \
					kv(s, "peak_bytes") " (error " kv(s, "peak_error") ")"; err = 1
			}
			print p, n[p]
		}
		exit err
	}' "$1"
}

# The bulk of the periodic gaps of $T/gaps within [5 ms, 50 ms] (a loaded
# machine may stretch a few).
gaps_ok() {	# LABEL
	awk -v label="$1" '{ all++; if ($2 >= 5000000 && $2 <= 50000000) ok++ }
		END { if (all < 4 || ok < 0.8 * all) {
			print "FAIL: " label ": " ok + 0 " of " all + 0 " tick gaps in [5, 50] ms"; exit 1 } }' "$T/gaps"
}

# ---- phases through the ring, then --no-ring
for how in ring no-ring; do
	rm -f "$T/gaps"
	if [ $how = ring ]; then capture $how -- "$FX" phases; else capture $how --no-ring -- "$FX" phases; fi
	timeline "$T/$how.txt" 1 >"$T/$how.ticks" || fail "$how: $(cat "$T/$how.ticks")"
	[ "$(wc -l <"$T/$how.ticks")" = 1 ] || fail "$how: one process expected: $(cat "$T/$how.ticks")"
	read -r _ nt <"$T/$how.ticks"
	# 80 + 40 ms of sleep and the churn: a dozen ticks or more
	[ "$nt" -ge 10 ] || fail "$how: $nt ticks in a run of 120 ms or more"
	gaps_ok $how
	# The held phase: 64 x 256 KiB live together; then 1,024 x 4 KiB to the end.
	held=$(awk -F'\t' -v m=$((16 * MiB)) '$1 == "tick" { match($5, /live=[0-9]+/)
		if (substr($5, RSTART + 5, RLENGTH - 5) + 0 >= m) n++ } END { print n + 0 }' "$T/$how.txt")
	[ "$held" -ge 3 ] || fail "$how: $held ticks with 16 MiB live during 80 ms that hold it"
	last=$(grep '^tick' "$T/$how.txt" | tail -1)
	live=$(echo "$last" | sed 's/.*live=\([0-9]*\).*/\1/')
	[ "$live" -ge $((4 * MiB)) ] && [ "$live" -le $((4 * MiB + 1024 * 32 + 4 * MiB / 8)) ] ||
		fail "$how: last tick live $live, the fixture keeps 1,024 x 4 KiB"
	peak=$(echo "$last" | sed 's/.* peak=\([0-9]*\).*/\1/')
	err=$(echo "$last" | sed 's/.* peak_error=\([0-9]*\).*/\1/')
	[ "$peak" -ge $((16 * MiB - err)) ] && [ "$peak" -le $((17 * MiB)) ] ||
		fail "$how: peak $peak (error $err), the fixture holds 16 MiB at once"
	pt=$(echo "$last" | sed 's/.* peak_time=\([0-9]*\).*/\1/')
	first_t=$(grep '^tick' "$T/$how.txt" | head -1 | cut -f3)
	[ "$pt" -gt "$first_t" ] && [ "$pt" -le "$(echo "$last" | cut -f3)" ] ||
		fail "$how: peak_time $pt outside the ticks' times"
	# perf script, the independent decoder, reads the same registers:
	# the final tick (DI live, SI alloc_bytes, DX allocs, R8 block bytes)
	# and the process totals (SI, DX, R11 block bytes) agree.
	capture_regs "$T/$how.data" >"$T/$how.regs"
	grep -q ' mt:tick ' "$T/$how.regs" || fail "$how: perf script shows no mt:tick sample"
	set -- $(grep ' mt:tick ' "$T/$how.regs" | tail -1)
	tick_si=$4 tick_dx=$5 tick_r8=$7
	set -- $(awk '$2 == "mt:totals" && $3 == 2' "$T/$how.regs")
	[ "$tick_si $tick_dx $tick_r8" = "$4 $5 ${11}" ] ||
		fail "$how: perf script: last tick $tick_si $tick_dx $tick_r8, totals $4 $5 ${11}"
done

# ---- fork: the child's own timeline, starting from nothing live
rm -f "$T/gaps"
capture fork -- "$FX" fork
timeline "$T/fork.txt" 1 >"$T/fork.ticks" || fail "fork: $(cat "$T/fork.ticks")"
[ "$(wc -l <"$T/fork.ticks")" = 2 ] || fail "fork: two processes expected: $(cat "$T/fork.ticks")"
while read -r p nt; do
	[ "$nt" -ge 4 ] || fail "fork: process $p has $nt ticks in 60 ms or more"
done <"$T/fork.ticks"
gaps_ok fork

# ---- --no-timeline: the start-up and final ticks only, per process
for fx in phases fork; do
	capture nt-$fx --no-timeline -- "$FX" $fx
	timeline "$T/nt-$fx.txt" 1 >"$T/nt-$fx.ticks" || fail "--no-timeline $fx: $(cat "$T/nt-$fx.ticks")"
	want=$([ $fx = fork ] && echo 2 || echo 1)
	[ "$(wc -l <"$T/nt-$fx.ticks")" = "$want" ] || fail "--no-timeline $fx: $(cat "$T/nt-$fx.ticks")"
	while read -r p nt; do
		[ "$nt" = 2 ] || fail "--no-timeline $fx: process $p has $nt ticks, not 2"
	done <"$T/nt-$fx.ticks"
done

# ---- seq: with --rate 1 every allocation is a sample.  The churn's frees
# come right after their allocations (same seq); of the 1,000 blocks held
# together only the last is freed with no allocation after it; a block
# reallocated at once is released by the realloc with its malloc's seq.
# (--no-ring: 2,000 stack dumps at once, the kernel rings must hold them)
capture temp --rate 1 --stack-size 2048 --mmap-pages 4096 -- "$FX" temp
awk -F'\t' '
	function kv(s, k) {
		if (match(" " s " ", " " k "=[0-9a-fx]+ "))
			return substr(" " s " ", RSTART + length(k) + 2, RLENGTH - length(k) - 3)
		return ""
	}
	$1 == "alloc" || $1 == "free" {
		if (kv($5, "seq") == "") { print "FAIL: no seq: " $0; bad = 1 }
	}
	$1 == "alloc" {
		s = kv($5, "seq") + 0
		if (s <= lastseq[$2]) { print "FAIL: seq not increasing: " $0; bad = 1 }
		lastseq[$2] = s
		if (kv($5, "size") == 100) {
			seq[$2 kv($5, "ptr")] = s
			site[$2 kv($5, "ptr")] = $6 ~ /;churn;/ ? "churn" : $6 ~ /;grow[.;]/ ? "grow" : "held"
		}
	}
	$1 == "free" && ($2 kv($5, "ptr")) in seq {
		k = $2 kv($5, "ptr")
		n[site[k] (kv($5, "seq") + 0 == seq[k] ? " same" : " later")]++
		delete seq[k]
	}
	END {
		if (bad) exit 1
		printf "churn same %d later %d, held same %d later %d, grow same %d later %d\n",
			n["churn same"], n["churn later"], n["held same"], n["held later"],
			n["grow same"], n["grow later"]
	}' "$T/temp.txt" >"$T/seq" || fail "seq: $(cat "$T/seq")"
want="churn same 1000 later 0, held same 1 later 999, grow same 1000 later 0"
[ "$(cat "$T/seq")" = "$want" ] || fail "seq: $(cat "$T/seq"), expected $want"

# ---- signals sent to the process while the main thread blocks them stay
# pending for it (the ticker blocks them all) and its handlers run there.
capture signals -- "$FX" signals
[ "$(cat "$T/signals.out")" = "handled 10 on main
handled 2 on main" ] || fail "signals: $(cat "$T/signals.out" "$T/signals.err")"
timeline "$T/signals.txt" 1 >"$T/signals.ticks" || fail "signals: $(cat "$T/signals.ticks")"

# ---- the ticker is a thread named mt-tick; MT_SAMPLER_TICK=0 has none
for tick in 1 0; do
	MT_SAMPLER_TICK=$tick LD_PRELOAD=$MT_BUILD/libmt-sampler.so sleep 0.5 &
	pid=$!
	sleep 0.2
	comms=$(cat /proc/$pid/task/*/comm | sort | tr '\n' ' ')
	wait $pid
	want=$([ $tick = 1 ] && echo "mt-tick sleep " || echo "sleep ")
	[ "$comms" = "$want" ] || fail "MT_SAMPLER_TICK=$tick: threads '$comms', expected '$want'"
done
echo "ok: ticks per process (ring, --no-ring, fork, --no-timeline), seq, signals"
