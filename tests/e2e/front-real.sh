#!/bin/bash
# mt record then mt report of real programs mt did not write: python3 (with
# PYTHONMALLOC=malloc, so that its objects come from malloc) dumping JSON,
# and sqlite3 building a table with an index.  Each: the capture is made,
# the report exits 0, names the program, has sites, and mt-fold and mt-unwind
# said no error; the second report is cached and the same; no allocator or
# libc frame is a site; at COLUMNS=80 (120) no line is wider.  Where heaptrack
# is installed it is the oracle: the first site by allocations is the one
# heaptrack_print's "MOST CALLS TO ALLOCATION FUNCTIONS" puts first.
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

# The site lines of a report (the line under each ranked row).
sites() { awk '/^allocation sites by/ { s = 1; next } s && $1 ~ /^[0-9]+$/ { getline; sub(/^ +/, ""); print }' "$1"; }
first_site() { sites "$1" | sed -n 1p; }
# What no site may be: the malloc family, operator new, the C++ library,
# glibc's internals, CPython's allocator layer.
ALLOCATOR='^(malloc|calloc|realloc|free|reallocarray|memalign|aligned_alloc|posix_memalign|valloc|operator new|operator delete|std::|__gnu_cxx::|__libc_|_int_|tcache_|__GI_|_IO_|strdup|__strdup|PyMem_|_PyMem_|PyObject_Malloc|PyObject_Calloc|PyObject_Realloc|_PyObject_Malloc|pymalloc_|sqlite3Malloc|sqlite3_malloc)( |$)'
# heaptrack's first allocation site by calls, grouped by mt-fold's own site
# rule (tests/e2e/heaptrack_unwind.py): a function, or [heaptrack+0xADDR].
heaptrack_first() {
	heaptrack_print -f "$1" -F "$1.stacks" --flamegraph-cost-type allocations >/dev/null 2>&1 ||
		fail "heaptrack_print $1"
	python3 "$MT_SRC/tests/e2e/heaptrack_unwind.py" "$1.stacks" >"$1.txt"
	"$B/mt-fold" --sites --wide --metric alloc_objects "$1.txt" >"$1.sites" 2>/dev/null ||
		fail "mt-fold of heaptrack's stacks"
	first_site "$1.sites"
}
# same_site MT HEAPTRACK: the same function, or for frames without a symbol
# the same page offset ([module+0xELFADDR] against [heaptrack+0xRUNTIME]).
same_site() {
	[ "$1" = "$2" ] && return 0
	[[ $1 =~ ^\[[^+]+\+0x([0-9a-f]+)\]$ ]] || return 1
	local a=$((16#${BASH_REMATCH[1]}))
	[[ $2 =~ ^\[heaptrack\+0x([0-9a-f]+)\]$ ]] || return 1
	[ $(((a - 16#${BASH_REMATCH[1]}) % 4096)) -eq 0 ]
}

# check NAME COMM: mt.COMM.*.mtz was recorded; its reports.
check() {
	local name=$1 comm=$2 f
	f=$(ls mt."$comm".*.mtz 2>/dev/null) || fail "$name: no mt.$comm.PID.mtz: $(ls)"
	"$M" report -v "$f" >"$name.txt" 2>"$name.err" || fail "$name: mt report: $(cat "$name.err")"
	head -n 1 "$name.txt" | grep -qx "mt report: $comm, '$f'" || fail "$name: header $(head -n 1 "$name.txt")"
	grep -q '^allocation sites by alloc_bytes' "$name.txt" || fail "$name: no sites: $(cat "$name.txt")"
	[ "$(sites "$name.txt" | wc -l)" -ge 3 ] || fail "$name: fewer than 3 sites: $(cat "$name.txt")"
	if sites "$name.txt" | grep -E "$ALLOCATOR"; then
		fail "$name: an allocator or libc frame is listed as a site"
	fi
	for cols in 80 120; do
		COLUMNS=$cols "$M" report "$f" >"$name.$cols.txt" 2>/dev/null || fail "$name: COLUMNS=$cols"
		awk -v w=$cols 'length($0) > w { print; bad = 1 } END { exit bad }' "$name.$cols.txt" ||
			fail "$name: lines wider than $cols columns"
	done
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
	# the first site has its source line (python3 is built with -g)
	first_site python3.txt | grep -qE ' \([a-z_]+\.c:[0-9]+\)$' ||
		fail "python3: the first site has no file:line: $(first_site python3.txt)"
	if command -v heaptrack >/dev/null; then
		PYTHONMALLOC=malloc heaptrack -o "$T/hp" "$py" -c \
			'import json; json.dumps([{"a": i, "b": str(i)} for i in range(200000)])' >/dev/null 2>&1 ||
			fail "heaptrack python3"
		want=$(heaptrack_first "$T"/hp.zst)
		"$M" report --wide --metric alloc_objects mt.python3.*.mtz >py.obj.txt 2>/dev/null
		got=$(first_site py.obj.txt | sed 's/ (.*//')
		[ -n "$want" ] && same_site "$got" "$want" ||
			fail "python3: the first site by allocations is '$got', heaptrack's '$want'"
	fi
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
	if command -v heaptrack >/dev/null; then
		heaptrack -o "$T/hs" sqlite3 :memory: '.read gen.sql' >/dev/null 2>&1 || fail "heaptrack sqlite3"
		want=$(heaptrack_first "$T"/hs.zst)
		"$M" report --wide --metric alloc_objects mt.sqlite3.*.mtz >sq.obj.txt 2>/dev/null
		got=$(first_site sq.obj.txt | sed 's/ (.*//')
		# libsqlite3 has no symbols here: compared by module offset
		[ -n "$want" ] && same_site "$got" "$want" ||
			fail "sqlite3: the first site by allocations is '$got', heaptrack's '$want'"
	fi
fi
[ "$ran" -gt 0 ] || { echo "skip: neither python3 nor sqlite3 is installed"; exit 77; }
echo "front-real: $ran programs ok"
