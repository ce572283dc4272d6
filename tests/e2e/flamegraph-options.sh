#!/usr/bin/env bash
# mt-flamegraph's options do what --help says, checked on a small input whose figures
# are worked out by hand: title and subtitle, count units, palettes, width, minwidth
# (omitted frames reported), --reverse, --inverted, and --stats (samples, error,
# hatching of frames with few samples; missing fields tolerated; exact mode).
set -euo pipefail
fg="$MT_SRC/scripts/mt-flamegraph"
check="$MT_SRC/tests/e2e/flamegraph_check.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "$*"; exit 1; }
# Through files, not pipes: grep -q closing a pipe early would fail under pipefail.
frames() { python3 "$check" frames "$1" >"$tmp/frames.txt"; cat "$tmp/frames.txt"; }
tips() { python3 "$check" tips "$1" >"$tmp/tips.txt"; cat "$tmp/tips.txt"; }
has_frame() {  # has_frame SVG TAB-SEPARATED-TEXT
	python3 "$check" frames "$1" >"$tmp/frames.txt"; grep -qF -- "$2" "$tmp/frames.txt"
}
has_tip() {  # has_tip SVG LINE: some frame's tooltip has exactly LINE
	python3 "$check" tips "$1" >"$tmp/tips.txt"; grep -qxF -- "$2" "$tmp/tips.txt"
}
tip_matches() {  # tip_matches SVG REGEX
	python3 "$check" tips "$1" >"$tmp/tips.txt"; grep -qE -- "$2" "$tmp/tips.txt"
}

# Total 1,048,576 + 4,096 + 16 = 1,052,688 bytes.
cat >"$tmp/in.folded" <<'IN'
main;load;read_file;malloc 1048576
main;load;parse;calloc 4096
main;tiny;malloc 16
IN

# Title, subtitle, units.  1 MiB + 4 KiB + 16 B under main: "1.00 MiB (1,052,688 bytes)".
"$fg" --minwidth 0 --title 'T <&> title' --subtitle 'sub title' --countname bytes "$tmp/in.folded" >"$tmp/a.svg"
grep -q '<text id="title"[^>]*>T &lt;&amp;&gt; title</text>' "$tmp/a.svg" || fail "title"
grep -q '<text id="subtitle"[^>]*>sub title</text>' "$tmp/a.svg" || fail "subtitle"
has_tip "$tmp/a.svg" '1.00 MiB (1,052,688 bytes), 100.00% of all' || fail "bytes units"
has_tip "$tmp/a.svg" '4.00 KiB (4,096 bytes), 0.39% of all' || fail "KiB units"
has_tip "$tmp/a.svg" '16 bytes, <0.01% of all' || fail "small byte counts"
"$fg" --minwidth 0 --countname objects "$tmp/in.folded" >"$tmp/b.svg"
has_tip "$tmp/b.svg" '1.05M objects (1,052,688), 100.00% of all' || fail "countname objects"
has_tip "$tmp/b.svg" '4,096 objects' && fail "objects: 4,096 not in thousands"
has_tip "$tmp/b.svg" '4.10k objects (4,096), 0.39% of all' || fail "objects in thousands"
has_tip "$tmp/b.svg" '16 objects, <0.01% of all' || fail "objects under a thousand"
"$fg" "$tmp/in.folded" >"$tmp/d.svg"
has_tip "$tmp/d.svg" '1,052,688 samples, 100.00% of all' || fail "default countname"
grep -q '<text id="title"[^>]*>Flame Graph</text>' "$tmp/d.svg" || fail "default title"
grep -q '^<!-- mt-flamegraph: 3 stacks, total 1,052,688 samples -->$' "$tmp/d.svg" || fail "total comment"
"$fg" --countname page-faults "$tmp/in.folded" >"$tmp/pf.svg"
has_tip "$tmp/pf.svg" '1,052,688 page-faults, 100.00% of all' || fail "countname word"
# --unit: the same counts as time, objects, bytes, events; it wins over --countname's kind.
"$fg" --minwidth 0 --unit ns --countname bytes "$tmp/in.folded" >"$tmp/ns.svg"
has_tip "$tmp/ns.svg" '1.05 ms (1,052,688 ns), 100.00% of all' || fail "--unit ns: ms"
has_tip "$tmp/ns.svg" '4.10 µs (4,096 ns), 0.39% of all' || fail "--unit ns: µs"
has_tip "$tmp/ns.svg" '16 ns, <0.01% of all' || fail "--unit ns: ns"
grep -q '<text id="title"[^>]*>Flame Graph (ns)</text>' "$tmp/ns.svg" || fail "--unit ns: title"
grep -q '^<!-- mt-flamegraph: 3 stacks, total 1.05 ms (1,052,688 ns) -->$' "$tmp/ns.svg" ||
	fail "--unit ns: total comment"
"$fg" --unit bytes --inverted "$tmp/in.folded" >"$tmp/ub.svg"
has_tip "$tmp/ub.svg" '1.00 MiB (1,052,688 bytes), 100.00% of all' || fail "--unit bytes"
grep -q '<text id="title"[^>]*>Icicle Graph (bytes)</text>' "$tmp/ub.svg" || fail "--unit bytes: title"
"$fg" --unit events "$tmp/in.folded" >"$tmp/ue.svg"
has_tip "$tmp/ue.svg" '1,052,688 events, 100.00% of all' || fail "--unit events"
"$fg" --unit events --countname page-faults "$tmp/in.folded" >"$tmp/uep.svg"
has_tip "$tmp/uep.svg" '1,052,688 page-faults, 100.00% of all' || fail "--unit events --countname"
"$fg" --unit objects --title 'given' "$tmp/in.folded" >"$tmp/uo.svg"
has_tip "$tmp/uo.svg" '1.05M objects (1,052,688), 100.00% of all' || fail "--unit objects"
grep -q '<text id="title"[^>]*>given</text>' "$tmp/uo.svg" || fail "--title over the unit's title"
rc=0; "$fg" --unit furlongs "$tmp/in.folded" >/dev/null 2>"$tmp/uerr" || rc=$?
[ "$rc" -eq 2 ] && grep -qF "argument --unit: invalid choice: 'furlongs'" "$tmp/uerr" ||
	fail "--unit furlongs: exit $rc, $(cat "$tmp/uerr")"
# Prefix boundaries: 3 significant digits, carried to the next prefix (1023.9 KiB is
# 1.00 MiB, not 1024 KiB); 1,000 to 1,023 bytes stay exact.
printf 'a 1048575\nb 1023\nc 999999\nd 999499\n' >"$tmp/edge.folded"
"$fg" --minwidth 0 --unit bytes "$tmp/edge.folded" >"$tmp/eb.svg"
has_tip "$tmp/eb.svg" '1.00 MiB (1,048,575 bytes), 34.39% of all' || fail "1048575 bytes"
has_tip "$tmp/eb.svg" '1,023 bytes, 0.03% of all' || fail "1023 bytes"
has_tip "$tmp/eb.svg" '977 KiB (999,999 bytes), 32.80% of all' || fail "999999 bytes"
"$fg" --minwidth 0 --unit objects "$tmp/edge.folded" >"$tmp/eo.svg"
has_tip "$tmp/eo.svg" '1.00M objects (999,999), 32.80% of all' || fail "999999 objects"
has_tip "$tmp/eo.svg" '999k objects (999,499), 32.78% of all' || fail "999499 objects"
has_tip "$tmp/eo.svg" '1.05M objects (1,048,575), 34.39% of all' || fail "1048575 objects"
"$fg" --minwidth 0 --unit ns "$tmp/edge.folded" >"$tmp/en.svg"
has_tip "$tmp/en.svg" '1.00 ms (999,999 ns), 32.80% of all' || fail "999999 ns"
has_tip "$tmp/en.svg" '1.02 µs (1,023 ns), 0.03% of all' || fail "1023 ns"

# Palettes change colours, not geometry.
for c in mem cpu hot; do
	"$fg" --minwidth 0 --colors "$c" "$tmp/in.folded" >"$tmp/$c.svg"
	python3 "$check" layout "$tmp/in.folded" "$tmp/$c.svg" >/dev/null
	grep -o 'fill="rgb([^"]*)"' "$tmp/$c.svg" | sort -u >"$tmp/$c.fills"
done
cmp -s "$tmp/mem.fills" "$tmp/cpu.fills" && fail "mem and cpu palettes identical"
cmp -s "$tmp/cpu.fills" "$tmp/hot.fills" && fail "cpu and hot palettes identical"
frames "$tmp/mem.svg" | cut -f1-3 >"$tmp/mem.geo"
frames "$tmp/hot.svg" | cut -f1-3 >"$tmp/hot.geo"
cmp "$tmp/mem.geo" "$tmp/hot.geo"

# --width: 510 px leaves 490 for the data; main spans it all (490 - 0.5 gap).
"$fg" --width 510 "$tmp/in.folded" >"$tmp/w.svg"
grep -q '<svg [^>]*width="510"' "$tmp/w.svg" || fail "width attribute"
has_frame "$tmp/w.svg" $'\tmain\t489.50\t' || fail "width 510: main not 489.50"

# --minwidth: at 1200 px (1180 for data), tiny (16 B) is 0.018 px and its malloc too:
# below the default 0.1 px, both omitted and reported; with 0 they are drawn.
"$fg" "$tmp/in.folded" >"$tmp/m.svg"
has_frame "$tmp/m.svg" $'\ttiny\t' && fail "tiny drawn at the default minwidth"
grep -q '<text id="omitted"[^>]*>2 frames narrower than 0.1 px not drawn (&lt;0.01% of all at their roots)' \
	"$tmp/m.svg" || fail "omitted frames not reported"
"$fg" --minwidth 0 "$tmp/in.folded" >"$tmp/m0.svg"
python3 "$check" layout "$tmp/in.folded" "$tmp/m0.svg" >/dev/null
grep -q 'id="omitted"' "$tmp/m0.svg" && fail "omitted line with --minwidth 0"
# 1% of the total: parse (4 KiB, 0.39%) and its calloc go too: 4 frames.
"$fg" --minwidth 1% "$tmp/in.folded" >"$tmp/m1.svg"
grep -q '>4 frames narrower than 1% not drawn (0.39% of all at their roots)' "$tmp/m1.svg" ||
	fail "--minwidth 1%"

# --reverse: merged from the leaf, the root's children are malloc (1 MiB + 16) and calloc.
"$fg" --reverse --minwidth 0 "$tmp/in.folded" >"$tmp/r.svg"
python3 "$check" layout "$tmp/in.folded" "$tmp/r.svg" --reverse
tips "$tmp/r.svg" >/dev/null
grep -A1 -x malloc "$tmp/tips.txt" | grep -xF '1,048,592 samples, 99.61% of all' >/dev/null ||
	fail "--reverse: malloc not merged"
# --inverted: the root row is the top one.
"$fg" --inverted --minwidth 0 "$tmp/in.folded" >"$tmp/i.svg"
python3 "$check" layout "$tmp/in.folded" "$tmp/i.svg" --inverted
grep -q '>Icicle Graph<' "$tmp/i.svg" || fail "--inverted default title"

# --stats: read_file's 1 MiB from 16 samples at rate 65536 (1/sqrt(16) = 25%: +-256 KiB),
# parse's 4 KiB from 1 sample, tiny from 0 samples plus one from a stack the input lacks.
cat >"$tmp/stats.json" <<'JSON'
{"metric": "alloc_bytes", "mode": "sample", "rate": 65536, "some_future_field": [1, 2],
 "stacks": [
  {"stack": "main;load;read_file;malloc", "samples": 16, "estimate": 1048576},
  {"stack": ["main", "load", "parse", "calloc"], "samples": 1},
  {"stack": "main;tiny;malloc", "samples": 0},
  {"stack": "not;in;input", "samples": 3},
  {"stack": "main;broken", "samples": "x"},
  {"no_stack_field": 1}
 ]}
JSON
"$fg" --minwidth 0 --stats "$tmp/stats.json" "$tmp/in.folded" >"$tmp/s.svg"
has_tip "$tmp/s.svg" '1.00 MiB (1,048,576 bytes), 99.61% of all' || fail "stats: units from metric"
has_tip "$tmp/s.svg" '16 samples, ±256 KiB (±25.0%, 1σ), 95%: 585 KiB–1.62 MiB' ||
	fail "stats: read_file's samples and error"
tip_matches "$tmp/s.svg" '^17 samples, '  || fail "stats: main's samples (16 + 1 + 0)"
has_tip "$tmp/s.svg" '0 samples: no estimate of the error' || fail "stats: zero samples"
# Few samples (< 10): parse, its calloc, tiny and its malloc are hatched; main is not.
frames "$tmp/s.svg" | awk -F'\t' '$4 ~ /few/ {print $2}' | sort | tr '\n' ' ' >"$tmp/few"
[ "$(cat "$tmp/few")" = "calloc malloc parse tiny " ] || fail "hatched frames: $(cat "$tmp/few")"
[ "$(grep -c 'class="h"' "$tmp/s.svg")" -eq 4 ] || fail "hatch overlays"
grep -q 'fewer than 10 samples (error above ±32%): 4 frames' "$tmp/s.svg" || fail "few legend"
"$fg" --minwidth 0 --few-samples 20 --stats "$tmp/stats.json" "$tmp/in.folded" >"$tmp/s20.svg"
grep -q 'fewer than 20 samples (error above ±22%): 9 frames' "$tmp/s20.svg" || fail "--few-samples 20"

# Missing fields: no stacks but a rate and a bytes metric: samples = bytes / rate.
echo '{"metric": "alloc_bytes", "rate": 65536}' >"$tmp/rate.json"
"$fg" --minwidth 0 --stats "$tmp/rate.json" "$tmp/in.folded" >"$tmp/rate.svg"
tip_matches "$tmp/rate.svg" '^16 samples, ±256 KiB'  || fail "samples from the rate"
# Nothing usable: no sample lines, no hatching, no legend, no error.
echo '{}' >"$tmp/empty.json"
"$fg" --minwidth 0 --stats "$tmp/empty.json" "$tmp/in.folded" >"$tmp/e.svg"
grep -q ' samples, ±' "$tmp/e.svg" && fail "samples invented from an empty stats file"
grep -q 'fewlegend' "$tmp/e.svg" && fail "few-samples legend without samples"
# Exact (trace) mode: no error, nothing hatched.
echo '{"metric": "alloc_bytes", "mode": "trace", "stacks": [{"stack": "main;tiny;malloc", "samples": 1}]}' \
	>"$tmp/exact.json"
"$fg" --minwidth 0 --stats "$tmp/exact.json" "$tmp/in.folded" >"$tmp/x.svg"
has_tip "$tmp/x.svg" 'exact (every event recorded): no sampling error' || fail "exact mode"
grep -q 'class="f few' "$tmp/x.svg" && fail "hatching in exact mode"

# mt-fold's total.exact decides: sample mode at rate 1 is exact ...
echo '{"metric": "alloc_bytes", "mode": "sample", "rate": {"min": 1, "max": 1},
  "total": {"value": 1052688, "n": 0, "exact": true}}' >"$tmp/rate1.json"
"$fg" --minwidth 0 --stats "$tmp/rate1.json" "$tmp/in.folded" >"$tmp/r1.svg"
has_tip "$tmp/r1.svg" 'exact (every event recorded): no sampling error' || fail "rate 1 not exact"
# ... and trace mode recording every 4th call is not: objects / 4 = samples.  The input
# read as objects: tiny's 16 objects are 4 recorded calls, parse's 4096 are 1024.
echo '{"metric": "alloc_objects", "unit": "objects", "mode": "trace", "rate": null,
  "every": {"min": 4, "max": 4}, "total": {"value": 1052688, "n": 263172, "exact": false},
  "sites": {"few": 5, "rows": []}}' >"$tmp/every4.json"
"$fg" --minwidth 0 --stats "$tmp/every4.json" "$tmp/in.folded" >"$tmp/e4.svg"
has_tip "$tmp/e4.svg" '16 objects, <0.01% of all' || fail "every 4: unit from the stats"
tip_matches "$tmp/e4.svg" '^4 samples, ±8 objects \(±50\.0%, 1σ\), 95%: [0-9.]+–[0-9.]+ objects$' ||
	fail "every 4: tiny's samples"
tip_matches "$tmp/e4.svg" '^1,024 samples, ' || fail "every 4: parse's samples"
# sites.few (5) is the default threshold: only tiny (4 samples) and its malloc are hatched.
grep -q 'fewer than 5 samples (error above ±45%): 2 frames' "$tmp/e4.svg" || fail "sites.few default"
"$fg" --minwidth 0 --few-samples 2000 --stats "$tmp/every4.json" "$tmp/in.folded" >"$tmp/e4b.svg"
grep -q 'fewer than 2000 samples (error above ±2%): 4 frames' "$tmp/e4b.svg" || fail "--few-samples over sites.few"

# The unit from the stats' metric and event: a clock's period is time (perf's
# modifiers after ':' ignored), another event's period and samples are counts;
# without a metric, the unit word; --countname over the stats.
infer() {  # infer JSON EXPECTED-VALUE-LINE EXPECTED-TITLE [OPTIONS...]
	echo "$1" >"$tmp/inf.json"
	local want=$2 title=$3
	shift 3
	"$fg" --minwidth 0 --stats "$tmp/inf.json" "$@" "$tmp/in.folded" >"$tmp/inf.svg"
	has_tip "$tmp/inf.svg" "$want" || fail "infer $(cat "$tmp/inf.json"): $(sed -n 2p "$tmp/tips.txt")"
	grep -qF "<text id=\"title\" x=\"600\" y=\"20\">$title</text>" "$tmp/inf.svg" ||
		fail "infer title $(grep -o '<text id="title"[^<]*' "$tmp/inf.svg")"
}
infer '{"metric": "period", "unit": "events", "event": "task-clock:u"}' \
	'1.05 ms (1,052,688 ns), 100.00% of all' 'task-clock:u period (ns)'
infer '{"metric": "period", "unit": "events", "event": "cpu-clock"}' \
	'1.05 ms (1,052,688 ns), 100.00% of all' 'cpu-clock period (ns)'
infer '{"metric": "period", "unit": "events", "event": "page-faults"}' \
	'1,052,688 events, 100.00% of all' 'page-faults period (events)'
infer '{"metric": "period", "unit": "events", "event": null}' \
	'1,052,688 events, 100.00% of all' 'period (events)'
infer '{"metric": "samples", "unit": "samples", "event": "cycles"}' \
	'1,052,688 samples, 100.00% of all' 'cycles samples'
infer '{"metric": "inuse_objects", "unit": "objects"}' \
	'1.05M objects (1,052,688), 100.00% of all' 'inuse_objects (objects)'
infer '{"unit": "bytes"}' '1.00 MiB (1,052,688 bytes), 100.00% of all' 'Flame Graph'
infer '{"unit": "widgets"}' '1,052,688 widgets, 100.00% of all' 'Flame Graph'
infer '{"metric": "inuse_bytes"}' '1.05M objects (1,052,688), 100.00% of all' 'inuse_bytes (objects)' \
	--countname objects
infer '{"metric": "inuse_bytes"}' '1,052,688 widgets, 100.00% of all' 'inuse_bytes (widgets)' \
	--countname widgets
infer '{"metric": "alloc_bytes"}' '1,052,688 events, 100.00% of all' 'alloc_bytes (events)' --unit events

# -o writes the same bytes as stdout.
"$fg" -o "$tmp/o.svg" "$tmp/in.folded"
"$fg" "$tmp/in.folded" | cmp - "$tmp/o.svg"
echo "flamegraph options: ok"
