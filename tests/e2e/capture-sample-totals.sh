#!/bin/bash
# Sample mode: the sampler's exact totals equal what the fixture's workers
# asked for, per thread (tid in R10) and summed per process.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --mmap-pages 1024 -o "$T/s.data" -- "$MT_FIXTURES/capture_alloc" 3 4000 >"$T/out" 2>"$T/err" ||
	fail "mt-capture exited $?: $(cat "$T/err")"
[ "$(capture_lost "$T/err")" = 0 ] || fail "samples lost: $(cat "$T/err")"
capture_regs "$T/s.data" >"$T/regs"
grep -q ' mt:alloc ' "$T/regs" || fail "no mt:alloc samples"

# worker TID allocs=A alloc_bytes=B frees=F ...
n=0
while read -r _ tid allocs bytes frees _; do
	allocs=${allocs#allocs=} bytes=${bytes#alloc_bytes=} frees=${frees#frees=}
	# scope(DI)=1, alloc_bytes SI, allocs DX, frees CX, freed R8, peak R9, tid R10, usable R11
	line=$(awk -v t="$tid" '$2 == "mt:totals" && $3 == 1 && $10 == t' "$T/regs")
	[ -n "$line" ] || fail "no thread totals for worker $tid"
	set -- $line
	[ "$4" = "$bytes" ] || fail "worker $tid: alloc_bytes $4, fixture asked for $bytes"
	[ "$5" = "$allocs" ] || fail "worker $tid: allocs $5, fixture made $allocs"
	[ "$6" = "$frees" ] || fail "worker $tid: frees $6, fixture made $frees"
	[ "$7" = "${11}" ] || fail "worker $tid freed everything: freed_bytes $7 != usable allocated ${11}"
	# Peak: the worker ends with its only live block, malloc(999983), whose
	# block size is the request + 8 rounded up to at most a page; a loop
	# iteration has less than 16 KiB live at once.
	[ "$8" -ge $((999983 + 8)) ] && [ "$8" -le $((999983 + 8 + 4096 + 16)) ] ||
		fail "worker $tid: peak_bytes $8, expected the end block's size (999991..1004103)"
	n=$((n + 1))
done <"$T/out"
[ "$n" = 3 ] || fail "expected 3 workers, fixture printed $n"

# The process report sums every thread's report (workers and main thread).
proc=$(awk '$2 == "mt:totals" && $3 == 2' "$T/regs")
[ "$(echo "$proc" | wc -l)" = 1 ] || fail "expected one process report: $proc"
set -- $proc
sum=$(awk '$2 == "mt:totals" && $3 == 1 { a += $5; b += $4; f += $6 } END { print a, b, f }' "$T/regs")
[ "$5 $4 $6" = "$sum" ] || fail "process totals '$5 $4 $6' != sum of thread totals '$sum'"
# Four threads counted: the peak is batched, its error 4 x 256 KiB at most.
[ "$9" -gt 0 ] && [ "$9" -le $((4 * 262144)) ] || fail "process peak_error $9, expected 1..1048576"
allocs_total=$5

# One thread only (THREADS 0: the main thread works): the process peak is
# that thread's own, exact: error 0, and the end block's size as above.
"$CAP" -o "$T/one.data" -- "$MT_FIXTURES/capture_alloc" 0 2000 >/dev/null 2>"$T/err1" ||
	fail "mt-capture (one thread) exited $?: $(cat "$T/err1")"
capture_regs "$T/one.data" >"$T/regs1"
set -- $(awk '$2 == "mt:totals" && $3 == 1' "$T/regs1")
[ "$#" -gt 0 ] || fail "one thread: no thread totals"
tpeak=$8
set -- $(awk '$2 == "mt:totals" && $3 == 2' "$T/regs1")
[ "$9" = 0 ] || fail "one thread: process peak_error $9, expected 0 (the thread's own peak is exact)"
[ "$8" = "$tpeak" ] || fail "one thread: process peak $8 != the thread's peak $tpeak"
[ "$8" -ge $((999983 + 8)) ] && [ "$8" -le $((999983 + 8 + 4096 + 16)) ] ||
	fail "one thread: process peak $8, expected the end block's size (999991..1004103)"

# mt-unwind compares the sampler's marker-call counts (R13, R14) with the
# events it saw: a complete capture gives no lost line, and each thread's
# alloc_marks/free_marks equal its alloc/free lines.
UNW=$MT_BUILD/bin/mt-unwind
"$UNW" "$T/s.data" >"$T/u" 2>"$T/uerr" || fail "mt-unwind exited $?: $(cat "$T/uerr")"
! grep -q '^lost' "$T/u" || fail "lost lines in a capture with 0 lost: $(grep '^lost' "$T/u")"
! grep -q 'dropped' "$T/uerr" || fail "summary reports drops: $(cat "$T/uerr")"
awk -F'\t' '
	$1 == "alloc" { a[$2]++ }
	$1 == "free" { f[$2]++ }
	$1 == "totals" && $5 ~ /scope=thread/ {
		if (!match($5, /alloc_marks=[0-9]+/)) { print "no alloc_marks: " $0; bad = 1; next }
		am = substr($5, RSTART + 12, RLENGTH - 12) + 0
		match($5, /free_marks=[0-9]+/)
		fm = substr($5, RSTART + 11, RLENGTH - 11) + 0
		t[$2] = am " " fm; n++
	}
	END {
		for (k in t) {
			split(t[k], v, " ")
			if (v[1] != a[k] + 0 || v[2] != f[k] + 0) {
				print k ": alloc_marks/free_marks " t[k] ", lines " a[k] + 0 " " f[k] + 0; bad = 1
			}
		}
		if (n != 4) { print "expected 4 thread totals, got " n; bad = 1 }
		exit bad
	}' "$T/u" >"$T/cmp" || fail "$(cat "$T/cmp")"
sampled=$(grep -c '^alloc' "$T/u")
[ "$sampled" -gt 0 ] || fail "no alloc lines"

# The comparison fires: take the first mt:alloc SAMPLE out of the stream
# (found by its id through HEADER_ATTR and the EVENT_UPDATE name records);
# mt-unwind must write one lost line for that thread and still exit 0 (like
# LOST records: the loss is in the output, nothing else is wrong).
python3 - "$T/s.data" "$T/cut.data" >"$T/cut.tid" <<'PY' || fail "cannot cut the stream"
import struct, sys
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"PERFILE2"
out, pos, attr_of, names, cut_tid = [d[:16]], 16, {}, {}, None
nattr = 0
while pos + 8 <= len(d):
    typ, misc, size = struct.unpack_from("<IHH", d, pos)
    assert size >= 8 and pos + size <= len(d), "bad record at %d" % pos
    rec = d[pos:pos + size]
    if typ == 64:  # HEADER_ATTR: attr, then its ids
        asz = struct.unpack_from("<I", rec, 8 + 4)[0]
        for off in range(8 + asz, size, 8):
            attr_of[struct.unpack_from("<Q", rec, off)[0]] = nattr
        nattr += 1
    elif typ == 78:  # EVENT_UPDATE: u64 type (2 = NAME), u64 id, name
        utype, uid = struct.unpack_from("<QQ", rec, 8)
        if utype == 2:
            names[attr_of[uid]] = rec[24:].split(b"\0")[0].decode()
    elif typ == 9 and cut_tid is None:  # SAMPLE: IDENTIFIER, IP, PID/TID first
        sid, _ip, _pid, tid = struct.unpack_from("<QQII", rec, 8)
        if names.get(attr_of.get(sid)) == "mt:alloc":
            cut_tid = "%d/%d" % (_pid, tid)
            pos += size
            continue
    out.append(rec)
    pos += size
assert pos == len(d) and cut_tid, "no mt:alloc sample"
open(sys.argv[2], "wb").write(b"".join(out))
print(cut_tid)
PY
cut_tid=$(cat "$T/cut.tid")
rc=0
"$UNW" "$T/cut.data" >"$T/u2" 2>"$T/uerr2" || rc=$?
[ "$rc" = 0 ] || fail "mt-unwind exited $rc on the cut stream: $(cat "$T/uerr2")"
[ "$(grep -c '^alloc' "$T/u2")" = $((sampled - 1)) ] || fail "the cut stream should have one alloc line less"
lost=$(grep '^lost' "$T/u2")
[ "$(echo "$lost" | cut -f1,2,5)" = "$(printf 'lost\t%s\tcount=1 reason=dropped marker=alloc' "$cut_tid")" ] ||
	fail "expected one 'lost $cut_tid count=1 reason=dropped marker=alloc' line, got: $lost"
grep -q '^mt-unwind: 1 marker events are missing without a LOST record$' "$T/uerr2" ||
	fail "no drop in the summary: $(cat "$T/uerr2")"
echo "ok: 3 workers exact, process = sum of threads ($allocs_total allocs); one thread: exact peak; marks match, a cut mt:alloc is reported as dropped ($cut_tid)"
