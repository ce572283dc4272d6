#!/bin/bash
# mt, the porcelain, on real captures of build/fixtures/fold_sites and
# build/examples/wordfreq: mt record writes mt.COMM.PID.mtz (0600); mt report
# names the program and its sites; a second report is served from the unwound
# cache (mt report -v says which), a changed capture, a rebuilt mt-unwind
# and a damaged entry are unwound again; the cache is bounded; mt flame's
# title names the program, metric and unit; mt diff runs; wrong inputs are
# refused with the documented message and status; terminals.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
B=${MT_BUILD:?}/bin
FX=${MT_FIXTURES:?}
M=$B/mt
WORDFREQ=${MT_SRC:?}/build/examples/wordfreq
[ -x "$WORDFREQ" ] || make -s -C "$MT_SRC" build/examples/wordfreq >/dev/null
if ! "$B/mt-capture" -e cpu-clock -o "$T/probe.perf" -- true 2>"$T/probe.err"; then
	cat "$T/probe.err"
	echo "skip: perf_event_open denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 77
fi
export XDG_CACHE_HOME=$T/cache
cd "$T"

# ---- mt record: the file, its name and mode, what it says --------------------
"$M" record --rate 4096 --seed 1 -- "$FX/fold_sites" >rec.out 2>rec.err || fail "mt record: $(cat rec.err)"
n=$(ls mt.fold_sites.*.mtz | wc -l)
[ "$n" -eq 1 ] || fail "mt record made $n files named mt.fold_sites.PID.mtz: $(ls)"
F=$(ls mt.fold_sites.*.mtz)
[[ $F =~ ^mt\.fold_sites\.[0-9]+\.mtz$ ]] || fail "name '$F'"
[ "$(stat -c %a "$F")" = 600 ] || fail "$F has mode $(stat -c %a "$F"), not 600"
"$B/mt-decode" -q "$F" | cmp -s - /dev/null && fail "$F decodes to nothing"
size=$(stat -c %s "$F")
grep -qx "mt: capture: $F ($(awk -v b="$size" 'BEGIN { if (b < 1024) printf "%d B", b; else if (b < 1048576) printf "%.1f KiB", b / 1024; else printf "%.1f MiB", b / 1048576 }'))" rec.err ||
	fail "mt record did not give the path and size: $(cat rec.err)"
grep -qx "mt: next: mt report $F   (or: mt flame $F)" rec.err || fail "no next command: $(cat rec.err)"
[ ! -s rec.out ] || fail "mt record wrote to stdout: $(head -c 200 rec.out | cat -v)"

# ---- mt report: first run unwinds, the second is cached ----------------------
"$M" report -v "$F" >r1.txt 2>r1.err || fail "mt report: $(cat r1.err)"
head -n 1 r1.txt | grep -qx "mt report: fold_sites, '$F'" || fail "report header: $(head -n 2 r1.txt)"
grep -q ' alloc_small (fold_sites.c:[0-9]*)$' r1.txt || fail "no alloc_small site: $(cat r1.txt)"
grep -q ' alloc_big (fold_sites.c:[0-9]*)$' r1.txt || fail "no alloc_big site: $(cat r1.txt)"
entry=$(ls "$T"/cache/mt/unwound/*.unwound.zst)
grep -qx "mt: unwound: running mt-unwind, to be cached in '$entry'" r1.err ||
	fail "first report did not unwind: $(cat r1.err)"
[ "$(stat -c %a "$entry")" = 600 ] || fail "cache entry mode $(stat -c %a "$entry")"
"$M" report -v "$F" >r2.txt 2>r2.err || fail "second mt report: $(cat r2.err)"
[ "$(cat r2.err)" = "mt: unwound: cached in '$entry'" ] || fail "second report not cached: $(cat r2.err)"
cmp -s r1.txt r2.txt || fail "cached report differs: $(diff r1.txt r2.txt | head)"
# the same without the cache
"$M" report --no-cache -v "$F" >r3.txt 2>r3.err || fail "--no-cache: $(cat r3.err)"
grep -qx "mt: unwound: running mt-unwind (no cache)" r3.err || fail "--no-cache: $(cat r3.err)"
cmp -s r1.txt r3.txt || fail "--no-cache report differs"

# a changed capture (its mtime and ctime) is unwound again
touch "$F"
"$M" report -v "$F" >r4.txt 2>r4.err || fail "report after touch: $(cat r4.err)"
grep -q "^mt: unwound: running mt-unwind" r4.err || fail "touched capture served from the cache: $(cat r4.err)"
"$M" report -v "$F" >/dev/null 2>r5.err
grep -q "^mt: unwound: cached" r5.err || fail "not cached again after the touch: $(cat r5.err)"

# a rebuilt mt-unwind (here: a copy beside a copy of mt, then touched)
mkdir bin
cp "$B/mt" "$B/mt-unwind" "$B/mt-fold" bin/
bin/mt report -v "$F" >/dev/null 2>c1.err
grep -q "^mt: unwound: running mt-unwind" c1.err || fail "another mt-unwind served the cache: $(cat c1.err)"
bin/mt report -v "$F" >/dev/null 2>c2.err
grep -q "^mt: unwound: cached" c2.err || fail "copied mt-unwind not cached: $(cat c2.err)"
touch -d '+1 minute' bin/mt-unwind
bin/mt report -v "$F" >/dev/null 2>c3.err
grep -q "^mt: unwound: running mt-unwind" c3.err || fail "rebuilt mt-unwind served a stale entry: $(cat c3.err)"

# a damaged entry: said, removed, unwound again; the report is the same
"$M" report "$F" >/dev/null 2>&1	# cached for this mt-unwind again
python3 - "$entry" <<'EOF'
import sys
p = sys.argv[1]; b = bytearray(open(p, 'rb').read()); b[len(b) // 2] ^= 0x55; open(p, 'wb').write(b)
EOF
"$M" report "$F" >d1.txt 2>d1.err || fail "report of a damaged entry: $(cat d1.err)"
grep -q "^mt: warning: the unwound cache entry '$entry' is damaged (.*): unwinding again$" d1.err ||
	fail "damage not said: $(cat d1.err)"
grep -q '^mt-fold' d1.err && fail "mt-fold read damaged text: $(cat d1.err)"
cmp -s r1.txt d1.txt || fail "report after damage differs: $(diff r1.txt d1.txt | head)"
truncate -s -64 "$entry"
"$M" report "$F" >d2.txt 2>d2.err || fail "report of a cut entry"
grep -q "is damaged (it ends inside a zstd frame): unwinding again" d2.err || fail "cut entry: $(cat d2.err)"
cmp -s r1.txt d2.txt || fail "report after a cut entry differs"

# an entry whose key does not match (another capture at the same path)
"$M" report --json "$F" >j.json 2>/dev/null || fail "mt report --json"
python3 -c 'import json,sys; d = json.load(open(sys.argv[1])); assert d["metric"] == "alloc_bytes", d["metric"]' j.json ||
	fail "mt report --json is not one JSON document: $(head -c 200 j.json)"

# ---- mt flame ----------------------------------------------------------------
"$M" flame "$F" >f.out 2>f.err || fail "mt flame: $(cat f.err)"
svg=${F%.mtz}.svg
[ -s "$svg" ] || fail "mt flame wrote no $svg: $(ls)"
grep -q "<text id=\"title\" [^>]*>fold_sites: alloc_bytes (bytes)<" "$svg" ||
	fail "flame title: $(grep -o 'id="title"[^<]*' "$svg")"
grep -qx "mt: flame graph: $svg (alloc_bytes of fold_sites)" f.err || fail "mt flame said: $(cat f.err)"
"$M" flame --metric alloc_objects --reverse -o objs.svg "$F" 2>f2.err || fail "mt flame --metric: $(cat f2.err)"
grep -q "<text id=\"title\" [^>]*>fold_sites: alloc_objects (objects)<" objs.svg ||
	fail "flame objects title: $(grep -o 'id="title"[^<]*' objs.svg)"

# ---- mt diff: two records of the same program --------------------------------
"$M" record --rate 4096 -o a.mtz -- "$FX/fold_sites" 2>/dev/null || fail "record a"
"$M" record --rate 4096 -o b.mtz -- "$FX/fold_sites" 2>/dev/null || fail "record b"
"$M" diff a.mtz b.mtz >diff.txt 2>diff.err || fail "mt diff: $(cat diff.err)"
head -n 1 diff.txt | grep -qx "mt-fold diff: alloc_bytes in requested bytes, per allocation site, of the inputs against base 'a.mtz'" ||
	fail "mt diff: $(head -n 3 diff.txt)"
# the same program twice: its exact totals are compared exactly, no change
grep -qE '^ +[0-9.]+ [KMG]?i?B +0 +[0-9.]+ [KMG]?i?B +0 +0 B +\+0\.0% +exact +exact +\(all\)$' diff.txt ||
	fail "mt diff: the exact totals of one program twice: $(grep '(all)' diff.txt)"
grep -q ' alloc_small (fold_sites.c:[0-9]*)$' diff.txt || fail "mt diff has no alloc_small row"

# ---- the cache's bound: with room for one entry, the older goes ---------------
rm -rf cache/mt/unwound
MT_UNWOUND_CACHE_MAX_BYTES=1 "$M" report a.mtz >/dev/null 2>&1
MT_UNWOUND_CACHE_MAX_BYTES=1 "$M" report b.mtz >/dev/null 2>&1
[ "$(ls cache/mt/unwound | wc -l)" -eq 1 ] || fail "bound of 1 byte kept: $(ls cache/mt/unwound)"
"$M" report -v b.mtz 2>&1 >/dev/null | grep -q "^mt: unwound: cached" || fail "the newest entry went"

# ---- wordfreq, the demo program ----------------------------------------------
"$M" record --rate 65536 -- "$WORDFREQ" 20000 2 >wf.out 2>wf.err || fail "record wordfreq: $(cat wf.err)"
grep -q '^wordfreq: 20000 lines' wf.out || fail "wordfreq's own stdout did not reach mt's: $(cat wf.out)"
W=$(ls mt.wordfreq.*.mtz)
"$M" report "$W" >wf.txt 2>wf.rep.err || fail "report wordfreq: $(cat wf.rep.err)"
head -n 1 wf.txt | grep -qx "mt report: wordfreq, '$W'" || fail "wordfreq header: $(head -n 1 wf.txt)"
grep -q ' chunk_worker (wordfreq.c:[0-9]*)$' wf.txt || fail "no chunk_worker site in wordfreq's report: $(cat wf.txt)"

# -p PID: named after the target and its pid
"$WORDFREQ" 300000 4 >/dev/null &
target=$!
sleep 0.3
"$M" record -e cpu-clock -p "$target" 2>p.err || fail "mt record -p: $(cat p.err)"
wait "$target"
[ -s "mt.wordfreq.$target.mtz" ] || fail "mt record -p wrote no mt.wordfreq.$target.mtz: $(ls; cat p.err)"
"$M" report "mt.wordfreq.$target.mtz" >p.txt 2>/dev/null || fail "report of the -p capture"
head -n 1 p.txt | grep -qx "mt report: wordfreq, 'mt.wordfreq.$target.mtz'" || fail "report of the -p capture: $(head -n 1 p.txt)"

# mt-fold refusing its options at once (before reading): mt-unwind, still
# writing, must not be left waiting on it: no hang, mt-fold's status
for nc in --no-cache ""; do
	rc=0; timeout 60 "$M" report $nc --metric bogus "$F" >bogus.txt 2>bogus.err || rc=$?
	[ "$rc" -eq 2 ] || fail "mt report $nc --metric bogus: exit $rc (124: it hung): $(cat bogus.err)"
	grep -q "^mt-fold: .*bogus" bogus.err || fail "mt-fold's message: $(cat bogus.err)"
	[ ! -s bogus.txt ] || fail "a report after mt-fold's usage error: $(head -n 3 bogus.txt)"
done

# ---- wrong inputs ------------------------------------------------------------
printf 'hello\n' >notes.txt
rc=0; "$M" report notes.txt 2>w.err >/dev/null || rc=$?
[ "$rc" -eq 1 ] || fail "a text file: exit $rc"
[ "$(cat w.err)" = "mt: 'notes.txt' is not a capture: mt reads .mtz files (mt record), perf.data files, perf pipe streams and mt-unwind output" ] ||
	fail "a text file: $(cat w.err)"
# a perf stream of CPU samples: a report of period; an allocation metric is refused
"$B/mt-capture" -e cpu-clock -F 2999 -o cpu.perf -- "$WORDFREQ" 50000 2 >/dev/null 2>&1 || fail "capture cpu-clock"
"$M" report cpu.perf >cpu.txt 2>cpu.err || fail "report of cpu.perf: $(cat cpu.err)"
grep -q '^mt-fold sites: period (time' cpu.txt && grep -q 'cpu-clock' cpu.txt || fail "cpu report: $(head -n 6 cpu.txt)"
rc=0; "$M" report --metric alloc_bytes cpu.perf >cpu2.txt 2>cpu2.err || rc=$?
[ "$rc" -eq 1 ] || fail "alloc metric of cpu samples: exit $rc"
[ "$(cat cpu2.err)" = "mt: 'cpu.perf' is a capture of cpu-clock samples, not of allocations: --metric alloc_bytes does not apply (period or samples do)" ] ||
	fail "alloc metric of cpu samples: $(cat cpu2.err)"
[ ! -s cpu2.txt ] || fail "a refused report still printed: $(head -n 3 cpu2.txt)"
"$M" flame -o cpu.svg cpu.perf 2>/dev/null || fail "flame of cpu.perf"
grep -q "<text id=\"title\" [^>]*>wordfreq: period (ns)<" cpu.svg || fail "cpu flame title: $(grep -o 'id="title"[^<]*' cpu.svg)"

# a perf.data file of perf record, its event named with a modifier
if command -v perf >/dev/null && perf record -q -e cpu-clock:u -F 999 --call-graph dwarf -o pd.data -- \
	"$WORDFREQ" 50000 2 >/dev/null 2>pd.err; then
	"$M" report pd.data >pd.txt 2>/dev/null || fail "report of perf.data"
	head -n 1 pd.txt | grep -qx "mt report: wordfreq, 'pd.data'" || fail "perf.data report: $(head -n 1 pd.txt)"
	"$M" flame pd.data 2>/dev/null || fail "flame of perf.data"
	grep -q "<text id=\"title\" [^>]*>wordfreq: period (ns)<" pd.svg ||
		fail "perf.data flame title: $(grep -o 'id="title"[^<]*' pd.svg)"
fi

# ---- terminals ----------------------------------------------------------------
if command -v script >/dev/null; then
	# stdout a terminal: mt record writes its file all the same
	XDG_CACHE_HOME=$T/cache script -qfec "$M record --rate 65536 -o tty.mtz -- $FX/fold_sites" /dev/null \
		</dev/null >tty.out || fail "mt record on a terminal: $(cat -v tty.out)"
	[ -s tty.mtz ] || fail "mt record on a terminal wrote no file"
	"$B/mt-decode" -q tty.mtz | cmp -s - /dev/null && fail "tty.mtz decodes to nothing"
	# -o - on a terminal: refused, nothing run
	rc=0; script -qfec "$M record -o - -- touch ran" /dev/null </dev/null >tty2.out || rc=$?
	[ "$rc" -eq 125 ] || fail "mt record -o - on a terminal: exit $rc"
	grep -q "refusing to write binary data to a terminal" tty2.out || fail "-o - on a terminal: $(cat -v tty2.out)"
	[ ! -e ran ] || fail "mt record -o - ran the command before refusing"
	# the status line: drawn on a terminal (once a second at most), erased
	# (MT_PROGRESS_DELAY_MS=0: the first line at once, not after a second)
	MT_PROGRESS_DELAY_MS=0 script -qfec "$M record --rate 65536 -o st.mtz -- $WORDFREQ 300000 4" /dev/null \
		</dev/null >st.out ||
		fail "status run: $(cat -v st.out)"
	draws=$(tr '\r' '\n' <st.out | grep -a '^mt-encode: [0-9]*s, ' || true)
	[ -n "$draws" ] || fail "no status line on the terminal: $(cat -v st.out)"
	# each draw ends clearing the rest of the line; the command's own output
	# may follow it on the same terminal line
	while IFS= read -r line; do
		[[ $line =~ ^mt-encode:\ [0-9]+s,\ [0-9]+\ samples,\ [0-9.]+\ MB\ in,\ [0-9.]+\ MB\ written,\ [0-9]+\ lost$'\e[K' ]] ||
			fail "status line '$(cat -v <<<"$line")'"
	done < <(sed -n 's/\(\x1b\[K\).*/\1/p' <<<"$draws")
	grep -aq $'\r\e\\[K' st.out || fail "status line not erased"
	# never into a file
	"$M" record --rate 65536 -o st2.mtz -- "$WORDFREQ" 300000 4 >/dev/null 2>st2.err
	grep -q 'mt-encode: [0-9]*s, ' st2.err && fail "status line written to a file"
fi
# -o - to a pipe: the capture on stdout
"$M" record --rate 65536 -o - -- "$FX/fold_sites" 2>/dev/null | cat >piped.mtz
"$B/mt-decode" -q piped.mtz | cmp -s - /dev/null && fail "mt record -o - | cat gave no capture"

# ---- exit status: the command's; 127 when not found --------------------------
rc=0; "$M" record -o x.mtz -- sh -c 'exit 7' 2>/dev/null || rc=$?
[ "$rc" -eq 7 ] || fail "command's exit 7 came back as $rc"
rc=0; "$M" record -o y.mtz -- ./no-such-program 2>nf.err || rc=$?
[ "$rc" -eq 127 ] || fail "missing command: exit $rc: $(cat nf.err)"
grep -q '^mt-encode' nf.err && fail "mt-encode complained of a capture that never began: $(cat nf.err)"
[ ! -e y.mtz ] || fail "a failed capture left y.mtz"
# mt-encode cannot write: said, 125, and no "capture:" line for a file that is not one
mkdir outdir
rc=0; "$M" record -o outdir -- true 2>ed.err || rc=$?
[ "$rc" -eq 125 ] || fail "mt-encode failing: exit $rc: $(cat ed.err)"
grep -qx "mt-encode: cannot create 'outdir': Is a directory" ed.err || fail "mt-encode's message: $(cat ed.err)"
grep -qx "mt: mt-encode failed (exit 3): the capture file is incomplete or missing" ed.err || fail "mt's: $(cat ed.err)"
grep -q '^mt: capture: \|^mt: next:' ed.err && fail "a failed record named a capture: $(cat ed.err)"
# ---- mt report --pprof: the same unwound text, as a pprof profile ---------
"$M" report --pprof rep.pb.gz --label host=test "$F" 2>pp.err || fail "mt report --pprof: $(cat pp.err)"
[ "$(stat -c %a rep.pb.gz)" = 600 ] || fail "the pprof file is mode $(stat -c %a rep.pb.gz)"
[ "$(head -c 2 rep.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "the pprof file is not gzip"
if command -v go >/dev/null; then
	HOME=$T GOPATH=$T/go GOCACHE=$T/gocache go tool pprof -raw rep.pb.gz >pp.raw 2>&1 ||
		fail "go tool pprof -raw: $(head -5 pp.raw)"
	grep -q 'alloc_space/bytes' pp.raw && grep -q 'host:\[test\]' pp.raw ||
		fail "go tool pprof -raw: no alloc_space or label: $(head -20 pp.raw)"
	grep -q 'alloc_small' pp.raw || fail "go tool pprof -raw: no alloc_small: $(head -40 pp.raw)"
fi

echo "front-record-report: ok"
