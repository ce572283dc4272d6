# a long option without its value at the end: usage error
mt-flamegraph a.folded --width
