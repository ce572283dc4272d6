# --level above its range (1..19): usage error
mt-encode -l 20 -o x.mtz a.pipe
