#!/bin/bash
# Hostile input, a short seeded pass (tests/e2e/mutate.py): mutated .mtz
# files through mt-encode -d and mt-unwind, mutated perf.data through
# mt-unwind and through mt-encode (whose output must still decode to the
# mutated input, byte for byte: a damaged recording is kept whole), and
# mutated mt-unwind text through mt-fold.  No crash, no hang, no exit code
# other than the documented ones; under `make SANITIZE=1 check`, no
# sanitizer report either.  Found: a misaligned read in mt-unwind, a null
# name in mt-fold, and mt-encode dropping the rest of a damaged recording.
. "$(dirname "$0")/codec_lib.sh"
codec_skip_unless_perf
PATH=$MT_BUILD/bin:$PATH
RUNS=${MT_FUZZ_RUNS:-300}
M="python3 $MT_SRC/tests/e2e/mutate.py"

perf record -q -e cpu-clock -F 4000 --call-graph dwarf,2048 -o "$T/in.data" -- \
	"${MT_FIXTURES:?}/codec_threads" 2 400000 >/dev/null 2>"$T/rec.err" ||
	fail "perf record: $(cat "$T/rec.err")"
mt-encode -q --frame-size 65536 -o "$T/in.mtz" "$T/in.data" || fail "encode"
mt-unwind -q "$T/in.data" 2>/dev/null | head -400 > "$T/in.txt"
[ -s "$T/in.txt" ] || fail "no mt-unwind text"

fails=0
$M --seed 1 --runs "$RUNS" --ok 0,1 "$T/in.mtz" -- mt-encode -d -q -o /dev/null '{}' || fails=1
$M --seed 2 --runs "$RUNS" --ok 0,1 "$T/in.mtz" -- mt-unwind -q '{}' || fails=1
$M --seed 3 --runs "$RUNS" --ok 0,1 "$T/in.data" -- mt-unwind -q '{}' || fails=1
# {} twice: the tool writes {}.mtz, which mutate.py decodes and compares
$M --seed 4 --runs "$RUNS" --ok 0,1 --roundtrip "$T/in.data" -- mt-encode -q -o '{}.mtz' '{}' || fails=1
$M --seed 5 --runs "$RUNS" --ok 0,1,2 "$T/in.txt" -- mt-fold --report '{}' || fails=1
[ "$fails" = 0 ] || fail "mutated inputs broke a tool (see above)"
echo ok
