# --metric naming no metric: usage error
mt-fold --metric nope a.txt
