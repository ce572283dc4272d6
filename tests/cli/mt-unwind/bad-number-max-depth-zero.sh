# --max-depth below its range (1..65536): usage error
mt-unwind --max-depth 0 x.mtz
