# the JSON additions: timeline, peak, temporary, sizes, lifetimes, reconciliation
mt-fold --json --top 1 "$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
