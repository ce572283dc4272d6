# --confidence not below 1: usage error
mt-fold --confidence 1 a.txt
