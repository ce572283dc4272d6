# an SVG given to mt report
printf '<?xml version="1.0"?>\n<svg>\n' > g.svg
mt report g.svg
