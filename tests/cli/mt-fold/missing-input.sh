# an input that does not exist: environment error
mt-fold nope.txt
