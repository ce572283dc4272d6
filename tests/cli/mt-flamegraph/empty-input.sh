# an empty file: an SVG that says so, a note, exit 0
: > empty.folded
mt-flamegraph -o out.svg empty.folded
