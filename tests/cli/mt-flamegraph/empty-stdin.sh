# empty stdin (no input named): an SVG that says so, a note, exit 0
mt-flamegraph -o out.svg < /dev/null
