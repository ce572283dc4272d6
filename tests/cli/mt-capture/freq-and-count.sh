# -F and -c both set the sampling period
mt-capture --mode event -F 99 -c 10 -- true
