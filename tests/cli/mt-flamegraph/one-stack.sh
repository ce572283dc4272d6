# one stack: an SVG, exit 0
printf 'main;f 10\n' > a.folded
mt-flamegraph -o out.svg a.folded
grep -c '<g class="f' out.svg
