# --frame-size above its range (4096..67108864): usage error
mt-encode --frame-size 67108865 -o x.mtz a.pipe
