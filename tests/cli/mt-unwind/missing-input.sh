# an input that does not exist: environment error
mt-unwind nope.mtz
