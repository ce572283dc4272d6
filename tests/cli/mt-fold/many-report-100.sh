# --report of three processes and seven threads at 100 columns (see
# many-report-70)
mt-fold --report --width 100 "$MT_SRC/tests/cli/mt-fold/many-input.txt"
