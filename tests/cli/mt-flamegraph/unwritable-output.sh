# -o in a directory that does not exist: environment error
printf 'main;f 10\n' > a.folded
mt-flamegraph -o nodir/x.svg a.folded
