# the same at 120 columns
COLUMNS=120 mt-fold --sites "$MT_SRC/tests/cli/mt-fold/sites-input.txt"
