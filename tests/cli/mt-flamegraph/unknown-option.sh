# an unknown long option: usage error
mt-flamegraph --bogus a.folded
