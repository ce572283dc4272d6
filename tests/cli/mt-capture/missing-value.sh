# -o as the last argument, without its file
mt-capture -o
