# an input that does not exist: environment error
mt-decode -q -o x nope.mtz
