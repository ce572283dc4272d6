# a value given to --decode, which takes none (and has a short form): usage error
mt-encode --decode=1 -o x a.mtz
