#!/bin/bash
# A capture that no sample point falls on (a short program, or a rate far
# above what it allocates) still has estimates with intervals: the sampler
# gives its rate with its totals (R15 of mt:totals, tagged), mt-unwind
# writes it (rate= on totals lines), and mt-fold reports each thread's
# exact totals inside the interval of zero points, [0, 3.69 x rate], where
# it said OUT (no rate, no interval) before.  Through the sample ring and
# through uprobes.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
PATH=$MT_BUILD/bin:$PATH
for via in ring no-ring; do
	opt=; [ $via = no-ring ] && opt=--no-ring
	"$CAP" $opt --rate 1073741824 --seed 1 -o "$T/s.data" -- "$MT_FIXTURES/capture_alloc" 1 10 \
		>"$T/out" 2>"$T/err" || fail "$via: mt-capture: $(cat "$T/err")"
	mt-unwind -q "$T/s.data" >"$T/u" || fail "$via: mt-unwind"
	! grep -q '^alloc' "$T/u" || fail "$via: a point fell after all (seed 1): $(grep '^alloc' "$T/u")"
	n=$(grep -c '^totals.*	scope=.* rate=1073741824	' "$T/u" || true)
	[ "$n" -ge 3 ] || fail "$via: $n totals lines with the rate: $(grep '^totals' "$T/u")"
	# --wide: every row and sentence on one line, as grep reads them
	mt-fold --report --wide "$T/u" >"$T/r" || fail "$via: mt-fold"
	grep -q 'mode sample, rate 1.00 GiB' "$T/r" || fail "$via: header: $(head -n 1 "$T/r")"
	# (the total's interval stops at the exact total: 986 KiB)
	grep -q '^total alloc_bytes: 0 B \[0 B, 986 KiB\]' "$T/r" || fail "$via: total: $(grep '^total' "$T/r")"
	! grep -q ' OUT ' "$T/r" || fail "$via: exact totals reported OUT: $(cat "$T/r")"
	w=$(awk '$1 == "worker" { print $2 }' "$T/out")
	grep -Eq "^[0-9]+/$w +capture_allo +1008878 +0 B \[0 B, 3.69 GiB\] +in " "$T/r" ||
		fail "$via: the worker's row: $(cat "$T/r")"
done
echo ok
