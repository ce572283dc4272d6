# an unknown long option: usage error
mt-decode --bogus -o x a.mtz
