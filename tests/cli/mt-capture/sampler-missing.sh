# MT_SAMPLER naming no file: mt-capture itself fails (125)
MT_SAMPLER=$PWD/nope.so mt-capture -o x.data -- true
