# a directory as input: environment error
mkdir d
mt-decode -q -o x d
