# --width leaving no room inside the margins: usage error
printf 'main;f 10\n' > a.folded
mt-flamegraph --width 20 a.folded
