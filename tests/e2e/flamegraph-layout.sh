#!/usr/bin/env bash
# mt-flamegraph draws what the collapsed input says: the SVG's rects (parsed as XML,
# by flamegraph_check.py) put every input stack on a root-to-leaf path of frames
# whose widths are proportional to their counts, in flame, --reverse and --inverted
# layouts, for a small input whose numbers are checked by hand and a generated one
# with awkward names (C++ templates, XML metacharacters, UTF-8, spaces).
set -euo pipefail
fg="$MT_SRC/scripts/mt-flamegraph"
check="$MT_SRC/tests/e2e/flamegraph_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Small input: total 10,000; main 9,000 = parse 4,000 + build_table 5,000; leak 1,000.
cat >"$tmp/small.folded" <<'IN'
main;parse;xstrdup;malloc 3000
main;parse;grow;realloc 1000
main;build_table;malloc 5000
_start;leak;malloc 1000
IN
"$fg" --countname bytes --minwidth 0 --width 1010 "$tmp/small.folded" >"$tmp/small.svg"
python3 "$check" layout "$tmp/small.folded" "$tmp/small.svg"
# 1010 px wide, 10 px margins: 990 px for 10,000.  main: 0.9 * 990 - 0.5 gap = 890.50;
# _start: 0.1 * 990 - 0.5 = 98.50.  Tooltip: 9,000 bytes = 8.79 KiB, 90.00%.
python3 "$check" frames "$tmp/small.svg" >"$tmp/frames.txt"
grep -q $'\tmain\t890.50\t' "$tmp/frames.txt" || { cat "$tmp/frames.txt"; echo "main not 890.50 px"; exit 1; }
grep -q $'\t_start\t98.50\t' "$tmp/frames.txt" || { echo "_start not 98.50 px"; exit 1; }
grep -q '8.79 KiB (9,000 bytes), 90.00% of all' "$tmp/small.svg" || { echo "main's tooltip wrong"; exit 1; }

# Generated input: 400 stacks over a pool of awkward names, some stacks prefixes of
# others (frames with self counts), some repeated (summed).  Drawn 20,000 px wide so
# that the narrowest frame is several pixels wide and the geometry is unambiguous.
python3 - "$tmp/gen.folded" <<'PY'
import random, sys
rnd = random.Random(7)
pool = ["main", "operator new(unsigned long)", "std::vector<int, std::allocator<int> >::push_back(int const&)",
        "a&b<c>\"d\"'e'", "ünïcödé_функция", "[libc.so.6+0x9a0b0]", "inlined_helper_[i]",
        "do_syscall_64_[k]", "malloc", "calloc", "realloc", "g", "h", "x y z"]
lines = []
for i in range(400):
    depth = rnd.randint(1, 25)
    frames = ["main"] + [rnd.choice(pool) for _ in range(depth)]
    lines.append("%s %d" % (";".join(frames), rnd.randint(1000, 10000)))
lines += lines[:20]                              # repeated stacks
lines.append("main;g 77")                        # a prefix of other stacks
lines.append("other_root %d" % 12345)
with open(sys.argv[1], "w") as f:
    f.write("\n".join(lines) + "\n")
PY
for opts in "" "--reverse" "--inverted" "--reverse --inverted"; do
	# shellcheck disable=SC2086
	"$fg" --minwidth 0 --width 20000 $opts "$tmp/gen.folded" >"$tmp/gen.svg"
	# shellcheck disable=SC2086
	python3 "$check" layout "$tmp/gen.folded" "$tmp/gen.svg" $opts
done

# stdin works the same as a file argument.
"$fg" --minwidth 0 <"$tmp/gen.folded" >"$tmp/stdin.svg"
"$fg" --minwidth 0 - <"$tmp/gen.folded" >"$tmp/dash.svg"
"$fg" --minwidth 0 "$tmp/gen.folded" >"$tmp/file.svg"
cmp "$tmp/stdin.svg" "$tmp/file.svg"
cmp "$tmp/dash.svg" "$tmp/file.svg"
echo "flamegraph layout: ok"
