# --sites on a capture of fold_sites (65536 x 32 B, 256 x 4 KiB) at 80 columns
COLUMNS=80 mt-fold --sites "$MT_SRC/tests/cli/mt-fold/sites-input.txt"
