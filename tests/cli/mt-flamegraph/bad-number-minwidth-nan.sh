# --minwidth not finite: usage error
mt-flamegraph --minwidth nan a.folded
