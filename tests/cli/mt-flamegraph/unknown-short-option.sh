# an unknown short option: usage error
mt-flamegraph -z a.folded
