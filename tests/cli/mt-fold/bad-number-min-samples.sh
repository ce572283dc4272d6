# --min-samples not a number: usage error
mt-fold --min-samples x a.txt
