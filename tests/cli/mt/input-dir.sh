# a directory: environment error
mkdir d
mt report d
