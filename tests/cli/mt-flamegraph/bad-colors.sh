# --colors naming no palette: usage error
mt-flamegraph --colors x a.folded
