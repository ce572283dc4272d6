# --diff: a line with one count is a data error, the others are drawn
printf 'main;f 10 12\nmain;g 5\n' > d.folded
mt-flamegraph --diff -o out.svg d.folded
