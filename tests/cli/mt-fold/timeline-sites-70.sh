# --sites with the histograms at 70 columns (the narrowest the layout keeps): the intervals go below their estimates
COLUMNS=70 mt-fold --sites --sizes --lifetimes "$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
