# a directory as --stats file: drawn without stats
printf 'main;f 10\n' > a.folded
mkdir d
mt-flamegraph --stats d -o out.svg a.folded
