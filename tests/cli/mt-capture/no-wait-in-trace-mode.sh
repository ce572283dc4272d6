# --no-wait in trace mode
mt-capture --mode trace --no-wait -- true
