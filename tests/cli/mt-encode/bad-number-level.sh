# --level not a number: usage error
mt-encode --level x -o x.mtz a.pipe
