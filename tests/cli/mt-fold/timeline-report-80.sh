# --report --metric peak_bytes of a three-phase program with tick lines and
# seq= (tests/fold/gen_phases.py --seed 1): summary, chart, reconciliation
COLUMNS=80 mt-fold --report --metric peak_bytes "$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
