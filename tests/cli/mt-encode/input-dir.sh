# a directory as input: environment error
mkdir d
mt-encode -q -o x.mtz d
