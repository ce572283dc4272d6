#!/bin/bash
# mt-fold --pprof read back by an independent reader, go tool pprof:
#   fold_inline (allocation sites behind inlined calls, half of one site's
#   blocks freed), captured in sample mode, unwound with --srcline
#   --pprof-info: for each sample index (alloc_space, alloc_objects,
#   inuse_space, inuse_objects) `go tool pprof -top` gives the functions,
#   flat and cum values and the total of `mt-fold --json` (the figures of
#   --report) within rounding; -traces shows the inlined frames, -raw the
#   build-ids, mappings and inline Lines, and the --label labels;
#   files of two hosts merged by `go tool pprof -proto` keep their labels;
#   the capture folded as two hosts' (FILE@host=a FILE@host=b) keeps their
#   blocks apart (inuse twice one's, once when merged without labels);
#   a CPU capture (cpu-clock) gives samples/count and cpu/nanoseconds;
#   a trace-mode capture (its entries symbolised as they come) as well.
# mt-unwind --pprof-info's output less its additions is --srcline's, byte
# for byte, and mt-fold's other outputs of it are those of plain input.
set -euo pipefail
. "$MT_SRC/tests/e2e/fold_lib.sh"
for t in mt-capture mt-unwind mt-fold; do
	if [ ! -x "$MT_BUILD/bin/$t" ]; then
		echo "skip: $MT_BUILD/bin/$t is not built yet"
		exit 77
	fi
done
if ! command -v go >/dev/null 2>&1; then
	echo "skip: go is not installed (Debian: golang-go; mk/deps.sh installs it)"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home" GOPATH="$tmp/gopath" GOCACHE="$tmp/gocache" GOFLAGS= GO111MODULE=off
mkdir -p "$HOME"
pp() { go tool pprof "$@" 2>"$tmp/pprof.err" || { cat "$tmp/pprof.err"; return 1; }; }

rc=0
mt-capture -o "$tmp/trial.perf" -- true 2>"$tmp/trial.err" || rc=$?
if [ "$rc" -eq 125 ]; then
	echo "skip: mt-capture cannot open perf events (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)): $(tail -n 1 "$tmp/trial.err")"
	exit 77
fi
[ "$rc" -eq 0 ] || { cat "$tmp/trial.err"; exit 1; }

bin="$MT_FIXTURES/fold_inline"
mt-capture --seed 1 -o "$tmp/c.perf" -- "$bin" 2>"$tmp/c.err" || { cat "$tmp/c.err"; exit 1; }
cat "$tmp/c.err"
grep -q ' 0 lost' "$tmp/c.err" || { echo "skip: the capture lost samples (a busy machine)"; exit 77; }
mt-unwind -q --srcline --pprof-info "$tmp/c.perf" >"$tmp/info.txt"
mt-unwind -q --srcline "$tmp/c.perf" >"$tmp/src.txt"
mt-unwind -q "$tmp/c.perf" >"$tmp/plain.txt"

# --- mt-unwind --pprof-info adds, and changes nothing else -------------------
sed -E -e '/^# module /d' -e 's/ \{[^{};]*:[0-9]+\}//g' -e 's/ @[0-9]+\+0x[0-9a-f]+//g' \
	"$tmp/info.txt" >"$tmp/info-less.txt"
cmp "$tmp/info-less.txt" "$tmp/src.txt"
id=$(readelf -n "$bin" | awk '/Build ID/ { print $3 }')
[ -n "$id" ]
grep -qx "# module [0-9]* $id $bin" "$tmp/info.txt"
# every module number is given before the first line using it
modules_first() {
	awk '/^# module / { have[$3] = 1; next }
		!/^#/ { n = split($0, parts, " @"); for (i = 2; i <= n; i++) { split(parts[i], m, "+");
			if (!have[m[1]]) { print "module " m[1] " used before its line " NR; bad = 1 } } }
		END { exit bad }' "$1"
}
modules_first "$tmp/info.txt"
grep -q 'build (fold_inline.c:[0-9]*) {fold_inline.c:[0-9]*};new_node_\[i\] (fold_inline.c:[0-9]*) {fold_inline.c:[0-9]*} @[0-9]*+0x[0-9a-f]*;malloc' "$tmp/info.txt"
# mt-fold of it: the suffixes are taken off
mt-fold "$tmp/info.txt" >"$tmp/info.folded"
mt-fold "$tmp/src.txt" >"$tmp/src.folded"
cmp "$tmp/info.folded" "$tmp/src.folded"
# (but for the count of lines read, which counts the module lines)
mt-fold --json --top 0 "$tmp/info.txt" | sed 's/"input": {"lines": [0-9]*,/"input": {/' >"$tmp/info.json"
mt-fold --json --top 0 "$tmp/src.txt" | sed 's/"input": {"lines": [0-9]*,/"input": {/' >"$tmp/src.json"
cmp "$tmp/info.json" "$tmp/src.json"

# --- the heap profile ---------------------------------------------------------
mt-fold --pprof "$tmp/p.pb.gz" --label host=test-host --label service=fold "$tmp/info.txt"
[ "$(head -c 2 "$tmp/p.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ]	# gzip

compare() {	# compare METRIC INDEX: mt-fold --json against go tool pprof -top
	mt-fold --json --top 0 --metric "$1" "$tmp/plain.txt" >"$tmp/$1.json"
	unit=
	case $2 in *_space) unit=-unit=B ;; esac
	pp -top -nodecount=1000 -nodefraction=0 -edgefraction=0 $unit \
		-sample_index="$2" "$tmp/p.pb.gz" >"$tmp/$2.top"
	nsamples=$(pp -raw "$tmp/p.pb.gz" | grep -c '^ *[0-9].*: [0-9 ]*$' || true)
	python3 - "$tmp/$1.json" "$tmp/$2.top" "$nsamples" "$2" <<'PY'
import json, re, sys
mt = json.load(open(sys.argv[1]))
top = open(sys.argv[2]).read().splitlines()
nsamples, index = int(sys.argv[3]), sys.argv[4]
# each sample's value is the estimate rounded to an integer
tol = lambda v: 0.5 * nsamples + 1e-9 * abs(v) + 1e-6
def num(s):
    s = s.rstrip('B')
    return float(s)
m = re.search(r'of (\S+) total', '\n'.join(top))
assert m, "no total in pprof -top:\n" + '\n'.join(top)
p_total = num(m.group(1))
m_total = mt["total"]["value"]
assert abs(p_total - m_total) <= tol(m_total), (index, "total", p_total, m_total)
rows = {}
for line in top:
    f = line.split()
    if len(f) >= 6 and f[1].endswith('%') and f[4].endswith('%'):
        name = ' '.join(f[5:])
        name = name[:-len(' (inline)')] if name.endswith(' (inline)') else name
        rows[name] = (num(f[0]), num(f[3]))
sites = {}
for r in mt["sites"]["rows"]:
    name = r["name"][:-4] if r["name"].endswith("_[i]") else r["name"]
    s, t = sites.get(name, (0.0, 0.0))
    sites[name] = (s + r["self"]["value"], t + r["total"]["value"])
sites = {k: v for k, v in sites.items() if v[1] > 0.5}
assert set(rows) == set(sites), (index, sorted(rows), sorted(sites))
for name, (flat, cum) in rows.items():
    s, t = sites[name]
    assert abs(flat - s) <= tol(s) and abs(cum - t) <= tol(t), (index, name, flat, cum, s, t)
# the top function (largest flat, then cum) is mt-fold's top site
first = top[[i for i, l in enumerate(top) if l.strip().startswith('flat')][0] + 1].split()
best = max(sites.items(), key=lambda kv: (kv[1][0], kv[1][1]))
assert abs(num(first[0]) - best[1][0]) <= tol(best[1][0]), (index, first, best)
print("%s: total %.0f (mt-fold %.1f), %d functions agree" % (index, p_total, m_total, len(rows)))
PY
}
compare alloc_bytes alloc_space
compare alloc_objects alloc_objects
compare inuse_bytes inuse_space
compare inuse_objects inuse_objects
# the default sample index is alloc_space, mt-fold's default metric
pp -top "$tmp/p.pb.gz" | grep -q '^Type: alloc_space$'

# -traces: the inlined frames, each above the function it is inlined into
pp -traces "$tmp/p.pb.gz" >"$tmp/traces.txt"
grep -A1 -E '^ +new_node \(inline\)$' "$tmp/traces.txt" | grep -qE '^ +build$'
grep -A1 -E '^ +fill \(inline\)$' "$tmp/traces.txt" | grep -qE '^ +main$'
grep -qE '^ +host: +test-host$' "$tmp/traces.txt"
# -raw: the mappings with build-ids (the program first), inline Lines, labels
pp -raw "$tmp/p.pb.gz" >"$tmp/raw.txt"
sed -n '/^Mappings/,$p' "$tmp/raw.txt" | grep -qE "^1: 0x[0-9a-f]+/0x[0-9a-f]+/0x0 $bin $id \[FN\]\[FL\]\[LN\]\[IN\]$"
libc=$(sed -n '/^Mappings/,$p' "$tmp/raw.txt" | grep 'libc\.so\.6 [0-9a-f]\{40\} ' | head -n 1)
[ -n "$libc" ] || { echo "no libc mapping with a build-id:"; cat "$tmp/raw.txt"; exit 1; }
grep -A1 -E '^ +[0-9]+: 0x[0-9a-f]+ M=1 new_node fold_inline\.c:[0-9]+ s=[0-9]+$' "$tmp/raw.txt" |
	grep -qE '^ +build fold_inline\.c:[0-9]+ s=[0-9]+$'
grep -qE 'comm:\[fold_inline\] host:\[test-host\] pid:\[[0-9]+\] service:\[fold\] tid:\[[0-9]+\]' "$tmp/raw.txt"
grep -qE '^PeriodType: space bytes$' "$tmp/raw.txt"
grep -qE '^Period: 524288$' "$tmp/raw.txt"

# --- two hosts' files merged by pprof keep their labels ---------------------
mt-fold --pprof "$tmp/b.pb.gz" --label host=other-host "$tmp/info.txt"
pp -proto "$tmp/p.pb.gz" "$tmp/b.pb.gz" >"$tmp/m.pb.gz"
pp -raw "$tmp/m.pb.gz" >"$tmp/m.raw"
grep -q 'host:\[test-host\]' "$tmp/m.raw"
grep -q 'host:\[other-host\]' "$tmp/m.raw"
one=$(pp -top -unit=B -sample_index=alloc_space "$tmp/p.pb.gz" | sed -n 's/.* of \([0-9]*\)B total/\1/p')
two=$(pp -top -unit=B -sample_index=alloc_space "$tmp/m.pb.gz" | sed -n 's/.* of \([0-9]*\)B total/\1/p')
[ "$two" -eq $((2 * one)) ]
[ "$(pp -top -unit=B -sample_index=alloc_space -tagfocus=host=other-host "$tmp/m.pb.gz" |
	sed -n 's/.* accounting for \([0-9]*\)B.*/\1/p')" -eq "$one" ]

# --- per-input labels: one run, two hosts -------------------------------------
# The same capture as two hosts' (same pids, same pointers): with labels each
# host's blocks stay its own (inuse twice one's); merged without labels the
# second copy's allocations take the first's pointers (inuse once).
total() {	# total INDEX FILE [PPROF-ARGS...]
	local idx=$1 f=$2
	shift 2
	pp -top -unit=B -sample_index="$idx" "$@" "$f" | sed -n 's/.* accounting for \([0-9]*\)B.*/\1/p'
}
inuse=$(total inuse_space "$tmp/p.pb.gz")
mt-fold --pprof "$tmp/hosts.pb.gz" --label service=fold "$tmp/info.txt@host=a" "$tmp/info.txt@host=b,zone=2"
[ "$(total inuse_space "$tmp/hosts.pb.gz")" -eq $((2 * inuse)) ]
[ "$(total alloc_space "$tmp/hosts.pb.gz")" -eq $((2 * one)) ]
[ "$(total inuse_space "$tmp/hosts.pb.gz" -tagfocus=host=b)" -eq "$inuse" ]
pp -raw "$tmp/hosts.pb.gz" | grep -q 'comm:\[fold_inline\] host:\[b\] pid:\[[0-9]*\] service:\[fold\] tid:\[[0-9]*\] zone:\[2\]'
mt-fold --pprof "$tmp/same.pb.gz" "$tmp/info.txt" "$tmp/info.txt"
[ "$(total inuse_space "$tmp/same.pb.gz")" -eq "$inuse" ]
[ "$(total alloc_space "$tmp/same.pb.gz")" -eq $((2 * one)) ]
echo "per-input labels: inuse $inuse per host, kept apart"

# --- a CPU capture --------------------------------------------------------------
mt-capture --mode event -e cpu-clock -F 2000 -o "$tmp/cpu.perf" -- \
	sort "$MT_BUILD/bin/mt-unwind" -o /dev/null 2>"$tmp/cpu.err" || { cat "$tmp/cpu.err"; exit 1; }
mt-unwind -q --pprof-info "$tmp/cpu.perf" >"$tmp/cpu.txt"
mt-fold --pprof "$tmp/cpu.pb.gz" "$tmp/cpu.txt"
pp -raw "$tmp/cpu.pb.gz" >"$tmp/cpu.raw"
grep -qE '^PeriodType: cpu nanoseconds$' "$tmp/cpu.raw"
grep -qE '^ *samples/count cpu/nanoseconds\[dflt\]$' "$tmp/cpu.raw"
for m in samples:samples period:cpu; do
	want=$(mt-fold --json --metric "${m%%:*}" "$tmp/cpu.txt" | sed -n 's/^ "total": {"value": \([0-9.e+]*\),.*/\1/p')
	unit=
	[ "${m#*:}" = cpu ] && unit=-unit=ns
	got=$(pp -top $unit -sample_index="${m#*:}" "$tmp/cpu.pb.gz" | sed -n 's/.* of \([0-9.]*\)[a-z]* total/\1/p')
	echo "cpu ${m%%:*}: mt-fold $want, pprof $got"
	awk -v a="$want" -v b="$got" 'BEGIN { exit !(a > 0 && a == b) }'
done

# --- a trace-mode capture: entries symbolised when they come ------------------
mt-capture --mode trace --mmap-pages 4096 -o "$tmp/t.perf" -- "$bin" 2048 2>"$tmp/t.err" ||
	{ cat "$tmp/t.err"; exit 1; }
if grep -q ' 0 lost' "$tmp/t.err"; then
	mt-unwind -q --srcline --pprof-info "$tmp/t.perf" >"$tmp/t.txt"
	modules_first "$tmp/t.txt"	# lines formatted at the entry, written later
	mt-fold --pprof "$tmp/t.pb.gz" "$tmp/t.txt"
	# every allocation recorded: the sizes add up exactly (2048 x 48 B, 32 x 4 KiB)
	pp -top -unit=B -sample_index=alloc_space -focus='^(build|grow)$' "$tmp/t.pb.gz" |
		grep -q ' of 229376B total'
	pp -raw "$tmp/t.pb.gz" | grep -qE '^PeriodType: calls count$'
	pp -raw "$tmp/t.pb.gz" | grep -qE "^1: .* $bin $id "
else
	echo "trace mode: the capture lost events (a busy machine): not checked"
fi
echo "fold-pprof: ok"
