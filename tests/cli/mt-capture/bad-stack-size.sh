# --stack-size must be a multiple of 8
mt-capture --stack-size 100 -- true
