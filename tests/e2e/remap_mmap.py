#!/usr/bin/env python3
"""Rename a mapped file in a perf stream (pipe mode: the 16-byte header,
then records): every MMAP2 record whose filename is OLD names NEW instead,
the record resized.  Prints the number of records rewritten on stdout.
usage: remap_mmap.py IN OUT OLD NEW"""
import struct
import sys

PERF_RECORD_MMAP2 = 10
FILENAME_AT = 8 + 64	# header, then pid..prot/flags (MMAP2's fixed part)


def main():
    src, dst, old, new = sys.argv[1:5]
    data = open(src, 'rb').read()
    out = bytearray(data[:16])
    off, n = 16, 0
    while off + 8 <= len(data):
        rtype, misc, size = struct.unpack_from('<IHH', data, off)
        if size < 8 or off + size > len(data):
            sys.exit('%s: bad record at offset %d' % (src, off))
        rec = data[off:off + size]
        if rtype == PERF_RECORD_MMAP2:
            name = rec[FILENAME_AT:].split(b'\0')[0]
            if name == old.encode():
                padded = (len(name) + 1 + 7) & ~7
                trailer = rec[FILENAME_AT + padded:]	# sample_id
                nf = new.encode() + b'\0'
                nf += b'\0' * (((len(nf) + 7) & ~7) - len(nf))
                body = rec[8:FILENAME_AT] + nf + trailer
                rec = struct.pack('<IHH', rtype, misc, 8 + len(body)) + body
                n += 1
        out += rec
        off += size
    open(dst, 'wb').write(out)
    print(n)


main()
