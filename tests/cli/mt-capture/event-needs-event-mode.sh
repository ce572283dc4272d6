# -e in sample mode
mt-capture --mode sample -e cpu-clock -- true
