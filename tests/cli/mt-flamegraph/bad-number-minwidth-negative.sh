# --minwidth negative: usage error
mt-flamegraph --minwidth -1 a.folded
