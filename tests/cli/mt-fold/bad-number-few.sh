# --few not an integer: usage error
mt-fold --few 1.5 a.txt
