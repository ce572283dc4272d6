# a prefix of several long options
mt-capture --no -- true
