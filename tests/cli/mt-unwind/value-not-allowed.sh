# a value given to an option that takes none: usage error
mt-unwind --quiet=1 x.mtz
