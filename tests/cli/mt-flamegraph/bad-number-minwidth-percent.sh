# --minwidth not a number before its %: usage error
mt-flamegraph --minwidth x% a.folded
