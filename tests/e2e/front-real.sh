#!/bin/bash
# mt record then mt report of real programs mt did not write: python3 (with
# PYTHONMALLOC=malloc, so that its objects come from malloc) dumping JSON,
# and sqlite3 building a table with an index.  Each: the capture is made,
# the report exits 0, names the program, has sites, and mt-fold and mt-unwind
# said no error; the second report is cached and the same.
set -euo pipefail
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
B=${MT_BUILD:?}/bin
M=$B/mt
if ! "$B/mt-capture" -e cpu-clock -o "$T/probe.perf" -- true 2>"$T/probe.err"; then
	cat "$T/probe.err"
	echo "skip: perf_event_open denied (perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid))"
	exit 77
fi
export XDG_CACHE_HOME=$T/cache
cd "$T"
ran=0

# check NAME COMM: mt.COMM.*.mtz was recorded; its reports.
check() {
	local name=$1 comm=$2 f
	f=$(ls mt."$comm".*.mtz 2>/dev/null) || fail "$name: no mt.$comm.PID.mtz: $(ls)"
	"$M" report -v "$f" >"$name.txt" 2>"$name.err" || fail "$name: mt report: $(cat "$name.err")"
	head -n 1 "$name.txt" | grep -qx "mt report: $comm, '$f'" || fail "$name: header $(head -n 1 "$name.txt")"
	grep -q '^top [0-9]* of [0-9]* sites by total alloc_bytes' "$name.txt" || fail "$name: no sites: $(cat "$name.txt")"
	# a site row: total, rse, interval, n, ..., a frame
	[ "$(sed -n '/^top /,$p' "$name.txt" | grep -c ' B \| [KMG]iB ')" -ge 3 ] || fail "$name: fewer than 3 site rows"
	grep -v '^mt: unwound: \|^mt-unwind: \|^mt-fold: warning: ' "$name.err" | grep . &&
		fail "$name: said more than the summary: $(cat "$name.err")"
	grep -q "^mt-unwind: .* error" "$name.err" && fail "$name: mt-unwind error"
	"$M" report -v "$f" >"$name.2.txt" 2>"$name.2.err" || fail "$name: second report"
	grep -q '^mt: unwound: cached' "$name.2.err" || fail "$name: second report not cached: $(cat "$name.2.err")"
	cmp -s "$name.txt" "$name.2.txt" || fail "$name: cached report differs"
	ran=$((ran + 1))
}

# python3 may be a pyenv shim (a shell script): the real binary, so that the
# sampler is preloaded into python, not into a shell
if command -v python3 >/dev/null; then
	py=$(python3 -c 'import sys; print(sys.executable)')
	PYTHONMALLOC=malloc "$M" record -- "$py" -c \
		'import json; json.dumps([{"a": i, "b": str(i)} for i in range(200000)])' \
		>py.out 2>py.rec || fail "python3: mt record: $(cat py.rec)"
	check python3 "$(basename "$py")"
	# json's encoder is in the profile
	grep -q 'PyObject_Malloc\|_PyObject\|PyUnicode\|PyLong\|json\|encoder' python3.txt ||
		fail "python3: no CPython allocation site: $(cat python3.txt)"
fi

if command -v sqlite3 >/dev/null; then
	cat >gen.sql <<'EOF'
CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, score REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000)
INSERT INTO t(name, score) SELECT printf('name-%06d-%s', i, hex(randomblob(8))), i * 0.5 FROM n;
CREATE INDEX t_name ON t(name);
SELECT count(*) FROM t WHERE name > 'name-05';  -- 50001 rows: name-050000-... and on
EOF
	"$M" record --rate 65536 -- sqlite3 :memory: '.read gen.sql' >sq.out 2>sq.rec ||
		fail "sqlite3: mt record: $(cat sq.rec)"
	grep -qx 50001 sq.out || fail "sqlite3's own output did not come through: $(cat sq.out)"
	check sqlite3 sqlite3
	grep -q 'sqlite3_step\|sqlite3VdbeExec\|sqlite3_exec' sqlite3.txt || fail "sqlite3: no sqlite3 frame: $(cat sqlite3.txt)"
fi
[ "$ran" -gt 0 ] || { echo "skip: neither python3 nor sqlite3 is installed"; exit 77; }
echo "front-real: $ran programs ok"
