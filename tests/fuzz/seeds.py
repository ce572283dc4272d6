#!/usr/bin/env python3
"""Seed inputs for the fuzz targets (tests/fuzz/fuzz.h), from real files.

  seeds.py mtz_frame FILE.mtz OUTDIR   one input per frame of an .mtz file:
                                       its sections decompressed (zstd CLI),
                                       in mtz_frame.c's layout
  seeds.py perf_encode FILE OUTDIR     a perf stream with an option byte
                                       before it, one input per option set
  seeds.py fold_text FILE OUTDIR       mt-unwind text with an option byte
  seeds.py unwind_stream FILE OUTDIR   a perf stream or .mtz, option byte 0
  seeds.py elf_module ELF OUTDIR       an ELF file (at most 64 KiB) with four
                                       samples at the start of its .text
  seeds.py sample_ring - OUTDIR        sample rings laid out by hand
                                       (docs/formats/sample-ring.md)

The saved corpus in tests/fuzz/corpus was made by these from short
recordings of the test fixtures (perf record --call-graph dwarf,512 and
mt-capture in sample and trace mode, --stack-size 512-1024), and grows by
the inputs libFuzzer finds that break a target."""
import hashlib
import os
import struct
import subprocess
import sys


def save(outdir, data):
    os.makedirs(outdir, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(outdir, name), "wb") as f:
        f.write(data)


def mtz_frames(path):
    with open(path, "rb") as f:
        b = f.read()
    version, flags = struct.unpack_from("<HH", b, 8)
    nsec = 5 if version == 1 else 6
    at = 16
    while at + 48 <= len(b) and b[at:at + 4] == b"MTZF":
        comp, raw, out = struct.unpack_from("<III", b, at + 8)
        payload = b[at + 48:at + 48 + comp]
        secs, zat = [], 8 * nsec
        for i in range(nsec):
            rlen, zlen = struct.unpack_from("<II", payload, 8 * i)
            z = payload[zat:zat + zlen]
            zat += zlen
            secs.append(subprocess.run(["zstd", "-d", "-c", "-q"], input=z,
                                       capture_output=True, check=True).stdout
                        if zlen else b"")
            assert len(secs[-1]) == rlen
        yield version, flags, out, secs
        at += 48 + comp


RING_SIZE = 65536
COMMIT, RESERVED = 0x6d74636f6d6d6974, 0x6d74726573657276


def ring_record(pos, kind, stack=b"", complete=True):
    """A record at absolute position pos: kind 0 pad, 1 alloc, 2 free,
    3 totals; its size rounded up to 16."""
    size = (240 + len(stack) + 15) // 16 * 16
    word = pos ^ (COMMIT if complete else RESERVED)
    rec = struct.pack("<QII", word, size, kind)
    rec += struct.pack("<IIQ", 4242, 4243, 1000 + pos) + bytes(8 * 24)
    rec += struct.pack("<QQ", len(stack), len(stack)) + stack
    return rec + bytes(size - len(rec))


def ring_input(tail, records):
    """A sample_ring input: records laid one after another from tail."""
    data, pos = b"", tail
    for kind, stack, complete in records:
        r = ring_record(pos, kind, stack, complete)
        data += r
        pos += len(r)
    return struct.pack("<IH", tail // 16, (pos - tail) // 16) + data


def main():
    if sys.argv[1] == "sample_ring":
        outdir = sys.argv[3]
        save(outdir, ring_input(4096, [(1, bytes(range(64)), True), (2, b"", True),
                                       (3, b"", True)]))
        # the last record still being written (reserved), after two complete
        save(outdir, ring_input(RING_SIZE * 3 + 128, [(1, b"\x01" * 200, True),
                                                      (2, b"", True), (1, b"", False)]))
        # a pad record to the end of the data area, then a record at its start
        tail = RING_SIZE * 5 - 512
        pad = struct.pack("<QII", tail ^ COMMIT, 512, 0) + bytes(512 - 16)
        rec = ring_record(RING_SIZE * 5, 3)
        save(outdir, struct.pack("<IH", tail // 16, (512 + len(rec)) // 16) + pad + rec)
        return
    kind, src, outdir = sys.argv[1:4]
    if kind == "mtz_frame":
        for version, flags, out, secs in mtz_frames(src):
            if out >= 1 << 24:
                continue
            # bit 0: version 1; bit 5: version 3; bit 4: 32-bit hashes
            opt = {1: 1, 2: 0, 3: 32}[version] | (16 if flags & 2 else 0)
            data = bytes([opt]) + struct.pack("<I", out)[:3]
            for s in secs[:-1]:
                if len(s) > 0xffff:
                    break
                data += struct.pack("<H", len(s)) + s
            else:
                save(outdir, data + secs[-1])
    elif kind == "perf_encode":
        with open(src, "rb") as f:
            b = f.read()
        for opt in (0, 3, 16):
            save(outdir, bytes([opt]) + b)
    elif kind == "elf_module":
        with open(src, "rb") as f:
            elf = f.read()
        sections = subprocess.run(["readelf", "-SW", src], capture_output=True, text=True,
                                  check=True).stdout
        cols = [l.split() for l in sections.splitlines() if " .text " in l][0]
        text_off = int(cols[cols.index(".text") + 3], 16)
        m = bytes([1])  # --srcline
        for k in range(4):
            m += struct.pack("<II", text_off + 16 * k, 0)
        m += bytes(8 * 17) + bytes(256)
        save(outdir, struct.pack("<H", len(elf)) + elf + m)
    elif kind in ("fold_text", "unwind_stream"):
        with open(src, "rb") as f:
            b = f.read()
        save(outdir, bytes([0]) + b)
    else:
        sys.exit("usage: seeds.py mtz_frame|perf_encode|fold_text|unwind_stream|elf_module FILE OUTDIR")


if __name__ == "__main__":
    main()
