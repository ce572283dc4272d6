# --diff-samples means nothing without --diff: usage error
printf 'main;f 10\n' > a.folded
mt-flamegraph --diff-samples a.folded -o out.svg a.folded
