# a line without a count: data error, the others are drawn
printf 'main;f 10\nmain;g\n' > a.folded
mt-flamegraph -o out.svg a.folded
