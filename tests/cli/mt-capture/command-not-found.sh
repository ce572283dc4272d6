# a command that is not on PATH: 127, as env(1)
mt-capture -o x.data -- no-such-command-mt
