#!/usr/bin/env python3
"""heaptrack_print's flame graph stacks (--flamegraph-cost-type allocations)
as mt-unwind text, so that mt-fold --sites groups heaptrack's exact counts
with mt's own site rule: the oracle for the first allocation site.

Each stack becomes one trace-mode alloc line standing for COUNT calls
(every=COUNT); heaptrack's leaf is the allocator's caller, so malloc is put
back as the leaf; ' (file)' suffixes go; an address frame 0xADDR becomes
[heaptrack+0xADDR] (its module is unknown; a caller's page offset is kept)."""
import re
import sys

print("# mt-unwind 1")
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    line = line.rstrip("\n")
    stack, _, count = line.rstrip().rpartition(" ")
    if not count.isdigit() or not stack:
        continue
    frames = []
    for f in stack.rstrip(";").split(";"):
        f = re.sub(r" \([^()]*\)$", "", f)
        if re.fullmatch(r"0x[0-9a-f]+", f):
            f = "[heaptrack+%s]" % f
        frames.append(f.replace("\t", " "))
    frames.append("malloc")
    print("alloc\t1/1\t1\theaptrack\tsize=1 ptr=0x1 fn=malloc every=%s\t%s end=complete"
          % (count, ";".join(frames)))
