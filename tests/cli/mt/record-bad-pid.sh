# -p with a value that is not a pid: mt-capture's message, 125, no file
mt record -p abc
