# a long option without its value at the end: usage error
mt-fold a.txt --top
