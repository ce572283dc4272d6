# a short option mt-capture does not have
mt-capture -z -- true
