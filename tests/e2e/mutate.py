#!/usr/bin/env python3
"""Runs a tool on mutated copies of an input: random bytes changed, bits
flipped, runs of bytes deleted or inserted, the end cut off.  Seeded, so a
failure can be replayed.  A run fails when the tool dies by a signal or
exits with a code not in --ok, prints a sanitizer report, or runs past the
timeout; with --roundtrip (mt-encode), also when decoding what it wrote
does not give the mutated input back.

usage: mutate.py --seed N --runs N --ok 0,1 [--roundtrip] INPUT -- TOOL ARGS... {}
({} is replaced by the mutated file's path; the failing inputs are kept
next to INPUT as INPUT.fail-N)"""
import os
import random
import subprocess
import sys


def mutate(rng, src):
    b = bytearray(src)
    for _ in range(rng.choice([1, 1, 2, 4, 16])):
        if not b:
            break
        k = rng.randrange(len(b))
        op = rng.random()
        if op < 0.5:
            b[k] = rng.randrange(256)
        elif op < 0.7:
            b[k] ^= 1 << rng.randrange(8)
        elif op < 0.85:
            del b[k:k + rng.randrange(1, 64)]
        else:
            b[k:k] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 16)))
    if rng.random() < 0.1 and b:
        del b[rng.randrange(len(b)):]
    return bytes(b)


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, 'timed out after %d s' % timeout
    return p.returncode, p.stderr.decode(errors='replace')


def main():
    args = sys.argv[1:]
    sep = args.index('--')
    opts, tool = args[:sep], args[sep + 1:]
    seed = int(opts[opts.index('--seed') + 1])
    runs = int(opts[opts.index('--runs') + 1])
    ok = {int(x) for x in opts[opts.index('--ok') + 1].split(',')}
    roundtrip = '--roundtrip' in opts
    src_path = opts[-1]
    src = open(src_path, 'rb').read()
    rng = random.Random(seed)
    work = src_path + '.mut'
    bad = 0
    for i in range(runs):
        data = mutate(rng, src)
        with open(work, 'wb') as f:
            f.write(data)
        rc, err = run([a.replace('{}', work) for a in tool], 30)
        why = None
        if rc is None:
            why = err
        elif rc not in ok:
            why = 'exit %d' % rc
        elif 'Sanitizer' in err or 'runtime error' in err:
            why = 'sanitizer report'
        elif roundtrip and os.path.exists(work + '.mtz'):
            rc2, err2 = run([tool[0], '-d', '-q', '-o', work + '.back', work + '.mtz'], 30)
            back = open(work + '.back', 'rb').read() if rc2 == 0 else None
            if back != data:
                why = 'decoding does not give the input back (exit %s)' % rc2
        for f in (work + '.mtz', work + '.back'):
            if os.path.exists(f):
                os.unlink(f)
        if why:
            bad += 1
            keep = '%s.fail-%d' % (src_path, i)
            os.rename(work, keep)
            print('run %d (seed %d): %s; input kept as %s\n%s' % (i, seed, why, keep,
                                                                 err[-600:]))
    print('%d of %d mutated inputs failed' % (bad, runs))
    sys.exit(1 if bad else 0)


main()
