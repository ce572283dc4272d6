#!/bin/bash
# mt report, first and second: the time the unwound cache saves.  The
# capture: sqlite3 building a table of N rows (default 200000) with an index
# (`sqlite3 :memory:` reading a generated SQL script), recorded once with mt
# record --rate 4096.  Then R rounds (default 7), each in this order: the
# cache emptied, a first `mt report` (it runs mt-unwind and writes the
# entry), a second one (served from the entry), and one with --no-cache.
# Interleaved so that a slow moment of the machine hits all three alike;
# medians of the wall-clock times, and of the CPU time of that run's
# processes (user + sys).
# make bench runs scripts with sh: this one needs bash (time, arrays).
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
rows=${MT_BENCH_FRONT_ROWS:-200000}
rounds=${MT_BENCH_FRONT_ROUNDS:-7}
mt=$(cd "${MT_BUILD:-build}/bin" && pwd)/mt
command -v sqlite3 >/dev/null || { echo "bench/front.sh: sqlite3 is not installed (apt-get install sqlite3)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
cd "$tmp"
cat >gen.sql <<SQL
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < $rows)
INSERT INTO t(name, score) SELECT printf('name-%08d-%s', i, hex(randomblob(8))), i * 0.5 FROM n;
CREATE INDEX t_name ON t(name);
SELECT count(*) FROM t;
SQL
"$mt" record --rate 4096 --seed 1 -o sq.mtz -- sqlite3 :memory: '.read gen.sql' >/dev/null 2>rec.err ||
	{ cat rec.err >&2; exit 1; }
samples=$(sed -n 's/^mt-capture: \([0-9]*\) samples.*/\1/p' rec.err)

# run LABEL ARGS...: appends "WALL CPU" of one mt report to LABEL's list
declare -A times
run() {
	local label=$1 r
	shift
	r=$( { TIMEFORMAT='%R %U %S'; time "$mt" report "$@" sq.mtz >/dev/null 2>&1; } 2>&1 | tail -n 1)
	times[$label]+="$(echo "$r" | awk '{ printf "%.4f:%.4f", $1, $2 + $3 }') "
}
for _ in $(seq "$rounds"); do
	rm -rf cache/mt/unwound
	run first
	run second
	run nocache --no-cache
done
# median of field F (1 wall, 2 cpu) of LABEL's runs
median() {
	tr ' ' '\n' <<<"${times[$1]}" | grep . | cut -d: -f"$2" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
entry=$(ls cache/mt/unwound/*.unwound.zst)
text=$("${mt%/mt}/mt-unwind" -q --srcline sq.mtz | wc -c)
echo "capture: sqlite3, $rows rows with an index, --rate 4096: $samples samples, $(stat -c %s sq.mtz) bytes of .mtz"
echo "unwound text: $text bytes; cache entry: $(stat -c %s "$entry") bytes; $rounds rounds, $(nproc) cores"
printf '%-34s %9s %9s\n' "" "wall (s)" "cpu (s)"
for l in first second nocache; do
	case $l in
	first) name="first mt report (unwinds, caches)" ;;
	second) name="second mt report (cached)" ;;
	nocache) name="mt report --no-cache" ;;
	esac
	printf '%-34s %9.3f %9.3f\n' "$name" "$(median $l 1)" "$(median $l 2)"
done
awk -v f="$(median first 1)" -v s="$(median second 1)" 'BEGIN { printf "second / first: %.1f%% of the wall time (%.1fx faster)\n", 100 * s / f, f / s }'
