# stdout on /dev/full: the write fails, environment error
printf 'main;f 10\n' > a.folded
mt-flamegraph a.folded > /dev/full
