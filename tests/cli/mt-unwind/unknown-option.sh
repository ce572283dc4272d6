# an unknown long option: usage error
mt-unwind --bogus x.mtz
