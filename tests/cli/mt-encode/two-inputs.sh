# two inputs: usage error
mt-encode -q -o x.mtz a.pipe b.pipe
