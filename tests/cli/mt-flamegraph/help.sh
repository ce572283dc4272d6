# --help: the usage on stdout, exit 0; wrapped at 80 columns on a wider terminal
COLUMNS=200 mt-flamegraph --help
