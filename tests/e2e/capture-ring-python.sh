#!/bin/bash
# A real program: python3 building and searching a large JSON text, captured
# twice with one --seed, through the sample ring and through uprobes
# (--no-ring). Its allocations are the same each time (PYTHONHASHSEED=0),
# so the samples must be too: the same allocations with the same frames,
# deep interpreter stacks included.  Nearly: the two modes give the program
# environments of different lengths (the sampler's path, the ring's name,
# mt-capture's pid), and where mmap puts pymalloc's arenas varies, which
# moves the sample points by a few bytes: now and then a point at the edge
# of an allocation falls in its neighbour (with `env -i`, 3 lines of ~2000
# in every run; with a full environment, in none of 3 runs).  So up to 1%
# of the samples may differ.  Pointers and seq= (the thread's count of
# allocations so far) are left out of the comparison: the environment's
# length moves both (python3 may be a pyenv shell shim, whose bash
# allocates by the environment).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf
command -v python3 >/dev/null || { echo "python3 not installed"; exit 77; }

cat >"$T/work.py" <<'PY'
import json, re
d = {str(i): [i, i * 2, str(i)] for i in range(200000)}
s = json.dumps(d)
print(len(re.findall(r'"\d+"', s)))
PY
for how in ring no-ring; do
	opt=; [ $how = no-ring ] && opt=--no-ring
	PYTHONHASHSEED=0 "$CAP" $opt --rate 262144 --seed 5 --mmap-pages 4096 -o "$T/$how.data" -- \
		python3 "$T/work.py" >/dev/null 2>"$T/$how.err" || fail "mt-capture $opt: $(cat "$T/$how.err")"
	[ "$(capture_lost "$T/$how.err")" = 0 ] || fail "$how: samples lost: $(cat "$T/$how.err")"
	mt-unwind -o "$T/$how.txt" "$T/$how.data" 2>"$T/$how.uw" || fail "mt-unwind: $(cat "$T/$how.uw")"
	grep '^alloc' "$T/$how.txt" | cut -f1,4- | sed 's/ptr=0x[0-9a-f]* //; s/ seq=[0-9]*//' | sort >"$T/$how.cmp"
done
n=$(wc -l <"$T/ring.cmp")
[ "$n" -gt 500 ] || fail "only $n samples"
# a sample that moved is a line on each side: count the larger side
only_ring=$(diff "$T/ring.cmp" "$T/no-ring.cmp" | grep -c '^<' || true)
only_uprobes=$(diff "$T/ring.cmp" "$T/no-ring.cmp" | grep -c '^>' || true)
differ=$((only_ring > only_uprobes ? only_ring : only_uprobes))
[ "$differ" -le $((n / 100)) ] ||
	fail "$differ of $n ring and uprobe samples differ: $(diff "$T/ring.cmp" "$T/no-ring.cmp" | head -4)"
deep=$(awk -F'\t' '{ print gsub(/;/, ";", $NF) + 1 }' "$T/ring.cmp" | sort -n | tail -1)
echo "ok: $((n - differ)) of $n mt:alloc samples of python3 identical through the ring and the uprobes (up to $deep frames)"
