# -j below its range (1..1024): usage error
mt-unwind -j 0 x.mtz
