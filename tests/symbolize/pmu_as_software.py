#!/usr/bin/env python3
"""Copy a perf pipe stream with its dynamic-PMU events (the uprobe PMU's:
mt-capture's sample and trace modes) declared as software events.

perf 6.1's perf script prints no addresses in the callchains of events whose
attr type is a dynamic PMU's (type 6 and up) in a pipe stream: the frames
come out as empty lines.  Declared as software dummy events, the same
samples print with their frames, so that tests/symbolize/agree.py can hold
mt-unwind against perf on them.  Only the HEADER_ATTR records change; the
samples, their layout and the event names stay as they are.

usage: pmu_as_software.py IN OUT
"""
import struct
import sys

PIPE_HEADER = 16
HEADER_ATTR = 64
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY = 1, 9
FIRST_DYNAMIC_TYPE = 6


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: pmu_as_software.py IN OUT")
    with open(sys.argv[1], 'rb') as f:
        data = bytearray(f.read())
    if data[:8] != b'PERFILE2' or struct.unpack_from('<Q', data, 8)[0] != PIPE_HEADER:
        sys.exit("pmu_as_software.py: %s: not a perf pipe stream" % sys.argv[1])
    pos = PIPE_HEADER
    while pos + 8 <= len(data):
        typ, _, size = struct.unpack_from('<IHH', data, pos)
        if size < 8:
            sys.exit("pmu_as_software.py: bad record size at offset %d" % pos)
        if typ == HEADER_ATTR and struct.unpack_from('<I', data, pos + 8)[0] >= FIRST_DYNAMIC_TYPE:
            struct.pack_into('<IIQ', data, pos + 8, PERF_TYPE_SOFTWARE,
                             struct.unpack_from('<I', data, pos + 12)[0], PERF_COUNT_SW_DUMMY)
        pos += size
    with open(sys.argv[2], 'wb') as f:
        f.write(data)


if __name__ == '__main__':
    main()
