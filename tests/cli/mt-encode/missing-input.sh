# an input that does not exist: environment error
mt-encode -q -o x.mtz nope.pipe
