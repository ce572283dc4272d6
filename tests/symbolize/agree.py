#!/usr/bin/env python3
"""Compare mt-unwind --addrs frames with perf script's, sample by sample.

usage: agree.py PERF_SCRIPT_OUTPUT MT_UNWIND_OUTPUT [MIN_PERCENT]

PERF_SCRIPT_OUTPUT is `perf script --ns -F pid,tid,time,ip,dso` (perf prints
each callchain address as the DSO's address, the return address minus one for
callers, like mt-unwind --addrs).  MT_UNWIND_OUTPUT is `mt-unwind --addrs
--no-inline`.  Samples are matched by tid and time; each sample's frames are
compared leaf first, up to the deepest frame both reach (kernel frames,
which mt-unwind does not unwind, are left out).  Prints the figures and
exits 1 when fewer than MIN_PERCENT (default 99) of the samples agree or when
samples are missing from either side.
"""
import os
import re
import sys

HEAD = re.compile(r'^\s*(\d+)/(\d+)\s+(\d+)\.(\d+):\s*(.*)$')
FRAME = re.compile(r'^\s+([0-9a-f]+)\s+\((.*)\)\s*$')


def perf_samples(path):
    out = {}
    cur = None
    with open(path, errors='replace') as f:
        for line in f:
            m = HEAD.match(line)
            if m:
                if 'PERF_RECORD_' in m.group(5):
                    cur = None
                    continue
                key = (int(m.group(2)), int(m.group(3)) * 10**9 + int(m.group(4)))
                cur = []
                out[key] = cur
                continue
            m = FRAME.match(line)
            if m and cur is not None:
                dso = m.group(2)
                if dso.startswith('[kernel') or dso.startswith('[guest'):
                    continue
                name = 'unknown' if dso == '[unknown]' else os.path.basename(dso)
                cur.append('%s+0x%x' % (name, int(m.group(1), 16)))
    return out


def mt_samples(path):
    out = {}
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('#'):
                continue
            fields = line.rstrip('\n').split('\t')
            if len(fields) != 6:
                continue
            tid = int(fields[1].split('/')[1])
            stack, _, end = fields[5].rpartition(' end=')
            frames = [fr[1:fr.rindex(']')] for fr in stack.split(';') if fr]
            out[(tid, int(fields[2]))] = (frames[::-1], end)
    return out


def main():
    perf = perf_samples(sys.argv[1])
    mt = mt_samples(sys.argv[2])
    need = float(sys.argv[3]) if len(sys.argv) > 3 else 99.0
    keys = sorted(set(perf) & set(mt))
    same = same_depth = 0
    shown = 0
    for k in keys:
        a, (b, end) = perf[k], mt[k]
        n = min(len(a), len(b))
        if n > 0 and a[:n] == b[:n]:
            same += 1
            same_depth += len(a) == len(b)
        elif shown < 3:
            shown += 1
            print('differs: tid %d time %d (mt end=%s)\n  perf: %s\n  mt:   %s'
                  % (k[0], k[1], end, ' '.join(a[:12]), ' '.join(b[:12])))
    total = len(keys)
    pct = 100.0 * same / total if total else 0.0
    print('samples: perf %d, mt-unwind %d, matched %d; identical %d (%.2f%%), '
          'same depth too %d' % (len(perf), len(mt), total, same, pct, same_depth))
    ok = total > 0 and pct >= need and len(perf) == len(mt) == total
    sys.exit(0 if ok else 1)


main()
