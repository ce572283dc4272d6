# two inputs: usage error
mt-decode -q -o x a.mtz b.mtz
