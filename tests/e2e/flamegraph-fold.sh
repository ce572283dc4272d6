#!/usr/bin/env bash
# mt-flamegraph reads what the real mt-fold writes: mt-unwind text with known sample
# points goes through mt-fold (collapsed stacks and --json), and the flame graph's
# figures agree with mt-fold's: the root's samples and interval are mt-fold's total,
# each frame's samples are its points, a site with few points is hatched.
set -euo pipefail
fg="$MT_SRC/scripts/mt-flamegraph"
check="$MT_SRC/tests/e2e/flamegraph_check.py"
fold="$MT_BUILD/bin/mt-fold"
[ -x "$fold" ] || { echo "no $fold: build mt-fold first"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Sample mode at rate 65536: read_file has 40 allocations of 1 point each, parse 3
# (so 3 samples: hatched under the default 10), grow one of 2 points.
# Total: 45 points = 45 * 65536 = 2,949,120 bytes.
{
	echo '# mt-unwind 1'
	for i in $(seq 1 40); do
		printf 'alloc\t100/100\t%d\tprog\tsize=65536 ptr=0x%x fn=malloc points=1 rate=65536\t_start;main;load;read_file;malloc end=complete\n' \
			"$i" $((0x10000 + i * 0x20000))
	done
	for i in 1 2 3; do
		printf 'alloc\t100/100\t%d\tprog\tsize=4096 ptr=0x%x fn=malloc points=1 rate=65536\t_start;main;load;parse;malloc end=complete\n' \
			$((100 + i)) $((0x9000000 + i * 0x2000))
	done
	printf 'alloc\t100/100\t200\tprog\tsize=131072 ptr=0xa000000 fn=realloc points=2 rate=65536\t_start;main;grow;realloc end=complete\n'
} >"$tmp/in.unwound"
"$fold" "$tmp/in.unwound" >"$tmp/in.folded"
"$fold" --json "$tmp/in.unwound" >"$tmp/report.json"
"$fg" --minwidth 0 --stats "$tmp/report.json" "$tmp/in.folded" >"$tmp/fg.svg"
python3 "$check" layout "$tmp/in.folded" "$tmp/fg.svg"
python3 "$check" tips "$tmp/fg.svg" >"$tmp/tips.txt"
python3 - "$tmp/report.json" "$tmp/tips.txt" "$tmp/fg.svg" "$check" <<'PY'
import json, re, subprocess, sys
rep = json.load(open(sys.argv[1]))
tips = open(sys.argv[2]).read().split("\n")
def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)
def frame_tip(name):
    i = tips.index(name)
    out = [tips[i]]
    for l in tips[i + 1:]:
        if not re.match(r"^[0-9,.]+ [KMG]?i?B|^[0-9,]+ (bytes|samples)|^self:|^few |^exact|.* in all stacks", l):
            break
        out.append(l)
    return out
UNITS = {"B": 1, "KiB": 1024, "MiB": 1024 ** 2, "GiB": 1024 ** 3}
def parse_size(s):
    v, u = s.split(" ")
    return float(v) * UNITS[u]
total = rep.get("total", {})
if total.get("n") != 45 or total.get("value") != 45 * 65536:
    fail("mt-fold's total is not 45 samples of 65536: %r" % total)
root = frame_tip("all")
m = re.match(r"^([0-9,]+) samples, .*, 95%: (.+)\u2013(.+)$", root[2])
if not m:
    fail("root tooltip: %r" % root)
n, lo, hi = int(m.group(1).replace(",", "")), parse_size(m.group(2)), parse_size(m.group(3))
if n != total["n"]:
    fail("root samples %d, mt-fold's total n %d" % (n, total["n"]))
for mine, theirs in ((lo, total["lo"]), (hi, total["hi"])):
    if abs(mine - theirs) > 0.01 * theirs:
        fail("root interval %s-%s, mt-fold's %s-%s" % (lo, hi, total["lo"], total["hi"]))
for name, want in (("read_file", 40), ("parse", 3), ("grow", 2), ("load", 43), ("main", 45)):
    t = frame_tip(name)
    if not any(l.startswith("%d sample" % want) for l in t):
        fail("%s: expected %d samples in %r" % (name, want, t))
frames = subprocess.run([sys.executable, sys.argv[4], "frames", sys.argv[3]],
                        capture_output=True, text=True, check=True).stdout.splitlines()
few = sorted({l.split("\t")[1] for l in frames if "few" in l.split("\t")[3]})
# parse (3) and its malloc, grow (2) and its realloc; nothing with 40 or more.
if few != ["grow", "malloc", "parse", "realloc"]:
    fail("hatched frames %r" % few)
print("ok: root %d samples, interval %.0f-%.0f as mt-fold's; frames' samples are their points"
      % (n, lo, hi))
PY
echo "flamegraph with mt-fold: ok"
