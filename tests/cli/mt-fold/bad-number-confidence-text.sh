# --confidence not a number: usage error
mt-fold --confidence x a.txt
