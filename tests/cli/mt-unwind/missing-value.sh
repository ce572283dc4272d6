# a long option without its value at the end: usage error
mt-unwind x.mtz --max-depth
