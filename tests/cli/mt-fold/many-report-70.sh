# --report at the narrowest width of an input of three processes and seven
# threads (one process without exact totals: part): every line within 70
# columns, the totals table one group of columns at a time, intervals under
# their rows, site names shortened
mt-fold --report --width 70 "$MT_SRC/tests/cli/mt-fold/many-input.txt"
