# a directory as input: environment error
mkdir d
mt-unwind d
