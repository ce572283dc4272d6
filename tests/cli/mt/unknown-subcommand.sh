# a subcommand that does not exist: usage error, with the list
mt profile ./prog
