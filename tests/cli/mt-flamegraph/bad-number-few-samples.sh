# --few-samples not positive: usage error
mt-flamegraph --few-samples 0 a.folded
