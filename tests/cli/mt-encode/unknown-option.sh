# an unknown long option: usage error
mt-encode --bogus -o x.mtz a.pipe
