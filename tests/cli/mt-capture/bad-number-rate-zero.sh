# --rate 0 samples nothing
mt-capture --rate 0 -- true
