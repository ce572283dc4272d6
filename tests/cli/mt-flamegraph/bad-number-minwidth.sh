# --minwidth not a number: usage error
mt-flamegraph --minwidth x a.folded
