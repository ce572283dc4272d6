# an unknown short option: usage error
mt-fold -z a.txt
