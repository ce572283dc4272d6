# an unknown short option: usage error
mt-decode -z -o x a.mtz
