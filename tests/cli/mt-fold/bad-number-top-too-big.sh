# --top above 4294967295: usage error
mt-fold --top 4294967296 a.txt
