# a long option without its value at the end: usage error
mt-encode -o x.mtz a.pipe --level
