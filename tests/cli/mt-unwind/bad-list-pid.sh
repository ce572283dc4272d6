# --pid with a list that is not of ids: usage error
mt-unwind --pid 1,x x.mtz
