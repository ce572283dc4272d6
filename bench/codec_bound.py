#!/usr/bin/env python3
"""How small general-purpose compressors get a perf.data file's samples when
each sample's fields and its stack are compressed apart (two streams: the
records without their stack bytes, then the stacks' dyn_size bytes; the
stale bytes past dyn_size and the other records left out).  bench/codec.sh
prints it beside mt-encode's size: a reference for what the size target asks
of a stream, not a bound in theory.

usage: codec_bound.py FILE.data   (perf.data file mode, one sample layout)
prints: samples, then per sample: head and stack bytes in, and bytes out
for zstd -19 and xz -9e on each stream and in all.
"""
import lzma
import struct
import subprocess
import sys

SAMPLE = 9
# sample_type bits before REGS_USER: (bit, fixed size in bytes)
FIXED = [(1 << 16, 8), (1 << 0, 8), (1 << 1, 8), (1 << 2, 8), (1 << 3, 8),
         (1 << 6, 8), (1 << 9, 8), (1 << 7, 8), (1 << 8, 8)]
CALLCHAIN, READ, RAW, BRANCH_STACK = 1 << 5, 1 << 4, 1 << 10, 1 << 11
REGS_USER, STACK_USER = 1 << 12, 1 << 13


def die(msg):
    sys.exit("codec_bound.py: " + msg)


def layout(f):
    if f[:8] != b"PERFILE2":
        die("not a perf.data file (file mode)")
    attr_size, = struct.unpack_from("<Q", f, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from("<QQQQ", f, 24)
    kinds = set()
    for off in range(attrs_off, attrs_off + attrs_size, attr_size):
        sample_type, = struct.unpack_from("<Q", f, off + 24)
        regs_mask, = struct.unpack_from("<Q", f, off + 80)
        kinds.add((sample_type, bin(regs_mask).count("1")))
    if len(kinds) != 1:
        die("%d sample layouts: one event only" % len(kinds))
    sample_type, nr_regs = kinds.pop()
    if sample_type & (READ | RAW | BRANCH_STACK):
        die("READ, RAW or BRANCH_STACK samples are not handled")
    if not sample_type & STACK_USER:
        die("no STACK_USER in the samples")
    return sample_type, nr_regs, data_off, data_off + data_size


def split(f):
    sample_type, nr_regs, pos, end = layout(f)
    heads, stacks, n = [], [], 0
    while pos + 8 <= end:
        typ, _, size = struct.unpack_from("<IHH", f, pos)
        if size < 8 or pos + size > end:
            die("bad record size at offset %d" % pos)
        if typ == SAMPLE:
            p = pos + 8 + sum(s for bit, s in FIXED if sample_type & bit)
            if sample_type & CALLCHAIN:
                nr, = struct.unpack_from("<Q", f, p)
                p += 8 + 8 * nr
            if sample_type & REGS_USER:
                abi, = struct.unpack_from("<Q", f, p)
                p += 8 + (8 * nr_regs if abi else 0)
            stack_size, = struct.unpack_from("<Q", f, p)
            p += 8
            dyn = 0
            if stack_size:
                dyn, = struct.unpack_from("<Q", f, p + stack_size)
            if p + stack_size + (8 if stack_size else 0) > pos + size or dyn > stack_size:
                die("sample at offset %d does not parse" % pos)
            heads.append(f[pos:p] + f[p + stack_size:pos + size])
            stacks.append(f[p:p + dyn])
            n += 1
        pos += size
    return n, b"".join(heads), b"".join(stacks)


def zstd19(data):
    out = subprocess.run(["zstd", "-q", "-19", "-c"], input=data, stdout=subprocess.PIPE,
                         check=True).stdout
    return len(out)


def xz9e(data):
    return len(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))


def main():
    if len(sys.argv) != 2:
        die("usage: codec_bound.py FILE.data")
    with open(sys.argv[1], "rb") as fh:
        n, heads, stacks = split(fh.read())
    if not n:
        die("no samples")
    z = (zstd19(heads), zstd19(stacks))
    x = (xz9e(heads), xz9e(stacks))
    print("samples %d" % n)
    print("in       head %.1f  stack %.1f" % (len(heads) / n, len(stacks) / n))
    print("zstd -19 head %.1f  stack %.1f  all %.1f" % (z[0] / n, z[1] / n, sum(z) / n))
    print("xz -9e   head %.1f  stack %.1f  all %.1f" % (x[0] / n, x[1] / n, sum(x) / n))


if __name__ == "__main__":
    main()
