# --tid with a negative id: usage error
mt-unwind --tid -1 x.mtz
