# -p takes a process id
mt-capture -p x
