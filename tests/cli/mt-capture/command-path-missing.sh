# a command path that does not exist: 127
mt-capture -o x.data -- ./nope
