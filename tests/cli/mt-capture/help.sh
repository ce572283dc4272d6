# -h: the usage on stdout, with the exit statuses, and exit 0
mt-capture -h
