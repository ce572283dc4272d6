#!/usr/bin/env bash
# mt-flamegraph's output depends on the input's content only: two runs give the same
# bytes, and so do the same stacks in another order or split over repeated lines.
set -euo pipefail
fg="$MT_SRC/scripts/mt-flamegraph"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

python3 - "$tmp/a.folded" "$tmp/shuffled.folded" "$tmp/split.folded" "$tmp/stats.json" <<'PY'
import json, random, sys
rnd = random.Random(11)
names = ["main", "run", "parse", "emit", "malloc", "calloc", "std::string::_M_create(unsigned long&, unsigned long)"]
stacks = {}
for i in range(300):
    s = ";".join(["main"] + [rnd.choice(names) for _ in range(rnd.randint(1, 12))])
    stacks[s] = stacks.get(s, 0) + rnd.randint(1, 100000)
lines = ["%s %d" % kv for kv in stacks.items()]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
rnd.shuffle(lines)
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
split = []
for l in lines:  # each count as two lines that add up to it
    s, c = l.rsplit(" ", 1)
    c = int(c)
    split += ["%s %d" % (s, c // 3), "%s %d" % (s, c - c // 3)]
rnd.shuffle(split)
open(sys.argv[3], "w").write("\n".join(split) + "\n")
json.dump({"metric": "alloc_bytes", "mode": "sample", "rate": 4096,
           "stacks": [{"stack": s, "samples": max(1, c // 4096)} for s, c in stacks.items()]},
          open(sys.argv[4], "w"))
PY
opts=(--title t --subtitle s --countname bytes --stats "$tmp/stats.json")
"$fg" "${opts[@]}" "$tmp/a.folded" >"$tmp/1.svg"
"$fg" "${opts[@]}" "$tmp/a.folded" >"$tmp/2.svg"
cmp "$tmp/1.svg" "$tmp/2.svg"
"$fg" "${opts[@]}" "$tmp/shuffled.folded" >"$tmp/3.svg"
cmp "$tmp/1.svg" "$tmp/3.svg"
"$fg" "${opts[@]}" "$tmp/split.folded" >"$tmp/4.svg"
cmp "$tmp/1.svg" "$tmp/4.svg"
# Another hash seed must not change anything (no dict-order or hash() dependence).
PYTHONHASHSEED=12345 "$fg" "${opts[@]}" "$tmp/a.folded" >"$tmp/5.svg"
cmp "$tmp/1.svg" "$tmp/5.svg"
# No time stamps or paths: the output names neither the date nor the temporary dir.
if grep -q "$tmp" "$tmp/1.svg"; then echo "the SVG names the input path"; exit 1; fi
if grep -Eq '20[0-9]{2}-[01][0-9]-[0-3][0-9]' "$tmp/1.svg"; then echo "a date in the SVG"; exit 1; fi
# A frame's colour follows its name: every 'parse' frame has one colour.
python3 - "$tmp/1.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
colours = {}
for g in ET.parse(sys.argv[1]).getroot().iter(ns + "g"):
    t, r = g.find(ns + "title"), g.find(ns + "rect")
    if t is not None and r is not None:
        colours.setdefault(t.text.split("\n")[0], set()).add(r.get("fill"))
bad = {k: v for k, v in colours.items() if len(v) != 1}
assert len(colours) == 8 and not bad, (len(colours), bad)
PY
echo "flamegraph determinism: ok"
