# two inputs: usage error
mt-unwind a.mtz b.mtz
