# --stack-size at most 65528
mt-capture --stack-size 65536 -- true
