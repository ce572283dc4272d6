# an abbreviation of several long options: usage error
mt-unwind --no x.mtz
