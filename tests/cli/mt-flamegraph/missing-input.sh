# an input that does not exist
mt-flamegraph nope.folded
