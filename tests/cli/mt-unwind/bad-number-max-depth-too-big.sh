# --max-depth above its range (1..65536): usage error
mt-unwind --max-depth 65537 x.mtz
