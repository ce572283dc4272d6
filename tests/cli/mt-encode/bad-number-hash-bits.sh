# --hash-bits neither 32 nor 64: usage error
mt-encode --hash-bits 48 -o x.mtz a.pipe
