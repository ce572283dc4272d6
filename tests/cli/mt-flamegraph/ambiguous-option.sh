# an abbreviation of several long options (--countname, --colors): usage error
mt-flamegraph --c x a.folded
