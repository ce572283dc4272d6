# a directory as input
mkdir d
mt-flamegraph d
