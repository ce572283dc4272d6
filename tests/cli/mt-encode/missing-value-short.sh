# -o without its value at the end: usage error
mt-encode a.pipe -o
