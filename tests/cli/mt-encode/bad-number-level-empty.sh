# --level= with an empty value: usage error
mt-encode --level= -o x.mtz a.pipe
