# two inputs: usage error
mt-flamegraph a.folded b.folded
