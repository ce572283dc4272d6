# --at: live 1 ms before the end of the peak phase's allocations, in collapsed form
mt-fold --metric peak_bytes --at 205ms "$MT_SRC/tests/cli/mt-fold/timeline-input.txt"
