#!/usr/bin/env python3
# Checks an mt-flamegraph SVG against the collapsed input it was drawn from, using
# only the drawn geometry (rect x/y/width) and the <title> names, with its own
# reading of the input: every stack reachable root to leaf, each frame's width
# proportional to its count, siblings side by side inside their parent.
# Used by tests/e2e/flamegraph-*.sh.  Prints what it checked; exit 1 on a mismatch.
#
#   flamegraph_check.py layout IN.folded OUT.svg [--reverse] [--inverted]
#   flamegraph_check.py frames OUT.svg      (prints y, name, width, class per frame)
#   flamegraph_check.py tips OUT.svg        (prints every tooltip line)
import json
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
FRAME_H = 16    # row pitch of mt-flamegraph's layout
TOL = 0.02      # widths are written with 2 decimals


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def read_svg(path):
    root = ET.parse(path).getroot()
    cfg = json.loads(root.get("data-mt"))
    g = root.find(".//%sg[@id='frames']" % NS)
    frames = []
    for f in g.findall(NS + "g"):
        tip = f.find(NS + "title").text.split("\n")
        r = f.find(NS + "rect")
        frames.append({"name": tip[0], "tip": tip, "x": float(r.get("x")),
                       "w": float(r.get("width")), "y": int(r.get("y")),
                       "cls": f.get("class"), "g": f})
    return root, cfg, frames


def read_folded(path, reverse):
    totals = {(): 0}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip():
                continue
            stack, count = line.rsplit(" ", 1)
            frames = stack.split(";")
            if reverse:
                frames.reverse()
            for d in range(len(frames) + 1):
                key = tuple(frames[:d])
                totals[key] = totals.get(key, 0) + int(count)
    return totals


def layout(folded, svg, reverse, inverted):
    _, cfg, frames = read_svg(svg)
    totals = read_folded(folded, reverse)
    total = totals[()]
    inner = cfg["inner"]
    if cfg["total"] != total:
        fail("SVG total %s, input total %s" % (cfg["total"], total))
    roots = [f for f in frames if f["name"] == "all"]
    root = max(roots, key=lambda f: f["w"])
    step = FRAME_H if inverted else -FRAME_H
    if inverted and any(f["y"] < root["y"] for f in frames):
        fail("--inverted: a frame above the root row")
    if not inverted and any(f["y"] > root["y"] for f in frames):
        fail("a frame below the root row")
    rows = {}
    for f in frames:
        rows.setdefault(f["y"], []).append(f)

    def width_of(count):
        return max(0.0, count / total * inner - 0.5)

    # Walk every prefix in input order of depth: find its frame inside its parent's span.
    found = {(): root}
    for key in sorted(totals, key=len):
        if not key:
            continue
        parent = found[key[:-1]]
        y = root["y"] + step * len(key)
        cands = [f for f in rows.get(y, ()) if f["name"] == key[-1]
                 and f["x"] >= parent["x"] - TOL
                 # each frame is drawn 0.5 px narrower than its share, as a gap
                 and f["x"] + f["w"] <= parent["x"] + parent["w"] + 0.5 + TOL]
        if len(cands) != 1:
            fail("stack %s: %d frames named %r under its parent"
                 % (";".join(key), len(cands), key[-1]))
        f = cands[0]
        if abs(f["w"] - width_of(totals[key])) > TOL:
            fail("stack %s: width %.2f, expected %.2f for %d of %d"
                 % (";".join(key), f["w"], width_of(totals[key]), totals[key], total))
        if "{:,}".format(totals[key]) not in f["tip"][1]:
            fail("stack %s: tooltip %r lacks the count %d" % (";".join(key), f["tip"][1], totals[key]))
        found[key] = f
    if len(found) != len(frames):
        fail("%d frames drawn, %d in the input" % (len(frames), len(found)))
    # Siblings do not overlap.
    for y, fs in rows.items():
        fs.sort(key=lambda f: f["x"])
        for a, b in zip(fs, fs[1:]):
            if a["x"] + a["w"] > b["x"] + TOL:
                fail("row %d: %r overlaps %r" % (y, a["name"], b["name"]))
    kids = [k for k in totals if len(k) == 1]
    for k in sorted(kids):
        share = (found[k]["w"] + 0.5) / inner
        if abs(share - totals[k] / total) > 0.0001:
            fail("root child %s: share %.5f, count share %.5f" % (k[0], share, totals[k] / total))
    print("ok: %d stacks' %d frames reachable with proportional widths; root's %d children "
          "proportional to their counts" % (sum(1 for _ in open(folded)), len(found), len(kids)))


def main(argv):
    if argv[:1] == ["layout"] and len(argv) >= 3:
        layout(argv[1], argv[2], "--reverse" in argv[3:], "--inverted" in argv[3:])
    elif argv[:1] == ["frames"] and len(argv) == 2:
        _, _, frames = read_svg(argv[1])
        for f in frames:
            print("%d\t%s\t%.2f\t%s" % (f["y"], f["name"], f["w"], f["cls"]))
    elif argv[:1] == ["tips"] and len(argv) == 2:
        _, _, frames = read_svg(argv[1])
        for f in frames:
            print("\n".join(f["tip"]))
    else:
        sys.exit("usage: flamegraph_check.py layout IN.folded OUT.svg [--reverse] [--inverted]"
                 " | frames OUT.svg")


if __name__ == "__main__":
    main(sys.argv[1:])
