# -F in trace mode
mt-capture --mode trace -F 99 -- true
