# an unknown short option: usage error
mt-unwind -z x.mtz
