#!/bin/bash
# Reading the ring buffers loses nothing and garbles nothing: on a capture
# that wraps each ring many times (capture_bench's threads, whose stacks are
# deeper than the 8 KiB dump), every mt:alloc sample carries a full stack
# (dyn_size 8192: a record that wraps around a ring's end is copied whole),
# and no marker event is missing without a LOST record (mt-unwind compares
# the sampler's marker counts with the events it saw).  The one allowed
# short dump is one that ends where the stack's mapping ends, on a page
# boundary (or within 64 bytes of it, should a copy stop short): the main thread's first allocations can run within 8 KiB of the
# stack's top (the kernel puts the initial stack pointer a random 0-8 KiB
# below the environment, which is small on CI's machines).
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

"$CAP" --mmap-pages 1024 -o "$T/s.data" -- "$MT_FIXTURES/capture_bench" 4 1000000 >/dev/null 2>"$T/err" ||
	fail "mt-capture: $(cat "$T/err")"
lost=$(capture_lost "$T/err")
python3 - "$T/s.data" >"$T/dyn" <<'PY' || fail "stream: $(cat "$T/dyn")"
import struct, sys
d = open(sys.argv[1], "rb").read()
pos, ids, names, nattr, full, at_top, short = 16, {}, {}, 0, 0, 0, []
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
        nregs = bin(regs).count("1")
        if names.get(a) == "mt:alloc":
            o = 8 + 8 * 5  # IDENTIFIER IP TID TIME PERIOD
            o += 8 + 8 * struct.unpack_from("<Q", rec, o)[0]  # CALLCHAIN
            abi = struct.unpack_from("<Q", rec, o)[0]
            sp = struct.unpack_from("<Q", rec, o + 8 + 8 * bin(regs & 0x7f).count("1"))[0]  # SP is bit 7
            o += 8 + (8 * nregs if abi else 0)  # REGS_USER
            ssz = struct.unpack_from("<Q", rec, o)[0]
            dyn = struct.unpack_from("<Q", rec, o + 8 + ssz)[0]
            if ssz == stack and dyn == stack:
                full += 1
            elif abi and ssz == stack and 0 < dyn < stack and (-(sp + dyn)) % 4096 < 64:
                at_top += 1
            else:
                short.append((pos, ssz, dyn))
    pos += size
assert pos == len(d), "trailing bytes"
print(full, at_top, len(short), short[:3])
sys.exit(1 if short or full < 1000 or at_top > 16 else 0)
PY
"$MT_BUILD/bin/mt-unwind" "$T/s.data" >/dev/null 2>"$T/uerr" || fail "mt-unwind: $(cat "$T/uerr")"
! grep -q 'dropped' "$T/uerr" || fail "events missing without a LOST record: $(grep dropped "$T/uerr")"
# capture_bench's threads keep 32 KiB on their stacks: the 8 KiB dumps cut
# their stacks, and mt-unwind says what to do.
grep -q 'stacks end where their stack dump ends: their outer callers are missing; record with a larger dump (mt-capture --stack-size 65528' "$T/uerr" ||
	fail "no word of the cut stacks: $(cat "$T/uerr")"
read -r full at_top _ <"$T/dyn"
echo "ok: $full mt:alloc samples with a full 8 KiB stack, $at_top cut at the stack's top; nothing dropped ($lost lost in LOST records)"
