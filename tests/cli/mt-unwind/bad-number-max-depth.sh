# --max-depth not a number: usage error
mt-unwind --max-depth abc x.mtz
