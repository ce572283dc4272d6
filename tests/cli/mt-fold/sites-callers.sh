# --callers: bottom-up from the sites, --width over $COLUMNS
COLUMNS=200 mt-fold --callers --width 80 "$MT_SRC/tests/cli/mt-fold/sites-input.txt"
