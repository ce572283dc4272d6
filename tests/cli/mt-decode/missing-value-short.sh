# -o without its value at the end: usage error
mt-decode a.mtz -o
