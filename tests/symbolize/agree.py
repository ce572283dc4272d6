#!/usr/bin/env python3
"""Compare mt-unwind --addrs frames with perf script's, sample by sample.

usage: agree.py PERF_SCRIPT_OUTPUT MT_UNWIND_OUTPUT [MIN_PERCENT]

PERF_SCRIPT_OUTPUT is `perf script --ns -F pid,tid,time,ip,dso --no-inline`:
perf prints each callchain address as an offset into the DSO's file (the
return address minus one for callers, as mt-unwind does); it is turned into
the ELF virtual address mt-unwind --addrs prints with the file's PT_LOAD
headers (readelf -lW), so non-PIE executables compare too.  MT_UNWIND_OUTPUT is `mt-unwind --addrs
--no-inline`.  Events without any callchain in perf's output (sample mode's
mt:free and mt:totals) are left out.  Samples are matched by tid and time; each sample's frames are
compared leaf first, up to the deepest frame both reach (kernel frames,
which mt-unwind does not unwind, are left out: by their DSO's name, or by
their address in the kernel's half when the stream gives perf no kernel
mapping, as mt-capture's does not).  Prints the figures and
exits 1 when fewer than MIN_PERCENT (default 99) of the samples agree or when
samples are missing from either side.

Where the two differ, a sample counts against mt-unwind unless perf's own
stack is provably wrong from the first difference on.  A caller is
impossible when it is in no mapping ([unknown], e.g. a return address read
from the wrong stack slot), in the heap or a stack, outside its file's
executable segments, or not after a call instruction; implausible, too,
when it follows a direct call (not to a PLT stub) whose target function (by
its FDE) does not contain the frame below, or whose frame below is in
another module (a tail call also does that).  Perf is wrong when, at the
first difference, its caller is impossible and mt-unwind's is not, or
when one of its callers from there on is impossible and none of
mt-unwind's is; or the same with implausible for impossible, mt-unwind's
caller at the first difference plausible.  Such samples are reported and
left out of the percentage.
"""
import bisect
import functools
import os
import re
import subprocess
import sys


def readelf(flag, path):
    """readelf's output for path ('' when it cannot run)."""
    try:
        return subprocess.run(['readelf', flag, path], capture_output=True, text=True).stdout
    except OSError:
        return ''


@functools.lru_cache(maxsize=None)
def segments(path):
    """path's PT_LOAD segments: (file offset, vaddr, file size, executable)."""
    segs = []
    for line in readelf('-lW', path).splitlines():
        f = line.split()
        if f and f[0] == 'LOAD':
            segs.append((int(f[1], 16), int(f[2], 16), int(f[4], 16), 'E' in ''.join(f[6:-1])))
    return segs


def to_vaddr(path, off):
    """File offset -> ELF vaddr through the PT_LOAD segment holding it."""
    for offset, vaddr, filesz, _ in segments(path):
        if (offset & ~0xfff) <= off < offset + filesz:
            return off + vaddr - offset
    return off


def executable(path, vaddr):
    """Is vaddr in one of path's PT_LOAD segments with PF_X?"""
    return any(va <= vaddr < va + filesz and x for _, va, filesz, x in segments(path))

HEAD = re.compile(r'^\s*(\d+)/(\d+)\s+(\d+)\.(\d+):\s*(.*)$')
# "ADDR (DSO)", or "ADDR SYMBOL (DSO)": perf 6.1 adds the symbol for pipe-mode
# streams (mt-capture's) whatever -F asks; the DSO is the last parenthesis.
FRAME = re.compile(r'^\s+([0-9a-f]+)\s+(?:.*\s)?\(([^()]*)\)\s*$')


@functools.lru_cache(maxsize=None)
def fde_ranges(path):
    return sorted((int(m.group(1), 16), int(m.group(2), 16)) for m in
                  re.finditer(r'FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)', readelf('-wf', path)))


def fde_of(path, addr):
    r = fde_ranges(path)
    i = bisect.bisect_right(r, (addr, float('inf'))) - 1
    if i >= 0 and r[i][0] <= addr < r[i][1]:
        return r[i]
    return None


@functools.lru_cache(maxsize=None)
def plt_ranges(path):
    """path's .plt sections (calls through the PLT), as [lo, hi)."""
    return [(int(m.group(2), 16), int(m.group(2), 16) + int(m.group(3), 16)) for m in
            re.finditer(r'\]\s+(\.plt\S*)\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)',
                        readelf('-SW', path))]


def in_plt(path, vaddr):
    """Is vaddr in one of path's .plt sections?"""
    return any(lo <= vaddr < hi for lo, hi in plt_ranges(path))


def read_at(path, vaddr, n):
    for offset, va, filesz, _ in segments(path):
        if va <= vaddr and vaddr + n <= va + filesz:
            with open(path, 'rb') as f:
                f.seek(vaddr - va + offset)
                return f.read(n)
    return None


def frame_possible(frames, paths, i):
    """Can frames[i] be a caller at all: mapped, in code, after a call?"""
    name, addr = frames[i].rsplit('+', 1)
    if name in ('unknown', '[heap]', '[stack]'):
        return False    # no code there (programs without a JIT)
    path = paths.get(name)
    if not path:
        return True     # no file to check against
    ret = int(addr, 16) + 1
    if not executable(path, ret - 1):
        return False
    code = read_at(path, ret - 8, 8)
    if not code or code[3] == 0xe8:
        return True
    # An indirect call (ff /2, 2 to 7 bytes long) must end at ret.
    return any(code[8 - k] == 0xff and (code[9 - k] >> 3) & 7 == 2 for k in range(2, 8))


def frame_ok(frames, paths, i):
    """Is frames[i] (a caller) plausible as the caller of frames[i-1]?"""
    if not frame_possible(frames, paths, i):
        return False
    name, addr = frames[i].rsplit('+', 1)
    below = frames[i - 1].rsplit('+', 1)
    path = paths.get(name)
    ret = int(addr, 16) + 1
    code = read_at(path, ret - 8, 8) if path else None
    if not code or code[3] != 0xe8:
        return True     # no file, or an indirect call
    code = code[3:]
    target = (ret + int.from_bytes(code[1:5], 'little', signed=True)) & (2**64 - 1)
    if in_plt(path, target):
        return True     # to another module, or this one, through the PLT
    if below[0] != name:
        return False    # a direct call stays in its module
    fde = fde_of(path, target)
    if fde is None:
        return True
    callee = int(below[1], 16)
    return fde[0] <= callee < fde[1]


def perf_wrong(a, b, paths):
    """a: perf frames, b: mt-unwind frames, leaf first."""
    for i in range(1, min(len(a), len(b))):
        if a[i] != b[i]:
            for check in (frame_possible, frame_ok):
                if not check(b, paths, i):
                    return False
                if not check(a, paths, i):
                    return True
                if (not all(check(a, paths, j) for j in range(i, len(a))) and
                        all(check(b, paths, j) for j in range(i, len(b)))):
                    return True
            return False
    return False


def perf_samples(path):
    out = {}
    cur = None
    paths = {}
    stackless = set()   # events with no callchain at all (mt:free, mt:totals)
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
                stackless.add(key)
                continue
            m = FRAME.match(line)
            if m and cur is not None:
                stackless.discard(key)
                dso = m.group(2)
                addr = int(m.group(1), 16)
                # kernel frames: by name, or by address where the stream has
                # no kernel mapping for perf to name them by (mt-capture's)
                if dso.startswith('[kernel') or dso.startswith('[guest') or addr >> 63:
                    continue
                if dso.startswith('/'):
                    addr = to_vaddr(dso, addr)
                name = 'unknown' if dso == '[unknown]' else os.path.basename(dso)
                if dso.startswith('/') and os.path.isfile(dso):    # not //anon
                    paths[name] = dso
                cur.append('%s+0x%x' % (name, addr))
    for key in stackless:
        del out[key]
    # mt-unwind keeps only the outermost frame of the sampler (the function
    # the program called: docs/formats/unwind-text.md), perf all of them
    for frames in out.values():
        k = 0
        while k < len(frames) and frames[k].startswith('libmt-sampler.so'):
            k += 1
        del frames[:max(k - 1, 0)]
    return out, paths


def mt_samples(path):
    out = {}
    with open(path, errors='replace') as f:
        for line in f:
            if line.startswith('#'):
                continue
            fields = line.rstrip('\n').split('\t')
            if len(fields) != 6 or fields[0] not in ('sample', 'alloc'):
                continue
            tid = int(fields[1].split('/')[1])
            stack, _, end = fields[5].rpartition(' end=')
            frames = [fr[1:fr.rindex(']')] for fr in stack.split(';') if fr]
            out[(tid, int(fields[2]))] = (frames[::-1], end)
    return out


def main():
    perf, paths = perf_samples(sys.argv[1])
    mt = mt_samples(sys.argv[2])
    need = float(sys.argv[3]) if len(sys.argv) > 3 else 99.0
    keys = sorted(set(perf) & set(mt))
    same = same_depth = empty = wrong = 0
    mt_empty = 0        # of them, mt-unwind found no user frame where perf did
    shown = 0
    for k in keys:
        a, (b, end) = perf[k], mt[k]
        n = min(len(a), len(b))
        if n == 0:
            # one side has no user frame: nothing to compare.  Only
            # mt-unwind's misses count against it: where perf found none and
            # mt-unwind some, perf failed (as where it is provably wrong)
            empty += 1
            mt_empty += bool(a) and not b
            print('no user frame from %s: tid %d time %d (mt end=%s)\n  perf: %s\n  mt:   %s'
                  % ('either' if not a and not b else 'perf' if not a else 'mt-unwind',
                     k[0], k[1], end, ' '.join(a[:8]), ' '.join(b[:8])))
            continue
        if a[:n] == b[:n]:
            same += 1
            same_depth += len(a) == len(b)
        elif perf_wrong(a, b, paths):
            wrong += 1
            print('perf wrong: tid %d time %d\n  perf: %s\n  mt:   %s'
                  % (k[0], k[1], ' '.join(a[:8]), ' '.join(b[:8])))
        elif shown < 3:
            shown += 1
            print('differs: tid %d time %d (mt end=%s)\n  perf: %s\n  mt:   %s'
                  % (k[0], k[1], end, ' '.join(a[:12]), ' '.join(b[:12])))
    total = len(keys) - empty - wrong
    pct = 100.0 * same / total if total else 0.0
    print('samples: perf %d, mt-unwind %d, matched %d, %d without user frames on '
          'one side (%d of them mt-unwind\'s), %d where perf is provably wrong; of %d '
          'compared: identical %d (%.2f%%), same depth too %d'
          % (len(perf), len(mt), len(keys), empty, mt_empty, wrong, total, same, pct,
             same_depth))
    ok = (total > 0 and pct >= need and len(perf) == len(mt) == len(keys)
          and mt_empty <= 0.01 * len(keys))
    sys.exit(0 if ok else 1)


main()
