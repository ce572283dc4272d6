# --width not a number: usage error
mt-flamegraph --width x a.folded
