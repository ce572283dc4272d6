# --tree: top-down, cut at the sites
COLUMNS=80 mt-fold --tree "$MT_SRC/tests/cli/mt-fold/sites-input.txt"
