# -o naming a directory: environment error
printf 'main;f 10\n' > a.folded
mkdir d
mt-flamegraph -o d a.folded
