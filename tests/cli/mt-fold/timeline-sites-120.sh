# --sites at 120 columns: the chart takes the width
COLUMNS=120 mt-fold --sites --metric peak_bytes "$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
