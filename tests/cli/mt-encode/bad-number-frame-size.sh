# --frame-size below its range (4096..67108864): usage error
mt-encode --frame-size 4095 -o x.mtz a.pipe
