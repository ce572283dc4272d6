# --help: the usage on stdout, exit 0
mt-decode --help
