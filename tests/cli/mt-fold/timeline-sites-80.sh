# --sites --metric temp_bytes with the size and lifetime histograms, 80 columns
COLUMNS=80 mt-fold --sites --metric temp_bytes --sizes --lifetimes "$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
