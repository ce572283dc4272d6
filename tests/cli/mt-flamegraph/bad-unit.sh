# --unit naming no unit: usage error
mt-flamegraph --unit furlongs a.folded
