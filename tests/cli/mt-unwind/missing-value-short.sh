# -o without its value at the end: usage error
mt-unwind x.mtz -o
