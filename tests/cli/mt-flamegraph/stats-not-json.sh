# a --stats file that is not JSON: drawn without stats, data error
printf 'main;f 10\n' > a.folded
echo garbage > stats.json
mt-flamegraph --stats stats.json -o out.svg a.folded
