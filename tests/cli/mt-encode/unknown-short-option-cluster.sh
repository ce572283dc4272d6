# an unknown short option inside a cluster: usage error
mt-encode -qz -o x.mtz a.pipe
