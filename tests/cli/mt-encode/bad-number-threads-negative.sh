# --threads below its range (0..8): usage error
mt-encode --threads -1 -o x.mtz a.pipe
