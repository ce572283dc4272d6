# a value given to an option that takes none: usage error
mt-flamegraph --reverse=1 a.folded
