#!/usr/bin/env bash
# mt-flamegraph shows each metric in its own unit (issue 26), on real captures:
#   fold_leak in sample mode (seeded): alloc_bytes and inuse_bytes in B/KiB/MiB,
#   alloc_objects as "N objects" with k; a cpu-clock event capture of
#   capture_alloc: the period in ns/us/ms/s.
# With mt-fold's --json as --stats and no --unit, the unit comes from the JSON's
# metric; the default title names metric and unit; every frame's tooltip carries
# the unit, its exact integer, and with --stats the samples and the error bar in
# the same unit (the root's samples are mt-fold's total n).  --unit and --title
# as `mt flame` passes them win over the inference.
set -euo pipefail
fg="$MT_SRC/scripts/mt-flamegraph"
check="$MT_SRC/tests/e2e/flamegraph_check.py"
for t in mt-capture mt-unwind mt-fold; do
	if [ ! -x "$MT_BUILD/bin/$t" ]; then
		echo "skip: $MT_BUILD/bin/$t is not built yet"
		exit 77
	fi
done
for f in fold_leak capture_alloc; do
	[ -x "$MT_FIXTURES/$f" ] || { echo "skip: no fixture $MT_FIXTURES/$f"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

rc=0
"$MT_BUILD/bin/mt-capture" -o "$tmp/trial.perf" -- true 2>"$tmp/trial.err" || rc=$?
if [ "$rc" -eq 125 ]; then
	echo "skip: mt-capture cannot open perf events (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)): $(tail -n 1 "$tmp/trial.err")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/trial.err"; exit 1; }

"$MT_BUILD/bin/mt-capture" --seed 1 -o "$tmp/leak.perf" -- "$MT_FIXTURES/fold_leak" 2>"$tmp/leak.err" ||
	{ cat "$tmp/leak.err"; exit 1; }
"$MT_BUILD/bin/mt-unwind" -q "$tmp/leak.perf" >"$tmp/leak.txt"
"$MT_BUILD/bin/mt-capture" --mode event -e cpu-clock -F 999 -- "$MT_FIXTURES/capture_alloc" 1 300000 \
	2>"$tmp/cpu.err" >"$tmp/cpu.perf" || { cat "$tmp/cpu.err"; exit 1; }
"$MT_BUILD/bin/mt-unwind" -q "$tmp/cpu.perf" >"$tmp/cpu.txt"

# verify SVG FOLDED JSON|- UNIT TITLE NAME: checks the title, the frames' value lines
# (every frame; NAME's value is the sum of the stacks through it), and with JSON the
# error bars.
verify() {
	python3 "$check" tips "$1" >"$tmp/tips.txt"
	python3 - "$@" "$tmp/tips.txt" <<'PY'
import json, math, re, sys, xml.etree.ElementTree as ET
svg, folded, stats, unit, title, name, tipfile = sys.argv[1:8]
def fail(msg):
    print("FAIL %s: %s" % (svg.rsplit("/", 1)[-1], msg))
    sys.exit(1)
root = ET.parse(svg).getroot()
got = root.find(".//{http://www.w3.org/2000/svg}text[@id='title']").text
if got != title:
    fail("title %r, expected %r" % (got, title))
# The unit's prefixes, as a reader of the graph takes them.
SCALE = {"bytes": {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30},
         "objects": {"": 1, "k": 1e3, "M": 1e6, "G": 1e9},
         "ns": {"ns": 1, "\u00b5s": 1e3, "ms": 1e6, "s": 1e9}}[unit]
WORD = {"bytes": "bytes", "objects": "objects", "ns": "ns"}[unit]
if unit == "objects":
    NUM = r"([0-9.,]+)(k|M|G|) objects"
else:
    NUM = r"([0-9.,]+) (%s)" % "|".join(re.escape(u) for u in SCALE)
def value(m, i):
    return float(m.group(i).replace(",", "")) * SCALE[m.group(i + 1)]
def sig_ok(short, exact):
    # 3 significant digits: within half a unit of the third digit.
    return abs(short - exact) <= 0.0051 * exact + 0.5
totals = {}
for line in open(folded):
    stack, count = line.rstrip("\n").rsplit(" ", 1)
    totals["all"] = totals.get("all", 0) + int(count)
    for f in set(stack.split(";")):
        if f == name:
            totals[name] = totals.get(name, 0) + int(count)
text = open(tipfile).read()
# Each frame's tooltip: the name, then "VALUE, P% of all".
lines = text.split("\n")
vals = {}
nframes = 0
for i, l in enumerate(lines):
    if not re.search(r", (<?[0-9.]+%) of all$", l) or l.startswith("self: "):
        continue
    nframes += 1
    m = re.match(r"^(?:%s \(([0-9,]+)%s\)|([0-9,]+) %s), " % (
        NUM, "" if unit == "objects" else " " + WORD, WORD), l)
    if not m:
        fail("value line without the unit: %r" % l)
    if m.group(4) is not None:
        exact = int(m.group(4).replace(",", ""))
        if exact >= (1024 if unit == "bytes" else 1000):
            fail("%r: %d shown without a prefix" % (l, exact))
    else:
        exact = int(m.group(3).replace(",", ""))
        if not sig_ok(value(m, 1), exact):
            fail("%r: short form and exact value disagree" % l)
    vals.setdefault(lines[i - 1], exact)
if nframes < 3:
    fail("only %d frames with a value line" % nframes)
for k, want in totals.items():
    if vals.get(k) != want:
        fail("%s: value %r in the tooltip, %d in the input" % (k, vals.get(k), want))
errs = [l for l in lines if re.match(r"^[0-9,]+ samples?, \u00b1", l)]
if stats == "-":
    if errs:
        fail("error bars without --stats: %r" % errs[0])
    print("ok %s: %s, %d frames in %s, no error bars" % (svg, title, nframes, unit))
    sys.exit(0)
rep = json.load(open(stats))
if not errs:
    fail("no error bars with --stats")
ERR = r"^([0-9,]+) samples?, \u00b1%s \(\u00b1([0-9.]+)%%, 1\u03c3\), 95%%: %s\u2013%s$" % (
    NUM, NUM.replace(" objects", ""), NUM)
for l in errs:
    m = re.match(ERR, l)
    if not m:
        fail("error bar not in %s: %r" % (unit, l))
    n, err, pct = int(m.group(1).replace(",", "")), value(m, 2), float(m.group(4))
    lo, hi = value(m, 5), value(m, 7)
    if abs(pct - 100 / math.sqrt(n)) > 0.051:
        fail("%r: %.1f%% is not 1/sqrt(%d)" % (l, pct, n))
    if not lo <= hi or err <= 0:
        fail("%r: bounds" % l)
# The root: all of mt-fold's samples, its value inside its own interval.
i = lines.index("all")
m = re.match(ERR, lines[i + 2])
if not m or int(m.group(1).replace(",", "")) != rep["total"]["n"]:
    fail("root's samples %r, mt-fold's total n %d" % (lines[i + 2], rep["total"]["n"]))
lo, hi, v = value(m, 5), value(m, 7), totals["all"]
if not lo <= v <= hi or not sig_ok(value(m, 2), v / math.sqrt(rep["total"]["n"])):
    fail("root: %r for %d" % (lines[i + 2], v))
print("ok %s: %s, %d frames in %s, %d error bars, root %d samples" % (
    svg, title, nframes, unit, len(errs), rep["total"]["n"]))
PY
}

fold() { "$MT_BUILD/bin/mt-fold" "$@"; }

# Memory metrics: unit inferred from --stats, no flag.
for spec in alloc_bytes:bytes:leak_keep inuse_bytes:bytes:leak_keep alloc_objects:objects:churn_free; do
	IFS=: read -r metric unit name <<<"$spec"
	fold --metric "$metric" "$tmp/leak.txt" >"$tmp/$metric.folded"
	fold --metric "$metric" --json "$tmp/leak.txt" >"$tmp/$metric.json"
	grep -q "\"metric\": \"$metric\"" "$tmp/$metric.json" || fail "$metric: no metric in the JSON"
	grep -qF "$name" "$tmp/$metric.folded" || fail "$metric: no $name in the profile"
	"$fg" --minwidth 0 --stats "$tmp/$metric.json" -o "$tmp/$metric.svg" "$tmp/$metric.folded"
	verify "$tmp/$metric.svg" "$tmp/$metric.folded" "$tmp/$metric.json" "$unit" "$metric ($unit)" "$name"
	# Without --stats, --unit alone gives the same value lines and no error bars.
	"$fg" --minwidth 0 --unit "$unit" -o "$tmp/$metric-u.svg" "$tmp/$metric.folded"
	verify "$tmp/$metric-u.svg" "$tmp/$metric.folded" - "$unit" "Flame Graph ($unit)" "$name"
done
# The leak: fold_leak keeps 4 MiB in leak_keep; churn_free and batch_free free all.
python3 "$check" tips "$tmp/inuse_bytes.svg" >"$tmp/tips.txt"
grep -A1 -x leak_keep "$tmp/tips.txt" | grep -qE '^[0-9.]+ MiB \([0-9,]+ bytes\), ' ||
	fail "inuse_bytes: leak_keep not in MiB: $(grep -A1 -x leak_keep "$tmp/tips.txt")"
grep -qx churn_free "$tmp/tips.txt" && fail "inuse_bytes: churn_free freed everything"
python3 "$check" tips "$tmp/alloc_objects.svg" >"$tmp/tips.txt"
grep -A1 -x churn_free "$tmp/tips.txt" | grep -qE '^[0-9.]+k objects \([0-9,]+\), ' ||
	fail "alloc_objects: churn_free not in thousands: $(grep -A1 -x churn_free "$tmp/tips.txt")"

# As `mt flame` calls it: --title and --unit given, --reverse.
"$fg" --stats "$tmp/alloc_bytes.json" --title "fold_leak: alloc_bytes (bytes)" --unit bytes \
	--reverse --minwidth 0 -o "$tmp/mtflame.svg" "$tmp/alloc_bytes.folded"
verify "$tmp/mtflame.svg" "$tmp/alloc_bytes.folded" "$tmp/alloc_bytes.json" bytes \
	"fold_leak: alloc_bytes (bytes)" leak_keep

# CPU: the period of cpu-clock is nanoseconds.
fold --metric period "$tmp/cpu.txt" >"$tmp/cpu.folded"
fold --metric period --json "$tmp/cpu.txt" >"$tmp/cpu.json"
grep -q '"event": "cpu-clock"' "$tmp/cpu.json" || fail "cpu.json: no cpu-clock event"
"$fg" --minwidth 0 --colors cpu --stats "$tmp/cpu.json" -o "$tmp/cpu.svg" "$tmp/cpu.folded"
verify "$tmp/cpu.svg" "$tmp/cpu.folded" "$tmp/cpu.json" ns "cpu-clock period (ns)" worker
"$fg" --minwidth 0 --unit ns -o "$tmp/cpu-u.svg" "$tmp/cpu.folded"
verify "$tmp/cpu-u.svg" "$tmp/cpu.folded" - ns "Flame Graph (ns)" worker
# --unit wins over the JSON: the same period counted as events.
"$fg" --minwidth 0 --unit events --stats "$tmp/cpu.json" -o "$tmp/cpu-e.svg" "$tmp/cpu.folded"
python3 "$check" tips "$tmp/cpu-e.svg" >"$tmp/tips.txt"
total=$(awk '{ s += $NF } END { printf "%d", s }' "$tmp/cpu.folded")
gtotal=$(python3 -c 'import sys; print("{:,}".format(int(sys.argv[1])))' "$total")
grep -qxF "$gtotal events, 100.00% of all" "$tmp/tips.txt" ||
	fail "--unit events over the JSON's ns: $(grep -A1 -x all "$tmp/tips.txt")"
grep -q '<text id="title"[^>]*>cpu-clock period (events)</text>' "$tmp/cpu-e.svg" || fail "cpu-e title"
echo "flamegraph units: ok"
