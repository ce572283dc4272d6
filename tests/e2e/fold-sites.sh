#!/bin/bash
# mt-fold --sites on real captures of fixtures whose allocation sites are
# known (their sources say what they allocate):
#   fold_sites:     alloc_small 1,048,576 x 32 B (32 MiB), alloc_big
#                   1,024 x 4 KiB (4 MiB);
#   fold_sites_cxx: Pool<Node>::fill 262,144 x new Node (64 B: 16 MiB),
#                   build_words 65,536 std::string of 48 B in a vector.
# The first site is the biggest allocating function with its file:line
# (the line of its malloc / new), no site is an allocator,
# libc or std:: frame, and no line is wider than the width asked.
set -euo pipefail
for t in mt-capture mt-unwind mt-fold; do
	if [ ! -x "$MT_BUILD/bin/$t" ]; then
		echo "skip: $MT_BUILD/bin/$t is not built yet"
		exit 77
	fi
done
for f in fold_sites fold_sites_cxx; do
	if [ ! -x "$MT_FIXTURES/$f" ]; then
		echo "skip: $MT_FIXTURES/$f is not built yet"
		exit 77
	fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
mt-capture -o "$tmp/trial.perf" -- true 2>"$tmp/trial.err" || rc=$?
if [ "$rc" -eq 125 ]; then
	echo "skip: mt-capture cannot open perf events: $(tail -n 1 "$tmp/trial.err")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/trial.err"; exit 1; }

capture() {	# capture NAME FIXTURE ARGS...
	name=$1
	shift
	mt-capture --rate 65536 --seed 1 -o "$tmp/$name.perf" -- "$@" >/dev/null 2>"$tmp/$name.err" ||
		{ cat "$tmp/$name.err"; return 1; }
	mt-unwind -q --srcline "$tmp/$name.perf" >"$tmp/$name.txt"
}

# widths FILE MAX: every line ASCII and at most MAX columns
widths() {
	if LC_ALL=C grep -n '[^ -~]' "$1"; then
		echo "$1: a line that is not printable ASCII"
		return 1
	fi
	awk -v max="$2" -v f="$1" 'length($0) > max {
		printf "%s:%d: %d columns > %d: %s\n", f, NR, length($0), max, $0; bad = 1 }
		END { exit bad }' "$1"
}

# The allocator, libc and the C++ library: never a site here.
not_allocator='^(malloc|calloc|realloc|free|operator new|operator delete|std::|__gnu_cxx::|_int_|__libc_|tcache_|_IO_|__GI_|strdup|__strdup)'

check_sites() {	# check_sites NAME FIRST FIRST_LINE SECOND
	name=$1 first=$2 line=$3 second=$4
	for w in 80 120; do
		for mode in --sites --tree --callers; do
			COLUMNS=$w mt-fold $mode "$tmp/$name.txt" >"$tmp/$name$mode$w.out"
			widths "$tmp/$name$mode$w.out" "$w"
		done
	done
	mt-fold --sites --width 70 "$tmp/$name.txt" >"$tmp/$name-70.out"
	widths "$tmp/$name-70.out" 70
	out=$tmp/$name--sites80.out
	cat "$out"
	# the row of rank 1, then its site on the next line
	site1=$(awk '$1 == "1" && NF >= 6 { getline; sub(/^ +/, ""); print; exit }' "$out")
	site2=$(awk '$1 == "2" && NF >= 6 { getline; sub(/^ +/, ""); print; exit }' "$out")
	[ "$site1" = "$first ($line)" ] || { echo "first site '$site1', want '$first ($line)'"; return 1; }
	case $site2 in "$second"*) ;; *) echo "second site '$site2', want $second"; return 1 ;; esac
	# every site, from the JSON: none is the allocator's
	mt-fold --json --top 0 "$tmp/$name.txt" >"$tmp/$name.json"
	python3 - "$tmp/$name.json" "$not_allocator" "$first" "$line" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
sites = doc["allocation_sites"]
assert sites, "no sites"
bad = [s["site"] for s in sites if re.match(sys.argv[2], s["site"])]
assert not bad, "allocator frames as sites: %s" % bad
f, l = sys.argv[4].split(":")
assert sites[0]["site"] == sys.argv[3], sites[0]
assert sites[0]["file"] == f and sites[0]["line"] == int(l), sites[0]
assert sites[0]["samples"] > 0 and sites[0]["interval"][0] <= sites[0]["estimate"] <= sites[0]["interval"][1]
assert abs(sum(p["share"] for p in sites[0]["paths"]) - 1) < 1e-9 or sites[0]["more_paths"] > 0
total = doc["total"]["value"]
assert abs(sum(s["estimate"] for s in sites) - total) <= 1e-6 * total, "sites do not add up"
PY
}

src=$MT_SRC/tests/fixtures
capture c "$MT_FIXTURES/fold_sites"
check_sites c alloc_small "fold_sites.c:$(grep -n 'malloc(32)' "$src/fold_sites.c" | cut -d: -f1)" \
	alloc_big
# 32 MiB: the estimate's interval holds it
python3 - "$tmp/c.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["allocation_sites"][0]
assert s["interval"][0] <= 33554432 <= s["interval"][1], s
PY

capture x "$MT_FIXTURES/fold_sites_cxx"
check_sites x 'Pool<Node>::fill' "fold_sites_cxx.cc:$(grep -n 'new T;' "$src/fold_sites_cxx.cc" | cut -d: -f1)" \
	build_words

# --only-pid: the capture's own pid keeps every event; another, none
pid=$(awk -F'\t' '$1 == "alloc" { split($2, a, "/"); print a[1]; exit }' "$tmp/c.txt")
COLUMNS=80 mt-fold --sites --only-pid "$pid" "$tmp/c.txt" | grep -v '^left out' >"$tmp/only.out"
diff <(grep -v '^left out' "$tmp/c--sites80.out") "$tmp/only.out"
COLUMNS=80 mt-fold --sites --only-pid $((pid + 1)) "$tmp/c.txt" >"$tmp/none.out" 2>"$tmp/none.err"
grep -E "^mt-fold: warning: --only-pid, --only-tid and --only-comm left out every event \([1-9][0-9]*\): every figure is 0$" "$tmp/none.err"
grep -E '^left out by --only-pid, --only-tid, --only-comm: [1-9][0-9]* events$' "$tmp/none.out"
grep -E '^(allocation )?sites by .*: 0 of 0;' "$tmp/none.out"
echo "fold-sites: ok"
