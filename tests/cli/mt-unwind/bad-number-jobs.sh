# -j not a number: usage error
mt-unwind --jobs two x.mtz
