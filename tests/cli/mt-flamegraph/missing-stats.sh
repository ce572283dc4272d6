# a --stats file that does not exist: drawn without stats
printf 'main;f 10\n' > a.folded
mt-flamegraph --stats nope.json -o out.svg a.folded
