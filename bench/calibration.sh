#!/bin/bash
# Calibration of mt's 95% intervals against heaptrack, on two real programs
# we did not write (issue 28):
#   python: CPython with PYTHONMALLOC=malloc (every allocation through malloc)
#           and PYTHONHASHSEED=0, building, dumping and parsing 20000 JSON
#           records (the pyenv shim resolved to the real binary);
#   sqlite: the sqlite3 shell building a 200000-row table in memory with two
#           indexes.
# heaptrack records every allocation once per program: its exact inclusive
# requested bytes per function are the truth (bench/calibration.py truth).
# Then SEEDS seeded mt captures per program at the default rate (512 KiB;
# --stack-size 65528 for sqlite, whose stacks are deeper than the default
# dump), each unwound and folded with mt-fold --json, inline frames named as
# their function (as heaptrack names them); for the top functions (see
# calibration.py) the share of runs whose interval holds heaptrack's figure.
# The same runs, paired (run i against run SEEDS/2 + i), are diffed with
# mt-fold --diff: pairs with any significant site or total are counted.
# usage: bench/calibration.sh [SEEDS]   (default 40: 40 runs, 20 pairs)
# Prints markdown for docs/fold.md.  Needs heaptrack, zstd, python3, sqlite3.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
seeds=${1:-40}
here=$(cd "$(dirname "$0")" && pwd)
bin=${MT_BUILD:-$here/../build}/bin
top=${MT_CALIBRATION_TOP:-10}
for t in heaptrack zstd python3 sqlite3; do
	command -v "$t" >/dev/null || { echo "calibration: $t is not installed" >&2; exit 77; }
done
for t in mt-capture mt-unwind mt-fold; do
	[ -x "$bin/$t" ] || { echo "calibration: $bin/$t is not built" >&2; exit 77; }
done
# the real python binary, not a shim script (mt-capture preloads its sampler
# into what runs; a shell shim would be a process more)
py=$(python3 -c 'import sys; print(sys.executable)')
py=$(readlink -f "$py")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/work.py" <<'EOF'
import json, random
random.seed(1)
docs = []
for i in range(20000):
    docs.append({"id": i, "name": "item%d" % i, "tags": ["t%d" % (i % 17), "u%d" % (i % 5)],
                 "vals": [random.random() for _ in range(8)],
                 "nested": {"a": i, "b": str(i) * 3}})
s = json.dumps(docs)
back = json.loads(s)
print(len(s), sum(len(json.dumps(x)) for x in back[:5000]))
EOF
cat >"$tmp/work.sql" <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, a TEXT, b INTEGER);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
INSERT INTO t SELECT x, printf('%08d-%d', (x * 7919) % 200003, x), x % 97 FROM c;
CREATE INDEX ta ON t(a);
CREATE INDEX tb ON t(b, a);
SELECT count(*), sum(length(a)) FROM t WHERE b < 50;
EOF

run() {	# run PROGRAM [mt-capture options]: the workload, stdin from the script
	local prog=$1
	shift
	case $prog in
	python) PYTHONHASHSEED=0 PYTHONMALLOC=malloc "$@" "$py" "$tmp/work.py" ;;
	sqlite) "$@" sqlite3 :memory: <"$tmp/work.sql" ;;
	esac
}

echo "mt $(git -C "$here/.." describe --always --dirty 2>/dev/null || echo '?'), heaptrack" \
	"$(heaptrack --version 2>/dev/null | awk '{print $2}'), $seeds seeds, default rate"
for prog in python sqlite; do
	opts=()
	[ "$prog" = sqlite ] && opts=(--stack-size 65528)
	run "$prog" heaptrack -o "$tmp/ht.$prog" >/dev/null 2>"$tmp/ht.err" ||
		{ cat "$tmp/ht.err" >&2; exit 1; }
	python3 "$here/calibration.py" truth "$tmp/ht.$prog.zst" >"$tmp/truth.$prog.tsv"
	jsons=()
	for s in $(seq 1 "$seeds"); do
		run "$prog" "$bin/mt-capture" --seed "$s" "${opts[@]}" -o "$tmp/r.perf" -- \
			>/dev/null 2>"$tmp/cap.err" || { cat "$tmp/cap.err" >&2; exit 1; }
		"$bin/mt-unwind" -q "$tmp/r.perf" | sed 's/_\[i\]//g' >"$tmp/$prog.$s.txt"
		"$bin/mt-fold" --json --top 0 "$tmp/$prog.$s.txt" >"$tmp/$prog.$s.json" 2>/dev/null
		jsons+=("$tmp/$prog.$s.json")
	done
	echo
	echo "### $prog"
	echo
	python3 "$here/calibration.py" score "$tmp/truth.$prog.tsv" "$top" "${jsons[@]}"
	half=$((seeds / 2)) alarms=0 tested=0
	for i in $(seq 1 "$half"); do
		"$bin/mt-fold" --diff "$tmp/$prog.$i.txt" "$tmp/$prog.$((half + i)).txt" \
			>"$tmp/d.out" 2>/dev/null
		if ! grep -q '^significant: 0;' "$tmp/d.out"; then
			alarms=$((alarms + 1))
			grep -E '^ .* yes  ' "$tmp/d.out" | sed "s/^/    pair $i: /" >&2 || true
		fi
		tested=$((tested + $(sed -n 's/^tested: \([0-9]*\) .*/\1/p' "$tmp/d.out")))
	done
	echo "null diffs (run i against run $half + i): $alarms of $half pairs with a" \
		"significant site or total; $((tested / half)) tests a diff on average"
done
