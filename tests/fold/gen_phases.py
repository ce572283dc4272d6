#!/usr/bin/env python3
"""mt-unwind text (docs/formats/unwind-text.md, with the tick lines and seq=
weights of issue 27) for a simulated three-phase program, with the exact
figures the sampler would have, for mt-fold's tests.

Phase 1: make_temp allocates TEMP_N blocks of TEMP_SIZE bytes and frees each
at once (no allocation in between: temporaries).  Phase 2: build_peak
allocates PEAK_N blocks of PEAK_SIZE, all live together at the process peak,
then frees them.  Phase 3: keep_forever allocates KEEP_N blocks of KEEP_SIZE
that live to exit.  Sampling is the sampler's: a Poisson process of mean gap
RATE bytes over the requested bytes; an allocation is written with the
points that fell on it.  A block is its size rounded up to 16 plus 16 (what
the exact live figures count).  Ticks every 10 ms of simulated time.

usage: gen_phases.py [--seed N] [--rate R] [--pid P] [--no-ticks] [--no-seq]
       [--exact FILE]   (writes the exact figures as key=value lines)
"""
import argparse
import random
import sys

TEMP_N, TEMP_SIZE = 4000, 64
PEAK_N, PEAK_SIZE = 400, 4096
KEEP_N, KEEP_SIZE = 100, 1024
STEP = 25000            # ns of simulated time per allocation or free
TICK = 10_000_000       # ns between ticks
RSS_BASE = 3 << 20      # resident bytes besides the heap

STACKS = {
    "make_temp": "_start;main (phases.c:40);make_temp (phases.c:12);malloc",
    "build_peak": "_start;main (phases.c:41);build_peak (phases.c:20);malloc",
    "keep_forever": "_start;main (phases.c:42);keep_forever (phases.c:30);malloc",
}


def block(size):
    return (size + 15) // 16 * 16 + 16


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rate", type=int, default=16384)
    ap.add_argument("--pid", type=int, default=4242)
    ap.add_argument("--no-ticks", action="store_true")
    ap.add_argument("--no-seq", action="store_true")
    ap.add_argument("--exact")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    pid, rate = a.pid, a.rate
    out = sys.stdout
    out.write("# mt-unwind 1\n# input: phases (gen_phases.py --seed %d --rate %d)\n"
              % (a.seed, rate))
    st = dict(t=1_000_000_000, live=0, alloc_bytes=0, block_bytes=0, allocs=0, frees=0,
              peak=0, peak_time=0, tick=0, next_tick=0, gap=rnd.expovariate(1 / rate))
    st["next_tick"] = st["t"]
    exact = {"temp_bytes": 0, "temp_objects": 0, "peak_bytes": 0, "peak_objects": 0,
             "inuse_bytes": 0, "inuse_objects": 0}
    live_req = {}           # ptr -> (site, size)
    ptrs = iter(range(0x10000, 1 << 40, 0x2000))

    def tick(final=False):
        if a.no_ticks:
            return
        w = ("live=%d alloc_bytes=%d alloc_block_bytes=%d allocs=%d frees=%d rss=%d "
             "peak=%d peak_time=%d peak_error=%d period=%d"
             % (st["live"], st["alloc_bytes"], st["block_bytes"], st["allocs"], st["frees"],
                RSS_BASE + max(st["peak"], 0) if final else RSS_BASE + st["live"],
                st["peak"], st["peak_time"], 0, TICK))
        out.write("tick\t%d/%d\t%d\tphases\t%s\t end=none\n" % (pid, pid, st["t"], w))
        st["tick"] += 1

    def advance():
        st["t"] += STEP
        while st["t"] >= st["next_tick"] + TICK:
            st["next_tick"] += TICK
            save = st["t"]
            st["t"] = st["next_tick"]
            tick()
            st["t"] = save

    def points(size):
        k = 0
        left = float(size)
        while st["gap"] <= left:
            left -= st["gap"]
            k += 1
            st["gap"] = rnd.expovariate(1 / rate)
        st["gap"] -= left
        return k

    def alloc(site, size):
        advance()
        st["allocs"] += 1
        st["alloc_bytes"] += size
        st["block_bytes"] += block(size)
        st["live"] += block(size)
        if st["live"] > st["peak"]:
            st["peak"] = st["live"]
            st["peak_time"] = st["t"]
        ptr = next(ptrs)
        k = points(size) if rate > 1 else size
        seq = st["allocs"]
        if k:
            w = "size=%d ptr=0x%x fn=malloc points=%d rate=%d" % (size, ptr, k, rate)
            if not a.no_seq:
                w += " seq=%d" % seq
            out.write("alloc\t%d/%d\t%d\tphases\t%s\t%s end=complete\n"
                      % (pid, pid, st["t"], w, STACKS[site]))
        live_req[ptr] = (site, size, k > 0)
        return ptr

    def free(ptr):
        advance()
        site, size, sampled = live_req.pop(ptr)
        st["frees"] += 1
        st["live"] -= block(size)
        if sampled:
            w = "ptr=0x%x rate=%d" % (ptr, rate)
            if not a.no_seq:
                w += " seq=%d" % st["allocs"]
            out.write("free\t%d/%d\t%d\tphases\t%s\t end=none\n" % (pid, pid, st["t"], w))

    tick()                  # start-up
    for _ in range(TEMP_N):
        free(alloc("make_temp", TEMP_SIZE))
        exact["temp_bytes"] += TEMP_SIZE
        exact["temp_objects"] += 1
    peak = [alloc("build_peak", PEAK_SIZE) for _ in range(PEAK_N)]
    exact["peak_bytes"] = PEAK_N * PEAK_SIZE
    exact["peak_objects"] = PEAK_N
    for p in peak:
        free(p)
    # the last block of the peak is freed before the thread's next
    # allocation: a temporary too (heaptrack's definition)
    exact["temp_bytes"] += PEAK_SIZE
    exact["temp_objects"] += 1
    for _ in range(KEEP_N):
        alloc("keep_forever", KEEP_SIZE)
    exact["inuse_bytes"] = KEEP_N * KEEP_SIZE
    exact["inuse_objects"] = KEEP_N
    advance()
    tick(final=True)
    w = ("scope=process alloc_bytes=%d allocs=%d frees=%d freed_bytes=%d peak_bytes=%d "
         "peak_error=0 rate=%d" % (st["alloc_bytes"], st["allocs"], st["frees"],
                                   st["block_bytes"] - st["live"], st["peak"], rate))
    out.write("totals\t%d/%d\t%d\tphases\t%s\t end=none\n" % (pid, pid, st["t"] + 1, w))
    if a.exact:
        with open(a.exact, "w") as f:
            exact["peak_block"] = st["peak"]
            exact["peak_time"] = st["peak_time"]
            exact["end_block"] = st["live"]
            for k in sorted(exact):
                f.write("%s=%d\n" % (k, exact[k]))


main()
