# -o without its value at the end: usage error
mt-flamegraph a.folded -o
