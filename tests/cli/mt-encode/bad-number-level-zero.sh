# --level below its range (1..19): usage error
mt-encode -l 0 -o x.mtz a.pipe
