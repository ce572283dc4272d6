#!/bin/bash
# Sample mode with --no-ring (the sampler's markers reached through uprobes,
# what -p uses): the sample-mode tests pass that way too.
. "$(dirname "$0")/capture-lib.sh"
capture_skip_unless_perf

dir=$(dirname "$0")
for t in capture-sample-totals capture-sample-rate capture-forkexec capture-signal \
	capture-sampler-semantics capture-timeline; do
	rc=0
	MT_CAPTURE_NO_RING=1 bash "$dir/$t.sh" >"$T/$t.out" 2>&1 || rc=$?
	[ $rc = 0 ] || fail "$t with --no-ring (exit $rc): $(tail -5 "$T/$t.out")"
done
echo "ok: 6 sample-mode tests pass through uprobes"
