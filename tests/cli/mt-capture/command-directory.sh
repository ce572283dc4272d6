# a directory as the command: 126
mkdir d
mt-capture -o x.data -- ./d
