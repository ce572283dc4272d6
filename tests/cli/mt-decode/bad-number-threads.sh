# --threads above its range (0..8): usage error
mt-decode -T 9 -o x a.mtz
