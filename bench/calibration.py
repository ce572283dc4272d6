#!/usr/bin/env python3
"""Calibration of mt's intervals against heaptrack (bench/calibration.sh).

  calibration.py truth HEAPTRACK_FILE.zst  > truth.tsv
      heaptrack's exact figures, from its data file (zstd-compressed text,
      format of heaptrack 1.4's interpreted output): per function, the
      requested bytes and the allocations of every allocation whose stack
      holds it (inclusive, once per stack), and the function's self bytes
      (it is the allocation's innermost frame).  First line: the totals.

  calibration.py score truth.tsv K RUN.json...
      for the K functions of most inclusive bytes in heaptrack (named by
      it, below 90% of the total, figures 2% apart), whether each run's 95% interval of the function's
      inclusive alloc_bytes (mt-fold --json, rows "sites") holds heaptrack's
      figure.  The runs are folded with inline frames named as the function
      they are ("f_[i]" as "f": calibration.sh does it), as heaptrack names
      them: a function counts once per stack whether inlined or not.  Prints a table row per function and a summary.

heaptrack's lines used: "s LEN STRING" (strings, 1-based), "i IP MODULE
[FUNC FILE LINE]..." (instruction pointers with their function and inlined
frames, 1-based), "t IP PARENT" (trace nodes, 1-based; parent 0 = root),
"a SIZE TRACE" (allocation infos, 0-based), "+ INFO" (an allocation).
"""
import json
import math
import sys


def truth(path):
    import subprocess
    data = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    strings = [None]
    ips = [None]
    traces = [None]        # (ip index, parent)
    infos = []             # (size, trace)
    count = []             # allocations per info
    for raw in data.split(b"\n"):
        if not raw:
            continue
        c = raw[:1]
        if c == b"s":
            # "s LEN STRING": the string may hold spaces
            _, _, rest = raw.partition(b" ")
            _, _, s = rest.partition(b" ")
            strings.append(s.decode("utf-8", "replace"))
        elif c == b"i":
            f = raw.split()
            # ip, module, then (function, file, line) triples
            funcs = [int(f[k], 16) for k in range(3, len(f), 3)]
            ips.append(funcs)
        elif c == b"t":
            f = raw.split()
            traces.append((int(f[1], 16), int(f[2], 16)))
        elif c == b"a":
            f = raw.split()
            infos.append((int(f[1], 16), int(f[2], 16)))
            count.append(0)
        elif c == b"+":
            count[int(raw[2:], 16)] += 1
    tbytes = [0] * len(traces)
    tallocs = [0] * len(traces)
    for (size, t), n in zip(infos, count):
        tbytes[t] += size * n
        tallocs[t] += n
    incl, allocs, self_ = {}, {}, {}
    total = sum(tbytes)
    nallocs = sum(tallocs)
    for t in range(1, len(traces)):
        if not tallocs[t]:
            continue
        seen = set()
        u = t
        leaf = True
        while u:
            ip, parent = traces[u]
            names = [strings[k] if k else "??" for k in ips[ip]] or ["??"]
            if leaf:
                # the ip's function first, then the frames it is inlined
                # into: the first is the innermost
                self_[names[0]] = self_.get(names[0], 0) + tbytes[t]
                leaf = False
            seen.update(names)
            u = parent
        for n in seen:
            incl[n] = incl.get(n, 0) + tbytes[t]
            allocs[n] = allocs.get(n, 0) + tallocs[t]
    print("#total\t%d\t%d\t%d" % (total, nallocs, total))
    for n in sorted(incl, key=lambda k: -incl[k]):
        print("%s\t%d\t%d\t%d" % (n, incl[n], allocs[n], self_.get(n, 0)))


def score(tpath, k, runs):
    rows = []
    total = None
    with open(tpath) as f:
        for line in f:
            name, b, a, s = line.rstrip("\n").split("\t")
            if name == "#total":
                total = int(b)
                continue
            rows.append((name, int(b), int(a), int(s)))
    # the K functions with most inclusive bytes that heaptrack names, below
    # 90% of the total (the chain from main down holds every allocation,
    # and both tools cut some of its deep stacks: a test of stack depth,
    # not of intervals), each figure more than 2% from those kept (a
    # caller that only calls one callee is the same figure twice)
    cand = sorted((r for r in rows if r[0] != "??" and not r[0].startswith("<")
                   and r[1] < 0.9 * total), key=lambda r: -r[1])
    est = []
    zero_hi = []
    exact_totals = []
    for path in runs:
        with open(path) as f:
            j = json.load(f)
        m = {}
        for r in j["sites"]["rows"]:
            m[r["name"]] = r["total"]
        est.append(m)
        zero_hi.append(-math.log(0.025) * (j["rate"]["max"] if j.get("rate") else 0))
        ev = j["all"]["estimates"]["alloc_bytes"].get("exact_value")
        exact_totals.append(ev)
    chosen = []
    for r in cand:
        if len(chosen) >= k:
            break
        if any(abs(r[1] - c[1]) <= 0.02 * c[1] for c in chosen):
            continue
        chosen.append(r)
    rate = max(h / -math.log(0.025) for h in zero_hi) if zero_hi else 0
    covered = checks = 0
    covered5 = checks5 = 0
    print("| function | heaptrack bytes | share | expected samples | mean estimate | mean n "
          "| covered |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, b, a, s in chosen:
        cov = 0
        vals, ns = [], []
        for m, hi0 in zip(est, zero_hi):
            v = m.get(name)
            if v is None:
                # no sample: an estimate of 0, whose interval is
                # [0, rate x 3.689] (Garwood's for a count of 0)
                vals.append(0)
                ns.append(0)
                cov += b <= hi0
                continue
            vals.append(v["value"])
            ns.append(v["n"])
            cov += v["lo"] <= b <= v["hi"]
        covered += cov
        checks += len(est)
        mu = b / rate if rate else 0
        if mu >= 5:
            covered5 += cov
            checks5 += len(est)
        print("| %s | %d | %.1f%% | %.1f | %.0f | %.1f | %d/%d |" % (
            name, b, 100.0 * b / total if total else 0, mu, sum(vals) / len(vals),
            sum(ns) / len(ns), cov, len(est)))
    et = [e for e in exact_totals if e is not None]
    if et:
        print("heaptrack total %d B; mt's exact totals %d..%d B (difference %+d..%+d)" % (
            total, min(et), max(et), min(et) - total, max(et) - total))
    print("coverage: %d of %d (%.1f%%); of the functions with 5 expected samples or more: "
          "%d of %d (%.1f%%)" % (covered, checks, 100.0 * covered / checks if checks else 0,
                                 covered5, checks5,
                                 100.0 * covered5 / checks5 if checks5 else 0))


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "truth":
        truth(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "score":
        score(sys.argv[2], int(sys.argv[3]), sys.argv[4:])
    else:
        sys.stderr.write(__doc__)
        sys.exit(2)
