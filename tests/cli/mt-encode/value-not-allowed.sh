# a value given to an option that takes none: usage error
mt-encode --raw=1 -o x.mtz a.pipe
