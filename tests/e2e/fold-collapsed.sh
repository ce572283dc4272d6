#!/bin/bash
# mt-fold's collapsed output on generated mt-unwind text: FlameGraph's format,
# exact trace-mode sums, prefixes, and merging N files = folding their
# concatenation, in any order.
set -euo pipefail
. "$MT_SRC/tests/e2e/fold_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# A seeded sample-mode capture: 8 MiB in 32 B objects, 4 MiB in 4 KiB, 1 MiB in 1 MiB.
gen_sample 11 small:8388608:32 page:4194304:4096 huge:1048576:1048576 >"$tmp/s.txt"
mt-fold "$tmp/s.txt" >"$tmp/s.folded"

# FlameGraph: "frame;...;frame COUNT", root first, count a positive integer,
# no other column, no empty frame.
awk '{
	if (NF < 2 || $NF !~ /^[1-9][0-9]*$/) { print "bad count: " $0; exit 1 }
	stack = substr($0, 1, length($0) - length($NF) - 1)
	if (stack !~ /^_start;main;/ || stack ~ /;;|;$/) { print "bad stack: " $0; exit 1 }
}' "$tmp/s.folded"
[ "$(wc -l <"$tmp/s.folded")" -eq 3 ]
# Sample mode: each line is its points times the rate.
points=$(awk -F'\t' '/^alloc/ && $6 ~ /;small;/ { split($5, w, " "); for (i in w) if (w[i] ~ /^points=/) p += substr(w[i], 8) } END { print p }' "$tmp/s.txt")
grep -qx "_start;main;small;malloc $((points * 524288))" "$tmp/s.folded"
# 1 MiB allocations always cover at least one point: all 1 MiB is seen.
huge=$(awk '/;huge;/ { print $NF }' "$tmp/s.folded")
within 524288 "$huge" 4194304

# Merge: split in three (each part with its header), fold separately, in
# reverse order, and concatenated: the same output byte for byte.
n=$(wc -l <"$tmp/s.txt")
sed -n "2,$((n / 3))p" "$tmp/s.txt" >"$tmp/a.txt"
{ echo '# mt-unwind 1'; sed -n "$((n / 3 + 1)),$((2 * n / 3))p" "$tmp/s.txt"; } >"$tmp/b.txt"
{ echo '# mt-unwind 1'; sed -n "$((2 * n / 3 + 1)),\$p" "$tmp/s.txt"; } >"$tmp/c.txt"
for m in alloc_bytes alloc_objects inuse_bytes samples; do
	mt-fold --metric $m "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" >"$tmp/abc"
	mt-fold --metric $m "$tmp/c.txt" - "$tmp/a.txt" <"$tmp/b.txt" >"$tmp/cba"
	cat "$tmp/a.txt" "$tmp/b.txt" "$tmp/c.txt" | mt-fold --metric $m >"$tmp/cat"
	cmp "$tmp/abc" "$tmp/cat"
	cmp "$tmp/cba" "$tmp/cat"
	[ -s "$tmp/cat" ]
done

# Trace mode records every call: sums exact to the byte (reasoned by hand:
# work allocates 100 + 28 bytes and frees the 100; main 7 bytes, live).
cat >"$tmp/t.txt" <<'T'
# mt-unwind 1
alloc	9/9	10	job	size=100 ptr=0xa0 fn=malloc every=1	_start;main;work;malloc end=complete
alloc	9/10	11	job;x	size=28 ptr=0xb0 fn=calloc every=1	_start;main;work;calloc end=complete
alloc	9/9	12	job	size=7 ptr=0xc0 fn=malloc every=1	_start;main;malloc end=complete
free	9/9	13	job	ptr=0xa0 every=1	 end=none
T
mt-fold "$tmp/t.txt" >"$tmp/t.out"
printf '_start;main;malloc 7\n_start;main;work;calloc 28\n_start;main;work;malloc 100\n' | cmp - "$tmp/t.out"
mt-fold --metric inuse_bytes "$tmp/t.txt" >"$tmp/t.out"
printf '_start;main;malloc 7\n_start;main;work;calloc 28\n' | cmp - "$tmp/t.out"
mt-fold --metric alloc_objects --comm --pid --tid "$tmp/t.txt" >"$tmp/t.out"
printf 'job:x;pid 9;tid 10;_start;main;work;calloc 1\njob;pid 9;tid 9;_start;main;malloc 1\njob;pid 9;tid 9;_start;main;work;malloc 1\n' | cmp - "$tmp/t.out"
echo "fold-collapsed: ok"
