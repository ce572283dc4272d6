#!/bin/bash
# mt flame --diff (issue 28) on real captures of build/fixtures/fold_diff at
# --rate 65536 (grow_site 64 MiB, steady_site 32 MiB, small_site 1 MiB:
# 1024, 512 and 16 expected sample points; `fold_diff 130`: grow_site 30%
# more, 1331 points).  Two captures of the same run: no frame red or blue.
# Against the grown one: grow_site and every caller of it red, the steady
# and small sites grey, grow_site's tooltip with base -> new, the change
# +- its error and "significant at 5% (Holm)".  The SVGs parse as XML.
# mt-flamegraph --diff without --diff-samples (a made-up input): every change
# coloured by sign and size, the subtitle saying nothing was tested, a frame
# of base alone counted, not drawn.  Captures of different rates are refused
# (exit 1, said); one capture is a usage error (exit 2).  The seeds are fixed, so the verdicts are
# reproducible: fold-diff-calibration.sh checks mt-fold's own test over
# 20 seed pairs; the null check here is one draw of a 5% family-wise test.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
B=${MT_BUILD:?}/bin
FX=${MT_FIXTURES:?}
M=$B/mt
[ -x "$FX/fold_diff" ] || { echo "skip: no fixture $FX/fold_diff"; exit 77; }
command -v python3 >/dev/null || { echo "skip: no python3"; exit 77; }
if ! "$B/mt-capture" -o "$T/probe.perf" -- true 2>"$T/probe.err"; then
	cat "$T/probe.err"
	echo "skip: perf_event_open denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 77
fi
export XDG_CACHE_HOME=$T/cache
cd "$T"

rec() {	# rec NAME SEED RATE [PCT]
	"$M" record --rate "$3" --seed "$2" -o "$1.mtz" -- "$FX/fold_diff" ${4:+"$4"} \
		>/dev/null 2>"$1.err" || fail "mt record $1: $(cat "$1.err")"
}
rec same1 101 65536
rec same2 202 65536
rec grown 303 65536 130
rec coarse 404 524288

# frames: one line per drawn frame, "DEPTH NAME STATE FILL", then its tooltip
frames() {
	python3 - "$1" <<'EOF'
import sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
for t in root.iter(ns + "text"):
    if t.get("id") == "title":
        print("TITLE " + t.text)
    if t.get("id") == "subtitle":
        print("SUBTITLE " + t.text)
for g in root.iter(ns + "g"):
    if g.get("class", "").split()[:1] != ["f"]:
        continue
    tip = g.find(ns + "title").text.split("\n")
    fill = g.find(ns + "rect").get("fill")
    print("FRAME %s %s %s %s" % (g.get("data-d"), tip[0], g.get("data-c"), fill))
    for line in tip[1:]:
        print("  " + line)
EOF
}

# ---- no change: all grey ------------------------------------------------------
"$M" flame --diff same1.mtz same2.mtz >s.out 2>s.err || fail "mt flame --diff same: $(cat s.err)"
grep -qx "mt: flame graph: same2.diff.svg (alloc_bytes change of fold_diff, same1.mtz -> same2.mtz)" s.err ||
	fail "mt flame --diff said: $(cat s.err)"
frames same2.diff.svg >same.txt || fail "same2.diff.svg is not well-formed XML"
cat same.txt
grep -qx 'TITLE fold_diff: alloc_bytes change, same1.mtz -> same2.mtz (bytes)' same.txt || fail "title"
grep -q '^SUBTITLE red grew, blue shrank: significant at 5% family-wise (exact binomial test, Holm over [0-9]* frames; equal sampling rates assumed)' same.txt ||
	fail "subtitle"
for s in grow_site steady_site small_site; do
	grep -Eq "^FRAME [0-9]+ $s( \([^)]*\))? same rgb\(205,205,205\)$" same.txt ||
		fail "$s not grey in the null diff"
done
if grep -E '^FRAME ' same.txt | grep -Ev ' same rgb\(205,205,205\)$'; then
	fail "frames coloured although nothing changed"
fi
grep -c '^  p = .*, not significant at 5% (Holm)$' same.txt >/dev/null || fail "no verdicts"

# ---- grow_site +30%: it and its callers red, the neighbours grey --------------
"$M" flame --diff same1.mtz grown.mtz -o grown.svg 2>g.err || fail "mt flame --diff grown: $(cat g.err)"
frames grown.svg >grown.txt || fail "grown.svg is not well-formed XML"
cat grown.txt
grep -Eq '^FRAME [0-9]+ grow_site( \([^)]*\))? grew rgb\(255,[0-9]+,[0-9]+\)$' grown.txt ||
	fail "grow_site not red"
for s in steady_site small_site; do
	grep -Eq "^FRAME [0-9]+ $s( \([^)]*\))? same rgb\(205,205,205\)$" grown.txt || fail "$s not grey"
done
# grow_site's stack is red, from the root (all) to its malloc, one frame at
# each depth: its callers, not the lines of main calling the other sites
depth=$(awk '$1 == "FRAME" && $3 == "grow_site" { print $2 }' grown.txt)
for d in $(seq 0 $((depth + 1))); do
	n=$(grep -Ec "^FRAME $d .* grew rgb\(255,[0-9]+,[0-9]+\)$" grown.txt || true)
	[ "$n" -eq 1 ] || fail "$n red frames at depth $d, not 1"
done
grep -Eq "^FRAME $depth grow_site .* grew " grown.txt || fail "the red frame at depth $depth is not grow_site"
grep -Eq "^FRAME $((depth + 1)) malloc .* grew " grown.txt || fail "grow_site's malloc not red"
[ "$(grep -Ec '^FRAME .* grew ' grown.txt)" -eq $((depth + 2)) ] || fail "red frames off grow_site's stack"
if grep -E '^FRAME .* shrank ' grown.txt; then fail "a frame shrank"; fi
# the tooltip: base -> new, the change with its error, the verdict
tip=$(awk '$1 == "FRAME" { on = ($3 == "grow_site"); next } on' grown.txt)
echo "$tip" | grep -Eq '^  base [0-9.]+ MiB \([0-9,]+ bytes\) -> new [0-9.]+ MiB \([0-9,]+ bytes\) \([0-9.]+% of new\)$' ||
	fail "grow_site's tooltip has no base -> new: $tip"
echo "$tip" | grep -Eq '^  change \+[0-9.]+ MiB \([0-9,]+ bytes\) \(\+[0-9.]+%\) ± [0-9.]+ [KM]iB \(1σ from the samples\)$' ||
	fail "grow_site's tooltip has no change ± error: $tip"
echo "$tip" | grep -Eq '^  p = [0-9.e-]+ \(samples [0-9,]+ -> [0-9,]+\), significant at 5% \(Holm\)$' ||
	fail "grow_site's tooltip does not say significant: $tip"
# the change is about +30%: within 4 sigma of it
pct=$(echo "$tip" | sed -n 's/^  change .*(+\([0-9.]*\)%).*/\1/p')
awk -v p="$pct" 'BEGIN { exit !(p > 15 && p < 45) }' || fail "grow_site changed by +$pct%, not about +30%"

# ---- mt-flamegraph --diff without samples: every change coloured, no claim ----
FG=${MT_SRC:?}/scripts/mt-flamegraph
printf 'main;a 100 150\nmain;b 100 100\nmain;c 100 40\nmain;gone 50 0\n' >n.folded
"$FG" --diff --unit bytes -o n.svg n.folded 2>n.err || fail "mt-flamegraph --diff: $(cat n.err)"
frames n.svg >n.txt || fail "n.svg is not well-formed XML"
cat n.txt
grep -qx 'SUBTITLE red grew, blue shrank, by the change alone: no sample counts, no significance tested; widths: new' n.txt ||
	fail "no-samples subtitle"
grep -qx 'FRAME 2 a grew rgb(255,40,40)' n.txt || fail "a (+50%) not full red"
grep -qx 'FRAME 2 b same rgb(205,205,205)' n.txt || fail "b (unchanged) not grey"
grep -qx 'FRAME 2 c shrank rgb(40,40,255)' n.txt || fail "c (-60%) not full blue"
grep -q '^FRAME 2 gone' n.txt && fail "a frame of base alone was drawn"
grep -q 'FRAME 1 main shrank' n.txt || fail "main (350 -> 290) did not shrink"
grep -qx '  change +50 bytes (+50.0%)' n.txt || fail "a's change"
grep -qx '  no sample counts (--diff-samples): significance not tested' n.txt || fail "no-test line"
grep -q '>1 frames of base alone not drawn (no width in new): 50 bytes in base<' n.svg ||
	fail "the frame of base alone is not counted"

# ---- refused: different rates; one capture ------------------------------------
rc=0
"$M" flame --diff same1.mtz coarse.mtz -o c.svg 2>c.err || rc=$?
[ "$rc" -eq 1 ] || fail "different rates: exit $rc, not 1"
grep -qx "mt: cannot compare 'same1.mtz' (alloc_bytes, mode sample, rate 65536, every -) with 'coarse.mtz' (alloc_bytes, mode sample, rate 524288, every -): the test of a change assumes both captures count and sample alike (record them with the same options)" c.err ||
	fail "different rates said: $(cat c.err)"
[ ! -e c.svg ] || fail "an SVG was written for captures that cannot be compared"
rc=0
"$M" flame --diff same1.mtz 2>one.err || rc=$?
[ "$rc" -eq 2 ] || fail "one capture: exit $rc, not 2"
grep -qx "mt: --diff wants two captures, BASE and NEW (1 given)" one.err || fail "one capture said: $(cat one.err)"
echo "flamegraph-diff: ok"
