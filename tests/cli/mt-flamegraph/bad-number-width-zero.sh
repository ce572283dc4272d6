# --width not positive: usage error
mt-flamegraph --width 0 a.folded
