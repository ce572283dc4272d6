#!/bin/bash
# The HTML report (mt report --html): page size and time to first render,
# measured in the browser (bench/html-render.mjs: chromium, the page's
# performance mark "mt-first-render", median of MT_BENCH_HTML_ROUNDS loads,
# default 5), for two captures recorded here with mt record's defaults
# (sample mode, default rate):
#   demo   examples/wordfreq 200000 3, as `make demo` runs it;
#   build  a parallel compile: `make -j2` of MT_BENCH_HTML_FILES (default 40)
#          generated C files, each with 60 functions, cc -O2.
# Also the wall time of mt report --html itself (the cache warm: a first
# mt report unwinds).  Needs `sh mk/deps.sh browser`.
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -euo pipefail
src=$(cd "${MT_SRC:-.}" && pwd)
bin=$(cd "${MT_BUILD:-build}/bin" && pwd)
files=${MT_BENCH_HTML_FILES:-40}
rounds=${MT_BENCH_HTML_ROUNDS:-5}
sh "$src/mk/deps.sh" browser >/dev/null
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export XDG_CACHE_HOME=$tmp/cache
cd "$tmp"
[ -x "$src/build/examples/wordfreq" ] || make -s -C "$src" build/examples/wordfreq >/dev/null
"$bin/mt" record -o demo.mtz -- "$src/build/examples/wordfreq" 200000 3 >/dev/null 2>demo.rec ||
	{ cat demo.rec >&2; exit 1; }
# the compile: generated sources, a makefile, make -j2 under mt record
mkdir proj
for i in $(seq "$files"); do
	{
		echo "#include <stdio.h>"
		echo "#include <stdlib.h>"
		echo "#include <string.h>"
		for f in $(seq 60); do
			echo "struct s${i}_$f { int a[$f]; char name[32]; double w; };"
			echo "static int f${i}_$f(int n) { struct s${i}_$f *v = calloc((size_t)n, sizeof *v); int r = 0;"
			echo "  for (int k = 0; k < n; k++) { v[k].a[k % $f] = k * $f; snprintf(v[k].name, sizeof v[k].name, \"%d-%d\", k, $f);"
			echo "    r += v[k].a[k % $f] + (int)strlen(v[k].name); } free(v); return r; }"
		done
		echo "int main_$i(void) { int r = 0;"
		for f in $(seq 60); do echo "  r += f${i}_$f($f);"; done
		echo "  return r; }"
	} >"proj/u$i.c"
done
printf 'OBJS := %s\nall: $(OBJS)\n%%.o: %%.c\n\tcc -O2 -c -o $@ $<\n' \
	"$(for i in $(seq "$files"); do printf 'u%d.o ' "$i"; done)" >proj/Makefile
start=$(date +%s.%N)
"$bin/mt" record -o build.mtz -- make -s -j2 -C proj >/dev/null 2>build.rec || { cat build.rec >&2; exit 1; }
rec_s=$(echo "$(date +%s.%N) - $start" | bc)
for c in demo build; do
	"$bin/mt" report "$c.mtz" >/dev/null 2>&1 || true	# unwinds, fills the cache
	TIMEFORMAT=%R
	t=$( { time "$bin/mt" report --html -o "$c.html" "$c.mtz" >/dev/null 2>"$c.err"; } 2>&1)
	echo "$c: mt report --html ${t}s; $(sed -n 's/^mt-capture: //p' "$c.rec" | tail -n 1)"
	python3 - "$c.html" <<'PY'
import json, sys
t = open(sys.argv[1], encoding="utf-8").read()
tag = '<script type="application/json" id="data">'
a = t.index(tag) + len(tag)
d = json.loads(t[a:t.index("</script>", a)].replace("<\\/", "</"))
for m in d["metrics"]:
    p = m["prune"]
    print("  %-14s stacks %6d -> %5d drawn; the stacks cut hold %5.2f%% of the total" % (
        m["metric"], p["stacks_in"], p["stacks_out"], 100 * p["value_pruned"] / (p["total"] or 1)))
lv = d.get("live") or {}
size = lambda v: len(json.dumps(v, separators=(",", ":")))
print("  live view: %d sampled allocations, %d stacks; %d frame names; data %d bytes of %d"
      % (lv.get("allocations", 0), len(lv.get("stacks", [])), len(d["names"]), t.index("</script>", a) - a, len(t)))
parts = sorted(((size(v), k) for k, v in d.items() if k != "metrics"), reverse=True)
parts += [(size(m), "metric " + m["metric"]) for m in d["metrics"]]
print("  data by part (bytes): " + ", ".join("%s %d" % (k, n) for n, k in sorted(parts, reverse=True)[:8]))
doc = d["metrics"][0]["doc"]
print("  first metric's document by key (bytes): " + ", ".join(
    "%s %d" % (k, n) for n, k in sorted(((size(v), k) for k, v in doc.items()), reverse=True)[:6]))
PY
done
echo "compile of $files files under mt record: ${rec_s}s wall"
echo "page	bytes	first render (ms)	DOMContentLoaded (ms)	JS heap (MiB)	frames drawn"
MT_SRC=$src node "$src/bench/html-render.mjs" "$rounds" demo.html build.html
