# an unknown long option: usage error
mt-fold --bogus a.txt
