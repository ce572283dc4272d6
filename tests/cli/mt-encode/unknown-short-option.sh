# an unknown short option: usage error
mt-encode -z -o x.mtz a.pipe
