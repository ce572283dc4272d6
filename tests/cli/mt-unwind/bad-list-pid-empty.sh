# --pid with an empty list: usage error
mt-unwind --pid '' x.mtz
