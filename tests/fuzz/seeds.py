#!/usr/bin/env python3
"""Seed inputs for the fuzz targets (tests/fuzz/fuzz.h), from real files.

  seeds.py mtz_frame FILE.mtz OUTDIR   one input per frame of an .mtz file:
                                       its sections decompressed (zstd CLI),
                                       in mtz_frame.c's layout
  seeds.py perf_encode FILE OUTDIR     a perf stream with an option byte
                                       before it, one input per option set
  seeds.py fold_text FILE OUTDIR       mt-unwind text with an option byte
  seeds.py unwind_stream FILE OUTDIR   a perf stream or .mtz, option byte 0

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
    version = struct.unpack_from("<H", b, 8)[0]
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
        yield version, out, secs
        at += 48 + comp


def main():
    kind, src, outdir = sys.argv[1:4]
    if kind == "mtz_frame":
        for version, out, secs in mtz_frames(src):
            if out >= 1 << 24:
                continue
            opt = 0 if version == 2 else 1
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
        for opt in (0, 3):
            save(outdir, bytes([opt]) + b)
    elif kind in ("fold_text", "unwind_stream"):
        with open(src, "rb") as f:
            b = f.read()
        save(outdir, bytes([0]) + b)
    else:
        sys.exit("usage: seeds.py mtz_frame|perf_encode|fold_text|unwind_stream FILE OUTDIR")


if __name__ == "__main__":
    main()
