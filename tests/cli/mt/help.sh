# --help: the subcommands on stdout, exit 0
mt --help
