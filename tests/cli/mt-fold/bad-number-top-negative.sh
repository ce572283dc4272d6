# --top negative: usage error
mt-fold --top -1 a.txt
