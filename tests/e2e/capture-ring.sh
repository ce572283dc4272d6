#!/bin/bash
# Reading the ring buffers loses nothing and garbles nothing: on a capture
# that wraps each ring many times (capture_bench's threads, whose stacks are
# deeper than an 8 KiB dump, --stack-size 8192), every mt:alloc sample carries a full stack
# (dyn_size 8192: a record that wraps around a ring's end is copied whole),
# and no marker event is missing without a LOST record (mt-unwind compares
# the sampler's marker counts with the events it saw).  The one allowed
# short dump is one that ends where the stack's mapping ends, on a page
# boundary (or within 64 bytes of it, should a copy stop short), its size
# field the bytes copied (no padding): the main thread's first allocations can run within 8 KiB of the
# stack's top (the kernel puts the initial stack pointer a random 0-8 KiB
# below the environment, which is small on CI's machines).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --stack-size 8192 --mmap-pages 1024 -o "$T/s.data" -- "$MT_FIXTURES/capture_bench" 4 1000000 >/dev/null 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
lost=$(capture_lost "$T/err")
# dumps.py FILE: "sp size dyn_size" of every mt:alloc sample's stack dump.
cat >"$T/dumps.py" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
pos, ids, names, nattr = 16, {}, {}, 0
while pos + 8 <= len(d):
    typ, misc, size = struct.unpack_from("<IHH", d, pos)
    assert size >= 8 and pos + size <= len(d), "bad record at %d" % pos
    rec = d[pos:pos + size]
    if typ == 64:  # HEADER_ATTR: sample_type at 24, sample_regs_user at 80, sample_stack_user at 88
        asz = struct.unpack_from("<I", rec, 12)[0]
        st, regs, stack = (struct.unpack_from("<Q", rec, 8 + o)[0] for o in (24, 80, 88))
        for off in range(8 + asz, size, 8):
            ids[struct.unpack_from("<Q", rec, off)[0]] = (nattr, st, regs, stack & 0xffffffff)
        nattr += 1
    elif typ == 78 and struct.unpack_from("<Q", rec, 8)[0] == 2:  # EVENT_UPDATE NAME
        names[ids[struct.unpack_from("<Q", rec, 16)[0]][0]] = rec[24:].split(b"\0")[0].decode()
    elif typ == 9:
        a, st, regs, stack = ids[struct.unpack_from("<Q", rec, 8)[0]]
        if names.get(a) == "mt:alloc":
            o = 8 + 8 * 5  # IDENTIFIER IP TID TIME PERIOD
            o += 8 + 8 * struct.unpack_from("<Q", rec, o)[0]  # CALLCHAIN
            abi = struct.unpack_from("<Q", rec, o)[0]
            sp = struct.unpack_from("<Q", rec, o + 8 + 8 * bin(regs & 0x7f).count("1"))[0] if abi else 0
            o += 8 + (8 * bin(regs).count("1") if abi else 0)  # REGS_USER
            ssz = struct.unpack_from("<Q", rec, o)[0]
            dyn = struct.unpack_from("<Q", rec, o + 8 + ssz)[0] if ssz else 0
            print(stack, sp, ssz, dyn)
    pos += size
assert pos == len(d), "trailing bytes"
PY
python3 "$T/dumps.py" "$T/s.data" >"$T/dumps" || fail "stream: $(cat "$T/dumps")"
awk '{ if ($3 == $1 && $4 == $1) full++
       else if ($2 && $4 > 0 && $4 < $1 && $3 == int(($4 + 7) / 8) * 8 && (4096 - ($2 + $4) % 4096) % 4096 < 64) top++
       else { short++; if (!first) first = $0 } }
     END { print full + 0, top + 0, short + 0, first; exit (short || full < 1000 || top > 16) }' \
	"$T/dumps" >"$T/dyn" || fail "stream: full, at the stack's top, other (stack sp size dyn): $(cat "$T/dyn")"
"$MT_BUILD/bin/mt-unwind" "$T/s.data" >/dev/null 2>"$T/uerr" || fail "mt-unwind: $(cat "$T/uerr")"
! grep -q 'dropped' "$T/uerr" || fail "events missing without a LOST record: $(grep dropped "$T/uerr")"
# capture_bench's threads keep 32 KiB on their stacks: the 8 KiB dumps cut
# their stacks, and mt-unwind says what to do.
grep -q 'stacks end where their stack dump ends: their outer callers are missing; record with a larger dump (mt-capture --stack-size 65528' "$T/uerr" ||
	fail "no word of the cut stacks: $(cat "$T/uerr")"
read -r full at_top _ <"$T/dyn"

# Shallow stacks with --stack-size 65528: a worker thread's dump stops at
# its stack's end (the page of its thread descriptor) and holds only the
# bytes copied, with no padding up to 64 KiB.
"$CAP" --rate 1 --stack-size 65528 -o "$T/w.data" -- "$MT_FIXTURES/capture_alloc" 1 50 >/dev/null \
	2>"$T/w.err" || fail "mt-capture: $(cat "$T/w.err")"
python3 "$T/dumps.py" "$T/w.data" >"$T/wdumps" || fail "stream: $(cat "$T/wdumps")"
awk '$4 < $1 { cut++; if ($3 != int(($4 + 7) / 8) * 8) { bad++; if (!first) first = $0 } }
     END { print cut + 0, bad + 0, first; exit (bad || cut < 100) }' "$T/wdumps" >"$T/wcut" ||
	fail "dumps cut short (count, padded, first padded: stack sp size dyn): $(cat "$T/wcut")"
"$MT_BUILD/bin/mt-unwind" -q "$T/w.data" | grep '^alloc' | grep -q 'worker;malloc end=complete$' ||
	fail "the shallow dumps do not unwind"
read -r cut _ <"$T/wcut"
echo "ok: $full mt:alloc samples with a full 8 KiB stack, $at_top cut at the stack's top; nothing dropped ($lost lost in LOST records); $cut dumps of a worker thread with --stack-size 65528, each only the bytes copied"
