# a directory as input: environment error
mkdir d
mt-fold d
