# --threads above its range (0..8): usage error
mt-encode -T 9 -o x.mtz a.pipe
