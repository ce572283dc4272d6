# -c in sample mode (which has --rate)
mt-capture --mode sample -c 10 -- true
