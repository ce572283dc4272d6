#!/bin/bash
# A thread's exact totals across exec: before an exec the sampler reports
# every thread of the image (the calling thread goes on in the new image,
# from zero), and a report made before an exec that fails is superseded by
# the thread's later one.  At --rate 1 every estimate is exact, so each
# thread row of mt-fold must equal the sampler's figure.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --rate 1 -o "$T/x.data" -- perl -e '
	my @a = map { "x" x 100 } 1 .. 200;
	exec "/nonexistent/mt-no-such-program";		# fails: the image goes on
	my @b = map { "y" x 300 } 1 .. 200;
	exec "perl", "-e", q{my @c = map { "z" x 500 } 1 .. 200}' \
	2>"$T/err" || fail "mt-capture: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost: $(cat "$T/err")"
mt-unwind -o "$T/x.txt" "$T/x.data" 2>"$T/uw" || fail "mt-unwind: $(cat "$T/uw")"
grep -q ", 2 superseded totals reports," "$T/uw" ||
	fail "the failed exec's process and thread reports are not superseded: $(cat "$T/uw")"
threads=$(awk -F'\t' '$1 == "totals" && $5 ~ /^scope=thread/' "$T/x.txt" | wc -l)
[ "$threads" = 2 ] || fail "$threads thread totals lines, want 2 (before the exec, after it)"

mt-fold --json "$T/x.txt" >"$T/r.json" 2>"$T/fold.err" || fail "mt-fold: $(cat "$T/fold.err")"
python3 - "$T/r.json" <<'PY' || fail "mt-fold's checks: $(cat "$T/r.json" | head -40)"
import json, sys
r = json.load(open(sys.argv[1]))
assert len(r["threads"]) == 1, r["threads"]
for g in r["threads"] + r["processes"] + [r["all"]]:
    for k in ("alloc_bytes", "alloc_objects"):
        c = g["estimates"][k]
        assert c["exact"] and c["exact_value"] == c["value"] and c["in_interval"], (g["pid"], g["tid"], k, c)
PY
echo "ok: a thread across a failed and a real exec: its totals add up to exactly what was sampled"
